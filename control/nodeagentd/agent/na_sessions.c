// SPDX-License-Identifier: BSD-2-Clause
/*
 * Sessions on the node: Starting (the pod thawed, its ingress entries
 * added) -> Available (the pod's session service said ready, or without
 * one, its ports accept) -> InUse (the pod says a client is on) ->
 * Closing (the pod told, with its grace period) -> Closed (the entries
 * deleted first, then the pod killed or given back to the pool).
 *
 * Endpoints are form 1: the node's public address and a port of the
 * configured range per container port; the ingress entries (libxgate,
 * in-process: the warm path runs no command) map them to the pod. A
 * SessionOpen with `ingress` is form 2: the endpoints are the ingress
 * host's, chosen and already in place there; this node adds their pod
 * side (XG_SESS_POD_SIDE, via that host), which is also the gate: without
 * it the ingress host's frames are not delivered into the pod.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "na_agent_int.h"

struct sess_rt *sess_find(struct na_agent *a, const char *id)
{
	for (struct sess_rt *x = a->sess; x; x = x->next)
		if (!strcmp(x->s.id, id))
			return x;
	return NULL;
}

static void send_state(struct na_agent *a, const struct na_sess *s, int64_t rev)
{
	agent_send(a, json_pack("{s:s,s:I,s:o}", "type", "SessionState", "nodeRevision",
				(json_int_t)rev, "session", na_sess_json(s)));
}

void sess_report(struct na_agent *a, struct sess_rt *x, enum na_sess_state st, const char *reason)
{
	int64_t rev = 0;

	x->s.state = st;
	/* a state sent again passes the session's own reason (as pod_report) */
	if (reason != x->s.reason)
		snprintf(x->s.reason, sizeof(x->s.reason), "%s", reason ? reason : "");
	if (na_store_sess_put(a->store, &x->s, true, &rev)) {
		ctl_log("session %s: cannot store state %s: %s", x->s.id, na_sess_state_name(st),
			na_store_errmsg(a->store));
		return;
	}
	send_state(a, &x->s, rev);
}

static void sess_refuse(struct na_agent *a, const char *id, const char *pod, const char *reason)
{
	struct na_sess s;
	int64_t rev = 0;

	memset(&s, 0, sizeof(s));
	snprintf(s.id, sizeof(s.id), "%s", id);
	snprintf(s.pod, sizeof(s.pod), "%s", pod ? pod : "");
	s.state = NA_SESS_CLOSED;
	snprintf(s.reason, sizeof(s.reason), "%s", reason);
	if (!na_store_bump(a->store, &rev))
		send_state(a, &s, rev);
}

/* A final session leaves the store and the node (the core has its state). */
static void sess_drop(struct na_agent *a, struct sess_rt *x)
{
	for (struct sess_rt **pp = &a->sess; *pp; pp = &(*pp)->next)
		if (*pp == x) {
			*pp = x->next;
			break;
		}
	na_store_sess_del(a->store, x->s.id);
	free(x->s.data);
	free(x);
}

void sess_free_all(struct na_agent *a)
{
	struct sess_rt *x;

	while ((x = a->sess)) {
		a->sess = x->next;
		free(x->s.data);
		free(x);
	}
}

bool sess_pod_busy(struct na_agent *a, const char *pod)
{
	for (struct sess_rt *x = a->sess; x; x = x->next)
		if (!na_sess_final(x->s.state) && !strcmp(x->s.pod, pod))
			return true;
	return false;
}

/* ---- the ingress entries ---- */

static struct xg_sess_key key_of(const struct na_endpoint *e)
{
	struct xg_sess_key k = {.ip_be = e->ip_be, .port_be = htons(e->port), .proto = e->proto};

	return k;
}

static int ingress_add(struct na_agent *a, struct sess_rt *x, uint32_t pod_ip)
{
	if (!a->maps_open)
		return -1;
	for (int i = 0; i < x->s.n_eps; i++) {
		struct xg_sess_key k = key_of(&x->s.eps[i]);
		struct xg_sess v = {.vni = a->vni,
				    .pod_ip_be = pod_ip,
				    .pod_port_be = htons(x->s.eps[i].pod_port),
				    .flags = x->s.peer_be ? XG_SESS_POD_SIDE : 0,
				    .host_be = x->s.peer_be};

		if (xg_sess_add(&a->maps, &a->smaps, &k, &v)) {
			for (int j = 0; j < i; j++) {
				struct xg_sess_key kj = key_of(&x->s.eps[j]);

				xg_sess_del(&a->smaps, &kj);
			}
			return -1;
		}
	}
	x->entries = true;
	return 0;
}

static void ingress_del(struct na_agent *a, struct sess_rt *x)
{
	if (!a->maps_open || !x->s.n_eps)
		return;
	for (int i = 0; i < x->s.n_eps; i++) {
		struct xg_sess_key k = key_of(&x->s.eps[i]);

		xg_sess_del(&a->smaps, &k); /* XG_ENOTFOUND: gone already */
	}
	x->entries = false;
}

static bool port_used(struct na_agent *a, uint16_t port)
{
	for (struct sess_rt *x = a->sess; x; x = x->next)
		for (int i = 0; i < x->s.n_eps; i++)
			if (!x->s.peer_be && x->s.eps[i].port == port)
				return true;
	return false;
}

/* One public port per container port, from the range, round robin (a port
 * just freed is the last to be given again: late packets of the old
 * session do not reach the new one). */
static int ports_take(struct na_agent *a, struct sess_rt *x, const struct na_pod *p)
{
	unsigned span = (unsigned)a->port_hi - a->port_lo + 1;

	x->s.n_eps = 0;
	for (int i = 0; i < p->n_ports; i++) {
		unsigned tries = 0;

		while (tries++ < span) {
			uint16_t port = a->port_next;

			a->port_next = port >= a->port_hi ? a->port_lo : (uint16_t)(port + 1);
			if (!port_used(a, port)) {
				struct na_endpoint *e = &x->s.eps[x->s.n_eps++];

				e->proto = p->ports[i].proto;
				e->ip_be = a->conf->public_ip_be;
				e->port = port;
				e->pod_port = p->ports[i].port;
				break;
			}
		}
		if (x->s.n_eps != i + 1)
			return -1;
	}
	return 0;
}

/* ---- the pod's session service ---- */

static void svc_open(struct pod_rt *r, struct sess_rt *x)
{
	json_t *m = json_pack("{s:s,s:s,s:s}", "op", "open", "session", x->s.id, "data",
			      x->s.data ? x->s.data : "");

	if (r->svc && !na_svc_send(r->svc, m))
		x->open_sent = true;
}

void sess_on_svc_up(struct pod_rt *r)
{
	for (struct sess_rt *x = r->a->sess; x; x = x->next)
		if (!strcmp(x->s.pod, r->p.id) && x->s.state == NA_SESS_STARTING && !x->open_sent)
			svc_open(r, x);
}

/* Closed for good: the entries first, then the pod's fate. */
static void finish_close(struct na_agent *a, struct sess_rt *x, const char *reason)
{
	struct pod_rt *r = pod_find(a, x->s.pod);
	bool kill = x->s.kill_on_close;

	ingress_del(a, x);
	sess_report(a, x, NA_SESS_CLOSED, reason);
	sess_drop(a, x);
	if (!r || r->gone)
		return;
	if (kill)
		pod_terminate(r, KILL_GRACE_MS, "SessionClosed");
	else
		pod_to_standby(r);
}

/* The session may be used: its pod, Activating for it, is Running. */
static void sess_live(struct na_agent *a, struct sess_rt *x, enum na_sess_state st)
{
	struct pod_rt *r = pod_find(a, x->s.pod);

	sess_report(a, x, st, NULL);
	if (r && !r->gone && r->p.state == NA_POD_ACTIVATING)
		pod_report(a, r, NA_POD_RUNNING, NULL, NULL);
}

void sess_on_pod_msg(struct pod_rt *r, json_t *m)
{
	struct na_agent *a = r->a;
	const char *op = json_string_value(json_object_get(m, "op"));
	const char *id = json_string_value(json_object_get(m, "session"));
	struct sess_rt *x = id ? sess_find(a, id) : NULL;

	if (!op || (x && strcmp(x->s.pod, r->p.id)))
		return; /* not its session: a pod speaks only for itself */
	if (!strcmp(op, "ready")) {
		if (x && x->s.state == NA_SESS_STARTING && x->entries)
			sess_live(a, x, NA_SESS_AVAILABLE);
	} else if (!strcmp(op, "inuse")) {
		json_int_t n = json_integer_value(json_object_get(m, "clients"));

		if (!x || na_sess_final(x->s.state) || x->s.state == NA_SESS_CLOSING)
			return;
		x->s.clients = n > 0 ? (int)n : 0;
		if (n > 0 && na_sess_may(x->s.state, NA_SESS_INUSE))
			sess_live(a, x, NA_SESS_INUSE);
		else if (n <= 0 && x->s.state == NA_SESS_INUSE)
			sess_report(a, x, NA_SESS_AVAILABLE, NULL);
	} else if (!strcmp(op, "closed")) {
		if (x && !na_sess_final(x->s.state))
			finish_close(a, x, x->s.state == NA_SESS_CLOSING ? NULL : "ClosedByPod");
	}
}

/* ---- the tick ---- */

static bool ports_listen(struct pod_rt *r)
{
	for (int i = 0; i < r->p.n_ports; i++)
		if (!na_proc_listening(r->p.pid, r->p.ports[i].port, r->p.ports[i].proto))
			return false;
	return true;
}

bool sess_tick(struct na_agent *a, uint64_t now)
{
	struct sess_rt *x, *next;
	bool fast = false;

	for (x = a->sess; x; x = next) {
		struct pod_rt *r = pod_find(a, x->s.pod);

		next = x->next;
		if (na_sess_final(x->s.state)) {
			ingress_del(a, x);
			sess_drop(a, x);
			continue;
		}
		if (!r || r->gone) {
			ingress_del(a, x);
			sess_report(a, x, NA_SESS_CLOSED, "PodGone");
			sess_drop(a, x);
			continue;
		}
		if (x->s.state == NA_SESS_STARTING) {
			fast = true;
			if (!r->p.svc && r->p.pid > 0 && ports_listen(r))
				sess_live(a, x, NA_SESS_AVAILABLE);
			else if (r->p.svc && !x->open_sent)
				svc_open(r, x);
		} else if (x->s.state == NA_SESS_CLOSING) {
			fast = true;
			if (now >= x->close_at_ms)
				finish_close(a, x, "GracePeriodOver");
		}
	}
	return fast;
}

/* Closing: the pod is told and has g seconds; without its session service
 * (or before it was told of the session) closed at once. */
static void sess_close(struct na_agent *a, struct sess_rt *x, unsigned g)
{
	struct pod_rt *r = pod_find(a, x->s.pod);

	sess_report(a, x, NA_SESS_CLOSING, NULL);
	if (r && !r->gone && r->p.svc && r->svc && x->open_sent) {
		na_svc_send(r->svc, json_pack("{s:s,s:s,s:i}", "op", "close", "session", x->s.id,
					      "gracePeriodSeconds", (int)g));
		x->close_at_ms = ctl_now_ms() + g * 1000ull;
		agent_tick_soon(a);
		return;
	}
	finish_close(a, x, NULL);
}

void sess_pod_evacuate(struct na_agent *a, struct pod_rt *r, unsigned grace_s)
{
	struct sess_rt *x, *next;

	for (x = a->sess; x; x = next) {
		next = x->next;
		if (strcmp(x->s.pod, r->p.id) || na_sess_final(x->s.state))
			continue;
		if (x->s.state == NA_SESS_CLOSING) { /* already told: the sooner end holds */
			uint64_t end = ctl_now_ms() + grace_s * 1000ull;

			if (end < x->close_at_ms)
				x->close_at_ms = end;
			continue;
		}
		sess_close(a, x, grace_s < x->s.grace_s ? grace_s : x->s.grace_s);
	}
}

void sess_pod_gone(struct na_agent *a, struct pod_rt *r, const char *reason)
{
	struct sess_rt *x, *next;

	for (x = a->sess; x; x = next) {
		next = x->next;
		if (strcmp(x->s.pod, r->p.id) || na_sess_final(x->s.state))
			continue;
		ingress_del(a, x);
		sess_report(a, x, NA_SESS_CLOSED, reason);
		sess_drop(a, x);
	}
}

int sess_adopt(struct na_agent *a, struct na_sess *s)
{
	struct sess_rt *x = calloc(1, sizeof(*x));

	if (!x) {
		free(s->data);
		return -1;
	}
	x->s = *s;
	/* what was reported Available had its entries: they outlive us (pinned) */
	x->entries = s->state != NA_SESS_STARTING;
	x->open_sent = s->state != NA_SESS_STARTING;
	if (s->state == NA_SESS_CLOSING)
		x->close_at_ms = ctl_now_ms() + s->grace_s * 1000ull;
	x->next = a->sess;
	a->sess = x;
	return 0;
}

/* ---- commands ---- */

int na_agent_session_open(struct na_agent *a, json_t *m, char *err, size_t errlen)
{
	const char *id = json_string_value(json_object_get(m, "sessionIdentifier"));
	const char *pod = json_string_value(json_object_get(m, "podIdentifier"));
	json_t *so = json_object_get(m, "session");
	json_t *data = json_object_get(so, "sessionData");
	json_t *grace = json_object_get(so, "closeGracePeriodSeconds");
	json_t *kill = json_object_get(so, "killInstanceWhenSessionClosed");
	json_t *ing = json_object_get(m, "ingress");
	char owner[NA_OWNER_MAX + 1];
	struct sess_rt *x;
	struct pod_rt *r;

	a->last_cmd_ms = ctl_now_ms();
	if (!id || !*id || strlen(id) > NA_ID_MAX)
		return snprintf(err, errlen, "sessionIdentifier"), -1;
	if (!pod || strlen(pod) > NA_ID_MAX)
		return snprintf(err, errlen, "podIdentifier"), -1;
	if (!json_is_object(so))
		return snprintf(err, errlen, "session"), -1;
	if (data && !json_is_string(data))
		return snprintf(err, errlen, "session.sessionData"), -1;
	if (grace && (!json_is_integer(grace) || json_integer_value(grace) < 0 ||
		      json_integer_value(grace) > 3600))
		return snprintf(err, errlen, "session.closeGracePeriodSeconds"), -1;
	if (kill && !json_is_boolean(kill))
		return snprintf(err, errlen, "session.killInstanceWhenSessionClosed"), -1;
	if (na_owner_parse(so, owner, err, errlen))
		return -1;
	if (ing && !json_is_object(ing))
		return snprintf(err, errlen, "ingress: must be an object"), -1;
	if (a->conf->role == NA_ROLE_INGRESS) {
		sess_refuse(a, id, pod, "IngressHost");
		return 0;
	}
	if ((x = sess_find(a, id))) {
		sess_report(a, x, x->s.state, x->s.reason);
		return 0;
	}
	if (!na_agent_ready(a)) {
		sess_refuse(a, id, pod, "NodeNotReady");
		return 0;
	}
	r = pod_find(a, pod);
	if (!r || r->gone || r->p.terminating) {
		sess_refuse(a, id, pod, "PodNotFound");
		return 0;
	}
	if (r->p.state != NA_POD_STANDBY && r->p.state != NA_POD_RUNNING) {
		sess_refuse(a, id, pod, "PodNotReady");
		return 0;
	}
	x = calloc(1, sizeof(*x));
	if (!x)
		return snprintf(err, errlen, "out of memory"), -1;
	snprintf(x->s.id, sizeof(x->s.id), "%s", id);
	snprintf(x->s.pod, sizeof(x->s.pod), "%s", pod);
	x->s.data = strdup(data ? json_string_value(data) : "");
	x->s.grace_s = grace ? (unsigned)json_integer_value(grace) : 60;
	x->s.kill_on_close = kill ? json_is_true(kill) : true;
	snprintf(x->s.owner, sizeof(x->s.owner), "%s", owner);
	x->s.state = NA_SESS_STARTING;
	if (ing && na_ing_pod_side_parse(ing, &r->p, &x->s, err, errlen)) {
		free(x->s.data);
		free(x);
		return -1;
	}
	if (!ing && ports_take(a, x, &r->p)) {
		free(x->s.data);
		free(x);
		sess_refuse(a, id, pod, "NoFreePort");
		return 0;
	}
	x->next = a->sess;
	a->sess = x;
	sess_report(a, x, NA_SESS_STARTING, NULL);
	/* the entries before the pod can say ready: Available implies them */
	if (ingress_add(a, x, r->p.ip_be)) {
		x->s.n_eps = 0;
		ingress_del(a, x);
		sess_report(a, x, NA_SESS_CLOSED, "IngressFailed");
		sess_drop(a, x);
		return 0;
	}
	if (r->frozen || r->p.state == NA_POD_STANDBY) {
		if (pod_thaw(r)) {
			finish_close(a, x, "ThawFailed");
			return 0;
		}
		/* the original's Activating: thawed for a session not yet ready */
		pod_report(a, r, NA_POD_ACTIVATING, NULL, NULL);
	}
	if (r->p.svc)
		svc_open(r, x);
	agent_tick_soon(a);
	return 0;
}

int na_agent_session_close(struct na_agent *a, json_t *m, char *err, size_t errlen)
{
	const char *id = json_string_value(json_object_get(m, "sessionIdentifier"));
	json_t *grace = json_object_get(m, "gracePeriodSeconds");
	struct sess_rt *x;

	a->last_cmd_ms = ctl_now_ms();
	if (!id)
		return snprintf(err, errlen, "sessionIdentifier"), -1;
	if (grace && (!json_is_integer(grace) || json_integer_value(grace) < 0 ||
		      json_integer_value(grace) > 3600))
		return snprintf(err, errlen, "gracePeriodSeconds"), -1;
	x = sess_find(a, id);
	if (!x) {
		sess_refuse(a, id, json_string_value(json_object_get(m, "podIdentifier")),
			    "NotFound");
		return 0;
	}
	if (x->s.state == NA_SESS_CLOSING) {
		sess_report(a, x, x->s.state, x->s.reason);
		return 0;
	}
	sess_close(a, x, grace ? (unsigned)json_integer_value(grace) : x->s.grace_s);
	return 0;
}
