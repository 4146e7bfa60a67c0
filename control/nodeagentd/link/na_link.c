// SPDX-License-Identifier: BSD-2-Clause
/* The link to fornaxd; see na_link.h. */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_backoff.h"
#include "ctl_log.h"
#include "ctl_url.h"
#include "ctl_wslink.h"
#include "na_lead.h"
#include "na_link.h"

#define MSG_MAX	     (16u << 20)
#define CONNECT_TO_S 10
#define QUEUE_MAX    (4u << 20)
#define CRED_LEN     43

enum st { L_DOWN, L_CONNECTING, L_OPEN, L_SYNCED };

/* the link to one core: each has its own state, backoff and timers; the
 * core keeps its own view of the node's revision */
struct na_core {
	struct na_link *k;
	struct ctl_wslink l;
	struct ctl_url url;
	char url_text[256];
	enum st st;
	bool joined;	 /* this link registers with the join token */
	bool ready_sent; /* NodeReady on this link */
	bool leader;	 /* what the core said: it leads, at term */
	int64_t term;
	unsigned attempts;
	unsigned state_s;
	lws_sorted_usec_list_t retry, state, conn_to;
};

struct na_link {
	const struct na_config *conf;
	struct na_store *store;
	struct na_agent *agent;
	struct lws_context *lws;
	struct lws_vhost *vh;
	struct na_link **slot;
	struct na_core cores[NA_MAX_CORES]; /* [Core] URL: one link to each */
	int n_cores;
	struct na_lead lead;
	bool stopping;
};

static void connect_core(struct na_core *k);

static void on_retry(lws_sorted_usec_list_t *sul)
{
	struct na_core *k = lws_container_of(sul, struct na_core, retry);

	connect_core(k);
}

static void link_down(struct na_core *k, const char *why)
{
	uint64_t ms;

	if (k->st == L_DOWN)
		return;
	if (k->st == L_SYNCED || k->attempts == 0 || k->attempts % 10 == 0)
		ctl_log("link: %s %s%s%s", k->st == L_SYNCED ? "lost the link to" : "cannot reach",
			k->url_text, why ? ": " : "", why ? why : "");
	k->st = L_DOWN;
	k->leader = false;
	ctl_ws_reset(&k->l);
	lws_sul_cancel(&k->state);
	lws_sul_cancel(&k->conn_to);
	/* every core has its own link: this one comes back on its own backoff,
	 * the others go on meanwhile */
	ms = ctl_backoff_ms(k->attempts++, 500, (uint64_t)k->k->conf->reconnect_max_s * 1000);
	lws_sul_schedule(k->k->lws, 0, &k->retry, on_retry, (lws_usec_t)ms * LWS_US_PER_MS);
}

static void link_close(struct na_core *k)
{
	if (!k->l.wsi)
		return;
	k->l.close_after = true;
	k->l.close_code = LWS_CLOSE_STATUS_NORMAL;
	lws_set_timeout(k->l.wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
}

static void on_connect_timeout(lws_sorted_usec_list_t *sul)
{
	struct na_core *k = lws_container_of(sul, struct na_core, conn_to);

	if (k->st == L_CONNECTING || k->st == L_OPEN) {
		if (k->l.wsi)
			link_close(k);
		else
			link_down(k, "no answer");
	}
}

static void connect_core(struct na_core *k)
{
	struct lws_client_connect_info ci;

	if (k->k->stopping || k->st != L_DOWN)
		return;
	memset(&ci, 0, sizeof(ci));
	ci.context = k->k->lws;
	ci.vhost = k->k->vh;
	ci.address = k->url.host;
	ci.port = k->url.port;
	ci.path = k->url.has_path && strcmp(k->url.path, "/") ? k->url.path : NA_LINK_PATH;
	ci.host = k->url.host;
	ci.origin = k->url.host;
	ci.protocol = NA_PROTOCOL;
	ci.local_protocol_name = NA_PROTOCOL;
	ci.ietf_version_or_minus_one = -1;
	ci.ssl_connection = k->url.tls ? LCCSCF_USE_SSL : 0;
	ci.pwsi = &k->l.wsi;
	ci.opaque_user_data = k;
	k->st = L_CONNECTING;
	lws_sul_schedule(k->k->lws, 0, &k->conn_to, on_connect_timeout,
			 (lws_usec_t)CONNECT_TO_S * LWS_US_PER_SEC);
	if (!lws_client_connect_via_info(&ci) && k->st == L_CONNECTING) {
		k->l.wsi = NULL;
		link_down(k, "connection failed");
	}
}

static void send_register(struct na_core *k)
{
	char cred[128] = "";
	json_t *auth;

	na_store_meta_get(k->k->store, "credential", cred, sizeof(cred));
	k->joined = !cred[0];
	if (k->joined && !k->k->conf->join_token[0]) {
		ctl_log("link: no stored credential and no [Core] JoinToken: cannot register");
		link_close(k);
		return;
	}
	auth = k->joined ? json_pack("{s:s}", "join", k->k->conf->join_token)
			 : json_pack("{s:s}", "credential", cred);
	sodium_memzero(cred, sizeof(cred));
	ctl_ws_send(&k->l,
		    json_pack("{s:s,s:i,s:o,s:I,s:o}", "type", "NodeRegister", "v", 1, "auth", auth,
			      "nodeRevision", (json_int_t)na_store_revision(k->k->store), "node",
			      na_agent_node_json(k->k->agent)));
}

static void send_ready(struct na_core *k)
{
	if (k->st != L_SYNCED || k->ready_sent || !na_agent_ready(k->k->agent))
		return;
	k->ready_sent = true;
	ctl_ws_send(&k->l, na_agent_state_msg(k->k->agent, "NodeReady"));
	ctl_log("link: ready on %s (revision %lld)", k->url_text,
		(long long)na_store_revision(k->k->store));
}

static void on_state_timer(lws_sorted_usec_list_t *sul)
{
	struct na_core *k = lws_container_of(sul, struct na_core, state);

	if (k->st != L_SYNCED)
		return;
	ctl_ws_send(&k->l, na_agent_state_msg(k->k->agent, "NodeState"));
	lws_sul_schedule(k->k->lws, 0, &k->state, on_state_timer,
			 (lws_usec_t)k->state_s * LWS_US_PER_SEC);
}

/* NodeConfiguration and CoreState say whether the core leads, and its
 * term; a core that says nothing leads at term 0 (no election) */
static int on_lead(struct na_core *k, json_t *m, char *err, size_t errlen)
{
	json_t *ld = json_object_get(m, "leader"), *t = json_object_get(m, "term");
	bool was = na_lead_obeys(&k->k->lead, k->leader, k->term);

	if ((ld && !json_is_boolean(ld)) ||
	    (t && (!json_is_integer(t) || json_integer_value(t) < 0)))
		return snprintf(err, errlen, "%s", ld && !json_is_boolean(ld) ? "leader" : "term"),
		       -1;
	k->leader = ld ? json_is_true(ld) : true;
	k->term = t ? json_integer_value(t) : 0;
	na_lead_heard(&k->k->lead, k->leader, k->term);
	if (na_lead_obeys(&k->k->lead, k->leader, k->term) != was)
		ctl_log("link: %s %s (term %lld)", k->url_text,
			k->leader ? "leads: its commands are obeyed" : "is a standby",
			(long long)k->term);
	return 0;
}

static int on_configuration(struct na_core *k, json_t *m, char *err, size_t errlen)
{
	json_t *c = json_object_get(m, "credential");
	json_int_t ss = json_integer_value(json_object_get(m, "stateSeconds"));

	if (c) {
		const char *v = json_string_value(c);

		if (!v || strlen(v) != CRED_LEN)
			return snprintf(err, errlen, "credential"), -1;
		if (na_store_meta_put(k->k->store, "credential", v)) {
			ctl_log("link: cannot keep the credential: %s",
				na_store_errmsg(k->k->store));
			return snprintf(err, errlen, "credential (not stored)"), -1;
		}
	} else if (k->joined) {
		return snprintf(err, errlen, "credential (a join is answered with one)"), -1;
	}
	k->state_s = ss >= 1 && ss <= 3600 ? (unsigned)ss : 60;
	if (on_lead(k, m, err, errlen))
		return -1;
	/* every core gives the same (the subnet is in the shared store) */
	return na_agent_configure(k->k->agent, m, err, errlen);
}

static int on_error_msg(struct na_core *k, json_t *m)
{
	const char *code = json_string_value(json_object_get(m, "code"));
	const char *msg = json_string_value(json_object_get(m, "message"));

	ctl_log("link: %s refused: %s (%s)", k->url_text, msg ? msg : "?", code ? code : "?");
	if (code && !strcmp(code, "unauthorized") && !k->joined)
		ctl_log("link: the stored credential was refused: a node the core forgot joins "
			"again only once its store is removed");
	return -1;
}

/* a command from a core that does not lead (a standby, or a deposed leader
 * once its successor spoke) is not obeyed: logged and dropped, unanswered */
static bool obeyed(struct na_core *k, const char *t)
{
	if (na_lead_obeys(&k->k->lead, k->leader, k->term))
		return true;
	ctl_log("link: %s from %s refused: %s (term %lld; the leader's is %lld)", t, k->url_text,
		k->leader ? "a deposed leader" : "not the leader", (long long)k->term,
		(long long)k->k->lead.max_term);
	return false;
}

static int on_message(struct na_core *k, json_t *m)
{
	struct na_agent *a = k->k->agent;
	const char *t = ctl_ws_type(m);
	char err[200] = "";
	int rc;

	if (!strcmp(t, "error"))
		return on_error_msg(k, m);
	if (!strcmp(t, "NodeConfiguration")) {
		rc = on_configuration(k, m, err, sizeof(err));
		k->attempts = 0;
		lws_sul_cancel(&k->conn_to);
	} else if (!strcmp(t, "CoreState")) {
		rc = on_lead(k, m, err, sizeof(err));
	} else if (!strcmp(t, "NodeFullSync")) {
		ctl_ws_send(&k->l, na_agent_state_msg(a, "NodeState"));
		if (k->st != L_SYNCED) {
			k->st = L_SYNCED;
			lws_sul_schedule(k->k->lws, 0, &k->state, on_state_timer,
					 (lws_usec_t)k->state_s * LWS_US_PER_SEC);
		}
		send_ready(k);
		return 0;
	} else if (strcmp(t, "PodCreate") && strcmp(t, "PodTerminate") &&
		   strcmp(t, "SessionOpen") && strcmp(t, "SessionClose") &&
		   strcmp(t, "IngressOpen") && strcmp(t, "IngressClose")) {
		snprintf(err, sizeof(err), "type: unknown '%.*s'", na_quote_len(t, 40), t);
		rc = -1;
	} else if (!obeyed(k, t)) {
		return 0;
	} else if (!strcmp(t, "PodCreate")) {
		rc = na_agent_pod_create(a, m, err, sizeof(err));
	} else if (!strcmp(t, "PodTerminate")) {
		rc = na_agent_pod_terminate(a, m, err, sizeof(err));
	} else if (!strcmp(t, "SessionOpen")) {
		rc = na_agent_session_open(a, m, err, sizeof(err));
	} else if (!strcmp(t, "SessionClose")) {
		rc = na_agent_session_close(a, m, err, sizeof(err));
	} else if (!strcmp(t, "IngressOpen")) {
		rc = na_agent_ingress_open(a, m, err, sizeof(err));
	} else {
		rc = na_agent_ingress_close(a, m, err, sizeof(err));
	}
	if (rc) {
		char why[300];

		/* the type quoted as in err: the refusal goes out as JSON */
		snprintf(why, sizeof(why), "%.*s: %s", na_quote_len(t, 40), t, err);
		ctl_log("link: refusing a message from %s: %s", k->url_text, why);
		ctl_ws_fail(&k->l, LWS_CLOSE_STATUS_POLICY_VIOLATION, "bad-message", why);
	}
	return 0;
}

static struct na_link *link_of(struct lws *wsi)
{
	struct lws_vhost *vh = wsi ? lws_get_vhost(wsi) : NULL;
	struct na_link **slot =
	    vh ? lws_protocol_vh_priv_get(vh, lws_vhost_name_to_protocol(vh, NA_PROTOCOL)) : NULL;

	return slot ? *slot : NULL;
}

/* the core of a client wsi (set at connect), once the set is running */
static struct na_core *core_of(struct lws *wsi)
{
	struct na_link *k = link_of(wsi);
	struct na_core *c = wsi ? lws_get_opaque_user_data(wsi) : NULL;

	return k && !k->stopping && c && c->k == k ? c : NULL;
}

static int cb_link(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		   size_t len)
{
	struct na_core *k = core_of(wsi);
	const char *why;
	json_t *m;
	int code, r;

	(void)user;
	if (!k)
		return 0;
	switch (reason) {
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
		k->l.wsi = NULL;
		link_down(k, in && len ? (const char *)in : "connection error");
		return 0;
	case LWS_CALLBACK_CLIENT_ESTABLISHED:
		k->l.wsi = wsi;
		k->l.max_queued = QUEUE_MAX;
		k->st = L_OPEN;
		k->ready_sent = false;
		/* until its NodeConfiguration says: a core that says nothing leads at
		 * term 0 (refused once a core has said it leads at a higher one) */
		k->leader = true;
		k->term = 0;
		send_register(k);
		return 0;
	case LWS_CALLBACK_CLIENT_RECEIVE:
		if (wsi != k->l.wsi || k->l.close_after)
			return 0;
		r = ctl_ws_receive(&k->l, in, len, MSG_MAX, &m, &why, &code);
		if (r < 0) {
			ctl_log("link: from %s: %s; closing", k->url_text, why);
			return -1;
		}
		if (r > 0) {
			r = on_message(k, m);
			json_decref(m);
			if (r < 0)
				link_close(k);
		}
		return 0;
	case LWS_CALLBACK_CLIENT_WRITEABLE:
		return wsi == k->l.wsi ? ctl_ws_writable(&k->l) : 0;
	case LWS_CALLBACK_CLIENT_CLOSED:
		if (wsi == k->l.wsi) {
			k->l.wsi = NULL;
			link_down(k, NULL);
		}
		return 0;
	default:
		return 0;
	}
}

static const struct lws_protocols protocols[] = {
    {NA_PROTOCOL, cb_link, 0, 65536, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

void na_link_report(void *link, json_t *msg)
{
	struct na_link *k = link;

	/* to every core linked (each keeps its own view of the node); one not
	 * linked gets it in the full sync of its next link (a command refused
	 * before the sync is answered on the link it came by) */
	for (int i = 0; k && i < k->n_cores; i++) {
		struct na_core *c = &k->cores[i];

		if (c->st == L_SYNCED || c->st == L_OPEN)
			ctl_ws_send(&c->l, json_incref(msg));
	}
	json_decref(msg);
}

void na_link_ready(void *link)
{
	struct na_link *k = link;

	for (int i = 0; i < k->n_cores; i++)
		send_ready(&k->cores[i]);
}

void na_link_set_agent(struct na_link *l, struct na_agent *a)
{
	l->agent = a;
	for (int i = 0; i < l->n_cores; i++)
		lws_sul_schedule(l->lws, 0, &l->cores[i].retry, on_retry, 1);
}

struct na_link *na_link_start(const struct na_config *conf, struct na_store *store,
			      struct lws_context *lws)
{
	struct lws_context_creation_info vi;
	struct na_link *k = calloc(1, sizeof(*k));
	char err[300];

	if (!k)
		return NULL;
	k->conf = conf;
	k->store = store;
	k->lws = lws;
	for (const char *p = conf->url; *p && k->n_cores < NA_MAX_CORES; k->n_cores++) {
		struct na_core *c = &k->cores[k->n_cores];
		size_t len = strcspn(p, ",");

		c->k = k;
		c->state_s = 60;
		snprintf(c->url_text, sizeof(c->url_text), "%.*s", (int)len, p);
		if (ctl_url_parse(c->url_text, CTL_SCHEMES_WS, &c->url, err, sizeof(err))) {
			ctl_log("[Core] URL: %s", err);
			free(k);
			return NULL;
		}
		p += len + (p[len] == ',');
	}
	if (!k->n_cores) {
		ctl_log("[Core] URL: none given");
		free(k);
		return NULL;
	}
	memset(&vi, 0, sizeof(vi));
	vi.port = CONTEXT_PORT_NO_LISTEN;
	vi.protocols = protocols;
	vi.vhost_name = "core-link";
	vi.options = LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
	/* the given CA alone: fornaxd's certificate is the cluster's, and the
	 * system's ~140 roots would cost ~0.8 MB of heap, parsed at start */
	if (conf->ca[0]) {
		vi.client_ssl_ca_filepath = conf->ca;
		vi.options |= LWS_SERVER_OPTION_DISABLE_OS_CA_CERTS;
	}
	k->vh = lws_create_vhost(lws, &vi);
	k->slot =
	    k->vh ? lws_protocol_vh_priv_zalloc(k->vh, &protocols[0], sizeof(*k->slot)) : NULL;
	if (!k->slot) {
		ctl_log("link: cannot create the client vhost (bad CA %s?)", conf->ca);
		free(k);
		return NULL;
	}
	*k->slot = k;
	return k;
}

void na_link_stop(struct na_link *k)
{
	if (!k)
		return;
	k->stopping = true;
	*k->slot = NULL;
	for (int i = 0; i < k->n_cores; i++) {
		struct na_core *c = &k->cores[i];

		lws_sul_cancel(&c->retry);
		lws_sul_cancel(&c->state);
		lws_sul_cancel(&c->conn_to);
		if (c->l.wsi)
			lws_set_opaque_user_data(c->l.wsi, NULL);
		ctl_ws_reset(&c->l);
	}
	free(k);
}
