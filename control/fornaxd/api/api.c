// SPDX-License-Identifier: BSD-2-Clause
/*
 * The core.fornax-serverless.centaurusinfra.io/v1 API: routing through the
 * resource table, and the handlers. Objects come from the core; lists and
 * watches are api_watch.c's. Every refusal is a Status with the field
 * path. The discovery documents kubectl reads come from the same table
 * (the base's ctl_discovery).
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
#include "api_int.h"

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

void api_respond(struct ctl_http_resp *rs, int code, json_t *v)
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

void api_err(struct ctl_http_resp *rs, int code, const char *field, const char *fmt, ...)
{
	char msg[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	api_respond(rs, code, ctl_k8s_status(code, NULL, msg, field));
}

void api_fail(struct ctl_http_resp *rs, const struct fx_err *e)
{
	api_respond(rs, e->code, ctl_k8s_status(e->code, NULL, e->msg, e->field));
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

static const char *allow_of(const struct resource *r, bool item)
{
	if (!item)
		return r->create ? "GET, POST" : "GET";
	if (r->update)
		return r->patch ? "GET, PUT, PATCH, DELETE" : "GET, PUT, DELETE";
	return r->remove ? "GET, DELETE" : "GET";
}

/* An application write answered when the store has it (fx_core_app_write):
 * the loop serves other requests meanwhile. */
struct app_later {
	struct ctl_http_later *l;
	int code;
};

static void app_done(void *arg, json_t *out, const struct fx_err *e)
{
	struct app_later *al = arg;
	struct ctl_http_resp rs = {0};

	if (out)
		api_respond(&rs, al->code, out);
	else
		api_fail(&rs, e);
	ctl_http_answer(al->l, &rs);
	free(al);
}

/* 0: deferred; -1: not possible here (no connection, or out of memory) */
static int app_write_later(struct fx_api *a, const struct ctl_http_req *rq, const struct route *rt,
			   json_t *body, int code)
{
	struct app_later *al = rq->conn ? calloc(1, sizeof(*al)) : NULL;
	enum fx_wop op = rq->method == CTL_POST	   ? FX_W_CREATE
			 : rq->method == CTL_PUT   ? FX_W_UPDATE
			 : rq->method == CTL_PATCH ? FX_W_PATCH
						   : FX_W_DELETE;

	if (!al || !(al->l = ctl_http_defer(rq->conn))) {
		free(al);
		return -1;
	}
	al->code = code;
	fx_core_app_write(a->core, op, rt->ns, rt->name[0] ? rt->name : NULL, body, app_done, al);
	return 0;
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
		return api_respond(rs, code, doc);
	}
	if (!strcmp(rq->path, PREFIX "/")) {
		if (rq->method != CTL_GET)
			return api_err(rs, 405, NULL, "%s: GET only", rq->path);
		return api_respond(rs, 200, fx_api_resource_list());
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
			return api_respond(rs, 200, o);
		}
		return api_want_watch(rq->query) ? api_watch(a, &rt, rq->query, rs)
						 : api_list(a, &rt, rq->query, rs);
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
	if (rt.r->k == FX_K_APP && (rq->method != CTL_PATCH || json_is_object(body)) &&
	    !app_write_later(a, rq, &rt, body, code)) {
		json_decref(body);
		return; /* rs stays empty: answered by app_done */
	}
	if (op(a, &rt, body, &out, &e)) {
		json_decref(body);
		return api_fail(rs, &e);
	}
	json_decref(body);
	api_respond(rs, code, out);
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
		    api_labels_known(a, a->all[k], k, NULL)) {
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
