// SPDX-License-Identifier: BSD-2-Clause
/*
 * The tree's API side, without lws (so the unit tests drive it): this
 * cluster and its descendants as EdgeCluster objects, the Attach resource
 * (GET/PUT/DELETE /apis/edge.xgate.io/v1/attach) that starts and stops the
 * attach state machine, and the attach record's first seeding from the
 * config. The state machine itself runs in uplink.c.
 */
#include <inttypes.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tree.h"

bool tree_path_ok(const char *p)
{
	char part[EC_NAME_MAX + 2];
	int n = 0;

	while (*p) {
		size_t l = strcspn(p, "/");

		if (!l || l > EC_NAME_MAX || ++n > 32)
			return false;
		memcpy(part, p, l);
		part[l] = 0;
		if (ec_check_dns_label(part))
			return false;
		p += l;
		if (*p == '/' && !*++p)
			return false; /* trailing slash */
	}
	return n > 0;
}

void tree_new_credential(char out[TREE_CRED_LEN + 1])
{
	unsigned char raw[32];
	char b64[sodium_base64_ENCODED_LEN(32, sodium_base64_VARIANT_URLSAFE_NO_PADDING)];

	randombytes_buf(raw, sizeof(raw));
	sodium_bin2base64(b64, sizeof(b64), raw, sizeof(raw),
			  sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	snprintf(out, TREE_CRED_LEN + 1, "%s", b64);
	sodium_memzero(raw, sizeof(raw));
}

int tree_hub_url(const char *s, struct ctl_url *u, char *err, size_t errlen)
{
	if (ctl_url_parse(s, CTL_SCHEMES_WS, u, err, errlen))
		return -1;
	if (!strcmp(u->path, "/"))
		snprintf(u->path, sizeof(u->path), "%s", TREE_HUB_PATH);
	return 0;
}

/* conf.parent (and so the self row's spec.parent) follows the attach record. */
static void follow_parent(struct ecd *d, const char *parent)
{
	char err[256];

	snprintf(d->conf.parent, sizeof(d->conf.parent), "%s", parent);
	memset(&d->conf.parent_url, 0, sizeof(d->conf.parent_url));
	if (parent[0] && tree_hub_url(parent, &d->conf.parent_url, err, sizeof(err)))
		ctl_log("attach: parent %s", err);
}

int tree_attach_set(struct ecd *d, struct ec_attach *a, enum ec_phase to, const char *why)
{
	enum ec_phase from = a->phase;

	a->phase = to;
	ec_timestamp(time(NULL), a->since);
	if (ec_store_attach_put(&d->store, a)) {
		ctl_log("attach: cannot store the phase %s: %s", tree_phase_name(to),
			ec_store_errmsg(&d->store));
		return -1;
	}
	if (from != to)
		ctl_log("attach: %s -> %s%s%s", tree_phase_name(from), tree_phase_name(to),
			why ? ": " : "", why ? why : "");
	if (strcmp(d->conf.parent, a->parent)) {
		follow_parent(d, a->parent);
		if (api_self_sync(d))
			ctl_log("attach: cannot update this cluster's spec.parent");
	}
	return 0;
}

int tree_prepare(struct ecd *d)
{
	struct ec_attach a;
	int rc = ec_store_attach_get(&d->store, &a);

	if (rc == EC_ST_NOTFOUND) {
		/* first start: the config's Parent/JoinToken seed the record; from then
		 * on the record (driven by the API) is what counts */
		memset(&a, 0, sizeof(a));
		snprintf(a.parent, sizeof(a.parent), "%s", d->conf.parent);
		if (d->conf.parent[0] && d->conf.join_token[0]) {
			snprintf(a.token, sizeof(a.token), "%s", d->conf.join_token);
			a.phase = PH_REGISTERING;
			ctl_log("attach: registering with %s (Parent and JoinToken in the config)",
				a.parent);
		} else if (d->conf.parent[0]) {
			ctl_log("attach: Parent %s without JoinToken: attach with `xgate cluster "
				"attach --parent URL --token T`",
				a.parent);
		}
		ec_timestamp(time(NULL), a.since);
		if (ec_store_attach_put(&d->store, &a))
			return -1;
	} else if (rc) {
		return -1;
	} else if (d->conf.parent[0] && strcmp(d->conf.parent, a.parent)) {
		ctl_log("attach: the config names Parent %s but this cluster is %s%s (the attach "
			"record wins; change it with xgate cluster attach/detach)",
			d->conf.parent, a.parent[0] ? "attached to " : "detached", a.parent);
	}
	follow_parent(d, a.phase == PH_INACTIVE && !a.parent[0] ? "" : a.parent);
	return 0;
}

/* ---- EdgeCluster objects ---- */

struct counts_ctx {
	struct ecd *d;
	int *known, *matched, *active;
};

static int count_one(void *arg, sqlite3_stmt *st)
{
	struct counts_ctx *c = arg;
	const char *pl = (const char *)sqlite3_column_text(st, 0);
	const char *own = (const char *)sqlite3_column_text(st, 1);
	bool match = true;

	(*c->known)++;
	if (pl) { /* only a mission with a placement needs parsing (a few bytes) */
		json_t *p = json_loads(pl, 0, NULL);
		json_t *spec = p ? json_pack("{s:o}", "placement", p) : NULL;

		match = spec && ec_placement_match(spec, c->d->conf.name, c->d->self_labels);
		json_decref(spec);
	}
	if (!match)
		return 0;
	(*c->matched)++;
	/* applied and checked: anything but the placeholders */
	if (own && *own && strncmp(own, "pending", 7) && strcmp(own, "not matched") &&
	    strncmp(own, "failed", 6) && strcmp(own, "unreachable"))
		(*c->active)++;
	return 0;
}

/*
 * Asked by every heartbeat and every GET of our EdgeCluster. SQLite's
 * json_extract picks the placement out of the spec text and our own state
 * key is one row: parsing every spec into jansson objects was most of a
 * poll's cost.
 */
int tree_mission_counts(struct ecd *d, int *known, int *matched, int *active)
{
	static const char sql[] = "SELECT json_extract(spec, '$.placement'), (SELECT value FROM"
				  " mstate WHERE mission=missions.name AND path=?1) FROM missions";
	struct counts_ctx c = {d, known, matched, active};
	sqlite3_stmt *st = ec_store_stmt(&d->store, sql);

	*known = *matched = *active = 0;
	if (st && sqlite3_bind_text(st, 1, d->conf.name, -1, SQLITE_TRANSIENT) != SQLITE_OK) {
		ec_store_release(&d->store, st);
		return -1;
	}
	return ec_store_each(&d->store, st, count_one, &c) ? -1 : 0;
}

static const char *path_of(json_t *o)
{
	const char *p = json_string_value(json_object_get(json_object_get(o, "state"), "path"));

	return p ? p : "";
}

struct rows_ctx {
	const char *self;
	json_t *items;
};

static int collect(void *arg, struct ec_row *r)
{
	struct rows_ctx *c = arg;
	json_t *o;

	if (!strcmp(r->name, c->self))
		return 0;
	o = ec_object_json("EdgeCluster", r);
	if (!o)
		return -1;
	json_array_append_new(c->items, o);
	return 0;
}

/* Descendants in path order (so a parent comes before its children). */
static int by_path(const void *a, const void *b)
{
	return strcmp(path_of(*(json_t *const *)a), path_of(*(json_t *const *)b));
}

int tree_descendants_json(struct ecd *d, json_t **out)
{
	struct rows_ctx c = {d->conf.name, json_array()};
	json_t **v;
	size_t n;

	*out = NULL;
	if (ec_store_list(&d->store, EC_T_CLUSTERS, collect, &c)) {
		json_decref(c.items);
		return -1;
	}
	n = json_array_size(c.items);
	v = calloc(n + 1, sizeof(*v));
	if (!v) {
		json_decref(c.items);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		v[i] = json_incref(json_array_get(c.items, i));
	qsort(v, n, sizeof(*v), by_path);
	json_array_clear(c.items);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(c.items, v[i]);
	free(v);
	*out = c.items;
	return 0;
}

json_t *tree_self_json(struct ecd *d)
{
	json_t *o, *st, *kids, *children = json_array(), *edge = json_object(), *nodes;
	int known, matched, active;
	bool degraded = false;
	char now[EC_TS_LEN + 1], host[256];
	struct ec_attach a;
	struct ec_row r;
	size_t i;

	if (ec_store_get(&d->store, EC_T_CLUSTERS, d->conf.name, &r))
		goto fail;
	o = ec_object_json("EdgeCluster", &r);
	ec_row_free(&r);
	if (!o || tree_mission_counts(d, &known, &matched, &active) ||
	    tree_descendants_json(d, &kids)) {
		json_decref(o);
		goto fail;
	}
	json_array_foreach(kids, i, st)
	{
		const char *p = path_of(st);
		const char *h =
		    json_string_value(json_object_get(json_object_get(st, "state"), "health"));

		if (strchr(p, '/'))
			continue;
		json_array_append_new(children, json_string(p));
		json_object_set_new(edge, p, json_string(h ? h : "unknown"));
		degraded |= !h || strcmp(h, "ok");
	}
	json_decref(kids);
	/* the kubectl driver's from kubectl (nodes.c); the local driver runs
	 * missions on this host: it is the cluster's node */
	nodes = d->nodes ? json_deep_copy(d->nodes) : json_array();
	if (d->conf.driver == EC_DRIVER_LOCAL && !gethostname(host, sizeof(host))) {
		host[sizeof(host) - 1] = 0;
		json_array_append_new(nodes, json_string(host));
	}
	ec_timestamp(time(NULL), now);
	st = json_pack("{s:s,s:s,s:o,s:o,s:o,s:o,s:{s:i,s:i,s:i}}", "health",
		       degraded ? "degraded" : "ok", "path", d->conf.name, "children", children,
		       "edgeClusters", edge, "nodes", nodes, "edgeNodes",
		       d->edge_nodes ? json_deep_copy(d->edge_nodes) : json_array(), "missions",
		       "known", known, "matched", matched, "active", active);
	if (!ec_store_attach_get(&d->store, &a) && (a.phase != PH_INACTIVE || a.parent[0])) {
		json_object_set_new(st, "attach", json_string(tree_phase_name(a.phase)));
		json_object_set_new(st, "parentLink",
				    json_string(d->tree && d->tree->link_up ? "up" : "down"));
		/* the parent's clock, as the seed asks; never ours */
		if (d->tree && d->tree->parent_time[0])
			json_object_set_new(st, "lastHeartbeat", json_string(d->tree->parent_time));
	} else {
		json_object_set_new(st, "lastHeartbeat", json_string(now));
	}
	json_object_set_new(o, "state", st);
	return o;
fail:
	json_decref(children);
	json_decref(edge);
	return NULL;
}

int tree_clusters_json(struct ecd *d, const char *name, json_t **out)
{
	json_t *self, *kids;
	uint64_t rev;

	*out = NULL;
	if (name && strcmp(name, d->conf.name)) {
		struct ec_row r;
		int rc = ec_check_dns_label(name)
			     ? EC_ST_NOTFOUND
			     : ec_store_get(&d->store, EC_T_CLUSTERS, name, &r);

		if (rc)
			return rc;
		*out = ec_object_json("EdgeCluster", &r);
		ec_row_free(&r);
		return *out ? 0 : -1;
	}
	/* revision first: the list is at least that new */
	if (ec_store_revision(&d->store, &rev) || !(self = tree_self_json(d)))
		return -1;
	if (name) {
		*out = self;
		return 0;
	}
	if (tree_descendants_json(d, &kids)) {
		json_decref(self);
		return -1;
	}
	json_array_insert_new(kids, 0, self);
	*out = ec_list_json("EdgeCluster", rev, kids);
	return *out ? 0 : -1;
}

static bool labels_ok(json_t *l)
{
	const char *k;
	json_t *v;

	if (l && !json_is_object(l))
		return false;
	json_object_foreach(l, k, v) if (ec_check_label_key(k) || !json_is_string(v) ||
					 ec_check_label_value(json_string_value(v))) return false;
	return true;
}

json_t *tree_row_from(json_t *o, const char *path, const char *last_hb)
{
	json_t *md = json_object_get(o, "metadata"), *st = json_object_get(o, "state");
	const char *name = json_string_value(json_object_get(md, "name"));
	const char *uid = json_string_value(json_object_get(md, "uid"));
	const char *created = json_string_value(json_object_get(md, "creationTimestamp"));
	const char *slash = strrchr(path, '/');
	json_t *spec = json_object_get(o, "spec"), *labels = json_object_get(md, "labels"), *state;

	if (!name || strcmp(slash ? slash + 1 : path, name) || !uid || strlen(uid) > EC_UID_LEN ||
	    !labels_ok(json_object_get(md, "labels")) || (spec && !json_is_object(spec)) ||
	    (st && !json_is_object(st)))
		return NULL;
	state = st ? json_deep_copy(st) : json_object();
	json_object_set_new(state, "path", json_string(path));
	if (last_hb)
		json_object_set_new(state, "lastHeartbeat", json_string(last_hb));
	json_object_del(state, "attach"); /* its own business, not its parent's */
	json_object_del(state, "parentLink");
	return json_pack("{s:s,s:s,s:{s:s,s:s,s:s,s:o},s:o,s:o}", "apiVersion", EC_API_VERSION,
			 "kind", "EdgeCluster", "metadata", "name", name, "uid", uid,
			 "creationTimestamp", created ? created : "", "labels",
			 labels ? json_incref(labels) : json_object(), "spec",
			 spec ? json_incref(spec) : json_object(), "state", state);
}

/* ---- the Attach resource ---- */

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
			       a->since, "link", d->tree && d->tree->link_up ? "up" : "down");

	if (a->parent_name[0])
		json_object_set_new(st, "parentName", json_string(a->parent_name));
	if (d->tree && d->tree->parent_time[0])
		json_object_set_new(st, "parentTime", json_string(d->tree->parent_time));
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
	if (!p || strlen(p) >= EC_PATH_MAX || tree_hub_url(p, &u, why, sizeof(why))) {
		fail(rs, 422, "spec.parent", "spec.parent: %s",
		     p ? why : "required: the parent's URL (wss://HOST:PORT)");
		goto out;
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

void tree_attach_api(struct ecd *d, const struct api_req *rq, struct api_resp *rs)
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
	if (d->tree && d->tree->kick)
		d->tree->kick(d);
	reply(rs, 202, attach_json(d, &a));
}
