// SPDX-License-Identifier: BSD-2-Clause
/*
 * The HTTP/JSON API's routing and handlers: a request (method, path, query,
 * body) in, a status and a JSON body out. The transport (http.c) has already
 * checked the token and the body size; nothing here knows about lws, so the
 * unit tests drive it directly. URLs and codes: docs/edgecluster.md. The
 * mission list (streamed) and MissionList creates are in api_list.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "api.h"
#include "ctl_discovery.h"

#define PREFIX "/apis/" EC_API_VERSION

int api_respond(struct api_resp *rs, int code, json_t *v)
{
	rs->code = code;
	rs->content_type = "application/json";
	rs->body = v ? json_dumps(v, JSON_COMPACT) : NULL;
	json_decref(v);
	if (!rs->body) {
		rs->code = 500;
		rs->body =
		    strdup("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
			   "\"message\":\"out of memory\",\"reason\":\"InternalError\","
			   "\"code\":500}");
	}
	return 0;
}

void api_error(struct api_resp *rs, int code, const char *reason, const char *msg,
	       const char *field)
{
	(void)api_respond(rs, code, ec_status(code, reason, msg, field));
}

int api_errorf(struct api_resp *rs, int code, const char *reason, const char *field,
	       const char *fmt, ...)
{
	char msg[700];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return api_respond(rs, code, ec_status(code, reason, msg, field));
}

int api_store_failed(struct ecd *d, struct api_resp *rs, const char *what)
{
	ctl_log("store: %s: %s", what, ec_store_errmsg(&d->store));
	/* etcd took the write and did not answer: it may still be applied */
	if (ec_store_maybe_applied(&d->store))
		return api_errorf(rs, 504, "Timeout", NULL,
				  "the store did not answer (%s): the write may still be applied; "
				  "read it back",
				  what);
	return api_errorf(rs, 500, NULL, NULL, "the store failed (%s); nothing was written", what);
}

/* "k=v&k2=v2" -> the value of key, or NULL. */
const char *api_query(const char *q, const char *key, char *buf, size_t len)
{
	size_t kl = strlen(key);

	while (q && *q) {
		const char *amp = strchr(q, '&');
		size_t n = amp ? (size_t)(amp - q) : strlen(q);

		if (n > kl && !strncmp(q, key, kl) && q[kl] == '=') {
			snprintf(buf, len, "%.*s", (int)(n - kl - 1), q + kl + 1);
			return buf;
		}
		q = amp ? amp + 1 : NULL;
	}
	return NULL;
}

/* A body the handlers can use: JSON media type, present, parseable. */
static json_t *json_body(const struct api_req *rq, struct api_resp *rs)
{
	const char *ct = rq->content_type;
	json_error_t je;
	json_t *v;

	if (strncasecmp(ct, "application/json", 16) || (ct[16] && ct[16] != ';' && ct[16] != ' ')) {
		api_errorf(rs, 415, NULL, NULL,
			   "Content-Type must be application/json, not '%.64s'",
			   *ct ? ct : "(none)");
		return NULL;
	}
	if (!rq->body || !rq->body_len) {
		api_errorf(rs, 400, NULL, NULL, "the request needs a JSON body");
		return NULL;
	}
	v = json_loadb(rq->body, rq->body_len, JSON_REJECT_DUPLICATES, &je);
	if (!v)
		api_errorf(rs, 400, NULL, NULL, "invalid JSON at line %d column %d: %s", je.line,
			   je.column, je.text);
	return v;
}

static int rv_param(const struct api_req *rq, struct api_resp *rs, uint64_t *rv)
{
	char buf[32], *end;
	const char *v = api_query(rq->query, "resourceVersion", buf, sizeof(buf));

	*rv = 0;
	if (!v)
		return 0;
	errno = 0;
	*rv = strtoull(v, &end, 10);
	/* strtoull takes " +7", "07" and saturates past 2^64-1: none is a version */
	if (*v < '1' || *v > '9' || *end || errno) {
		api_errorf(
		    rs, 400, NULL, "resourceVersion",
		    "resourceVersion: '%s' is not a resourceVersion (a decimal number from 1 "
		    "to 18446744073709551615 without leading zeros)",
		    v);
		return -1;
	}
	return 0;
}

/* ?watch=1 or =true, as Kubernetes takes it */
static bool is_watch(const struct api_req *rq)
{
	char buf[8];
	const char *v = api_query(rq->query, "watch", buf, sizeof(buf));

	return v && (!strcmp(v, "1") || !strcmp(v, "true"));
}

static int not_found(struct api_resp *rs, const char *res, const char *name)
{
	return api_errorf(rs, 404, NULL, NULL, "%s \"%.253s\" not found", res, name);
}

/* ---- missions ---- */

static int mission_get(struct ecd *d, const char *name, struct api_resp *rs)
{
	struct ec_row r;
	int rc = ec_check_dns_subdomain(name) ? EC_ST_NOTFOUND
					      : ec_store_get(&d->store, EC_T_MISSIONS, name, &r);

	if (rc == EC_ST_NOTFOUND)
		return not_found(rs, "missions", name);
	if (rc)
		return api_store_failed(d, rs, "get mission");
	api_respond(rs, 200, ec_object_json("Mission", &r));
	ec_row_free(&r);
	return 0;
}

static int validate(json_t *body, enum ec_op op, struct ec_mission_in *in, struct api_resp *rs)
{
	struct ec_verr e;

	if (!ec_mission_validate(body, op, in, &e))
		return 0;
	api_error(rs, e.code, NULL, e.msg, e.field);
	return -1;
}

int api_row_from_in(struct ec_row *r, const struct ec_mission_in *in)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", in->name);
	r->labels = json_dumps(in->labels, JSON_COMPACT);
	r->annotations = json_dumps(in->annotations, JSON_COMPACT);
	r->spec = json_dumps(in->spec, JSON_COMPACT);
	return r->labels && r->annotations && r->spec ? 0 : -1;
}

static int mission_create(struct ecd *d, const struct api_req *rq, struct api_resp *rs)
{
	struct ec_mission_in in;
	json_t *body = json_body(rq, rs);
	struct ec_row r;
	int rc;

	if (!body) {
		/* the transport let it in under the MissionList limit; over
		 * MaxBody, a body that is not a list is too large, not malformed */
		if (rs->code == 400 && rq->body_len > d->conf.max_body) {
			free(rs->body);
			api_errorf(rs, 413, NULL, NULL,
				   "request body of %zu bytes is over the limit of %zu bytes",
				   rq->body_len, d->conf.max_body);
		}
		return 0;
	}
	if (ec_is_list(body, "MissionList")) {
		api_mission_create_list(d, rq, body, rs);
		json_decref(body);
		return 0;
	}
	if (rq->body_len > d->conf.max_body) {
		json_decref(body);
		return api_errorf(rs, 413, NULL, NULL,
				  "request body of %zu bytes is over the limit of %zu bytes "
				  "(larger bodies only for a MissionList)",
				  rq->body_len, d->conf.max_body);
	}
	if (validate(body, EC_OP_CREATE, &in, rs)) {
		json_decref(body);
		return 0;
	}
	rc = api_row_from_in(&r, &in);
	ec_uuid4(r.uid);
	ec_timestamp(time(NULL), r.created);
	if (!rc)
		rc = ec_store_create(&d->store, EC_T_MISSIONS, &r);
	if (rc == EC_ST_EXISTS)
		api_errorf(rs, 409, "AlreadyExists", "metadata.name",
			   "missions \"%s\" already exists", r.name);
	else if (rc)
		api_store_failed(d, rs, "create mission");
	else {
		ctl_log("mission %s created (rv %" PRIu64 ") by %s", r.name, r.rv, rq->peer);
		api_respond(rs, 201, ec_object_json("Mission", &r));
		if (d->on_mission) /* apply it here if it matches */
			d->on_mission(d, r.name, false);
	}
	ec_row_free(&r);
	ec_mission_in_free(&in);
	json_decref(body);
	return 0;
}

/* A PUT's body, or a PATCH's result: the whole new object (taken). */
static int replace_with(struct ecd *d, const char *name, json_t *body, const struct api_req *rq,
			struct api_resp *rs)
{
	struct ec_mission_in in = {0};
	struct ec_row cur = {0}, r = {0};
	int rc;

	if (validate(body, EC_OP_REPLACE, &in, rs))
		goto out;
	if (strcmp(in.name, name)) {
		api_errorf(rs, 400, NULL, "metadata.name",
			   "metadata.name: \"%s\" does not match the name in the URL (\"%.253s\")",
			   in.name, name);
		goto out;
	}
	rc = ec_store_get(&d->store, EC_T_MISSIONS, name, &cur);
	if (rc) {
		if (rc == EC_ST_NOTFOUND)
			not_found(rs, "missions", name);
		else
			api_store_failed(d, rs, "get mission");
		goto out;
	}
	if (in.uid && *in.uid && strcmp(in.uid, cur.uid)) {
		api_errorf(
		    rs, 409, NULL, "metadata.uid",
		    "metadata.uid: %s is not the uid of missions \"%s\" (%s): it was deleted and "
		    "created again",
		    in.uid, name, cur.uid);
		goto out;
	}
	if (in.rv != cur.rv)
		goto conflict;
	if (ec_json_same_text(cur.spec, in.spec) && ec_json_same_text(cur.labels, in.labels) &&
	    ec_json_same_text(cur.annotations, in.annotations)) {
		/* nothing changes: no write, no new resourceVersion */
		api_respond(rs, 200, ec_object_json("Mission", &cur));
		goto out;
	}
	if (api_row_from_in(&r, &in)) {
		api_store_failed(d, rs, "out of memory");
		goto out;
	}
	rc = ec_store_replace(&d->store, EC_T_MISSIONS, &r, in.rv);
	if (rc == EC_ST_CONFLICT)
		goto conflict;
	if (rc == EC_ST_NOTFOUND)
		not_found(rs, "missions", name);
	else if (rc)
		api_store_failed(d, rs, "replace mission");
	else {
		ctl_log("mission %s %s (rv %" PRIu64 ") by %s", name,
			rq->method == EC_PATCH ? "patched" : "replaced", r.rv, rq->peer);
		api_respond(rs, 200, ec_object_json("Mission", &r));
		if (d->on_mission) /* re-apply if what it runs changed */
			d->on_mission(d, name, false);
	}
	goto out;
conflict:
	api_errorf(rs, 409, NULL, "metadata.resourceVersion",
		   "missions \"%s\": resourceVersion %" PRIu64 " is not the current one (%" PRIu64
		   "): the mission was modified; get it again and retry",
		   name, in.rv, cur.rv);
out:
	ec_row_free(&cur);
	ec_row_free(&r);
	ec_mission_in_free(&in);
	json_decref(body);
	return 0;
}

static int mission_replace(struct ecd *d, const char *name, const struct api_req *rq,
			   struct api_resp *rs)
{
	json_t *body = json_body(rq, rs);

	return body ? replace_with(d, name, body, rq, rs) : 0;
}

/* PATCH with an RFC 7386 merge patch (what kubectl apply sends for a
 * resource it has no schema of): the stored object with the patch merged
 * in, then exactly a PUT of the result, so the same rules hold (a
 * resourceVersion in the patch is a precondition, the name and uid cannot
 * change, state is ignored). */
static int mission_patch(struct ecd *d, const char *name, const struct api_req *rq,
			 struct api_resp *rs)
{
	const char *ct = rq->content_type;
	json_error_t je;
	json_t *patch, *cur, *merged;
	struct ec_row r;
	int rc;

	if (!ctl_k8s_media_is(ct, "application/merge-patch+json"))
		return api_errorf(
		    rs, 415, NULL, NULL,
		    "Content-Type must be application/merge-patch+json (RFC 7386), not "
		    "'%.64s': JSON patch and strategic merge patch are not served",
		    *ct ? ct : "(none)");
	if (!rq->body || !rq->body_len)
		return api_errorf(rs, 400, NULL, NULL, "the request needs a JSON merge patch body");
	patch = json_loadb(rq->body, rq->body_len, JSON_REJECT_DUPLICATES, &je);
	if (!patch)
		return api_errorf(rs, 400, NULL, NULL, "invalid JSON at line %d column %d: %s",
				  je.line, je.column, je.text);
	if (!json_is_object(patch)) {
		json_decref(patch);
		return api_errorf(rs, 400, NULL, NULL,
				  "a merge patch of a Mission must be a JSON object (it would "
				  "replace the whole object)");
	}
	rc = ec_check_dns_subdomain(name) ? EC_ST_NOTFOUND
					  : ec_store_get(&d->store, EC_T_MISSIONS, name, &r);
	if (rc) {
		json_decref(patch);
		return rc == EC_ST_NOTFOUND ? not_found(rs, "missions", name)
					    : api_store_failed(d, rs, "get mission");
	}
	cur = ec_object_json("Mission", &r);
	ec_row_free(&r);
	merged = cur ? ctl_k8s_merge_patch(cur, patch) : NULL;
	json_decref(cur);
	json_decref(patch);
	if (!merged)
		return api_errorf(rs, 500, NULL, NULL, "out of memory");
	return replace_with(d, name, merged, rq, rs);
}

static int mission_delete(struct ecd *d, const char *name, const struct api_req *rq,
			  struct api_resp *rs)
{
	struct ec_row old;
	uint64_t rv;
	int rc;

	if (rv_param(rq, rs, &rv))
		return 0;
	rc = ec_check_dns_subdomain(name)
		 ? EC_ST_NOTFOUND
		 : ec_store_delete(&d->store, EC_T_MISSIONS, name, rv, &old);
	if (rc == EC_ST_NOTFOUND)
		return not_found(rs, "missions", name);
	if (rc == EC_ST_CONFLICT)
		return api_errorf(rs, 409, NULL, "resourceVersion",
				  "missions \"%s\": resourceVersion %" PRIu64
				  " is not the current one: the mission was modified",
				  name, rv);
	if (rc)
		return api_store_failed(d, rs, "delete mission");
	ctl_log("mission %s deleted (was rv %" PRIu64 ") by %s", name, old.rv, rq->peer);
	api_respond(rs, 200, ec_object_json("Mission", &old));
	ec_row_free(&old);
	if (d->on_mission) /* run the reverse of what was applied */
		d->on_mission(d, name, true);
	return 0;
}

/* ---- edge clusters: this one and (tree.c) its descendants ---- */

/* this cluster and its descendants come from tree.c (their paths,
 * health and heartbeats are the tree's) */
static int cluster_get(struct ecd *d, const char *name, struct api_resp *rs)
{
	json_t *out;
	int rc = tree_clusters_json(d, name, &out);

	if (rc == EC_ST_NOTFOUND)
		return not_found(rs, "edgeclusters", name);
	if (rc)
		return api_store_failed(d, rs, "get cluster");
	return api_respond(rs, 200, out);
}

/* ---- routing ---- */

/* What kubectl reads to map "missions" to a URL (the base's documents).
 * Both resources are cluster-scoped: a Mission is placed on clusters by its
 * spec, not by a namespace. */
static const struct ctl_api_resource resources[] = {
    {"missions", "mission", "Mission", false, "create delete get list patch update watch", NULL},
    {"edgeclusters", "edgecluster", "EdgeCluster", false, "get list", NULL},
};

static int discovery(struct ecd *d, const struct api_req *rq, struct api_resp *rs)
{
	static const struct ctl_api_group_version gv = {EC_GROUP, "v1", resources,
							sizeof(resources) / sizeof(resources[0])};
	char addr[INET_ADDRSTRLEN + 8], ip[INET_ADDRSTRLEN];
	struct ctl_discovery disc = {&gv, 1, NULL, addr};
	json_t *body;
	int code;

	inet_ntop(AF_INET, &d->conf.listen.sin_addr, ip, sizeof(ip));
	snprintf(addr, sizeof(addr), "%s:%u", ip, ntohs(d->conf.listen.sin_port));
	code = ctl_discovery_serve(&disc, rq->path, &body);
	return api_respond(rs, code, body);
}

static int not_allowed(const struct api_req *rq, struct api_resp *rs, const char *allow)
{
	api_errorf(rs, 405, NULL, NULL, "%s is not allowed on %s (allowed: %s)",
		   rq->method_name ? rq->method_name : "this method", rq->path, allow);
	rs->allow = allow;
	return 0;
}

bool api_is_public(const char *path)
{
	return !strcmp(path, "/healthz");
}

/* "/PREFIX/RES" -> "" (collection), "/PREFIX/RES/NAME" -> "NAME", else NULL. */
static const char *route(const char *path, const char *res)
{
	size_t pl = strlen(PREFIX), rl = strlen(res);

	if (strncmp(path, PREFIX, pl) || path[pl] != '/' || strncmp(path + pl + 1, res, rl))
		return NULL;
	path += pl + 1 + rl;
	if (!*path)
		return "";
	if (*path != '/' || !path[1] || strchr(path + 1, '/'))
		return NULL;
	return path + 1;
}

static int dispatch(struct ecd *d, const struct api_req *rq, struct api_resp *rs)
{
	const char *name;

	if (!strcmp(rq->path, "/healthz")) {
		char txt[400];

		if (rq->method != EC_GET)
			return not_allowed(rq, rs, "GET");
		/* a standby is not where clients and children go: a load balancer's
		 * check of /healthz takes it out */
		snprintf(txt, sizeof(txt), "standby; the leader is %s\n",
			 d->standby && d->leader && d->leader(d)[0] ? d->leader(d)
								    : "not known yet");
		rs->code = d->standby ? 503 : 200;
		rs->content_type = "text/plain";
		rs->body = strdup(d->standby ? txt : "ok\n");
		return 0;
	}
	/* a standby root serves reads from its view of etcd; writes go to the
	 * leader (no forwarding: the client retries there, with its own token) */
	if (d->standby && rq->method != EC_GET) {
		const char *who = d->leader ? d->leader(d) : "";

		return api_errorf(rs, 503, "ServiceUnavailable", NULL,
				  "this edgeclusterd is a standby root and serves reads only: send "
				  "%s to the leader, %s",
				  rq->method_name ? rq->method_name : "writes",
				  who[0] ? who : "(not known yet)");
	}
	if (!strcmp(rq->path, CTL_DISCOVERY_OPENAPI_PATH)) {
		if (rq->method != EC_GET)
			return not_allowed(rq, rs, "GET");
		rs->code = 200;
		rs->content_type = CTL_DISCOVERY_OPENAPI_TYPE;
		rs->body = strdup(ctl_discovery_openapi);
		return 0;
	}
	if (ctl_discovery_match(rq->path)) { /* /api, /apis, ..., /version */
		if (rq->method != EC_GET)
			return not_allowed(rq, rs, "GET");
		return discovery(d, rq, rs);
	}
	if ((name = route(rq->path, "missions"))) {
		if (!*name) {
			if (rq->method == EC_GET && is_watch(rq)) /* api_watch.c */
				return api_mission_watch(d, rq, rs);
			if (rq->method == EC_GET) /* streamed: api_list.c */
				return api_mission_list(d, rq, rs);
			if (rq->method == EC_POST)
				return mission_create(d, rq, rs);
			return not_allowed(rq, rs, "GET, POST");
		}
		if (rq->method == EC_GET)
			return mission_get(d, name, rs);
		if (rq->method == EC_PUT)
			return mission_replace(d, name, rq, rs);
		if (rq->method == EC_PATCH)
			return mission_patch(d, name, rq, rs);
		if (rq->method == EC_DELETE)
			return mission_delete(d, name, rq, rs);
		return not_allowed(rq, rs, "GET, PUT, PATCH, DELETE");
	}
	if (!strcmp(rq->path, PREFIX "/attach")) { /* the attach state machine */
		api_attach(d, rq, rs);
		return 0;
	}
	if ((name = route(rq->path, "edgeclusters"))) {
		if (rq->method != EC_GET)
			return not_allowed(rq, rs, "GET");
		return cluster_get(d, *name ? name : NULL, rs);
	}
	return api_errorf(rs, 404, NULL, NULL, "no such path: %.200s (the API is under " PREFIX ")",
			  rq->path);
}

void api_handle(struct ecd *d, const struct api_req *rq, struct api_resp *rs)
{
	memset(rs, 0, sizeof(*rs));
	dispatch(d, rq, rs);
}
