// SPDX-License-Identifier: BSD-2-Clause
/*
 * Lists and watches of the API: a list is the base's ctl_list over a copy
 * of the collection taken at the request (pages in NAMESPACE/NAME order),
 * a watch the base's ctl_watch, one per kind for all namespaces and one
 * per kind and namespace, made at the first watch of that namespace.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_int.h"
#include "ctl_k8s.h"
#include "ctl_list.h"
#include "ctl_log.h"
#include "ctl_watch.h"

/* ---- the query ---- */

static const char *qget(const char *q, const char *key, char *buf, size_t len)
{
	size_t kl = strlen(key);

	for (const char *p = q; p && *p;) {
		const char *amp = strchr(p, '&'), *end = amp ? amp : p + strlen(p);

		if ((size_t)(end - p) > kl && !strncmp(p, key, kl) && p[kl] == '=') {
			snprintf(buf, len, "%.*s", (int)(end - p - kl - 1), p + kl + 1);
			return buf;
		}
		if ((size_t)(end - p) == kl && !strncmp(p, key, kl)) {
			snprintf(buf, len, "%s", "");
			return buf;
		}
		p = amp ? amp + 1 : NULL;
	}
	return NULL;
}

/* ---- lists and watches ---- */

struct items {
	json_t *arr;
	size_t i;
};

static int items_next(void *src, json_t **item)
{
	struct items *it = src;

	if (it->i >= json_array_size(it->arr))
		return 0;
	*item = json_incref(json_array_get(it->arr, it->i++));
	return 1;
}

static const char *items_err(void *src)
{
	(void)src;
	return "out of memory";
}

static void items_close(void *src)
{
	struct items *it = src;

	json_decref(it->arr);
	free(it);
}

static long long items_remaining(void *src)
{
	struct items *it = src;

	return (long long)(json_array_size(it->arr) - it->i);
}

static const struct ctl_list_source items_source = {items_next, items_err, items_close,
						    items_remaining};

/* "NS/NAME" (or "NAME"): the order of a list's pages (ctl_list's keys) */
static void list_key(json_t *o, char *key, size_t len)
{
	json_t *md = json_object_get(o, "metadata");
	const char *ns = json_string_value(json_object_get(md, "namespace"));
	const char *name = json_string_value(json_object_get(md, "name"));

	snprintf(key, len, "%s%s%s", ns && *ns ? ns : "", ns && *ns ? "/" : "", name ? name : "");
}

static int by_key(const void *x, const void *y)
{
	char kx[CTL_LIST_KEY_MAX], ky[CTL_LIST_KEY_MAX];

	list_key(*(json_t *const *)x, kx, sizeof(kx));
	list_key(*(json_t *const *)y, ky, sizeof(ky));
	return strcmp(kx, ky);
}

void api_list(struct fx_api *a, const struct route *rt, const char *query, struct ctl_http_resp *rs)
{
	char sel[1024], fsel[1024], lim[32], cont[1100], why[400];
	const char *param = NULL;
	struct ctl_list_opts *o = malloc(sizeof(*o));
	uint64_t rev;
	json_t *all, **v = NULL;
	struct items *it;
	size_t i, n;
	int code;

	if (!o)
		return api_err(rs, 500, NULL, "out of memory");
	/* a continue token older than the watch can resume from is too old */
	code = ctl_list_opts_parse(
	    o, qget(query, "limit", lim, sizeof(lim)), qget(query, "continue", cont, sizeof(cont)),
	    qget(query, "labelSelector", sel, sizeof(sel)),
	    qget(query, "fieldSelector", fsel, sizeof(fsel)), ctl_watch_floor(a->all[rt->r->k]),
	    fx_core_revision(a->core), why, sizeof(why), &param);
	if (code) {
		free(o);
		return api_err(rs, code, param, "%s", why);
	}
	all = fx_core_list(a->core, rt->r->k, rt->ns[0] ? rt->ns : NULL, &rev);
	it = calloc(1, sizeof(*it));
	n = json_array_size(all);
	if (!it || !all || (n && !(v = calloc(n, sizeof(*v))))) {
		free(it);
		free(o);
		json_decref(all);
		return api_err(rs, 500, NULL, "out of memory");
	}
	/* pages follow the key order: the items sorted (the core's are hashed) */
	for (i = 0; i < n; i++)
		v[i] = json_array_get(all, i);
	if (n)
		qsort(v, n, sizeof(*v), by_key);
	it->arr = json_array();
	for (i = 0; i < n; i++)
		json_array_append(it->arr, v[i]);
	free(v);
	json_decref(all);
	rs->stream = calloc(1, sizeof(struct fx_stream));
	if (!rs->stream) {
		items_close(it);
		free(o);
		return api_err(rs, 500, NULL, "out of memory");
	}
	((struct fx_stream *)rs->stream)->list =
	    ctl_list_new_opts(FX_API_VERSION, rt->r->kind, rev, o, &items_source, it);
	free(o);
	if (!((struct fx_stream *)rs->stream)->list) {
		free(rs->stream);
		rs->stream = NULL;
		return api_err(rs, 500, NULL, "out of memory");
	}
	rs->code = 200;
	rs->content_type = "application/json";
}

/* The labels the objects have now: a later change is judged against them
 * by the watches with a labelSelector. */
int api_labels_known(struct fx_api *a, struct ctl_watch *w, enum fx_kind k, const char *ns)
{
	uint64_t rev;
	json_t *all = fx_core_list(a->core, k, ns, &rev), *v;
	size_t i;
	int rc = all ? 0 : -1;

	json_array_foreach(all, i, v) if (!rc) rc = ctl_watch_known(w, v);
	json_decref(all);
	return rc;
}

static struct ctl_watch *watch_of(struct fx_api *a, enum fx_kind k, const char *ns, bool make)
{
	struct ns_watch *n;

	if (!ns || !*ns)
		return a->all[k];
	for (size_t i = 0; i < a->n_nsw; i++)
		if (a->nsw[i].k == k && !strcmp(a->nsw[i].ns, ns))
			return a->nsw[i].w;
	if (!make || a->n_nsw >= NS_WATCH_MAX)
		return NULL;
	n = realloc(a->nsw, (a->n_nsw + 1) * sizeof(*n));
	if (!n)
		return NULL;
	a->nsw = n;
	n = &a->nsw[a->n_nsw];
	n->k = k;
	snprintf(n->ns, sizeof(n->ns), "%s", ns);
	/* what happened in this namespace before now is not in its ring */
	if (!(n->w = ctl_watch_new(fx_core_revision(a->core), WATCH_RING, WATCH_BUF)) ||
	    api_labels_known(a, n->w, k, ns)) {
		ctl_watch_free(n->w);
		return NULL;
	}
	a->n_nsw++;
	return n->w;
}

void fx_api_event(struct fx_api *a, enum fx_kind k, const char *type, json_t *obj, uint64_t rv)
{
	const char *ns =
	    json_string_value(json_object_get(json_object_get(obj, "metadata"), "namespace"));
	struct ctl_watch *w;

	if ((unsigned)k >= FX_K_COUNT)
		return;
	ctl_watch_event(a->all[k], rv, type, obj);
	if (ns && (w = watch_of(a, k, ns, false)))
		ctl_watch_event(w, rv, type, obj);
}

static void watcher_wake(void *arg)
{
	struct fx_stream *st = arg;

	if (st->wake && st->conn)
		st->wake(st->conn);
}

void api_watch(struct fx_api *a, const struct route *rt, const char *query,
	       struct ctl_http_resp *rs)
{
	char buf[32], fsel[1024], lsel[1024], name[FX_NAME_MAX + 1] = "", why[300], *end;
	const char *rvs = qget(query, "resourceVersion", buf, sizeof(buf));
	unsigned long long from = 0;
	struct ctl_k8s_selector *sel = NULL;
	struct ctl_watch *w;
	struct fx_stream *st;
	bool expired;

	if (rvs && *rvs) {
		from = strtoull(rvs, &end, 10);
		if (*end || *rvs == '-')
			return api_err(rs, 400, "resourceVersion",
				       "resourceVersion '%s': a decimal number", rvs);
	}
	if (qget(query, "fieldSelector", fsel, sizeof(fsel)) &&
	    ctl_k8s_field_selector(fsel, name, sizeof(name), why, sizeof(why)))
		return api_err(rs, 400, "fieldSelector", "%s", why);
	if (qget(query, "labelSelector", lsel, sizeof(lsel)) && *lsel) {
		if (!(sel = malloc(sizeof(*sel))))
			return api_err(rs, 500, NULL, "out of memory");
		if (ctl_k8s_selector_parse(lsel, sel, why, sizeof(why))) {
			free(sel);
			return api_err(rs, 400, "labelSelector", "labelSelector '%.200s': %s", lsel,
				       why);
		}
	}
	if (!(w = watch_of(a, rt->r->k, rt->ns, true))) {
		free(sel);
		return api_err(rs, 503, NULL, "too many namespaces watched separately");
	}
	st = calloc(1, sizeof(*st));
	if (st)
		st->watcher = ctl_watch_open_sel(w, from, name[0] ? name : NULL, sel, watcher_wake,
						 st, &expired);
	free(sel); /* the watcher has its copy */
	if (!st || !st->watcher) {
		free(st);
		return api_err(rs, 500, NULL, "out of memory");
	}
	/* from resourceVersion 0 a watch starts with the objects there are, as
	 * ADDED (kubectl get NAME -w reads its first line from it) */
	if (rvs && !strcmp(rvs, "0")) {
		uint64_t rev;
		json_t *all = fx_core_list(a->core, rt->r->k, rt->ns[0] ? rt->ns : NULL, &rev), *v;
		size_t i;
		int rc = all ? 0 : -1;

		/* (the watcher takes only what its name and selector select) */
		json_array_foreach(all, i, v) if (!rc) rc =
		    ctl_watcher_add(st->watcher, "ADDED", v);
		json_decref(all);
		if (rc) {
			fx_stream_free(st);
			return api_err(rs, 500, NULL, "out of memory");
		}
	}
	rs->stream = st;
	rs->code = 200;
	rs->content_type = "application/json";
}

/* ---- streams ---- */

int fx_stream_next(struct fx_stream *st, struct xg_buf *b, size_t min)
{
	if (st->watcher)
		return ctl_watcher_next(st->watcher, b, min);
	return ctl_list_next(st->list, b, min);
}

void fx_stream_free(struct fx_stream *st)
{
	if (!st)
		return;
	ctl_watcher_free(st->watcher);
	ctl_list_free(st->list);
	free(st);
}

void fx_stream_conn(struct fx_stream *st, void (*wake)(void *conn), void *conn)
{
	st->wake = wake;
	st->conn = conn;
}

bool api_want_watch(const char *query)
{
	char buf[8];
	const char *w = qget(query, "watch", buf, sizeof(buf));

	return w && (!*w || !strcmp(w, "1") || !strcmp(w, "true"));
}
