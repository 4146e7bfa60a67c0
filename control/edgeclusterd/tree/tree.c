// SPDX-License-Identifier: BSD-2-Clause
/*
 * The tree's API side, without lws (so the unit tests drive it): this
 * cluster and its descendants as EdgeCluster objects, the Attach resource
 * (GET/PUT/DELETE /apis/edge.xgate.io/v1/attach) that starts and stops the
 * attach state machine, and the attach record's first filling from the
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

/* The live parent (and so the self row's spec.parent) follows the attach record. */
static void follow_parent(struct ecd *d, const char *parent)
{
	char err[256], first[EC_PATH_MAX] = "";

	snprintf(d->parent.url, sizeof(d->parent.url), "%s", parent);
	memset(&d->parent.hub, 0, sizeof(d->parent.hub));
	/* of several (roots on etcd), the first: the uplink links to whichever leads */
	tree_parent_at(parent, 0, first, sizeof(first));
	if (parent[0] && tree_hub_url(first, &d->parent.hub, err, sizeof(err)))
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
	if (strcmp(d->parent.url, a->parent)) {
		follow_parent(d, a->parent);
		if (tree_self_sync(d))
			ctl_log("attach: cannot update this cluster's spec.parent");
	}
	return 0;
}

int tree_prepare(struct ecd *d)
{
	struct ec_attach a;
	int rc = ec_store_attach_get(&d->store, &a);

	if (rc == EC_ST_NOTFOUND) {
		/* first start: the config's Parent/JoinToken fill the record; from then
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

static json_t *self_spec(struct ecd *d)
{
	json_t *spec = json_pack("{s:s,s:s}", "distro", ec_distro_name(d->conf.distro), "driver",
				 ec_driver_name(d->conf.driver));

	if (d->parent.url[0])
		json_object_set_new(spec, "parent", json_string(d->parent.url));
	return spec;
}

int tree_self_sync(struct ecd *d)
{
	json_t *spec = self_spec(d);
	struct ec_row r = {0}, cur;
	int rc = ec_store_get(&d->store, EC_T_CLUSTERS, d->conf.name, &cur);

	snprintf(r.name, sizeof(r.name), "%s", d->conf.name);
	r.labels = json_dumps(d->self_labels, JSON_COMPACT);
	r.spec = json_dumps(spec, JSON_COMPACT);
	if (rc == EC_ST_NOTFOUND) {
		ec_uuid4(r.uid);
		ec_timestamp(time(NULL), r.created);
		rc = ec_store_create(&d->store, EC_T_CLUSTERS, &r);
		if (!rc)
			ctl_log("cluster %s: new identity %s", r.name, r.uid);
	} else if (!rc) {
		if (!ec_json_same_text(cur.labels, d->self_labels) ||
		    !ec_json_same_text(cur.spec, spec)) {
			rc = ec_store_replace(&d->store, EC_T_CLUSTERS, &r, cur.rv);
			if (!rc)
				ctl_log("cluster %s: labels or spec changed (rv %" PRIu64 ")",
					r.name, r.rv);
		}
		ec_row_free(&cur);
	}
	ec_row_free(&r);
	json_decref(spec);
	return rc ? -1 : 0;
}

int tree_mission_counts(struct ecd *d, int *known, int *matched, int *active)
{
	return ec_store_mission_counts(&d->store, d->conf.name, d->self_labels, known, matched,
				       active);
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
	nodes = d->nodes && d->nodes->all ? json_deep_copy(d->nodes->all) : json_array();
	if (d->conf.driver == EC_DRIVER_LOCAL && !gethostname(host, sizeof(host))) {
		host[sizeof(host) - 1] = 0;
		json_array_append_new(nodes, json_string(host));
	}
	ec_timestamp(time(NULL), now);
	st = json_pack("{s:s,s:s,s:o,s:o,s:o,s:o,s:{s:i,s:i,s:i}}", "health",
		       degraded ? "degraded" : "ok", "path", d->conf.name, "children", children,
		       "edgeClusters", edge, "nodes", nodes, "edgeNodes",
		       d->nodes && d->nodes->edge ? json_deep_copy(d->nodes->edge) : json_array(),
		       "missions", "known", known, "matched", matched, "active", active);
	if (!ec_store_attach_get(&d->store, &a) && (a.phase != PH_INACTIVE || a.parent[0])) {
		json_object_set_new(st, "attach", json_string(tree_phase_name(a.phase)));
		json_object_set_new(st, "parentLink",
				    json_string(d->link && d->link->link_up ? "up" : "down"));
		/* the parent's clock, as the design asks; never ours */
		if (d->link && d->link->parent_time[0])
			json_object_set_new(st, "lastHeartbeat", json_string(d->link->parent_time));
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
