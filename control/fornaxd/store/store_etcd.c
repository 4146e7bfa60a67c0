// SPDX-License-Identifier: BSD-2-Clause
/*
 * The etcd backend of fornaxd's store (store.h), on the base's etcd client
 * (ctl_etcd). Keys under the configured prefix P:
 *   P revision        the highest revision written, 20 zero-padded digits
 *                     (etcd compares values as bytes: padded, they compare
 *                     as numbers, so "move it up only" is one compare)
 *   P apps/NS/NAME    "RV\n" then the application's JSON
 *   P nodes/NAME      "SUBNET HEX-DIGEST"
 * A write and the revision it moves to commit in one transaction, as in
 * SQLite. Reads are linearizable; when the cluster has lost its quorum
 * they fall back to what the member knows (a serializable read), so a
 * fornaxd restarted then still has its applications while writes fail
 * with "no quorum". With a leader election (fx_store_etcd_fence) every
 * write is nested in a txn that holds only while the election key is the
 * one this fornaxd created: a deposed leader writes nothing.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_etcd.h"
#include "ctl_log.h"
#include "store.h"

#define REV_DIGITS 20

struct pending;

struct etcd_store {
	struct fx_store pub;
	struct ctl_etcd *e;
	struct ctl_etcd_async *as;     /* the writes without waiting */
	struct pending *pending;       /* theirs, in flight */
	struct ctl_etcd_elect *leader; /* writes fenced on it, or NULL */
	char *prefix;
	char err[600];
};

static struct etcd_store *S(struct fx_store *s)
{
	return (struct etcd_store *)((char *)s - offsetof(struct etcd_store, pub));
}

static int fail(struct etcd_store *s, const char *what, int rc)
{
	snprintf(s->err, sizeof(s->err), "%s: %s: %s", what, ctl_etcd_rc_name(rc),
		 ctl_etcd_errmsg(s->e));
	return ctl_etcd_maybe_applied(s->e) ? FX_STORE_UNKNOWN : -1;
}

/* t inside the leader's fence when there is one (*outer, to free): the
 * write is made only if our election key is still the one in etcd */
static struct ctl_etcd_txn *fenced(struct etcd_store *s, struct ctl_etcd_txn *t,
				   struct ctl_etcd_txn **outer)
{
	*outer = NULL;
	if (!s->leader)
		return t;
	if (!(*outer = ctl_etcd_txn_new()))
		return NULL;
	ctl_etcd_elect_fence(s->leader, *outer);
	ctl_etcd_txn_nest(*outer, true, t);
	return *outer;
}

/* what a commit came to, as the store's ops answer */
static int outcome(struct etcd_store *s, const char *what, int rc, bool was_fenced, bool held,
		   bool maybe_applied, const char *err)
{
	if (rc) {
		snprintf(s->err, sizeof(s->err), "%s: %s: %s", what, ctl_etcd_rc_name(rc), err);
		return maybe_applied ? FX_STORE_UNKNOWN : -1;
	}
	if (was_fenced && !held) {
		snprintf(s->err, sizeof(s->err),
			 "%s: refused: this fornaxd is not the leader (its election key is gone "
			 "or another's); nothing was written",
			 what);
		return -1;
	}
	return 0;
}

/* Commit t, fenced */
static int commit(struct etcd_store *s, struct ctl_etcd_txn *t, const char *what, int64_t *deleted)
{
	struct ctl_etcd_txn *outer, *c = fenced(s, t, &outer);
	bool held = true;
	int rc;

	if (!c)
		return -1;
	rc = ctl_etcd_txn_commit(s->e, c, &held, NULL, deleted);
	ctl_etcd_txn_free(outer);
	return outcome(s, what, rc, outer != NULL, held, rc && ctl_etcd_maybe_applied(s->e),
		       ctl_etcd_errmsg(s->e));
}

/* a write without waiting, in flight */
struct pending {
	struct etcd_store *s;
	struct pending *next;
	const char *what;
	bool was_fenced, del;
	fx_store_done done;
	void *arg;
};

static void pending_unlink(struct pending *pw)
{
	for (struct pending **p = &pw->s->pending; *p; p = &(*p)->next)
		if (*p == pw) {
			*p = pw->next;
			return;
		}
}

static void committed(void *arg, const struct ctl_etcd_result *r)
{
	struct pending *pw = arg;
	struct etcd_store *s = pw->s;
	int rc = outcome(s, pw->what, r->rc, pw->was_fenced, r->succeeded, r->maybe_applied,
			 r->err ? r->err : "");

	if (!rc && pw->del)
		rc = !r->deleted;
	pending_unlink(pw);
	pw->done(pw->arg, rc, s->err);
	free(pw);
}

static int commit_async(struct etcd_store *s, struct ctl_etcd_txn *t, const char *what, bool del,
			fx_store_done done, void *arg)
{
	struct pending *pw = calloc(1, sizeof(*pw));
	struct ctl_etcd_txn *outer, *c = pw ? fenced(s, t, &outer) : NULL;

	if (!c || ctl_etcd_txn_commit_async(s->as, c, committed, pw)) {
		if (c)
			ctl_etcd_txn_free(outer);
		free(pw);
		snprintf(s->err, sizeof(s->err), "%s: out of memory", what);
		return -1;
	}
	*pw = (struct pending){s, s->pending, what, outer != NULL, del, done, arg};
	s->pending = pw;
	ctl_etcd_txn_free(outer);
	return 0;
}

/* P + parts, to free */
static char *key(struct etcd_store *s, const char *a, const char *b, const char *c)
{
	size_t n = strlen(s->prefix) + strlen(a) + (b ? strlen(b) + 1 : 0) + (c ? strlen(c) : 0);
	char *k = malloc(n + 1);

	if (k)
		snprintf(k, n + 1, "%s%s%s%s%s", s->prefix, a, b ? b : "", c ? "/" : "",
			 c ? c : "");
	return k;
}

static void pad(char out[REV_DIGITS + 1], uint64_t rv)
{
	snprintf(out, REV_DIGITS + 1, "%0*" PRIu64, REV_DIGITS, rv);
}

/* a read that still answers without a quorum, from the member's copy */
static int get(struct etcd_store *s, const char *k, bool prefix, struct ctl_etcd_kvs *out)
{
	int rc = ctl_etcd_get(s->e, k, prefix, false, out);

	if (rc == CTL_ETCD_NO_QUORUM) {
		ctl_log("store: etcd has no quorum; reading %s from the member's copy", k);
		rc = ctl_etcd_get(s->e, k, prefix, true, out);
	}
	return rc;
}

/* the app's key and the revision's; the txn that moves the revision to rv
 * along with ops (added by the caller to both branches) */
static struct ctl_etcd_txn *rev_txn(struct etcd_store *s, const char *rev_key, uint64_t rv)
{
	struct ctl_etcd_txn *t = ctl_etcd_txn_new();
	char v[REV_DIGITS + 1];

	pad(v, rv);
	if (t) {
		ctl_etcd_txn_cmp_value(t, rev_key, CTL_ETCD_LESS, v, REV_DIGITS);
		ctl_etcd_txn_put(t, true, rev_key, v, REV_DIGITS, 0);
	}
	(void)s;
	return t;
}

/* the txn of an application's put (t) or delete (json NULL), to free */
static struct ctl_etcd_txn *app_txn(struct etcd_store *s, const char *ns, const char *name,
				    uint64_t rv, const char *json)
{
	char *k = key(s, "apps/", ns, name), *rk = key(s, "revision", NULL, NULL), *v = NULL;
	struct ctl_etcd_txn *t = k && rk ? rev_txn(s, rk, rv) : NULL;
	size_t n = json ? strlen(json) + 24 : 0;

	if (t && json && (v = malloc(n))) {
		n = (size_t)snprintf(v, n, "%" PRIu64 "\n%s", rv, json);
		ctl_etcd_txn_put(t, true, k, v, n, 0);
		ctl_etcd_txn_put(t, false, k, v, n, 0);
	} else if (t && !json) {
		/* the revision moves only if the application was there */
		ctl_etcd_txn_cmp(t, k, CTL_ETCD_VERSION, CTL_ETCD_GREATER, 0);
		ctl_etcd_txn_delete(t, true, k, false);
		ctl_etcd_txn_delete(t, false, k, false);
	} else {
		ctl_etcd_txn_free(t);
		t = NULL;
	}
	if (!t)
		snprintf(s->err, sizeof(s->err), "out of memory");
	free(v);
	free(k);
	free(rk);
	return t;
}

static int app_put(struct fx_store *p, const char *ns, const char *name, uint64_t rv,
		   const char *json)
{
	struct etcd_store *s = S(p);
	struct ctl_etcd_txn *t = app_txn(s, ns, name, rv, json);
	int rc = t ? commit(s, t, "write the application", NULL) : -1;

	ctl_etcd_txn_free(t);
	return rc;
}

static int app_del(struct fx_store *p, const char *ns, const char *name, uint64_t rv)
{
	struct etcd_store *s = S(p);
	struct ctl_etcd_txn *t = app_txn(s, ns, name, rv, NULL);
	int64_t deleted = 0;
	int rc = t ? commit(s, t, "delete the application", &deleted) : -1;

	ctl_etcd_txn_free(t);
	return rc ? rc : !deleted;
}

static int app_put_async(struct fx_store *p, const char *ns, const char *name, uint64_t rv,
			 const char *json, fx_store_done done, void *arg)
{
	struct etcd_store *s = S(p);
	struct ctl_etcd_txn *t = app_txn(s, ns, name, rv, json);
	int rc = t ? commit_async(s, t, "write the application", false, done, arg) : -1;

	ctl_etcd_txn_free(t);
	return rc;
}

static int app_del_async(struct fx_store *p, const char *ns, const char *name, uint64_t rv,
			 fx_store_done done, void *arg)
{
	struct etcd_store *s = S(p);
	struct ctl_etcd_txn *t = app_txn(s, ns, name, rv, NULL);
	int rc = t ? commit_async(s, t, "delete the application", true, done, arg) : -1;

	ctl_etcd_txn_free(t);
	return rc;
}

struct app_rec {
	uint64_t rv;
	const char *json;
};

static int by_rv(const void *a, const void *b)
{
	const struct app_rec *x = a, *y = b;

	return x->rv < y->rv ? -1 : x->rv > y->rv;
}

static int app_each(struct fx_store *p, int (*fn)(void *arg, const char *json, uint64_t rv),
		    void *arg)
{
	struct etcd_store *s = S(p);
	char *k = key(s, "apps/", NULL, NULL);
	struct ctl_etcd_kvs all;
	struct app_rec *recs;
	size_t n = 0;
	int rc = k ? get(s, k, true, &all) : -1, r = 0;

	free(k);
	if (rc)
		return k ? fail(s, "read the applications", rc) : -1;
	if (!(recs = calloc(all.n + 1, sizeof(*recs)))) {
		ctl_etcd_kvs_free(&all);
		snprintf(s->err, sizeof(s->err), "out of memory");
		return -1;
	}
	for (size_t i = 0; i < all.n; i++) {
		char *nl = strchr(all.kv[i].value, '\n'), *end;

		recs[n].rv = strtoull(all.kv[i].value, &end, 10);
		if (!nl || end != nl) {
			ctl_log("store: etcd key %s is not \"RV\\nJSON\"; skipped", all.kv[i].key);
			continue;
		}
		recs[n++].json = nl + 1;
	}
	qsort(recs, n, sizeof(*recs), by_rv); /* as SQLite gives them: oldest first */
	for (size_t i = 0; !r && i < n; i++)
		r = fn(arg, recs[i].json, recs[i].rv);
	free(recs);
	ctl_etcd_kvs_free(&all);
	return r;
}

static int revision(struct fx_store *p, uint64_t *rv)
{
	struct etcd_store *s = S(p);
	char *k = key(s, "revision", NULL, NULL);
	struct ctl_etcd_kvs r;
	int rc = k ? get(s, k, false, &r) : -1;

	free(k);
	if (rc)
		return fail(s, "read the revision", rc);
	*rv = r.n ? strtoull(r.kv[0].value, NULL, 10) : 0;
	ctl_etcd_kvs_free(&r);
	return 0;
}

/* "SUBNET HEX" -> its parts; -1 if it is not that */
static int node_parse(const char *v, unsigned char digest[CTL_TOKEN_HASH_LEN], int *subnet)
{
	char *end;
	long sn = strtol(v, &end, 10);

	if (end == v || *end != ' ' || sn < 0 || strlen(end + 1) != 2 * CTL_TOKEN_HASH_LEN)
		return -1;
	for (int i = 0; i < CTL_TOKEN_HASH_LEN; i++) {
		unsigned b;

		if (sscanf(end + 1 + 2 * i, "%2x", &b) != 1)
			return -1;
		if (digest)
			digest[i] = (unsigned char)b;
	}
	*subnet = (int)sn;
	return 0;
}

static int node_get(struct fx_store *p, const char *name, unsigned char digest[CTL_TOKEN_HASH_LEN],
		    int *subnet)
{
	struct etcd_store *s = S(p);
	char *k = key(s, "nodes/", name, NULL);
	struct ctl_etcd_kvs r;
	int rc = k ? get(s, k, false, &r) : -1, found;

	free(k);
	if (rc)
		return fail(s, "read a node", rc);
	found = r.n && !node_parse(r.kv[0].value, digest, subnet);
	if (r.n && !found)
		ctl_log("store: etcd key %s is not \"SUBNET HEX\"; ignored", r.kv[0].key);
	ctl_etcd_kvs_free(&r);
	return found;
}

static int node_put(struct fx_store *p, const char *name,
		    const unsigned char digest[CTL_TOKEN_HASH_LEN], int subnet)
{
	struct etcd_store *s = S(p);
	char *k = key(s, "nodes/", name, NULL), v[24 + 2 * CTL_TOKEN_HASH_LEN];
	struct ctl_etcd_txn *t = ctl_etcd_txn_new();
	int n = snprintf(v, sizeof(v), "%d ", subnet), rc;

	for (int i = 0; i < CTL_TOKEN_HASH_LEN; i++)
		n += snprintf(v + n, sizeof(v) - (size_t)n, "%02x", digest[i]);
	rc = k && t ? ctl_etcd_txn_put(t, true, k, v, (size_t)n, 0) : -1;
	rc = rc ? (snprintf(s->err, sizeof(s->err), "out of memory"), -1)
		: commit(s, t, "write a node", NULL);
	ctl_etcd_txn_free(t);
	free(k);
	return rc;
}

static int node_del(struct fx_store *p, const char *name)
{
	struct etcd_store *s = S(p);
	char *k = key(s, "nodes/", name, NULL);
	int64_t deleted = 0;
	struct ctl_etcd_txn *t = ctl_etcd_txn_new();
	int rc = k && t ? ctl_etcd_txn_delete(t, true, k, false) : -1;

	rc = rc ? (snprintf(s->err, sizeof(s->err), "out of memory"), -1)
		: commit(s, t, "delete a node", &deleted);
	ctl_etcd_txn_free(t);
	free(k);
	return rc ? rc : !deleted;
}

static int node_each(struct fx_store *p, int (*fn)(void *arg, const char *name, int subnet),
		     void *arg)
{
	struct etcd_store *s = S(p);
	char *k = key(s, "nodes/", NULL, NULL);
	size_t skip = k ? strlen(k) : 0;
	struct ctl_etcd_kvs all;
	int rc = k ? get(s, k, true, &all) : -1, r = 0, subnet;

	free(k);
	if (rc)
		return fail(s, "read the nodes", rc);
	for (size_t i = 0; !r && i < all.n; i++)
		if (!node_parse(all.kv[i].value, NULL, &subnet))
			r = fn(arg, all.kv[i].key + skip, subnet);
	ctl_etcd_kvs_free(&all);
	return r;
}

static const char *errmsg(struct fx_store *p)
{
	return S(p)->err;
}

static void store_close(struct fx_store *p)
{
	struct etcd_store *s;

	if (!p)
		return;
	s = S(p);
	ctl_etcd_async_free(s->as);
	while (s->pending) {
		struct pending *pw = s->pending;

		s->pending = pw->next;
		free(pw);
	}
	ctl_etcd_free(s->e);
	free(s->prefix);
	free(s);
}

static const struct fx_store_ops etcd_ops = {
    .app_put = app_put,
    .app_del = app_del,
    .app_put_async = app_put_async,
    .app_del_async = app_del_async,
    .app_each = app_each,
    .revision = revision,
    .node_get = node_get,
    .node_put = node_put,
    .node_del = node_del,
    .node_each = node_each,
    .errmsg = errmsg,
    .close = store_close,
};

int fx_store_async_fd(struct fx_store *p)
{
	return p && p->ops == &etcd_ops ? ctl_etcd_async_fd(S(p)->as) : -1;
}

int fx_store_async_poll(struct fx_store *p)
{
	if (!p || p->ops != &etcd_ops)
		return -1;
	ctl_etcd_async_poll(S(p)->as);
	return ctl_etcd_async_next_ms(S(p)->as);
}

/* ---- a standby's view: the applications as they change ---- */

struct fx_store_watch {
	struct ctl_etcd_watch *w;
	struct fx_store_app_hooks h;
	size_t skip; /* strlen(P "apps/") */
};

/* P apps/NS/NAME -> NS and NAME (cut in a copy); -1 if not that */
static int app_key(struct fx_store_watch *sw, const char *key, char *buf, size_t len, char **name)
{
	if (strlen(key) <= sw->skip || strlen(key + sw->skip) >= len)
		return -1;
	strcpy(buf, key + sw->skip);
	if (!(*name = strchr(buf, '/')) || !(*name)[1])
		return -1;
	*(*name)++ = 0;
	return 0;
}

static void app_put_kv(struct fx_store_watch *sw, const struct ctl_etcd_kv *kv)
{
	char buf[512], *name, *end;
	uint64_t rv = strtoull(kv->value, &end, 10);

	if (app_key(sw, kv->key, buf, sizeof(buf), &name) || *end != '\n')
		ctl_log("store: etcd key %s is not an application; skipped", kv->key);
	else
		sw->h.put(sw->h.arg, buf, name, rv, end + 1);
}

static void on_snapshot(void *arg, const struct ctl_etcd_kvs *all)
{
	struct fx_store_watch *sw = arg;

	sw->h.reset(sw->h.arg);
	for (size_t i = 0; i < all->n; i++)
		app_put_kv(sw, &all->kv[i]);
	if (sw->h.synced)
		sw->h.synced(sw->h.arg);
}

static void on_events(void *arg, const struct ctl_etcd_event *ev, size_t n)
{
	struct fx_store_watch *sw = arg;
	char buf[512], *name;

	for (size_t i = 0; i < n; i++)
		if (ev[i].type == CTL_ETCD_PUT)
			app_put_kv(sw, &ev[i].kv);
		else if (!app_key(sw, ev[i].kv.key, buf, sizeof(buf), &name))
			sw->h.del(sw->h.arg, buf, name);
}

static void on_trouble(void *arg, int rc, const char *msg)
{
	(void)arg;
	ctl_log("store: watching the applications: %s: %s", ctl_etcd_rc_name(rc), msg);
}

struct fx_store_watch *fx_store_etcd_watch_apps(struct fx_store *p,
						const struct fx_store_app_hooks *h)
{
	const struct ctl_etcd_watch_hooks wh = {NULL, on_snapshot, on_events, on_trouble};
	struct fx_store_watch *sw;
	struct ctl_etcd_watch_hooks mine = wh;
	char *k;

	if (!p || p->ops != &etcd_ops || !(sw = calloc(1, sizeof(*sw))))
		return NULL;
	sw->h = *h;
	mine.arg = sw;
	k = key(S(p), "apps/", NULL, NULL);
	sw->skip = k ? strlen(k) : 0;
	if (!k || !(sw->w = ctl_etcd_watch_start(S(p)->e, k, 0, &mine))) {
		free(k);
		free(sw);
		return NULL;
	}
	free(k);
	return sw;
}

int fx_store_watch_poll(struct fx_store_watch *sw, int timeout_ms)
{
	return ctl_etcd_watch_poll(sw->w, timeout_ms);
}

int fx_store_watch_fd(const struct fx_store_watch *sw)
{
	return ctl_etcd_watch_fd(sw->w);
}

int fx_store_watch_next_ms(const struct fx_store_watch *sw)
{
	return ctl_etcd_watch_next_ms(sw->w);
}

void fx_store_watch_stop(struct fx_store_watch *sw)
{
	if (sw)
		ctl_etcd_watch_stop(sw->w);
	free(sw);
}

struct ctl_etcd *fx_store_etcd_client(struct fx_store *p)
{
	return p && p->ops == &etcd_ops ? S(p)->e : NULL;
}

int fx_store_etcd_fence(struct fx_store *p, struct ctl_etcd_elect *leader)
{
	if (!p || p->ops != &etcd_ops)
		return -1;
	S(p)->leader = leader;
	return 0;
}

struct fx_store *fx_store_etcd_open(const struct fx_store_etcd_conf *c, char *err, size_t errlen)
{
	const struct ctl_etcd_conf ec = {c->endpoints, c->ca, c->cert, c->key, c->timeout_ms};
	struct etcd_store *s = calloc(1, sizeof(*s));
	char zero[REV_DIGITS + 1], *rk;
	struct ctl_etcd_txn *t;
	bool created;
	int rc = -1;

	if (!s ||
	    !(s->prefix = strdup(c->prefix && c->prefix[0] ? c->prefix : "/xgate/fornaxd/"))) {
		snprintf(err, errlen, "out of memory");
		free(s);
		return NULL;
	}
	s->pub.ops = &etcd_ops;
	if (!(s->e = ctl_etcd_new(&ec, err, errlen)) || !(s->as = ctl_etcd_async_new(s->e))) {
		if (s->e && !s->as)
			snprintf(err, errlen, "out of memory");
		store_close(&s->pub);
		return NULL;
	}
	/* the revision key exists from the start: a value compare with a
	 * missing key fails, so "move it up" needs one to compare with */
	pad(zero, 0);
	rk = key(s, "revision", NULL, NULL);
	t = rk ? ctl_etcd_txn_new() : NULL;
	if (!t) {
		snprintf(err, errlen, "out of memory");
		free(rk);
		store_close(&s->pub);
		return NULL;
	} else {
		ctl_etcd_txn_cmp(t, rk, CTL_ETCD_CREATE, CTL_ETCD_EQUAL, 0);
		ctl_etcd_txn_put(t, true, rk, zero, REV_DIGITS, 0);
		rc = ctl_etcd_txn_commit(s->e, t, &created, NULL, NULL);
	}
	ctl_etcd_txn_free(t);
	free(rk);
	if (rc == CTL_ETCD_NO_QUORUM) {
		/* reads of what the member knows still work; writes will say why not */
		ctl_log("store: %s; starting on the member's copy", ctl_etcd_errmsg(s->e));
	} else if (rc) {
		snprintf(err, errlen, "etcd store %s: %s: %s", s->prefix, ctl_etcd_rc_name(rc),
			 ctl_etcd_errmsg(s->e));
		store_close(&s->pub);
		return NULL;
	}
	return &s->pub;
}
