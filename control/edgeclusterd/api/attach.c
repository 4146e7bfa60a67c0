// SPDX-License-Identifier: BSD-2-Clause
/*
 * The Attach resource (GET/PUT/DELETE /apis/edge.xgate.io/v1/attach): it
 * writes the attach record through the tree (tree_attach_set) and tells the
 * attach state machine through the context's on_attach, which main wires
 * to the uplink.
 */
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"

static void reply(struct api_resp *rs, int code, json_t *v)
{
	rs->code = code;
	rs->content_type = "application/json";
	rs->body = v ? json_dumps(v, JSON_COMPACT) : NULL;
	json_decref(v);
	if (!rs->body)
		api_error(rs, 500, NULL, "out of memory", NULL);
}

static void fail(struct api_resp *rs, int code, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void fail(struct api_resp *rs, int code, const char *field, const char *fmt, ...)
{
	char msg[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	api_error(rs, code, NULL, msg, field);
}

static json_t *attach_json(struct ecd *d, const struct ec_attach *a)
{
	json_t *st = json_pack("{s:s,s:s,s:s}", "phase", tree_phase_name(a->phase), "since",
			       a->since, "link", d->link && d->link->link_up ? "up" : "down");

	if (a->parent_name[0])
		json_object_set_new(st, "parentName", json_string(a->parent_name));
	if (d->link && d->link->parent_time[0])
		json_object_set_new(st, "parentTime", json_string(d->link->parent_time));
	if (a->credential[0] && a->cred_expires > 0) {
		char ts[EC_TS_LEN + 1];

		ec_timestamp((time_t)a->cred_expires, ts);
		json_object_set_new(st, "credentialExpires", json_string(ts));
	}
	if (a->last_error[0])
		json_object_set_new(st, "lastError", json_string(a->last_error));
	return json_pack("{s:s,s:s,s:{s:s},s:{s:s},s:o}", "apiVersion", EC_API_VERSION, "kind",
			 "Attach", "metadata", "name", d->conf.name, "spec", "parent", a->parent,
			 "state", st);
}

/* PUT body: {"apiVersion","kind":"Attach","spec":{"parent","token"}}; metadata
 * and state are ignored (server-owned), anything else is refused. */
static int attach_body(const struct api_req *rq, struct api_resp *rs, char *parent, char *token)
{
	json_t *b, *spec, *v;
	json_error_t je;
	struct ctl_url u;
	const char *k, *p, *t;
	char why[300];
	int rc = -1;

	if (strncmp(rq->content_type, "application/json", 16)) {
		fail(rs, 415, NULL, "Content-Type must be application/json");
		return -1;
	}
	b = rq->body ? json_loadb(rq->body, rq->body_len, JSON_REJECT_DUPLICATES, &je) : NULL;
	if (!json_is_object(b)) {
		fail(rs, 400, NULL, "the request needs a JSON object body");
		goto out;
	}
	json_object_foreach(b, k, v) if (strcmp(k, "apiVersion") && strcmp(k, "kind") &&
					 strcmp(k, "metadata") && strcmp(k, "spec") &&
					 strcmp(k, "state"))
	{
		fail(rs, 422, k, "%s: unknown field", k);
		goto out;
	}
	if (!json_is_string(json_object_get(b, "apiVersion")) ||
	    strcmp(json_string_value(json_object_get(b, "apiVersion")), EC_API_VERSION)) {
		fail(rs, 422, "apiVersion", "apiVersion: must be " EC_API_VERSION);
		goto out;
	}
	if (!json_is_string(json_object_get(b, "kind")) ||
	    strcmp(json_string_value(json_object_get(b, "kind")), "Attach")) {
		fail(rs, 422, "kind", "kind: must be Attach");
		goto out;
	}
	spec = json_object_get(b, "spec");
	json_object_foreach(spec, k, v) if (strcmp(k, "parent") && strcmp(k, "token"))
	{
		fail(rs, 422, "spec", "spec.%s: unknown field", k);
		goto out;
	}
	p = json_string_value(json_object_get(spec, "parent"));
	t = json_string_value(json_object_get(spec, "token"));
	if (!p || strlen(p) >= EC_PATH_MAX || !tree_parent_count(p)) {
		fail(rs, 422, "spec.parent", "spec.parent: %s",
		     p ? "too long, or no URL" : "required: the parent's URL (wss://HOST:PORT)");
		goto out;
	}
	/* several: the roots of an active/standby pair, each a URL */
	for (unsigned i = 0, n = tree_parent_count(p); i < n; i++) {
		char one[EC_PATH_MAX];

		tree_parent_at(p, i, one, sizeof(one));
		if (tree_hub_url(one, &u, why, sizeof(why))) {
			fail(rs, 422, "spec.parent", "spec.parent: %s", why);
			goto out;
		}
	}
	if (!t || strlen(t) < EC_TOKEN_MIN || strlen(t) > EC_TOKEN_MAX || strpbrk(t, " \t\r\n")) {
		fail(rs, 422, "spec.token", "spec.token: the join token, %d-%d characters",
		     EC_TOKEN_MIN, EC_TOKEN_MAX);
		goto out;
	}
	strcpy(parent, p);
	strcpy(token, t);
	rc = 0;
out:
	json_decref(b);
	return rc;
}

void api_attach(struct ecd *d, const struct api_req *rq, struct api_resp *rs)
{
	char parent[EC_PATH_MAX], token[EC_TOKEN_MAX + 1], why[128];
	struct ec_attach a;

	if (ec_store_attach_get(&d->store, &a)) {
		ctl_log("store: attach record: %s", ec_store_errmsg(&d->store));
		fail(rs, 500, NULL, "the store failed (attach record)");
		return;
	}
	if (rq->method == EC_GET) {
		reply(rs, 200, attach_json(d, &a));
		return;
	}
	if (rq->method == EC_PUT) {
		if (attach_body(rq, rs, parent, token))
			return;
		/* its roots' state is etcd's and both would link up as one child */
		if (d->conf.etcd) {
			fail(rs, 409, NULL,
			     "this cluster keeps its state in etcd ([Store] Backend = etcd): that "
			     "is "
			     "for the root of the tree, which has no parent");
			return;
		}
		if (a.phase == PH_DEREGISTERING || a.phase == PH_UNINSTALLING) {
			fail(rs, 409, NULL, "a detach is in progress (%s): wait for inactive",
			     tree_phase_name(a.phase));
			return;
		}
		if (a.phase != PH_INACTIVE && strcmp(a.parent, parent)) {
			fail(rs, 409, "spec.parent", "attached to %s (%s): detach first", a.parent,
			     tree_phase_name(a.phase));
			return;
		}
		snprintf(a.parent, sizeof(a.parent), "%s", parent);
		snprintf(a.token, sizeof(a.token), "%s", token);
		sodium_memzero(token, sizeof(token));
		a.last_error[0] = 0;
		snprintf(why, sizeof(why), "attach requested through the API by %s", rq->peer);
		if (tree_attach_set(d, &a, PH_REGISTERING, why)) {
			fail(rs, 500, NULL, "the store failed (attach record)");
			return;
		}
	} else if (rq->method == EC_DELETE) {
		if (a.phase == PH_INACTIVE) {
			fail(rs, 409, NULL, "this cluster is not attached");
			return;
		}
		snprintf(why, sizeof(why), "detach requested through the API by %s", rq->peer);
		if (a.phase != PH_DEREGISTERING && a.phase != PH_UNINSTALLING &&
		    tree_attach_set(d, &a, PH_DEREGISTERING, why)) {
			fail(rs, 500, NULL, "the store failed (attach record)");
			return;
		}
	} else {
		fail(rs, 405, NULL, "%s is not allowed on %s (allowed: GET, PUT, DELETE)",
		     rq->method_name ? rq->method_name : "this method", rq->path);
		rs->allow = "GET, PUT, DELETE";
		return;
	}
	if (d->on_attach)
		d->on_attach(d);
	reply(rs, 202, attach_json(d, &a));
}
