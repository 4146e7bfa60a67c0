// SPDX-License-Identifier: BSD-2-Clause
/*
 * The core.fornax-serverless.centaurusinfra.io/v1 API: routing through the
 * resource table, and the handlers. Objects come from the core; lists are
 * the base's ctl_list over a copy of the collection taken at the request,
 * watches the base's ctl_watch (one per kind for all namespaces, and one
 * per kind and namespace, made at the first watch of that namespace).
 * Every refusal is a Status with the field path. The discovery documents
 * kubectl reads come from the same table (the base's ctl_discovery).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "ctl_discovery.h"
#include "ctl_k8s.h"
#include "ctl_list.h"
#include "ctl_log.h"
#include "ctl_watch.h"

#define PREFIX	     "/apis/" FX_API_VERSION
#define WATCH_RING   1024
#define WATCH_BUF    (4u << 20)
#define NS_WATCH_MAX 256 /* namespaces watched separately at most */

struct ns_watch {
	enum fx_kind k;
	char ns[FX_NS_MAX + 1];
	struct ctl_watch *w;
};

struct fx_api {
	struct fx_core *core;
	struct fx_store *st;
	struct fx_api_hooks h;
	struct ctl_watch *all[FX_K_COUNT];
	struct ns_watch *nsw;
	size_t n_nsw;
	bool standby;	  /* reads only: another fornaxd leads */
	char leader[320]; /* who leads, as its election key says ("" unknown) */
};

struct fx_stream {
	struct ctl_list *list;
	struct ctl_watcher *watcher;
	void (*wake)(void *conn);
	void *conn;
};

/* What a request names, once routed. */
struct route {
	const struct resource *r;
	char ns[FX_NS_MAX + 1]; /* "" : all namespaces (or a cluster resource) */
	char name[FX_NAME_MAX + 1];
	const unsigned char *client; /* the request's (ctl_http_req) */
};

typedef int (*op_fn)(struct fx_api *a, const struct route *rt, json_t *body, json_t **out,
		     struct fx_err *e);

/* The resource table: what discovery lists and what routing follows. */
struct resource {
	const char *name, *singular, *kind;
	enum fx_kind k;
	bool namespaced;
	const char *verbs[8];
	const char *short_names[3];
	op_fn create, update, remove, patch; /* NULL: not served */
};

static int app_create(struct fx_api *a, const struct route *rt, json_t *body, json_t **out,
		      struct fx_err *e)
{
	return fx_core_app_create(a->core, rt->ns, body, out, e);
}

static int app_update(struct fx_api *a, const struct route *rt, json_t *body, json_t **out,
		      struct fx_err *e)
{
	return fx_core_app_update(a->core, rt->ns, rt->name, body, out, e);
}

static int app_delete(struct fx_api *a, const struct route *rt, json_t *body, json_t **out,
		      struct fx_err *e)
{
	(void)body;
	return fx_core_app_delete(a->core, rt->ns, rt->name, out, e);
}

/* RFC 7386 merge patch (what kubectl apply sends): the current object
 * patched, then checked and written as a PUT of it would be. */
static int app_patch(struct fx_api *a, const struct route *rt, json_t *body, json_t **out,
		     struct fx_err *e)
{
	json_t *cur, *merged;
	int rc;

	if (!json_is_object(body))
		return fx_errf(e, 400, "",
			       "a merge patch of an Application is a JSON object (anything else "
			       "would replace the whole object)");
	if (!(cur = fx_core_get(a->core, FX_K_APP, rt->ns, rt->name)))
		return fx_errf(e, 404, NULL, "applications \"%s\" not found in namespace %s",
			       rt->name, rt->ns);
	merged = ctl_k8s_merge_patch(cur, body);
	json_decref(cur);
	if (!merged)
		return fx_errf(e, 500, NULL, "out of memory");
	json_object_del(merged, "status");
	rc = fx_core_app_update(a->core, rt->ns, rt->name, merged, out, e);
	json_decref(merged);
	return rc;
}

static int sess_create(struct fx_api *a, const struct route *rt, json_t *body, json_t **out,
		       struct fx_err *e)
{
	return fx_core_session_create(a->core, rt->ns, body, rt->client, out, e);
}

static int sess_delete(struct fx_api *a, const struct route *rt, json_t *body, json_t **out,
		       struct fx_err *e)
{
	(void)body;
	return fx_core_session_delete(a->core, rt->ns, rt->name, out, e);
}

static int node_delete(struct fx_api *a, const struct route *rt, json_t *body, json_t **out,
		       struct fx_err *e)
{
	void *link = NULL;
	int rc;

	(void)body;
	/* the credential goes first: the node cannot come back with it */
	rc = a->st->ops->node_del(a->st, rt->name);
	if (rc < 0) {
		ctl_log("store: delete node %s: %s", rt->name, a->st->ops->errmsg(a->st));
		return fx_errf(e, 500, NULL, "the store failed; nothing was deleted");
	}
	if (fx_core_node_delete(a->core, rt->name, out, &link, e)) {
		if (rc == 0) { /* only a credential: that was it */
			*out = json_pack("{s:s,s:s,s:{s:s},s:s}", "apiVersion", FX_API_VERSION,
					 "kind", "Node", "metadata", "name", rt->name, "status",
					 "credential deleted");
			return 0;
		}
		return -1;
	}
	if (link && a->h.close_link)
		a->h.close_link(a->h.arg, link);
	ctl_log("node %s deleted (credential and pods forgotten)", rt->name);
	return 0;
}

static const struct resource resources[] = {
    {"applications",
     "application",
     "Application",
     FX_K_APP,
     true,
     {"get", "list", "watch", "create", "update", "patch", "delete"},
     {"app"},
     app_create,
     app_update,
     app_delete,
     app_patch},
    {"applicationsessions",
     "applicationsession",
     "ApplicationSession",
     FX_K_SESSION,
     true,
     {"get", "list", "watch", "create", "delete"},
     {"session", "as"},
     sess_create,
     NULL,
     sess_delete,
     NULL},
    {"pods",
     "pod",
     "Pod",
     FX_K_POD,
     true,
     {"get", "list", "watch"},
     {NULL},
     NULL,
     NULL,
     NULL,
     NULL},
    {"nodes",
     "node",
     "Node",
     FX_K_NODE,
     false,
     {"get", "list", "watch", "delete"},
     {NULL},
     NULL,
     NULL,
     node_delete,
     NULL},
};
#define N_RESOURCES (sizeof(resources) / sizeof(resources[0]))

json_t *fx_api_resource_list(void)
{
	json_t *list = json_array();

	for (size_t i = 0; i < N_RESOURCES; i++) {
		const struct resource *r = &resources[i];
		json_t *verbs = json_array(), *shorts = json_array();

		for (int v = 0; r->verbs[v]; v++)
			json_array_append_new(verbs, json_string(r->verbs[v]));
		for (int s = 0; r->short_names[s]; s++)
			json_array_append_new(shorts, json_string(r->short_names[s]));
		json_array_append_new(list, json_pack("{s:s,s:s,s:b,s:s,s:o,s:o}", "name", r->name,
						      "singularName", r->singular, "namespaced",
						      r->namespaced, "kind", r->kind, "verbs",
						      verbs, "shortNames", shorts));
	}
	return json_pack("{s:s,s:s,s:s,s:o}", "kind", "APIResourceList", "apiVersion", "v1",
			 "groupVersion", FX_API_VERSION, "resources", list);
}

/* The discovery documents (/api, /apis, /apis/GROUP[/VERSION], /version)
 * of the resource table. */
static json_t *discovery(const char *path, int *code)
{
	struct ctl_api_resource res[N_RESOURCES];
	char verbs[N_RESOURCES][128], shorts[N_RESOURCES][64];
	struct ctl_api_group_version gv = {FX_GROUP, "v1", res, N_RESOURCES};
	struct ctl_discovery d = {&gv, 1, NULL, NULL};
	json_t *body = NULL;

	for (size_t i = 0; i < N_RESOURCES; i++) {
		const struct resource *r = &resources[i];
		size_t off = 0;

		verbs[i][0] = shorts[i][0] = 0;
		for (int v = 0; r->verbs[v]; v++)
			off += (size_t)snprintf(verbs[i] + off, sizeof(verbs[i]) - off, "%s%s",
						v ? " " : "", r->verbs[v]);
		off = 0;
		for (int k = 0; r->short_names[k]; k++)
			off += (size_t)snprintf(shorts[i] + off, sizeof(shorts[i]) - off, "%s%s",
						k ? " " : "", r->short_names[k]);
		res[i] = (struct ctl_api_resource){r->name,	  r->singular, r->kind,
						   r->namespaced, verbs[i],    shorts[i]};
	}
	*code = ctl_discovery_serve(&d, path, &body);
	return body;
}

/* ---- answers ---- */

static void respond(struct ctl_http_resp *rs, int code, json_t *v)
{
	rs->code = code;
	rs->body = v ? json_dumps(v, JSON_COMPACT) : NULL;
	rs->content_type = "application/json";
	json_decref(v);
	if (!rs->body) {
		rs->code = 500;
		rs->body = strdup("{\"kind\":\"Status\",\"status\":\"Failure\",\"code\":500}");
	}
}

static void api_err(struct ctl_http_resp *rs, int code, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void api_err(struct ctl_http_resp *rs, int code, const char *field, const char *fmt, ...)
{
	char msg[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	respond(rs, code, ctl_k8s_status(code, NULL, msg, field));
}

static void fail(struct ctl_http_resp *rs, const struct fx_err *e)
{
	respond(rs, e->code, ctl_k8s_status(e->code, NULL, e->msg, e->field));
}

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

static const struct ctl_list_source items_source = {items_next, items_err, items_close};

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

static void do_list(struct fx_api *a, const struct route *rt, const char *query,
		    struct ctl_http_resp *rs)
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
static int labels_known(struct fx_api *a, struct ctl_watch *w, enum fx_kind k, const char *ns)
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
	    labels_known(a, n->w, k, ns)) {
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

static void do_watch(struct fx_api *a, const struct route *rt, const char *query,
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

/* ---- routing ---- */

void fx_api_set_standby(struct fx_api *a, bool standby, const char *leader)
{
	a->standby = standby;
	snprintf(a->leader, sizeof(a->leader), "%s", leader ? leader : "");
}

bool fx_api_is_public(const char *path)
{
	return !strcmp(path, "/healthz");
}

static const struct resource *resource_named(const char *name, size_t n)
{
	for (size_t i = 0; i < N_RESOURCES; i++)
		if (strlen(resources[i].name) == n && !strncmp(resources[i].name, name, n))
			return &resources[i];
	return NULL;
}

/* path after PREFIX "/": 0, or an HTTP code with rs filled */
static int route(const char *p, struct route *rt, struct ctl_http_resp *rs)
{
	const char *seg[4];
	size_t len[4];
	int n = 0;

	memset(rt, 0, sizeof(*rt));
	while (*p && n < 4) {
		const char *s = strchr(p, '/');

		seg[n] = p;
		len[n++] = s ? (size_t)(s - p) : strlen(p);
		p = s ? s + 1 : p + strlen(p);
		if (s && !*p)
			break; /* a trailing slash */
	}
	if (*p || !n) {
		api_err(rs, 404, NULL, "no such path");
		return 404;
	}
	if (len[0] == 10 && !strncmp(seg[0], "namespaces", 10)) {
		if (n < 3) {
			api_err(rs, 404, NULL, "no such path (namespaces/NS/RESOURCE[/NAME])");
			return 404;
		}
		if (len[1] > FX_NS_MAX) {
			api_err(rs, 400, "metadata.namespace", "namespace: longer than %d",
				FX_NS_MAX);
			return 400;
		}
		snprintf(rt->ns, sizeof(rt->ns), "%.*s", (int)len[1], seg[1]);
		if (ctl_k8s_dns_label(rt->ns)) {
			api_err(rs, 400, "metadata.namespace",
				"namespace '%s': must be a DNS-1123 label", rt->ns);
			return 400;
		}
		seg[0] = seg[2], len[0] = len[2];
		seg[1] = n > 3 ? seg[3] : NULL, len[1] = n > 3 ? len[3] : 0;
		n -= 2;
	}
	if (n > 2 || !(rt->r = resource_named(seg[0], len[0]))) {
		api_err(rs, 404, NULL, "no such resource '%.*s'", (int)len[0], seg[0]);
		return 404;
	}
	if (rt->ns[0] && !rt->r->namespaced) {
		api_err(rs, 404, NULL, "%s are not namespaced", rt->r->name);
		return 404;
	}
	if (n == 2) {
		if (len[1] > FX_NAME_MAX) {
			api_err(rs, 400, "metadata.name", "name: longer than %d", FX_NAME_MAX);
			return 400;
		}
		snprintf(rt->name, sizeof(rt->name), "%.*s", (int)len[1], seg[1]);
		if (rt->r->namespaced && !rt->ns[0]) {
			api_err(rs, 404, NULL, "%s are namespaced: namespaces/NS/%s/NAME",
				rt->r->name, rt->r->name);
			return 404;
		}
	}
	return 0;
}

static bool want_watch(const char *query)
{
	char buf[8];
	const char *w = qget(query, "watch", buf, sizeof(buf));

	return w && (!*w || !strcmp(w, "1") || !strcmp(w, "true"));
}

static const char *allow_of(const struct resource *r, bool item)
{
	if (!item)
		return r->create ? "GET, POST" : "GET";
	if (r->update)
		return r->patch ? "GET, PUT, PATCH, DELETE" : "GET, PUT, DELETE";
	return r->remove ? "GET, DELETE" : "GET";
}

void fx_api_handle(struct fx_api *a, const struct ctl_http_req *rq, struct ctl_http_resp *rs)
{
	struct route rt;
	struct fx_err e;
	json_t *body = NULL, *out = NULL;
	op_fn op = NULL;
	bool item;
	int code = 200;

	if (!strcmp(rq->path, "/healthz")) {
		char txt[400];

		/* 200 on the leader only: a load balancer's check sends clients there */
		snprintf(txt, sizeof(txt), "standby; the leader is %s\n",
			 a->leader[0] ? a->leader : "unknown");
		rs->code = a->standby ? 503 : 200;
		rs->body = strdup(a->standby ? txt : "ok\n");
		rs->content_type = "text/plain";
		return;
	}
	if (!strcmp(rq->path, CTL_DISCOVERY_OPENAPI_PATH)) {
		if (rq->method != CTL_GET)
			return api_err(rs, 405, NULL, "%s: GET only", rq->path);
		rs->code = 200;
		rs->content_type = CTL_DISCOVERY_OPENAPI_TYPE;
		rs->body = strdup(ctl_discovery_openapi);
		return;
	}
	if (ctl_discovery_match(rq->path)) { /* /api, /apis, /apis/GROUP[/VERSION], /version */
		json_t *doc;

		if (rq->method != CTL_GET)
			return api_err(rs, 405, NULL, "%s: GET only", rq->path);
		doc = discovery(rq->path, &code);
		return respond(rs, code, doc);
	}
	if (!strcmp(rq->path, PREFIX "/")) {
		if (rq->method != CTL_GET)
			return api_err(rs, 405, NULL, "%s: GET only", rq->path);
		return respond(rs, 200, fx_api_resource_list());
	}
	if (strncmp(rq->path, PREFIX "/", strlen(PREFIX) + 1))
		return api_err(rs, 404, NULL, "no such path '%.200s'", rq->path);
	if (route(rq->path + strlen(PREFIX) + 1, &rt, rs))
		return;
	rt.client = rq->client;
	item = rt.name[0];
	switch (rq->method) {
	case CTL_GET:
		if (item) {
			json_t *o = fx_core_get(a->core, rt.r->k, rt.ns, rt.name);

			if (!o)
				return api_err(rs, 404, NULL, "%s \"%s\" not found", rt.r->name,
					       rt.name);
			return respond(rs, 200, o);
		}
		return want_watch(rq->query) ? do_watch(a, &rt, rq->query, rs)
					     : do_list(a, &rt, rq->query, rs);
	case CTL_POST:
		op = item ? NULL : rt.r->create;
		code = 201;
		if (op && !rt.ns[0])
			return api_err(rs, 404, NULL, "create in a namespace: namespaces/NS/%s",
				       rt.r->name);
		break;
	case CTL_PUT:
		op = item ? rt.r->update : NULL;
		break;
	case CTL_DELETE:
		op = item ? rt.r->remove : NULL;
		break;
	case CTL_PATCH:
		op = item ? rt.r->patch : NULL;
		if (op && !ctl_k8s_media_is(rq->content_type, "application/merge-patch+json"))
			return api_err(rs, 415, NULL,
				       "PATCH takes application/merge-patch+json (RFC 7386), not "
				       "'%.100s'",
				       rq->content_type);
		break;
	default:
		break;
	}
	if (!op) {
		api_err(rs, 405, NULL, "%s is not served on %s%s", rq->method_name, rt.r->name,
			item ? "/NAME" : "");
		rs->allow = allow_of(rt.r, item);
		return;
	}
	if (a->standby) {
		api_err(rs, 503, NULL,
			"this fornaxd is a standby and serves reads only: send %s to the leader, "
			"%s",
			rq->method_name, a->leader[0] ? a->leader : "(not known yet)");
		return;
	}
	if (rq->method == CTL_POST || rq->method == CTL_PUT || rq->method == CTL_PATCH) {
		json_error_t je;

		if (!rq->body || !(body = json_loadb(rq->body, rq->body_len, 0, &je)))
			return api_err(rs, 400, "", "the body is not JSON: %s (line %d)",
				       rq->body ? je.text : "no body", je.line);
	}
	if (op(a, &rt, body, &out, &e)) {
		json_decref(body);
		return fail(rs, &e);
	}
	json_decref(body);
	respond(rs, code, out);
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

/* ---- setup ---- */

struct fx_api *fx_api_new(struct fx_core *core, struct fx_store *st, const struct fx_api_hooks *h)
{
	struct fx_api *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->core = core;
	a->st = st;
	if (h)
		a->h = *h;
	for (int k = 0; k < FX_K_COUNT; k++)
		if (!(a->all[k] = ctl_watch_new(fx_core_revision(core), WATCH_RING, WATCH_BUF)) ||
		    labels_known(a, a->all[k], k, NULL)) {
			fx_api_free(a);
			return NULL;
		}
	return a;
}

void fx_api_free(struct fx_api *a)
{
	if (!a)
		return;
	for (int k = 0; k < FX_K_COUNT; k++)
		ctl_watch_free(a->all[k]);
	for (size_t i = 0; i < a->n_nsw; i++)
		ctl_watch_free(a->nsw[i].w);
	free(a->nsw);
	free(a);
}
