// SPDX-License-Identifier: BSD-2-Clause
/*
 * Simulated node agents: each dials fornaxd's node link (proto/fornax.md
 * "The node link"), registers with the join token and answers every
 * command at once, as a node whose pods start and whose sessions open in no
 * time would: PodCreate -> PodState Standby (Running without standby),
 * PodTerminate -> Terminated, SessionOpen -> SessionState Available with an
 * endpoint, SessionClose -> Closed, each with the next revision. What the
 * bench then measures is fornaxd: its placement, its pools, its link.
 */
#include <stdio.h>
#include <string.h>

#include "fx_probe.h"

#define SIM_CPU_MILLI 16000
#define SIM_MEMORY    (64LL << 30)
#define SIM_PODS      4096
#define MSG_MAX	      (16u << 20)

/* node i's public address: where its sessions' endpoints are */
static void public_ip(const struct sim_node *n, char *out, size_t len)
{
	int i = (int)(n - n->fx->nodes);

	snprintf(out, len, "198.51.%d.%d", 100 + i / 250, i % 250 + 1);
}

static json_t *node_obj(const struct sim_node *n)
{
	int i = (int)(n - n->fx->nodes);
	char ip[32], pub[32];

	snprintf(ip, sizeof(ip), "10.250.%d.%d", i / 250, i % 250 + 1);
	public_ip(n, pub, sizeof(pub));
	return json_pack("{s:s,s:s,s:s,s:{},s:{s:i,s:I,s:i}}", "name", n->name, "ip", ip,
			 "publicIp", pub, "labels", "capacity", "cpu", SIM_CPU_MILLI, "memory",
			 (json_int_t)SIM_MEMORY, "pods", SIM_PODS);
}

static void send_msg(struct sim_node *n, json_t *m)
{
	if (!m || ctl_ws_send(&n->link, m))
		fx_fail(n->fx, "%s: cannot queue a message", n->name);
}

static void on_register_sent(struct sim_node *n)
{
	json_t *auth = n->credential[0] ? json_pack("{s:s}", "credential", n->credential)
					: json_pack("{s:s}", "join", n->fx->join);

	send_msg(n, json_pack("{s:s,s:i,s:o,s:I,s:o}", "type", "NodeRegister", "v", 1, "auth", auth,
			      "nodeRevision", (json_int_t)n->rev, "node", node_obj(n)));
}

static void pod_state(struct sim_node *n, json_t *cmd, const char *state)
{
	json_t *pod = json_object_get(cmd, "pod");
	const char *id = json_string_value(json_object_get(cmd, "podIdentifier"));

	n->rev++;
	send_msg(n, json_pack("{s:s,s:I,s:{s:s?,s:s?,s:s,s:s,s:O?}}", "type", "PodState",
			      "nodeRevision", (json_int_t)n->rev, "pod", "podIdentifier", id,
			      "application", json_string_value(json_object_get(pod, "application")),
			      "state", state, "podIP", "10.244.0.2", "ports",
			      json_object_get(pod, "ports")));
}

static void session_state(struct sim_node *n, json_t *cmd, const char *state, bool endpoint)
{
	json_t *eps = json_array();

	if (endpoint) {
		char ip[32];

		public_ip(n, ip, sizeof(ip));
		json_array_append_new(eps,
				      json_pack("{s:s,s:s,s:i}", "protocol", "TCP", "ipAddress", ip,
						"port", 30000 + (int)(n->next_port++ % 30000)));
	}
	n->rev++;
	send_msg(n, json_pack("{s:s,s:I,s:{s:s?,s:s?,s:s,s:o}}", "type", "SessionState",
			      "nodeRevision", (json_int_t)n->rev, "session", "sessionIdentifier",
			      json_string_value(json_object_get(cmd, "sessionIdentifier")),
			      "podIdentifier",
			      json_string_value(json_object_get(cmd, "podIdentifier")), "state",
			      state, "accessEndPoints", eps));
}

static void on_message(struct sim_node *n, json_t *m)
{
	const char *t = ctl_ws_type(m);
	struct fx *fx = n->fx;

	if (!t) {
		fx_fail(fx, "%s: a message without a type", n->name);
	} else if (!strcmp(t, "NodeConfiguration")) {
		const char *cred = json_string_value(json_object_get(m, "credential"));

		if (cred)
			snprintf(n->credential, sizeof(n->credential), "%s", cred);
		if (!n->configured)
			fx->n_configured++;
		n->configured = true;
	} else if (!strcmp(t, "NodeFullSync")) {
		if (n->ready) /* the pods it holds are not tracked: a gap is a finding */
			fx_fail(fx, "%s: a full sync asked for after NodeReady", n->name);
		send_msg(n,
			 json_pack("{s:s,s:I,s:o,s:[],s:[]}", "type", "NodeState", "nodeRevision",
				   (json_int_t)n->rev, "node", node_obj(n), "pods", "sessions"));
		send_msg(n,
			 json_pack("{s:s,s:I,s:o,s:[],s:[]}", "type", "NodeReady", "nodeRevision",
				   (json_int_t)n->rev, "node", node_obj(n), "pods", "sessions"));
		n->ready = true;
	} else if (!strcmp(t, "PodCreate")) {
		double now = fx_now_ms();

		if (!fx->pod_creates++)
			fx->t_first_pod = now;
		fx->t_last_pod = now;
		n->pods++;
		pod_state(n, m,
			  json_is_true(json_object_get(m, "standby")) ? "Standby" : "Running");
	} else if (!strcmp(t, "PodTerminate")) {
		pod_state(n, m, "Terminated");
	} else if (!strcmp(t, "SessionOpen")) {
		fx->session_opens++;
		session_state(n, m, "Available", true);
	} else if (!strcmp(t, "SessionClose")) {
		session_state(n, m, "Closed", false);
	} else if (!strcmp(t, "error")) {
		fx_fail(fx, "%s: fornaxd refused: %s: %s", n->name,
			json_string_value(json_object_get(m, "code")),
			json_string_value(json_object_get(m, "message")));
	} else {
		fx_fail(fx, "%s: unexpected message %s", n->name, t);
	}
}

static int cb(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
	struct sim_node *n = user;
	const char *why;
	json_t *m;
	int code, r;

	(void)user;
	switch (reason) {
	case LWS_CALLBACK_CLIENT_ESTABLISHED:
		n->link.wsi = wsi;
		on_register_sent(n);
		return 0;
	case LWS_CALLBACK_CLIENT_RECEIVE:
		r = ctl_ws_receive(&n->link, in, len, MSG_MAX, &m, &why, &code);
		if (r < 0) {
			fx_fail(n->fx, "%s: %s", n->name, why);
			return -1;
		}
		if (r == 1) {
			on_message(n, m);
			json_decref(m);
		}
		return 0;
	case LWS_CALLBACK_CLIENT_WRITEABLE:
		return ctl_ws_writable(&n->link);
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
		fx_fail(n->fx, "%s: cannot connect: %s", n ? n->name : "?",
			in ? (const char *)in : "?");
		if (n)
			n->closed = true;
		return 0;
	case LWS_CALLBACK_CLIENT_CLOSED:
		if (n && !n->fx->stop)
			fx_fail(n->fx, "%s: fornaxd closed the link", n->name);
		if (n) {
			n->closed = true;
			ctl_ws_reset(&n->link);
		}
		return 0;
	default:
		break;
	}
	return 0;
}

const struct lws_protocols sim_node_protocol = {"fx-sim-node", cb, 0, MSG_MAX, 0, NULL, 0};

int sim_nodes_start(struct fx *fx, int count)
{
	fx->nodes = calloc((size_t)count, sizeof(*fx->nodes));
	if (!fx->nodes)
		return -1;
	fx->n_nodes = count;
	for (int i = 0; i < count; i++) {
		struct sim_node *n = &fx->nodes[i];
		struct lws_client_connect_info ci;

		n->fx = fx;
		snprintf(n->name, sizeof(n->name), "sim-%03d", i);
		memset(&ci, 0, sizeof(ci));
		ci.context = fx->ctx;
		ci.address = fx->host;
		ci.port = fx->port;
		ci.path = FX_GROUP "/nodeagent";
		ci.host = fx->host;
		ci.origin = fx->host;
		ci.protocol = FX_NODE_PROTOCOL;
		ci.local_protocol_name = sim_node_protocol.name;
		ci.userdata = n;
		if (!lws_client_connect_via_info(&ci))
			return -1;
	}
	return 0;
}
