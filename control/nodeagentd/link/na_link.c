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
#include "na_link.h"

#define MSG_MAX	     (16u << 20)
#define CONNECT_TO_S 10
#define QUEUE_MAX    (4u << 20)
#define CRED_LEN     43

enum st { L_DOWN, L_CONNECTING, L_OPEN, L_SYNCED };

struct na_link {
	const struct na_config *conf;
	struct na_store *store;
	struct na_agent *agent;
	struct lws_context *lws;
	struct lws_vhost *vh;
	struct na_link **slot;
	struct ctl_wslink l;
	struct ctl_url urls[NA_MAX_CORES]; /* [Core] URL: every core; the leader takes nodes */
	char url_text[NA_MAX_CORES][256];
	int n_urls, cur; /* the one tried now */
	enum st st;
	bool joined;	 /* this link registers with the join token */
	bool ready_sent; /* NodeReady on this link */
	bool stopping;
	unsigned attempts;
	unsigned state_s;
	lws_sorted_usec_list_t retry, state, conn_to;
};

static void connect_core(struct na_link *k);

static void on_retry(lws_sorted_usec_list_t *sul)
{
	struct na_link *k = lws_container_of(sul, struct na_link, retry);

	connect_core(k);
}

static void link_down(struct na_link *k, const char *why)
{
	uint64_t ms;

	if (k->st == L_DOWN)
		return;
	if (k->st == L_SYNCED || k->attempts == 0 || k->attempts % 10 == 0)
		ctl_log("link: %s %s%s%s", k->st == L_SYNCED ? "lost the link to" : "cannot reach",
			k->url_text[k->cur], why ? ": " : "", why ? why : "");
	k->st = L_DOWN;
	ctl_ws_reset(&k->l);
	lws_sul_cancel(&k->state);
	lws_sul_cancel(&k->conn_to);
	/* the next core at once (a standby refuses nodes, a dead leader's
	 * successor is there); the backoff grows per round over all of them */
	k->cur = (k->cur + 1) % k->n_urls;
	if (k->cur)
		ms = 50;
	else
		ms = ctl_backoff_ms(k->attempts++, 500, (uint64_t)k->conf->reconnect_max_s * 1000);
	lws_sul_schedule(k->lws, 0, &k->retry, on_retry, (lws_usec_t)ms * LWS_US_PER_MS);
}

static void link_close(struct na_link *k)
{
	if (!k->l.wsi)
		return;
	k->l.close_after = true;
	k->l.close_code = LWS_CLOSE_STATUS_NORMAL;
	lws_set_timeout(k->l.wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
}

static void on_connect_timeout(lws_sorted_usec_list_t *sul)
{
	struct na_link *k = lws_container_of(sul, struct na_link, conn_to);

	if (k->st == L_CONNECTING || k->st == L_OPEN) {
		if (k->l.wsi)
			link_close(k);
		else
			link_down(k, "no answer");
	}
}

static void connect_core(struct na_link *k)
{
	struct lws_client_connect_info ci;

	if (k->stopping || k->st != L_DOWN)
		return;
	memset(&ci, 0, sizeof(ci));
	ci.context = k->lws;
	ci.vhost = k->vh;
	ci.address = k->urls[k->cur].host;
	ci.port = k->urls[k->cur].port;
	ci.path = k->urls[k->cur].has_path && strcmp(k->urls[k->cur].path, "/")
		      ? k->urls[k->cur].path
		      : NA_LINK_PATH;
	ci.host = k->urls[k->cur].host;
	ci.origin = k->urls[k->cur].host;
	ci.protocol = NA_PROTOCOL;
	ci.local_protocol_name = NA_PROTOCOL;
	ci.ietf_version_or_minus_one = -1;
	ci.ssl_connection = k->urls[k->cur].tls ? LCCSCF_USE_SSL : 0;
	ci.pwsi = &k->l.wsi;
	k->st = L_CONNECTING;
	lws_sul_schedule(k->lws, 0, &k->conn_to, on_connect_timeout,
			 (lws_usec_t)CONNECT_TO_S * LWS_US_PER_SEC);
	if (!lws_client_connect_via_info(&ci) && k->st == L_CONNECTING) {
		k->l.wsi = NULL;
		link_down(k, "connection failed");
	}
}

static void send_register(struct na_link *k)
{
	char cred[128] = "";
	json_t *auth;

	na_store_meta_get(k->store, "credential", cred, sizeof(cred));
	k->joined = !cred[0];
	if (k->joined && !k->conf->join_token[0]) {
		ctl_log("link: no stored credential and no [Core] JoinToken: cannot register");
		link_close(k);
		return;
	}
	auth = k->joined ? json_pack("{s:s}", "join", k->conf->join_token)
			 : json_pack("{s:s}", "credential", cred);
	sodium_memzero(cred, sizeof(cred));
	ctl_ws_send(&k->l,
		    json_pack("{s:s,s:i,s:o,s:I,s:o}", "type", "NodeRegister", "v", 1, "auth", auth,
			      "nodeRevision", (json_int_t)na_store_revision(k->store), "node",
			      na_agent_node_json(k->agent)));
}

static void send_ready(struct na_link *k)
{
	if (k->st != L_SYNCED || k->ready_sent || !na_agent_ready(k->agent))
		return;
	k->ready_sent = true;
	ctl_ws_send(&k->l, na_agent_state_msg(k->agent, "NodeReady"));
	ctl_log("link: ready (revision %lld)", (long long)na_store_revision(k->store));
}

static void on_state_timer(lws_sorted_usec_list_t *sul)
{
	struct na_link *k = lws_container_of(sul, struct na_link, state);

	if (k->st != L_SYNCED)
		return;
	ctl_ws_send(&k->l, na_agent_state_msg(k->agent, "NodeState"));
	lws_sul_schedule(k->lws, 0, &k->state, on_state_timer,
			 (lws_usec_t)k->state_s * LWS_US_PER_SEC);
}

static int on_configuration(struct na_link *k, json_t *m, char *err, size_t errlen)
{
	json_t *c = json_object_get(m, "credential");
	json_int_t ss = json_integer_value(json_object_get(m, "stateSeconds"));

	if (c) {
		const char *v = json_string_value(c);

		if (!v || strlen(v) != CRED_LEN)
			return snprintf(err, errlen, "credential"), -1;
		if (na_store_meta_put(k->store, "credential", v)) {
			ctl_log("link: cannot keep the credential: %s", na_store_errmsg(k->store));
			return snprintf(err, errlen, "credential (not stored)"), -1;
		}
	} else if (k->joined) {
		return snprintf(err, errlen, "credential (a join is answered with one)"), -1;
	}
	k->state_s = ss >= 1 && ss <= 3600 ? (unsigned)ss : 60;
	return na_agent_configure(k->agent, m, err, errlen);
}

static int on_error_msg(struct na_link *k, json_t *m)
{
	const char *code = json_string_value(json_object_get(m, "code"));
	const char *msg = json_string_value(json_object_get(m, "message"));

	ctl_log("link: the core refused: %s (%s)", msg ? msg : "?", code ? code : "?");
	if (code && !strcmp(code, "unauthorized") && !k->joined)
		ctl_log("link: the stored credential was refused: a node the core forgot joins "
			"again only once its store is removed");
	return -1;
}

static int on_message(struct na_link *k, json_t *m)
{
	const char *t = ctl_ws_type(m);
	char err[200] = "";
	int rc;

	if (!strcmp(t, "error"))
		return on_error_msg(k, m);
	if (!strcmp(t, "NodeConfiguration")) {
		rc = on_configuration(k, m, err, sizeof(err));
		k->attempts = 0;
		lws_sul_cancel(&k->conn_to);
	} else if (!strcmp(t, "NodeFullSync")) {
		ctl_ws_send(&k->l, na_agent_state_msg(k->agent, "NodeState"));
		if (k->st != L_SYNCED) {
			k->st = L_SYNCED;
			lws_sul_schedule(k->lws, 0, &k->state, on_state_timer,
					 (lws_usec_t)k->state_s * LWS_US_PER_SEC);
		}
		send_ready(k);
		return 0;
	} else if (!strcmp(t, "PodCreate")) {
		rc = na_agent_pod_create(k->agent, m, err, sizeof(err));
	} else if (!strcmp(t, "PodTerminate")) {
		rc = na_agent_pod_terminate(k->agent, m, err, sizeof(err));
	} else if (!strcmp(t, "SessionOpen")) {
		rc = na_agent_session_open(k->agent, m, err, sizeof(err));
	} else if (!strcmp(t, "SessionClose")) {
		rc = na_agent_session_close(k->agent, m, err, sizeof(err));
	} else if (!strcmp(t, "IngressOpen")) {
		rc = na_agent_ingress_open(k->agent, m, err, sizeof(err));
	} else if (!strcmp(t, "IngressClose")) {
		rc = na_agent_ingress_close(k->agent, m, err, sizeof(err));
	} else {
		snprintf(err, sizeof(err), "type: unknown '%.*s'", na_quote_len(t, 40), t);
		rc = -1;
	}
	if (rc) {
		char why[300];

		/* the type quoted as in err: the refusal goes out as JSON */
		snprintf(why, sizeof(why), "%.*s: %s", na_quote_len(t, 40), t, err);
		ctl_log("link: refusing a message: %s", why);
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

static int cb_link(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		   size_t len)
{
	struct na_link *k = link_of(wsi);
	const char *why;
	json_t *m;
	int code, r;

	(void)user;
	if (!k || k->stopping)
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
		send_register(k);
		return 0;
	case LWS_CALLBACK_CLIENT_RECEIVE:
		if (wsi != k->l.wsi || k->l.close_after)
			return 0;
		r = ctl_ws_receive(&k->l, in, len, MSG_MAX, &m, &why, &code);
		if (r < 0) {
			ctl_log("link: from the core: %s; closing", why);
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

	/* not linked: the full sync of the next link carries it (a command
	 * refused before the sync is answered on the link it came by) */
	if (!k || (k->st != L_SYNCED && k->st != L_OPEN)) {
		json_decref(msg);
		return;
	}
	ctl_ws_send(&k->l, msg);
}

void na_link_ready(void *link)
{
	send_ready(link);
}

void na_link_set_agent(struct na_link *l, struct na_agent *a)
{
	l->agent = a;
	lws_sul_schedule(l->lws, 0, &l->retry, on_retry, 1);
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
	k->state_s = 60;
	for (const char *p = conf->url; *p && k->n_urls < NA_MAX_CORES; k->n_urls++) {
		size_t len = strcspn(p, ",");

		snprintf(k->url_text[k->n_urls], sizeof(k->url_text[0]), "%.*s", (int)len, p);
		if (ctl_url_parse(k->url_text[k->n_urls], CTL_SCHEMES_WS, &k->urls[k->n_urls], err,
				  sizeof(err))) {
			ctl_log("[Core] URL: %s", err);
			free(k);
			return NULL;
		}
		p += len + (p[len] == ',');
	}
	if (!k->n_urls) {
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
	lws_sul_cancel(&k->retry);
	lws_sul_cancel(&k->state);
	lws_sul_cancel(&k->conn_to);
	ctl_ws_reset(&k->l);
	free(k);
}
