// SPDX-License-Identifier: BSD-2-Clause
/*
 * Sessions: created Pending in their application's queue (oldest first),
 * or straight to an idle standby pod (the warm path: no disk, no round);
 * SessionOpen to the pod's node; closed by the API (Closing, then the
 * node's Closed or the grace period), timed out, or ended with their pod;
 * the pod then killed or given back to the pool.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_int.h"
#include "ctl_k8s.h"
#include "ctl_log.h"

/* ---- sessions ---- */

static void dequeue(struct fx_sess *s)
{
	struct fx_app *a = s->app;

	if (!s->queued)
		return;
	if (s->q_prev)
		s->q_prev->q_next = s->q_next;
	else if (a)
		a->q_head = s->q_next;
	if (s->q_next)
		s->q_next->q_prev = s->q_prev;
	else if (a)
		a->q_tail = s->q_prev;
	if (a)
		a->n_queued--;
	s->q_next = s->q_prev = NULL;
	s->queued = false;
}

static void enqueue(struct fx_app *a, struct fx_sess *s)
{
	s->q_next = NULL;
	s->q_prev = a->q_tail;
	if (a->q_tail)
		a->q_tail->q_next = s;
	else
		a->q_head = s;
	a->q_tail = s;
	a->n_queued++;
	s->queued = true;
}

struct fx_sess *fx_sess_new(struct fx_core *c, struct fx_app *a, const char *ns, const char *name)
{
	struct fx_sess *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	snprintf(s->ns, sizeof(s->ns), "%s", ns);
	snprintf(s->name, sizeof(s->name), "%s", name);
	fx_id(s->id, sizeof(s->id), ns, name);
	fx_stamp(s->created);
	ctl_k8s_uuid4(s->uid);
	s->app = a;
	s->endpoints = json_array();
	s->created_us = fx_wall_us();
	s->clk.created_ms = fx_now(c);
	s->spec.open_timeout_s = 10;
	s->spec.close_grace_s = 60;
	s->spec.kill_on_close = true;
	if (a)
		snprintf(s->spec.app, sizeof(s->spec.app), "%s", a->name);
	if (fx_map_put(&c->sessions, s->id, s)) {
		fx_sess_free(NULL, s);
		return NULL;
	}
	return s;
}

void fx_sess_send_open(struct fx_core *c, struct fx_sess *s, json_t *ingress)
{
	json_t *spec = json_object_get(s->in, "spec");
	json_t *m = json_pack(
	    "{s:s,s:s,s:s,s:{s:s,s:s,s:s,s:s,s:i,s:i,s:b}}", "type", "SessionOpen",
	    "sessionIdentifier", s->id, "podIdentifier", s->pod->id, "session", "sessionIdentifier",
	    s->id, "podIdentifier", s->pod->id, "state", "Starting", "sessionData",
	    json_string_value(json_object_get(spec, "sessionData")) ?: "", "openTimeoutSeconds",
	    s->spec.open_timeout_s, "closeGracePeriodSeconds", s->spec.close_grace_s,
	    "killInstanceWhenSessionClosed", s->spec.kill_on_close);

	/* kept by the node and echoed in its reports: a core that rebuilds
	 * the session from them counts it for the same client */
	if (s->owner[0])
		json_object_set_new(json_object_get(m, "session"), "owner", json_string(s->owner));
	if (ingress)
		json_object_set_new(m, "ingress", ingress);
	s->open_seq = c->seq + 1;
	fx_send(c, s->pod->node, m);
}

/* ih: the ingress host of a form 2 session (NULL: form 1) */
static void assign(struct fx_core *c, struct fx_sess *s, struct fx_pod *p, struct fx_node *ih)
{
	dequeue(s);
	fx_pod_set_pool(p, FX_POOL_ALLOC);
	p->sess = s;
	s->pod = p;
	snprintf(s->pod_id, sizeof(s->pod_id), "%s", p->id);
	snprintf(s->node, sizeof(s->node), "%s", p->node->name);
	s->st = FX_S_STARTING;
	s->clk.open_timeout_s = s->spec.open_timeout_s;
	if (ih) {
		/* the node hears of it once the public half is in place: until
		 * then a full sync of the node does not miss it */
		s->open_seq = UINT64_MAX;
		fx_ing_open(c, s, ih);
	} else {
		fx_sess_send_open(c, s, NULL);
	}
	fx_changed(c, FX_K_POD, "MODIFIED", p);
}

/* *ih: the ingress host a form 2 session goes through; no pod while there
 * is none (the session waits, as for a pod) */
static struct fx_pod *idle_pod(struct fx_core *c, struct fx_app *a, struct fx_node **ih)
{
	bool form2 = fx_form2(c, a);

	*ih = form2 ? fx_ing_pick(c) : NULL;
	if (form2 && !*ih)
		return NULL;
	for (struct fx_pod *p = a->pods; p; p = p->app_next)
		if (p->pool == FX_POOL_IDLE && p->node && p->node->link && p->node->ready &&
		    (!form2 || p->ip[0]))
			return p;
	return NULL;
}

void fx_serve_queue(struct fx_core *c, struct fx_app *a)
{
	struct fx_node *ih;
	struct fx_pod *p;

	while (a->q_head && (p = idle_pod(c, a, &ih))) {
		struct fx_sess *s = a->q_head;

		assign(c, s, p, ih);
		fx_changed(c, FX_K_SESSION, "MODIFIED", s);
	}
	fx_kick(c);
}

struct owned_count {
	const char *owner;
	unsigned n;
};

static void count_owned(void *arg, void *val)
{
	struct owned_count *oc = arg;
	struct fx_sess *s = val;

	if (!fx_sess_final(s->st) && !strcmp(s->owner, oc->owner))
		oc->n++;
}

int fx_core_session_create(struct fx_core *c, const char *ns, json_t *body,
			   const unsigned char *client, json_t **out, struct fx_err *e)
{
	struct fx_session_spec sp;
	struct fx_app *a;
	struct fx_sess *s;
	struct fx_node *ih;
	struct fx_pod *p;
	const char *name;
	char id[FX_ID_MAX + 1], owner[FX_OWNER_LEN + 1] = "";

	if (fx_session_validate(body, ns, &sp, e))
		return -1;
	name = json_string_value(json_object_get(json_object_get(body, "metadata"), "name"));
	fx_id(id, sizeof(id), ns, name);
	if (fx_map_get(&c->sessions, id))
		return fx_errf(e, 409, "metadata.name",
			       "applicationsessions \"%s\" already exists in namespace %s", name,
			       ns);
	if (!(a = fx_app_find(c, ns, sp.app)))
		return fx_errf(e, 422, "spec.applicationName",
			       "spec.applicationName: no application '%s' in namespace %s", sp.app,
			       ns);
	if (client)
		fx_owner_id(client, owner);
	if (client && c->cf.max_sess_client) {
		/* a quota, as Kubernetes' ResourceQuota answers one: 403 */
		struct owned_count oc = {owner, 0};

		fx_map_each(&c->sessions, count_owned, &oc);
		if (oc.n >= c->cf.max_sess_client)
			return fx_errf(e, 403, NULL,
				       "applicationsessions \"%s\" is forbidden: exceeded the "
				       "per-client limit of %u sessions not Closed "
				       "(MaxSessionsPerClient); this token holds %u",
				       name, c->cf.max_sess_client, oc.n);
	}
	if (!(s = fx_sess_new(c, a, ns, name)))
		return fx_errf(e, 500, NULL, "out of memory");
	snprintf(s->owner, sizeof(s->owner), "%s", owner);
	s->spec = sp;
	s->clk.open_timeout_s = sp.open_timeout_s;
	s->clk.close_grace_s = sp.close_grace_s;
	s->in = json_pack("{s:{s:o},s:O}", "metadata", "labels", fx_labels_of(body), "spec",
			  json_object_get(body, "spec"));
	s->st = FX_S_PENDING;
	if (!a->q_head && (p = idle_pod(c, a, &ih)))
		assign(c, s, p, ih); /* the warm path */
	else
		enqueue(a, s);
	fx_changed(c, FX_K_SESSION, "ADDED", s);
	fx_kick(c);
	*out = fx_sess_json(s);
	return 0;
}

void fx_sess_end(struct fx_core *c, struct fx_sess *s, enum fx_sess_state st, const char *reason)
{
	struct fx_pod *p = s->pod;

	fx_ing_close(c, s); /* the public entry first */
	dequeue(s);
	s->st = st;
	s->clk.final_ms = fx_now(c);
	s->close_us = fx_wall_us();
	snprintf(s->reason, sizeof(s->reason), "%s", reason);
	if (p) {
		p->sess = NULL;
		s->pod = NULL;
		/* a pod whose session timed out is in a state nobody knows: it goes */
		if (s->spec.kill_on_close || st == FX_S_TIMEOUT || p->pool == FX_POOL_DELETING) {
			if (p->pool != FX_POOL_DELETING)
				fx_pod_terminate(c, p);
		} else {
			fx_pod_set_pool(p, FX_POOL_IDLE);
			fx_changed(c, FX_K_POD, "MODIFIED", p);
			if (s->app)
				fx_serve_queue(c, s->app);
		}
	}
	fx_changed(c, FX_K_SESSION, "MODIFIED", s);
	fx_kick(c);
}

int fx_core_session_delete(struct fx_core *c, const char *ns, const char *name, json_t **out,
			   struct fx_err *e)
{
	char id[FX_ID_MAX + 1];
	struct fx_sess *s;

	fx_id(id, sizeof(id), ns, name);
	if (!(s = fx_map_get(&c->sessions, id)))
		return fx_errf(e, 404, NULL, "applicationsessions \"%s\" not found in namespace %s",
			       name, ns);
	if (s->st == FX_S_PENDING || (s->pod && s->open_seq == UINT64_MAX)) {
		/* not told to its node yet (form 2 waits for the ingress host) */
		fx_sess_end(c, s, FX_S_CLOSED, "Deleted");
	} else if (!fx_sess_final(s->st) && s->st != FX_S_CLOSING) {
		s->st = FX_S_CLOSING;
		s->clk.closing_ms = fx_now(c);
		/* the public entry goes at once, before the pod is told */
		fx_ing_close(c, s);
		if (s->pod && s->open_seq != UINT64_MAX)
			fx_send(c, s->pod->node,
				json_pack("{s:s,s:s,s:s,s:i}", "type", "SessionClose",
					  "sessionIdentifier", s->id, "podIdentifier", s->pod->id,
					  "gracePeriodSeconds", s->spec.close_grace_s));
		fx_changed(c, FX_K_SESSION, "MODIFIED", s);
		fx_kick(c);
	}
	*out = fx_sess_json(s);
	return 0;
}

/* ---- the tick's part ---- */

void fx_sess_tick(void *arg, void *v)
{
	struct fx_core *c = arg;
	struct fx_sess *s = v;
	enum fx_sess_due due = fx_sess_due(s->st, &s->clk, fx_now(c), NULL);

	/* a standby decides nothing: the node reports the end */
	if (c->passive && due != FX_DUE_FORGET)
		return;
	switch (due) {
	case FX_DUE_TIMEOUT:
		if (s->pod)
			fx_send(c, s->pod->node,
				json_pack("{s:s,s:s,s:s,s:i}", "type", "SessionClose",
					  "sessionIdentifier", s->id, "podIdentifier", s->pod->id,
					  "gracePeriodSeconds", 0));
		ctl_log("session %s: not available within %us: Timeout", s->id,
			s->spec.open_timeout_s);
		fx_sess_end(c, s, FX_S_TIMEOUT, "OpenTimeout");
		break;
	case FX_DUE_CLOSED:
		s->spec.kill_on_close = true; /* the pod did not say it closed: it goes */
		fx_sess_end(c, s, FX_S_CLOSED, "CloseGracePeriodPassed");
		break;
	case FX_DUE_FORGET:
		fx_changed(c, FX_K_SESSION, "DELETED", s);
		fx_map_del(&c->sessions, s->id);
		fx_sess_free(NULL, s);
		break;
	default:
		break;
	}
}
