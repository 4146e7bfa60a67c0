// SPDX-License-Identifier: BSD-2-Clause
/*
 * Form 2 endpoints (proto/fornax.md "Endpoints"): a session of an
 * application whose form is 2 gets its public endpoints on an ingress host
 * (a node registered with the role ingress, running no pod). The order:
 * IngressOpen to the ingress host, which chooses the ports and adds its
 * entries; its IngressState Open brings the endpoints, and only then does
 * the pod's node get SessionOpen with them (it adds the pod side, the gate
 * into the pod, and reports Available once the pod is ready). So a
 * session the node calls Available has both halves. A close sends
 * IngressClose first.
 *
 * The core keeps no table of the ingress hosts' ports: each host owns its
 * range, and its full sync says which entries it holds. After a restart
 * of the core, the entries are matched to the sessions the pods' nodes
 * report; an entry nobody claims is closed, but only once the nodes have
 * had FX_STALE_NODE_MS to link again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_int.h"
#include "ctl_log.h"

bool fx_form2(const struct fx_core *c, const struct fx_app *a)
{
	return (a && a->spec.form ? a->spec.form : c->cf.form) == 2;
}

static const char *node_ip(const struct fx_node *n)
{
	return json_string_value(json_object_get(n->info, "ip")) ?: "";
}

/* the ready ingress host holding the fewest sessions */
struct fx_node *fx_ing_pick(struct fx_core *c)
{
	struct fx_node *best = NULL;

	for (size_t i = 0; i < c->nodes.nb; i++)
		for (struct fx_ent *e = c->nodes.b[i]; e; e = e->next) {
			struct fx_node *n = e->val;

			if (n->ingress && n->ready && n->link && (!best || n->n_ing < best->n_ing))
				best = n;
		}
	return best;
}

void fx_ing_open(struct fx_core *c, struct fx_sess *s, struct fx_node *ih)
{
	struct fx_pod *p = s->pod;
	json_t *ports = fx_app_ports(json_object_get(p->app->obj, "spec"));

	snprintf(s->ing, sizeof(s->ing), "%s", ih->name);
	s->ing_st = FX_ING_OPENING;
	s->ing_seq = c->seq + 1;
	ih->n_ing++;
	fx_send(c, ih,
		json_pack("{s:s,s:s,s:s,s:I,s:s,s:s,s:O}", "type", "IngressOpen",
			  "sessionIdentifier", s->id, "podIdentifier", p->id, "vni",
			  (json_int_t)c->cf.vni, "podIP", p->ip, "host", node_ip(p->node), "ports",
			  ports));
	json_decref(ports);
}

static void ing_gone(struct fx_core *c, struct fx_sess *s)
{
	struct fx_node *ih = fx_core_node_find(c, s->ing);

	if (s->ing_st == FX_ING_NONE || s->ing_st == FX_ING_CLOSED)
		return;
	s->ing_st = FX_ING_CLOSED;
	if (ih && ih->n_ing > 0)
		ih->n_ing--;
}

void fx_ing_close(struct fx_core *c, struct fx_sess *s)
{
	struct fx_node *ih = fx_core_node_find(c, s->ing);

	if (s->ing_st != FX_ING_OPENING && s->ing_st != FX_ING_OPEN)
		return;
	/* an ingress host away gets it from its next full sync */
	fx_send(c, ih, json_pack("{s:s,s:s}", "type", "IngressClose", "sessionIdentifier", s->id));
	ing_gone(c, s);
}

/* The public half is gone (refused, lost, or not on the host): the session
 * ends, its pod's node told to close it (the pod side goes with it). */
static void ing_lost(struct fx_core *c, struct fx_sess *s, const char *reason)
{
	ing_gone(c, s);
	if (fx_sess_final(s->st))
		return;
	if (s->pod && s->open_seq != UINT64_MAX)
		fx_send(c, s->pod->node,
			json_pack("{s:s,s:s,s:s,s:i}", "type", "SessionClose", "sessionIdentifier",
				  s->id, "podIdentifier", s->pod->id, "gracePeriodSeconds", 0));
	ctl_log("session %s: its ingress entry on %s is gone (%s): Closed", s->id, s->ing, reason);
	fx_sess_end(c, s, FX_S_CLOSED, reason);
}

void fx_ing_apply(struct fx_core *c, struct fx_node *n, const struct fx_link_ing *g)
{
	struct fx_sess *s = fx_map_get(&c->sessions, g->id);
	bool mine = s && !strcmp(s->ing, n->name);

	if (!g->open) {
		if (mine && (s->ing_st == FX_ING_OPENING || s->ing_st == FX_ING_OPEN))
			ing_lost(c, s, g->reason[0] ? g->reason : "IngressClosed");
		return;
	}
	if (s && s->pod && !fx_sess_final(s->st) && s->st != FX_S_CLOSING &&
	    s->st != FX_S_PENDING) {
		if (!s->ing[0] && fx_form2(c, s->app)) {
			/* a restarted core learnt the session from its node: the entry is its */
			snprintf(s->ing, sizeof(s->ing), "%s", n->name);
			s->ing_st = FX_ING_OPEN;
			n->n_ing++;
			return;
		}
		if (mine && s->ing_st == FX_ING_OPEN)
			return;
		if (mine && s->ing_st == FX_ING_OPENING) {
			s->ing_st = FX_ING_OPEN;
			json_array_clear(s->endpoints);
			json_array_extend(s->endpoints, g->endpoints);
			fx_sess_send_open(c, s,
					  json_pack("{s:s,s:O}", "host", node_ip(n),
						    "accessEndPoints", g->endpoints));
			fx_changed(c, FX_K_SESSION, "MODIFIED", s);
			return;
		}
	}
	/* nobody here holds it. Right after a restart, the pods' nodes may not
	 * have reported the session yet: a later full sync decides. */
	if (!s && fx_now(c) - c->started_ms < FX_STALE_NODE_MS)
		return;
	fx_send(c, n, json_pack("{s:s,s:s}", "type", "IngressClose", "sessionIdentifier", g->id));
}

struct ing_sweep {
	struct fx_core *c;
	struct fx_node *n;
	json_t *seen;	    /* a full sync's entries */
	const char *reason; /* a host lost */
};

static void sweep_one(void *arg, void *v)
{
	struct ing_sweep *w = arg;
	struct fx_sess *s = v;

	if (!strcmp(s->ing, w->n->name) &&
	    (s->ing_st == FX_ING_OPENING || s->ing_st == FX_ING_OPEN) &&
	    !json_object_get(w->seen, s->id) && s->ing_seq <= w->n->fullsync_seq)
		ing_lost(w->c, s, "NotOnIngress");
}

void fx_ing_full(struct fx_core *c, struct fx_node *n, const struct fx_link_ing *g, size_t ng)
{
	struct ing_sweep w = {c, n, json_object(), NULL};

	for (size_t i = 0; i < ng; i++) {
		fx_ing_apply(c, n, &g[i]);
		json_object_set_new(w.seen, g[i].id, json_true());
	}
	fx_map_each(&c->sessions, sweep_one, &w);
	json_decref(w.seen);
}

static void lost_one(void *arg, void *v)
{
	struct ing_sweep *w = arg;
	struct fx_sess *s = v;

	if (!strcmp(s->ing, w->n->name) &&
	    (s->ing_st == FX_ING_OPENING || s->ing_st == FX_ING_OPEN))
		ing_lost(w->c, s, w->reason);
}

void fx_ing_host_lost(struct fx_core *c, struct fx_node *n, const char *reason)
{
	struct ing_sweep w = {c, n, NULL, reason};

	if (!n->ingress || !n->n_ing)
		return;
	ctl_log("ingress host %s: %s: its %d sessions are closed", n->name, reason, n->n_ing);
	fx_map_each(&c->sessions, lost_one, &w);
}

static void serve_app(void *arg, void *v)
{
	fx_serve_queue(arg, v);
}

void fx_ing_ready(struct fx_core *c)
{
	fx_map_each(&c->apps, serve_app, c);
}
