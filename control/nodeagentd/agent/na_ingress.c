// SPDX-License-Identifier: BSD-2-Clause
/*
 * The ingress role (proto/fornax.md "Endpoints", form 2): a host that runs
 * no pod and holds the public half of form 2 sessions. IngressOpen takes
 * one port of the configured range per container port on the host's
 * public address and adds the entries (XG_SESS_FORM_GATEWAY: DNAT, then
 * Geneve toward the pod's node); IngressClose deletes them. Each change is
 * one store transaction with its revision, sent after the commit, as the
 * pods' states are: after a kill -9 the store names the entries, which
 * never left the pinned maps, and the next start reports them again.
 *
 * The entries live in the agent's session list (struct sess_rt, state
 * Available while open), which the pod role's tick never walks here.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "na_agent_int.h"

static void ing_send(struct na_agent *a, const struct na_sess *s, int64_t rev)
{
	agent_send(a, json_pack("{s:s,s:I,s:o}", "type", "IngressState", "nodeRevision",
				(json_int_t)rev, "ingress", na_ing_json(s)));
}

/* Store the entry's state with the next revision, then tell the core. */
static int ing_report(struct na_agent *a, const struct na_sess *s)
{
	int64_t rev = 0;

	if (na_store_sess_put(a->store, s, true, &rev)) {
		ctl_log("ingress %s: cannot store it: %s", s->id, na_store_errmsg(a->store));
		return -1;
	}
	ing_send(a, s, rev);
	return 0;
}

/* A command that cannot be taken (or an entry gone): Closed, no row. */
static void ing_refuse(struct na_agent *a, const struct na_sess *s, const char *reason)
{
	struct na_sess c = *s;
	int64_t rev = 0;

	c.data = NULL;
	c.state = NA_SESS_CLOSED;
	snprintf(c.reason, sizeof(c.reason), "%s", reason);
	if (!na_store_bump(a->store, &rev))
		ing_send(a, &c, rev);
}

json_t *ing_list_json(const struct na_agent *a)
{
	json_t *l = json_array();

	for (struct sess_rt *x = a->sess; x; x = x->next)
		if (!na_sess_final(x->s.state))
			json_array_append_new(l, na_ing_json(&x->s));
	return l;
}

static bool port_used(struct na_agent *a, uint16_t port)
{
	for (struct sess_rt *x = a->sess; x; x = x->next)
		for (int i = 0; i < x->s.n_eps; i++)
			if (x->s.eps[i].port == port)
				return true;
	return false;
}

/* One public port per container port, round robin over the range (as
 * form 1 does on a node: a port just freed is the last given again). */
static int ports_take(struct na_agent *a, struct na_sess *s, const struct na_ing_req *q)
{
	unsigned span = (unsigned)a->port_hi - a->port_lo + 1;

	s->n_eps = 0;
	for (int i = 0; i < q->n_ports; i++) {
		for (unsigned tries = 0; tries < span && s->n_eps == i; tries++) {
			uint16_t port = a->port_next;

			a->port_next = port >= a->port_hi ? a->port_lo : (uint16_t)(port + 1);
			if (port_used(a, port))
				continue;
			s->eps[i] = (struct na_endpoint){q->ports[i].proto, a->conf->public_ip_be,
							 port, q->ports[i].port};
			s->n_eps++;
		}
		if (s->n_eps != i + 1)
			return -1;
	}
	return 0;
}

static struct xg_sess_key key_of(const struct na_endpoint *e)
{
	struct xg_sess_key k = {.ip_be = e->ip_be, .port_be = htons(e->port), .proto = e->proto};

	return k;
}

static void entries_del(struct na_agent *a, const struct na_sess *s, int n)
{
	for (int i = 0; i < n && a->maps_open; i++) {
		struct xg_sess_key k = key_of(&s->eps[i]);

		xg_sess_del(&a->smaps, &k); /* XG_ENOTFOUND: gone already */
	}
}

/* 0, or the reason it failed (nothing left behind) */
static const char *entries_add(struct na_agent *a, const struct na_sess *s, uint32_t vni)
{
	if (!a->maps_open)
		return "IngressFailed";
	for (int i = 0; i < s->n_eps; i++) {
		struct xg_sess_key k = key_of(&s->eps[i]);
		struct xg_sess v = {.vni = vni,
				    .pod_ip_be = s->pod_ip_be,
				    .pod_port_be = htons(s->eps[i].pod_port),
				    .flags = XG_SESS_FORM_GATEWAY,
				    .host_be = s->peer_be};
		int rc = xg_sess_add(&a->maps, &a->smaps, &k, &v);

		if (rc) {
			entries_del(a, s, i);
			/* the pod's endpoint is another session's here: a stale entry the
			 * core closes on its next full sync */
			return rc == XG_EEXIST	    ? "EndpointTaken"
			       : rc == XG_ENOTFOUND ? "NoVPC"
						    : "IngressFailed";
		}
	}
	return NULL;
}

int na_agent_ingress_open(struct na_agent *a, json_t *m, char *err, size_t errlen)
{
	struct na_ing_req q;
	struct sess_rt *x;
	const char *why;

	if (na_ing_open_parse(m, &q, err, errlen))
		return -1;
	if (a->conf->role != NA_ROLE_INGRESS) {
		ing_refuse(a, &q.s, "NotIngressHost");
		return 0;
	}
	if ((x = sess_find(a, q.s.id))) { /* sent again: its state again */
		ing_report(a, &x->s);
		return 0;
	}
	if (!na_agent_ready(a)) {
		ing_refuse(a, &q.s, "NodeNotReady");
		return 0;
	}
	if (q.vni != a->vni) {
		ing_refuse(a, &q.s, "NoVPC");
		return 0;
	}
	if (!(x = calloc(1, sizeof(*x))))
		return snprintf(err, errlen, "out of memory"), -1;
	x->s = q.s;
	x->s.state = NA_SESS_AVAILABLE;
	if (ports_take(a, &x->s, &q)) {
		free(x);
		ing_refuse(a, &q.s, "NoFreePort");
		return 0;
	}
	/* the entries before the report: Open means they are in place */
	if ((why = entries_add(a, &x->s, q.vni))) {
		ctl_log("ingress %s: cannot add its entries (%s)", q.s.id, why);
		free(x);
		ing_refuse(a, &q.s, why);
		return 0;
	}
	x->entries = true;
	x->next = a->sess;
	a->sess = x;
	if (ing_report(a, &x->s)) {
		/* not written: not reported, and not kept (the core times it out) */
		entries_del(a, &x->s, x->s.n_eps);
		a->sess = x->next;
		free(x);
	}
	return 0;
}

int na_agent_ingress_close(struct na_agent *a, json_t *m, char *err, size_t errlen)
{
	const char *id = json_string_value(json_object_get(m, "sessionIdentifier"));
	struct sess_rt *x, **pp;
	struct na_sess gone;

	if (!id || !*id || strlen(id) > NA_ID_MAX)
		return snprintf(err, errlen, "sessionIdentifier '%.*s': required, NS/NAME",
				id ? na_quote_len(id, 60) : 0, id ? id : ""),
		       -1;
	for (pp = &a->sess; (x = *pp); pp = &x->next)
		if (!strcmp(x->s.id, id))
			break;
	if (!x || a->conf->role != NA_ROLE_INGRESS) {
		memset(&gone, 0, sizeof(gone));
		snprintf(gone.id, sizeof(gone.id), "%s", id);
		ing_refuse(a, &gone, x ? "NotIngressHost" : "NotFound");
		return 0;
	}
	/* the public entry goes first: the next packet to it finds no session */
	entries_del(a, &x->s, x->s.n_eps);
	x->entries = false;
	*pp = x->next;
	gone = x->s;
	gone.state = NA_SESS_CLOSED;
	snprintf(gone.reason, sizeof(gone.reason), "Closed");
	na_store_sess_del(a->store, x->s.id);
	ing_refuse(a, &gone, "Closed");
	free(x->s.data);
	free(x);
	return 0;
}
