// SPDX-License-Identifier: BSD-2-Clause
/* A List written as it is read; see ctl_list.h. */
#include <errno.h>
#include <inttypes.h>
#include <sodium.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_list.h"
#include "ctl_log.h"

#define CONT_V	  "meta.k8s.io/v1" /* what Kubernetes' tokens carry */
#define CONT_MAX  1024		   /* a token's length at most */
#define LIMIT_MAX 1000000000ull

struct ctl_list {
	const struct ctl_list_source *source;
	void *src; /* NULL once closed */
	char kind[64];
	char *head;   /* the envelope up to and with "items":[ */
	uint64_t rev; /* metadata.resourceVersion */
	struct ctl_list_opts o;
	char last[CTL_LIST_KEY_MAX]; /* the last item's key */
	size_t items;		     /* written so far */
	long long remaining;	     /* after a cut page: the items after it, or -1 */
	bool started, done;
};

/* ---- the options ---- */

static void key_of(json_t *item, char *key, size_t len)
{
	json_t *md = json_object_get(item, "metadata");
	const char *ns = json_string_value(json_object_get(md, "namespace"));
	const char *name = json_string_value(json_object_get(md, "name"));

	if (ns && *ns)
		snprintf(key, len, "%s/%s", ns, name ? name : "");
	else
		snprintf(key, len, "%s", name ? name : "");
}

static int cont_parse(struct ctl_list_opts *o, const char *tok, uint64_t since, uint64_t now,
		      char *err, size_t errlen)
{
	unsigned char bin[CONT_MAX];
	size_t n = 0;
	json_t *j = NULL, *rv;
	const char *v, *start;
	int code = 400;

	if (strlen(tok) >= CONT_MAX ||
	    sodium_base642bin(bin, sizeof(bin) - 1, tok, strlen(tok), NULL, &n, NULL,
			      sodium_base64_VARIANT_URLSAFE_NO_PADDING))
		goto bad;
	bin[n] = 0;
	j = json_loads((const char *)bin, 0, NULL);
	v = json_string_value(json_object_get(j, "v"));
	rv = json_object_get(j, "rv");
	start = json_string_value(json_object_get(j, "start"));
	if (!v || strcmp(v, CONT_V) || !json_is_integer(rv) || json_integer_value(rv) <= 0 ||
	    !start || !*start || strlen(start) >= sizeof(o->start))
		goto bad;
	if ((uint64_t)json_integer_value(rv) > now)
		goto bad; /* from the future: not one this server gave */
	if ((uint64_t)json_integer_value(rv) < since) {
		snprintf(err, errlen,
			 "The provided continue parameter is too old to display a consistent "
			 "list result (resourceVersion %" PRIu64 ", before %" PRIu64
			 "). You can start a new list without the continue parameter.",
			 (uint64_t)json_integer_value(rv), since);
		json_decref(j);
		return 410;
	}
	snprintf(o->start, sizeof(o->start), "%s", start);
	json_decref(j);
	return 0;
bad:
	json_decref(j);
	snprintf(err, errlen, "continue '%.80s%s': not a continue token this server gave", tok,
		 strlen(tok) > 80 ? "..." : "");
	return code;
}

int ctl_list_opts_parse(struct ctl_list_opts *o, const char *limit, const char *cont,
			const char *labels, const char *fields, uint64_t since, uint64_t now,
			char *err, size_t errlen, const char **param)
{
	char why[300];
	int code;

	memset(o, 0, sizeof(*o));
	if (limit && *limit) {
		char *end;
		unsigned long long n;

		errno = 0;
		n = strtoull(limit, &end, 10);
		if (*end || *limit == '-' || *limit == '+' || errno || n > LIMIT_MAX) {
			*param = "limit";
			snprintf(err, errlen, "limit '%.40s': a number 0..%llu (0: no limit)",
				 limit, LIMIT_MAX);
			return 400;
		}
		o->limit = (size_t)n;
	}
	if (cont && *cont && (code = cont_parse(o, cont, since, now, err, errlen))) {
		*param = "continue";
		return code;
	}
	if (labels && ctl_k8s_selector_parse(labels, &o->sel, why, sizeof(why))) {
		*param = "labelSelector";
		snprintf(err, errlen, "labelSelector '%.200s': %s", labels, why);
		return 400;
	}
	if (fields && ctl_k8s_field_selector(fields, o->name, sizeof(o->name), err, errlen)) {
		*param = "fieldSelector";
		return 400;
	}
	return 0;
}

bool ctl_list_opts_match(const struct ctl_list_opts *o, json_t *item)
{
	json_t *md = json_object_get(item, "metadata");

	if (o->name[0]) {
		const char *n = json_string_value(json_object_get(md, "name"));

		if (!n || strcmp(n, o->name))
			return false;
	}
	return !o->sel.n || ctl_k8s_selector_match(&o->sel, json_object_get(md, "labels"));
}

/* ---- the list ---- */

static void source_close(struct ctl_list *l)
{
	if (l->src)
		l->source->close(l->src);
	l->src = NULL;
}

void ctl_list_free(struct ctl_list *l)
{
	if (!l)
		return;
	source_close(l);
	free(l->head);
	free(l);
}

struct ctl_list *ctl_list_new_opts(const char *api_version, const char *kind, uint64_t revision,
				   const struct ctl_list_opts *opts,
				   const struct ctl_list_source *source, void *src)
{
	struct ctl_list *l = calloc(1, sizeof(*l));
	char k[80];
	json_t *env;
	size_t n;

	if (!l) {
		source->close(src);
		return NULL;
	}
	l->source = source;
	l->src = src;
	l->rev = revision;
	if (opts)
		l->o = *opts;
	snprintf(l->kind, sizeof(l->kind), "%s", kind);
	snprintf(k, sizeof(k), "%sList", kind);
	/* the envelope cut before the items' "]}"; metadata follows them: its
	 * continue is known only once the page is full */
	env = json_pack("{s:s,s:s,s:[]}", "apiVersion", api_version, "kind", k, "items");
	l->head = env ? json_dumps(env, JSON_COMPACT) : NULL;
	json_decref(env);
	n = l->head ? strlen(l->head) : 0;
	if (n < 2 || strcmp(l->head + n - 2, "]}")) {
		ctl_list_free(l);
		return NULL;
	}
	l->head[n - 2] = 0;
	return l;
}

struct ctl_list *ctl_list_new(const char *api_version, const char *kind, uint64_t revision,
			      const struct ctl_list_source *source, void *src)
{
	return ctl_list_new_opts(api_version, kind, revision, NULL, source, src);
}

static int dump_cb(const char *buf, size_t size, void *data)
{
	return xg_buf_put(data, buf, size, 0);
}

/* The next item the options take: 1 and *item, 0 at the end, -1. */
static int take_next(struct ctl_list *l, json_t **item, char *key)
{
	for (;;) {
		int rc;

		*item = NULL;
		rc = l->src ? l->source->next(l->src, item) : -1;
		if (rc <= 0)
			return rc;
		if (!*item)
			continue;
		key_of(*item, key, CTL_LIST_KEY_MAX);
		if ((!l->o.start[0] || strcmp(key, l->o.start) > 0) &&
		    ctl_list_opts_match(&l->o, *item))
			return 1;
		json_decref(*item);
	}
}

/* A page is cut and the item after it taken: that one and what the source
 * has not given yet, when the source can tell cheaply. Kubernetes leaves
 * it out when a selector is set (the rest would have to be read to count
 * what it selects): so do we. */
static long long remaining(struct ctl_list *l)
{
	long long rest;

	if (l->o.sel.n || l->o.name[0] || !l->source->remaining)
		return -1;
	rest = l->source->remaining(l->src);
	return rest < 0 ? -1 : rest + 1;
}

/* "],"metadata":{...}}": the revision, the token of the next page and, if
 * known, how many items follow it */
static int tail(struct ctl_list *l, struct xg_buf *b, bool more)
{
	char rv[24];
	json_t *md;
	char *s = NULL;
	int rc = -1;

	snprintf(rv, sizeof(rv), "%" PRIu64, l->rev);
	md = json_pack("{s:s}", "resourceVersion", rv);
	if (md && more && l->remaining >= 0 &&
	    json_object_set_new(md, "remainingItemCount", json_integer(l->remaining))) {
		json_decref(md);
		md = NULL;
	}
	if (md && more) {
		json_t *t = json_pack("{s:s,s:I,s:s}", "v", CONT_V, "rv", (json_int_t)l->rev,
				      "start", l->last);
		char *ts = t ? json_dumps(t, JSON_COMPACT) : NULL;
		size_t blen = ts ? sodium_base64_ENCODED_LEN(
				       strlen(ts), sodium_base64_VARIANT_URLSAFE_NO_PADDING)
				 : 0;
		char *b64 = ts ? malloc(blen) : NULL;

		if (b64)
			sodium_bin2base64(b64, blen, (const unsigned char *)ts, strlen(ts),
					  sodium_base64_VARIANT_URLSAFE_NO_PADDING);
		if (!b64 || json_object_set_new(md, "continue", json_string(b64))) {
			json_decref(md);
			md = NULL;
		}
		free(b64);
		free(ts);
		json_decref(t);
	}
	s = md ? json_dumps(md, JSON_COMPACT) : NULL;
	if (s && !xg_buf_put(b, "],\"metadata\":", 13, 0) && !xg_buf_put(b, s, strlen(s), 0) &&
	    !xg_buf_put(b, "}", 1, 0))
		rc = 0;
	free(s);
	json_decref(md);
	return rc;
}

int ctl_list_next(struct ctl_list *l, struct xg_buf *b, size_t min)
{
	size_t start = b->len;
	char key[CTL_LIST_KEY_MAX];

	if (l->done)
		return 0;
	if (!l->started) {
		if (xg_buf_put(b, l->head, strlen(l->head), 0))
			return -1;
		l->started = true;
	}
	while (b->len - start < min) {
		json_t *item = NULL;
		bool full = l->o.limit && l->items == l->o.limit;
		int rc = take_next(l, &item, key);

		if (rc == 0 || (full && rc > 0)) {
			/* the end, or a page full with more after it */
			json_decref(item);
			l->remaining = rc > 0 ? remaining(l) : -1;
			source_close(l); /* e.g. ends a snapshot's read transaction */
			l->done = true;
			return tail(l, b, rc > 0) ? -1 : 0;
		}
		if (rc < 0 || (l->items && xg_buf_put(b, ",", 1, 0)) ||
		    json_dump_callback(item, dump_cb, b, JSON_COMPACT)) {
			ctl_log("list %ss: %s after %zu items; the answer is cut short", l->kind,
				rc > 0	 ? "out of memory"
				: l->src ? l->source->errmsg(l->src)
					 : "closed",
				l->items);
			json_decref(item);
			return -1;
		}
		json_decref(item);
		snprintf(l->last, sizeof(l->last), "%s", key);
		l->items++;
	}
	return 1;
}
