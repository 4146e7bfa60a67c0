// SPDX-License-Identifier: BSD-2-Clause
/*
 * The nodes' side of the core: registration, and every report a node
 * sends, applied under the revision rules (fx_rev_*, proto/fornax.md
 * "Revisions"). A message is checked whole before any of it is applied, so
 * a bad one changes nothing. A full sync (NodeState, NodeReady) is the
 * truth about the node's pods and sessions, except for what the core asked
 * of the node after it asked for that sync (sequence numbers tell).
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_int.h"
#include "ctl_k8s.h"
#include "ctl_log.h"

static int64_t cap_int(json_t *cap, const char *k)
{
	return json_integer_value(json_object_get(cap, k));
}

static void subnet_of(const struct fx_core *c, int subnet, char cidr[20], char gw[16])
{
	uint32_t net = c->cf.pod_net + ((uint32_t)subnet << (32 - c->cf.node_bits));
	struct in_addr a = {htonl(net)}, g = {htonl(net + 1)};

	snprintf(cidr, 20, "%s/%d", inet_ntoa(a), c->cf.node_bits);
	snprintf(gw, 16, "%s", inet_ntoa(g));
}

int fx_core_node_register(struct fx_core *c, void *link, json_t *msg, int subnet, json_t *extra,
			  void **old, struct fx_err *e)
{
	json_t *node = json_object_get(msg, "node"), *cap = json_object_get(node, "capacity");
	json_t *rv = json_object_get(msg, "nodeRevision"), *cfg;
	const char *name = json_string_value(json_object_get(node, "name"));
	int64_t cpu = cap_int(cap, "cpu"), mem = cap_int(cap, "memory"),
		pods = cap_int(cap, "pods");
	struct fx_node *n;
	bool is_new;

	*old = NULL;
	if (fx_link_register_check(msg, e))
		return -1;
	n = fx_core_node_find(c, name);
	is_new = !n;
	if (is_new) {
		if (!(n = calloc(1, sizeof(*n))))
			return fx_errf(e, 500, NULL, "out of memory");
		snprintf(n->name, sizeof(n->name), "%s", name);
		fx_stamp(n->created);
		ctl_k8s_uuid4(n->uid);
		n->rev.cur = -1; /* nothing known: its full sync is the truth */
		if (fx_map_put(&c->nodes, n->name, n)) {
			free(n);
			return fx_errf(e, 500, NULL, "out of memory");
		}
	}
	if (n->link && n->link != link)
		*old = n->link;
	n->link = link;
	n->ready = false;
	json_decref(n->info);
	n->info = json_deep_copy(node);
	n->ingress = !strcmp(json_string_value(json_object_get(node, "role")) ?: "pod", "ingress");
	n->cpu = cpu;
	n->mem = mem;
	n->pods_cap = pods;
	n->subnet = subnet;
	subnet_of(c, subnet, n->cidr, n->gateway);
	fx_rev_register(&n->rev, json_integer_value(rv));
	cfg =
	    json_pack("{s:s,s:s,s:s,s:I,s:s,s:{s:i,s:[i,i]},s:i,s:b,s:I}", "type",
		      "NodeConfiguration", "node", n->name, "podCIDR", n->cidr, "vni",
		      (json_int_t)c->cf.vni, "gateway", n->gateway, "endpoints", "form",
		      n->ingress ? 2 : 1, "portRange", c->cf.port_lo, c->cf.port_hi, "stateSeconds",
		      c->cf.state_s, "leader", !c->passive, "term", (json_int_t)c->term);
	if (extra)
		json_object_update(cfg, extra);
	fx_send(c, n, cfg);
	fx_send(c, n, json_pack("{s:s}", "type", "NodeFullSync"));
	n->fullsync_seq = c->seq;
	fx_changed(c, FX_K_NODE, is_new ? "ADDED" : "MODIFIED", n);
	return 0;
}

struct fx_node *fx_core_node_find(struct fx_core *c, const char *name)
{
	return name ? fx_map_get(&c->nodes, name) : NULL;
}

/* ---- one pod, one session, as the node reports them ---- */

static struct fx_app *app_of(struct fx_core *c, const char *id)
{
	return fx_map_get(&c->apps, id);
}

/* full: from a full sync, which also repeats what the node may have missed
 * while it was away (a terminate, a close) */
static void apply_pod(struct fx_core *c, struct fx_node *n, const struct fx_link_pod *lp, bool full)
{
	struct fx_pod *p = fx_map_get(&c->pods, lp->id);
	struct fx_app *a = app_of(c, lp->app);
	bool gone = lp->state == FX_P_TERMINATED || lp->state == FX_P_FAILED;
	enum fx_pool pool;

	if (p && p->node != n)
		return; /* another node's: this one is confused; its own full sync decides */
	if (!p) {
		if (gone)
			return;
		if (!a && c->passive) {
			n->resync = true; /* the watch has not brought it yet */
			return;
		}
		if (!a || strncmp(lp->id, a->id, strlen(a->ns) + 1)) {
			/* an application deleted while we were away, or a pod that cannot be
			 * its (another namespace) */
			fx_send(c, n,
				json_pack("{s:s,s:s,s:i}", "type", "PodTerminate", "podIdentifier",
					  lp->id, "gracePeriodSeconds", 0));
			return;
		}
		pool = lp->state == FX_P_CREATING  ? FX_POOL_PENDING
		       : lp->state == FX_P_STANDBY ? FX_POOL_IDLE
		       : lp->state <= FX_P_RUNNING ? FX_POOL_ALLOC
						   : FX_POOL_DELETING;
		if (!(p = fx_pod_new(c, a, n, strchr(lp->id, '/') + 1, pool, lp->state)))
			return;
		snprintf(p->ip, sizeof(p->ip), "%s", lp->ip);
		fx_changed(c, FX_K_POD, "ADDED", p);
		if (pool == FX_POOL_IDLE)
			fx_serve_queue(c, a);
		return;
	}
	if (gone) {
		fx_pod_remove(c, p, lp->reason[0] ? lp->reason : fx_pod_state_name(lp->state));
		return;
	}
	p->state = lp->state;
	if (lp->ip[0])
		snprintf(p->ip, sizeof(p->ip), "%s", lp->ip);
	if (lp->state == FX_P_STANDBY && p->pool == FX_POOL_PENDING) {
		fx_pod_set_pool(p, FX_POOL_IDLE);
		fx_changed(c, FX_K_POD, "MODIFIED", p);
		if (p->app)
			fx_serve_queue(c, p->app);
		return;
	}
	if ((lp->state == FX_P_TERMINATING || lp->state == FX_P_EVACUATING) &&
	    p->pool != FX_POOL_DELETING)
		fx_pod_set_pool(p, FX_POOL_DELETING);
	else if (full && p->pool == FX_POOL_DELETING && lp->state != FX_P_TERMINATING &&
		 lp->state != FX_P_EVACUATING) /* stopping already: told again for nothing */
		fx_send(c, n,
			json_pack("{s:s,s:s,s:i}", "type", "PodTerminate", "podIdentifier", p->id,
				  "gracePeriodSeconds", 0));
	fx_changed(c, FX_K_POD, "MODIFIED", p);
}

static void apply_sess(struct fx_core *c, struct fx_node *n, const struct fx_link_sess *ls,
		       bool full)
{
	struct fx_sess *s = fx_map_get(&c->sessions, ls->id);
	struct fx_pod *p = fx_map_get(&c->pods, ls->pod);

	if (!s) {
		char ns[FX_NS_MAX + 1];
		const char *slash = strchr(ls->id, '/');

		if (fx_sess_final(ls->state))
			return;
		if (!p || p->node != n || !p->app || p->sess) {
			/* nobody knows it here: the node closes it */
			fx_send(c, n,
				json_pack("{s:s,s:s,s:s,s:i}", "type", "SessionClose",
					  "sessionIdentifier", ls->id, "podIdentifier", ls->pod,
					  "gracePeriodSeconds", 0));
			return;
		}
		/* a restarted core learns its sessions from the nodes */
		snprintf(ns, sizeof(ns), "%.*s", (int)(slash - ls->id), ls->id);
		if (!(s = fx_sess_new(c, p->app, ns, slash + 1)))
			return;
		s->st = ls->state;
		/* the owner the node kept: the session counts for its client at
		 * once (proto/fornax.md "Session owner"; checked by the parser) */
		snprintf(s->owner, sizeof(s->owner), "%s", ls->owner);
		s->pod = p;
		p->sess = s;
		if (p->pool != FX_POOL_ALLOC)
			fx_pod_set_pool(p, FX_POOL_ALLOC);
		snprintf(s->pod_id, sizeof(s->pod_id), "%s", p->id);
		snprintf(s->node, sizeof(s->node), "%s", n->name);
		s->in = json_pack("{s:{s:{}},s:{s:s}}", "metadata", "labels", "spec",
				  "applicationName", p->app->name);
		if (ls->endpoints)
			json_array_extend(s->endpoints, ls->endpoints);
		if (s->st == FX_S_CLOSING)
			s->clk.closing_ms = fx_now(c);
		fx_changed(c, FX_K_SESSION, "ADDED", s);
		fx_changed(c, FX_K_POD, "MODIFIED", p);
		return;
	}
	s->client_sessions = ls->client_sessions;
	if (full && !fx_sess_final(ls->state) && ls->state != FX_S_CLOSING &&
	    (fx_sess_final(s->st) || s->st == FX_S_CLOSING)) {
		/* closed here (or closing) while the node was away: it closes it too */
		fx_send(c, n,
			json_pack("{s:s,s:s,s:s,s:i}", "type", "SessionClose", "sessionIdentifier",
				  ls->id, "podIdentifier", ls->pod, "gracePeriodSeconds",
				  fx_sess_final(s->st) ? 0 : (int)s->spec.close_grace_s));
		return;
	}
	if (s->st == ls->state || !fx_sess_can(s->st, ls->state))
		return;
	if (ls->state == FX_S_CLOSED || ls->state == FX_S_TIMEOUT) {
		fx_sess_end(c, s, ls->state, ls->reason[0] ? ls->reason : "ClosedByNode");
		return;
	}
	if ((ls->state == FX_S_AVAILABLE || ls->state == FX_S_INUSE) && !s->available_us) {
		s->available_us = fx_wall_us();
		if (ls->endpoints) {
			json_array_clear(s->endpoints);
			json_array_extend(s->endpoints, ls->endpoints);
		}
	}
	if (ls->state == FX_S_CLOSING)
		s->clk.closing_ms = fx_now(c);
	s->st = ls->state;
	fx_changed(c, FX_K_SESSION, "MODIFIED", s);
}

/* ---- the messages ---- */

struct parsed {
	struct fx_link_pod *pods;
	struct fx_link_sess *sess;
	struct fx_link_ing *ing;
	size_t np, ns, ni;
};

static int parse_lists(json_t *msg, struct parsed *pr, struct fx_err *e)
{
	json_t *pods = json_object_get(msg, "pods"), *sess = json_object_get(msg, "sessions"), *v;
	json_t *ing = json_object_get(msg, "ingress");
	char f[40];
	size_t i;

	if (pods && !json_is_array(pods))
		return fx_errf(e, 400, "pods", "pods: must be an array");
	if (sess && !json_is_array(sess))
		return fx_errf(e, 400, "sessions", "sessions: must be an array");
	if (ing && !json_is_array(ing))
		return fx_errf(e, 400, "ingress", "ingress: must be an array");
	pr->np = json_array_size(pods);
	pr->ns = json_array_size(sess);
	pr->ni = json_array_size(ing);
	pr->pods = calloc(pr->np + 1, sizeof(*pr->pods));
	pr->sess = calloc(pr->ns + 1, sizeof(*pr->sess));
	pr->ing = calloc(pr->ni + 1, sizeof(*pr->ing));
	if (!pr->pods || !pr->sess || !pr->ing)
		return fx_errf(e, 500, NULL, "out of memory");
	json_array_foreach(ing, i, v)
	{
		snprintf(f, sizeof(f), "ingress[%zu]", i);
		if (fx_link_ing_parse(v, f, &pr->ing[i], e))
			return -1;
	}
	json_array_foreach(pods, i, v)
	{
		snprintf(f, sizeof(f), "pods[%zu]", i);
		if (fx_link_pod_parse(v, f, &pr->pods[i], e))
			return -1;
	}
	json_array_foreach(sess, i, v)
	{
		snprintf(f, sizeof(f), "sessions[%zu]", i);
		if (fx_link_sess_parse(v, f, &pr->sess[i], e))
			return -1;
	}
	return 0;
}

struct sweep {
	struct fx_core *c;
	struct fx_node *n;
	json_t *seen; /* ids reported */
};

static void sweep_pod(void *arg, void *v)
{
	struct sweep *w = arg;
	struct fx_pod *p = v;

	if (p->node == w->n && !json_object_get(w->seen, p->id) &&
	    p->create_seq <= w->n->fullsync_seq)
		fx_pod_remove(w->c, p, "NotOnNode");
}

static void sweep_sess(void *arg, void *v)
{
	struct sweep *w = arg;
	struct fx_sess *s = v;

	if (s->pod && s->pod->node == w->n && !fx_sess_final(s->st) &&
	    !json_object_get(w->seen, s->id) && s->open_seq <= w->n->fullsync_seq)
		fx_sess_end(w->c, s, FX_S_CLOSED, "NotOnNode");
}

/* a pod the node runs for a session nobody here holds (closed while the
 * node was away, or never known): it goes */
static void sweep_unheld(void *arg, void *v)
{
	struct sweep *w = arg;
	struct fx_pod *p = v;

	if (p->node == w->n && p->pool == FX_POOL_ALLOC && !p->sess)
		fx_pod_terminate(w->c, p);
}

static void apply_full(struct fx_core *c, struct fx_node *n, struct parsed *pr)
{
	struct sweep w = {c, n, json_object()};

	for (size_t i = 0; i < pr->np; i++) {
		apply_pod(c, n, &pr->pods[i], true);
		json_object_set_new(w.seen, pr->pods[i].id, json_true());
	}
	fx_map_each(&c->pods, sweep_pod, &w);
	for (size_t i = 0; i < pr->ns; i++) {
		apply_sess(c, n, &pr->sess[i], true);
		json_object_set_new(w.seen, pr->sess[i].id, json_true());
	}
	fx_map_each(&c->sessions, sweep_sess, &w);
	fx_map_each(&c->pods, sweep_unheld, &w);
	json_decref(w.seen);
	if (n->ingress)
		fx_ing_full(c, n, pr->ing, pr->ni);
}

int fx_core_node_message(struct fx_core *c, const char *name, void *link, json_t *msg,
			 struct fx_err *e)
{
	struct fx_node *n = fx_core_node_find(c, name);
	const char *t = json_string_value(json_object_get(msg, "type"));
	json_t *rv = json_object_get(msg, "nodeRevision");
	struct parsed pr = {0};
	enum fx_rev_verdict v;
	int rc = 0;

	if (!n || n->link != link)
		return 1;
	if (!t)
		return fx_errf(e, 400, "type", "type: required (a string)");
	if (!strcmp(t, "error")) {
		ctl_log("node %s reports an error: %.300s", n->name,
			json_string_value(json_object_get(msg, "message")) ?: "?");
		return 0;
	}
	if (strcmp(t, "NodeReady") && strcmp(t, "NodeState") && strcmp(t, "PodState") &&
	    strcmp(t, "SessionState") && strcmp(t, "IngressState"))
		return fx_errf(e, 400, "type", "type '%.40s': not a message a node sends", t);
	if (!json_is_integer(rv) || json_integer_value(rv) < 0)
		return fx_errf(e, 400, "nodeRevision", "nodeRevision: required, an integer >= 0");
	if (!strcmp(t, "PodState")) {
		struct fx_link_pod lp;

		if (fx_link_pod_parse(json_object_get(msg, "pod"), "pod", &lp, e))
			return -1;
		v = fx_rev_delta(&n->rev, json_integer_value(rv));
		if (v == FX_REV_APPLY)
			apply_pod(c, n, &lp, false);
	} else if (!strcmp(t, "SessionState")) {
		struct fx_link_sess ls;

		if (fx_link_sess_parse(json_object_get(msg, "session"), "session", &ls, e))
			return -1;
		v = fx_rev_delta(&n->rev, json_integer_value(rv));
		if (v == FX_REV_APPLY)
			apply_sess(c, n, &ls, false);
	} else if (!strcmp(t, "IngressState")) {
		struct fx_link_ing g;

		if (fx_link_ing_parse(json_object_get(msg, "ingress"), "ingress", &g, e))
			return -1;
		v = fx_rev_delta(&n->rev, json_integer_value(rv));
		if (v == FX_REV_APPLY && n->ingress)
			fx_ing_apply(c, n, &g);
	} else {
		if (!(rc = parse_lists(msg, &pr, e))) {
			v = fx_rev_full(&n->rev, json_integer_value(rv));
			if (v == FX_REV_APPLY) {
				apply_full(c, n, &pr);
				if (!strcmp(t, "NodeReady") && !n->ready) {
					n->ready = true;
					ctl_log("node %s ready (revision %" PRId64 ", %d pods)",
						n->name, n->rev.cur, n->n_pods);
					if (n->ingress)
						fx_ing_ready(c);
				}
				fx_changed(c, FX_K_NODE, "MODIFIED", n);
				fx_kick(c);
			}
		}
		free(pr.pods);
		free(pr.sess);
		free(pr.ing);
		return rc;
	}
	if (v == FX_REV_FULLSYNC) {
		ctl_log("node %s: revision %" JSON_INTEGER_FORMAT " after %" PRId64
			": a gap, full sync asked",
			n->name, json_integer_value(rv), n->rev.cur);
		fx_send(c, n, json_pack("{s:s}", "type", "NodeFullSync"));
		n->fullsync_seq = c->seq;
	}
	return 0;
}

void fx_core_node_unlinked(struct fx_core *c, const char *name, void *link)
{
	struct fx_node *n = fx_core_node_find(c, name);

	if (!n || n->link != link)
		return;
	n->link = NULL;
	n->ready = false;
	n->unlinked_ms = fx_now(c);
	fx_changed(c, FX_K_NODE, "MODIFIED", n);
}

static void drop_pod(void *arg, void *v)
{
	struct sweep *w = arg;
	struct fx_pod *p = v;

	if (p->node == w->n)
		fx_pod_remove(w->c, p, "NodeDeleted");
}

int fx_core_node_delete(struct fx_core *c, const char *name, json_t **out, void **link,
			struct fx_err *e)
{
	struct fx_node *n = fx_core_node_find(c, name);
	struct sweep w = {c, n, NULL};

	*link = NULL;
	if (!n)
		return fx_errf(e, 404, NULL, "nodes \"%s\" not found", name);
	fx_map_each(&c->pods, drop_pod, &w);
	fx_ing_host_lost(c, n, "NodeDeleted");
	*link = n->link;
	fx_changed(c, FX_K_NODE, "DELETED", n);
	*out = fx_node_json(c, n);
	fx_map_del(&c->nodes, n->name);
	json_decref(n->info);
	free(n);
	return 0;
}

static void forget_pod(void *arg, void *v)
{
	struct sweep *w = arg;
	struct fx_pod *p = v;

	if (p->node == w->n)
		fx_pod_remove(w->c, p, "NodeLost");
}

static void stale_node(void *arg, void *v)
{
	struct fx_core *c = arg;
	struct fx_node *n = v;
	struct sweep w = {c, n, NULL};

	if (n->link || fx_now(c) - n->unlinked_ms < FX_STALE_NODE_MS)
		return;
	fx_ing_host_lost(c, n, "IngressLost");
	if (!n->n_pods)
		return;
	ctl_log("node %s: away for %ds: its %d pods are forgotten, their sessions closed", n->name,
		FX_STALE_NODE_MS / 1000, n->n_pods);
	fx_map_each(&c->pods, forget_pod, &w);
}

static void tell_lead(void *arg, void *v)
{
	struct fx_core *c = arg;
	struct fx_node *n = v;

	if (!n->link)
		return;
	fx_send(c, n,
		json_pack("{s:s,s:b,s:I}", "type", "CoreState", "leader", !c->passive, "term",
			  (json_int_t)c->term));
	if (c->passive)
		return;
	/* what a standby let pass (a pod of an application it did not know, a
	 * session closed while it followed) is decided now, as after a register */
	fx_send(c, n, json_pack("{s:s}", "type", "NodeFullSync"));
	n->fullsync_seq = c->seq;
}

void fx_core_set_lead(struct fx_core *c, bool leading, int64_t term)
{
	if (c->passive == !leading && (!leading || c->term == term))
		return;
	c->passive = !leading;
	c->term = leading ? term : 0;
	fx_map_each(&c->nodes, tell_lead, c);
	fx_kick(c);
}

static void resync_node(void *arg, void *v)
{
	struct fx_core *c = arg;
	struct fx_node *n = v;

	if (!n->resync || !n->link)
		return;
	n->resync = false;
	fx_send(c, n, json_pack("{s:s}", "type", "NodeFullSync"));
	n->fullsync_seq = c->seq;
}

void fx_nodes_resync(struct fx_core *c)
{
	fx_map_each(&c->nodes, resync_node, c);
}

void fx_nodes_tick(struct fx_core *c)
{
	fx_map_each(&c->nodes, stale_node, c);
}
