// SPDX-License-Identifier: BSD-2-Clause
/*
 * The node link's messages as nodeagentd takes them (proto/fornax.md "The
 * node link"), through its model's parsers (control/nodeagentd/model/
 * na_model.c): one JSON message, by `type`. What the agent layer adds
 * around them (the store, the runtime) is not here; what it sends back is:
 * every refusal and every report must go out as JSON, so a parser's error
 * text must be UTF-8 (jansson refuses anything else, and the report is
 * lost), and what the parsers accept must build the reply the agent sends.
 *
 *   PodCreate     na_pod_check_spec, na_pod_ports_from_spec -> PodState
 *   SessionOpen   na_owner_parse of its session, na_ing_pod_side_parse on
 *                 the pod of its `pod` spec (else one with 8080/TCP and
 *                 5353/UDP) -> SessionState, which echoes the owner
 *   IngressOpen   na_ing_open_parse -> IngressState Open, whose endpoints
 *                 the pod's node must take back as SessionOpen's `ingress`
 *   IngressClose  IngressState Closed for the id
 *   any           `state`: na_pod_state_parse / na_sess_state_parse
 */
#include <arpa/inet.h>
#include <jansson.h>
#include <netinet/in.h>

#include "fuzz.h"
#include "na_model.h"

#define PUBLIC_IP "192.0.2.1" /* the ingress host's */

/* the reply the agent would send holds: built, and its text is JSON */
static void sendable(json_t *o)
{
	char *text;

	FZ_ASSERT(o);
	text = json_dumps(o, JSON_COMPACT);
	FZ_ASSERT(text);
	free(text);
	json_decref(o);
}

/* a refusal's text goes out in an error message (ctl_ws_fail) or a report */
static void refusal(const char *err)
{
	json_t *s = json_string(err);

	FZ_ASSERT(err[0]);
	FZ_ASSERT(s); /* NULL: not UTF-8 */
	json_decref(s);
}

static void copy_id(char *out, size_t len, json_t *v)
{
	const char *s = json_string_value(v);

	snprintf(out, len, "%s", s && strlen(s) < len ? s : "ns/x");
}

static void on_pod_create(json_t *m)
{
	json_t *pod = json_object_get(m, "pod");
	struct na_pod p = {.state = NA_POD_CREATING, .slot = -1, .spec = pod};
	char err[200] = "";

	copy_id(p.id, sizeof(p.id), json_object_get(m, "podIdentifier"));
	if (na_pod_check_spec(pod, err, sizeof(err)) ||
	    na_pod_ports_from_spec(&p, err, sizeof(err))) {
		refusal(err);
		/* pod_refuse: Failed, InvalidSpec, the error as the message */
		p.state = NA_POD_FAILED;
		snprintf(p.reason, sizeof(p.reason), "InvalidSpec");
		snprintf(p.message, sizeof(p.message), "%s", err);
		sendable(na_pod_json(&p));
		return;
	}
	FZ_ASSERT(p.n_ports >= 1 && p.n_ports <= NA_PORTS_MAX);
	for (int i = 0; i < p.n_ports; i++) {
		FZ_ASSERT(p.ports[i].port);
		FZ_ASSERT(p.ports[i].proto == IPPROTO_TCP || p.ports[i].proto == IPPROTO_UDP);
		for (int j = 0; j < i; j++)
			FZ_ASSERT(p.ports[j].port != p.ports[i].port ||
				  p.ports[j].proto != p.ports[i].proto);
	}
	sendable(na_pod_json(&p));
}

/* the pod a SessionOpen is for: its `pod` spec if that is one */
static void session_pod(json_t *m, struct na_pod *p)
{
	char err[200];

	p->spec = json_object_get(m, "pod");
	if (!p->spec || na_pod_check_spec(p->spec, err, sizeof(err)) ||
	    na_pod_ports_from_spec(p, err, sizeof(err))) {
		p->n_ports = 2;
		p->ports[0] = (struct na_port){.port = 8080, .proto = IPPROTO_TCP};
		p->ports[1] = (struct na_port){.port = 5353, .proto = IPPROTO_UDP};
	}
	p->spec = NULL;
}

/* eps as JSON and back: the same endpoints */
static void eps_round_trip(const struct na_sess *s)
{
	json_t *a = na_eps_json(s);
	struct na_sess back = {.n_eps = 0};

	FZ_ASSERT(!na_eps_from_json(&back, a));
	FZ_ASSERT(back.n_eps == s->n_eps);
	for (int i = 0; i < s->n_eps; i++)
		FZ_ASSERT(!memcmp(&back.eps[i], &s->eps[i], sizeof(s->eps[i])));
	json_decref(a);
}

static void on_session_open(json_t *m)
{
	json_t *ing = json_object_get(m, "ingress"), *reply;
	struct na_pod p = {.slot = -1};
	struct na_sess s = {.state = NA_SESS_STARTING};
	char err[200] = "";

	if (na_owner_parse(json_object_get(m, "session"), s.owner, err, sizeof(err))) {
		refusal(err);
		return;
	}
	FZ_ASSERT(!s.owner[0] || !na_owner_check(s.owner));
	session_pod(m, &p);
	copy_id(s.id, sizeof(s.id), json_object_get(m, "sessionIdentifier"));
	copy_id(s.pod, sizeof(s.pod), json_object_get(m, "podIdentifier"));
	if (ing) {
		if (na_ing_pod_side_parse(ing, &p, &s, err, sizeof(err))) {
			refusal(err);
			return;
		}
		FZ_ASSERT(s.peer_be && s.n_eps == p.n_ports);
		for (int i = 0; i < s.n_eps; i++)
			FZ_ASSERT(s.eps[i].port && s.eps[i].pod_port);
		eps_round_trip(&s);
	}
	s.state = NA_SESS_AVAILABLE;
	reply = na_sess_json(&s);
	FZ_ASSERT(reply);
	FZ_ASSERT(!strcmp(json_string_value(json_object_get(reply, "owner")) ?: "", s.owner));
	sendable(reply);
}

static void on_ingress_open(json_t *m)
{
	struct na_ing_req r;
	struct na_pod p = {.slot = -1};
	struct na_sess pod_side = {.n_eps = 0};
	json_t *state, *ing;
	char err[200] = "";

	if (na_ing_open_parse(m, &r, err, sizeof(err))) {
		refusal(err);
		return;
	}
	FZ_ASSERT(strchr(r.s.id, '/') && strchr(r.s.pod, '/'));
	FZ_ASSERT(r.s.pod_ip_be && r.s.peer_be);
	FZ_ASSERT(r.vni >= 1 && r.vni <= 0xffffff);
	FZ_ASSERT(r.n_ports >= 1 && r.n_ports <= NA_PORTS_MAX);
	/* the host takes a public port for each of the pod's (ports_take) */
	for (int i = 0; i < r.n_ports; i++) {
		FZ_ASSERT(r.ports[i].port);
		r.s.eps[i] = (struct na_endpoint){.proto = r.ports[i].proto,
						  .port = (uint16_t)(40000 + i),
						  .pod_port = r.ports[i].port};
		inet_pton(AF_INET, PUBLIC_IP, &r.s.eps[i].ip_be);
		p.ports[i] = r.ports[i];
	}
	r.s.n_eps = p.n_ports = r.n_ports;
	r.s.state = NA_SESS_AVAILABLE;
	state = na_ing_json(&r.s);
	FZ_ASSERT(state);
	FZ_ASSERT(!strcmp(json_string_value(json_object_get(state, "state")), "Open"));
	/* fornaxd hands the endpoints to the pod's node as SessionOpen's ingress */
	ing = json_pack("{s:s,s:O}", "host", PUBLIC_IP, "accessEndPoints",
			json_object_get(state, "accessEndPoints"));
	FZ_ASSERT(ing);
	FZ_ASSERT(!na_ing_pod_side_parse(ing, &p, &pod_side, err, sizeof(err)));
	FZ_ASSERT(pod_side.n_eps == r.s.n_eps);
	for (int i = 0; i < r.s.n_eps; i++)
		FZ_ASSERT(!memcmp(&pod_side.eps[i], &r.s.eps[i], sizeof(r.s.eps[i])));
	json_decref(ing);
	sendable(state);
}

static void on_ingress_close(json_t *m)
{
	const char *id = json_string_value(json_object_get(m, "sessionIdentifier"));
	struct na_sess gone = {.state = NA_SESS_CLOSED};
	json_t *o;

	if (!id || !*id || strlen(id) > NA_ID_MAX)
		return; /* refused by the agent, its error quoting nothing but the field */
	snprintf(gone.id, sizeof(gone.id), "%s", id);
	snprintf(gone.reason, sizeof(gone.reason), "NotFound");
	o = na_ing_json(&gone);
	FZ_ASSERT(o && !strcmp(json_string_value(json_object_get(o, "state")), "Closed"));
	sendable(o);
}

static void on_any(json_t *m)
{
	const char *st = json_string_value(json_object_get(m, "state"));
	enum na_pod_state ps;
	enum na_sess_state ss;

	if (st && !na_pod_state_parse(st, &ps))
		FZ_ASSERT(!strcmp(na_pod_state_name(ps), st));
	if (st && !na_sess_state_parse(st, &ss))
		FZ_ASSERT(!strcmp(na_sess_state_name(ss), st));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *m = json_loadb((const char *)data, size, 0, NULL);
	const char *t = json_string_value(json_object_get(m, "type"));

	if (!m)
		return 0;
	if (!t)
		t = "";
	if (!strcmp(t, "PodCreate"))
		on_pod_create(m);
	else if (!strcmp(t, "SessionOpen"))
		on_session_open(m);
	else if (!strcmp(t, "IngressOpen"))
		on_ingress_open(m);
	else if (!strcmp(t, "IngressClose"))
		on_ingress_close(m);
	on_any(m);
	json_decref(m);
	return 0;
}
