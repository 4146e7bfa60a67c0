// SPDX-License-Identifier: BSD-2-Clause
/*
 * The link to the parent's hub and the attach state machine:
 *
 *   inactive -> registering -> install_in_progress -> active
 *            -> deregistering -> uninstall_in_progress -> inactive
 *
 * The phase is in SQLite (table attach) and written before the work of the
 * phase starts, so a crash resumes it: registering joins again with the
 * stored token (the parent issues a fresh credential), install and
 * uninstall run their script again (scripts must be idempotent), active
 * reconnects, deregistering tells the parent again.
 *
 * While active, the link is a client WebSocket (wss verified with [API] CA,
 * else the system CAs) on a listen-less vhost of the same lws context;
 * it reconnects with exponential backoff and jitter. Missions from the
 * parent are applied in batches (tree_store.c), state owed to the parent
 * waits in the outbox table until the parent acknowledges it, and a
 * heartbeat carries this cluster's EdgeCluster state, its descendants and
 * the digest of the missions it holds from the parent.
 */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl_backoff.h"
#include "links.h"

enum link_st { L_DOWN, L_CONNECTING, L_OPEN, L_READY };

#define FLUSH_BACKSTOP_MS 1000 /* state waiting for an ack that does not come */

struct uplink {
	struct ecd *d;
	struct lws_context *lws;
	struct ec_link_state tree; /* what the context shows (uplink_link_state) */
	struct ec_attach a;
	struct lws_vhost *vh;
	struct uplink **slot; /* the vhost's pointer to us (uplink_of) */
	struct ctl_wslink l;
	struct attach_script script;
	enum link_st st;
	bool reg;	    /* the link registers (join token), nothing else */
	bool retry_pending; /* a reconnect is scheduled */
	bool quiet;	    /* we close the link for a new phase: no backoff, no log */
	bool stopping;
	unsigned attempts;	      /* failures in a row */
	unsigned pidx;		      /* of several parents (roots on etcd), the one tried now */
	char cur_parent[EC_PATH_MAX]; /* parent_now's */
	unsigned hb_s, to_s;	      /* heartbeat interval and parent-silence timeout */
	uint64_t last_rx_ms;
	int64_t ack;	   /* seq of the last list/missions applied */
	int64_t sent_upto; /* outbox seq sent on this link */
	int64_t acked;	   /* outbox seq the parent acknowledged on this link */
	lws_sorted_usec_list_t retry, hb, flush, sm, conn_to;
	/* attempts given up on by the connect timeout, until lws destroys them:
	 * their late callbacks must not touch the current link */
	struct lws *abandoned[4];
};

static void sm_run(struct uplink *u);
static void schedule_sm(struct uplink *u);

static void set_phase(struct uplink *u, enum ec_phase to, const char *why)
{
	if (tree_attach_set(u->d, &u->a, to, why))
		return;
	u->tree.reports_up = to == PH_REGISTERING || to == PH_INSTALLING || to == PH_ACTIVE;
	schedule_sm(u);
}

static void save(struct uplink *u)
{
	if (ec_store_attach_put(&u->d->store, &u->a))
		ctl_log("attach: cannot store the record: %s", ec_store_errmsg(&u->d->store));
}

/* ---- the link ---- */

static void link_close(struct uplink *u, const char *why)
{
	if (!u->l.wsi)
		return;
	if (why)
		ctl_log("uplink: closing the link to %s: %s", u->a.parent, why);
	u->quiet = !why;
	u->l.close_after = true;
	u->l.close_code = LWS_CLOSE_STATUS_NORMAL;
	lws_set_timeout(u->l.wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
}

static void on_retry(lws_sorted_usec_list_t *sul)
{
	struct uplink *u = lws_container_of(sul, struct uplink, retry);
	u->retry_pending = false;
	sm_run(u);
}

static void schedule_retry(struct uplink *u)
{
	/* jitter: a parent that comes back is not hit by all its children at once */
	uint64_t ms = ctl_backoff_ms(u->attempts, 500, (uint64_t)u->d->conf.reconnect_max_s * 1000);

	u->attempts++;
	u->retry_pending = true;
	lws_sul_schedule(u->lws, 0, &u->retry, on_retry, (lws_usec_t)ms * LWS_US_PER_MS);
}

/* The parent tried now: of several (roots on etcd), the pidx-th. */
static const char *parent_now(struct uplink *u)
{
	unsigned n = tree_parent_count(u->a.parent);

	if (!n || tree_parent_at(u->a.parent, u->pidx % n, u->cur_parent, sizeof(u->cur_parent)))
		u->cur_parent[0] = 0;
	return u->cur_parent;
}

static void link_down(struct uplink *u, const char *why)
{
	bool was_ready = u->st == L_READY;

	if (u->st == L_DOWN)
		return;
	u->st = L_DOWN;
	u->tree.link_up = false;
	ctl_ws_reset(&u->l);
	lws_sul_cancel(&u->hb);
	lws_sul_cancel(&u->flush);
	lws_sul_cancel(&u->conn_to);
	if (u->quiet || u->a.phase == PH_INACTIVE) { /* we ended it, or nothing wants it */
		u->quiet = false;
		schedule_sm(u);
		return;
	}
	if (was_ready || u->attempts == 0 || u->attempts % 10 == 0)
		ctl_log("uplink: %s %s%s%s", was_ready ? "lost the link to" : "cannot reach",
			parent_now(u), why ? ": " : "", why ? why : "");
	/* of several parents, the next: a standby root refuses children, and
	 * after the leader's loss another root leads */
	u->pidx++;
	if (u->a.phase == PH_DEREGISTERING && !was_ready && u->attempts >= 3) {
		snprintf(u->a.last_error, sizeof(u->a.last_error),
			 "the parent could not be told of the detach");
		set_phase(u, PH_UNINSTALLING, "the parent is unreachable: detaching without it");
		return;
	}
	schedule_retry(u);
}

/* The slot of u->abandoned holding w (NULL: a free one), or NULL. */
static struct lws **abandoned_slot(struct uplink *u, const struct lws *w)
{
	for (size_t i = 0; i < sizeof(u->abandoned) / sizeof(u->abandoned[0]); i++)
		if (u->abandoned[i] == w)
			return &u->abandoned[i];
	return NULL;
}

static bool is_abandoned(struct uplink *u, struct lws *wsi, bool forget)
{
	struct lws **slot = abandoned_slot(u, wsi);

	if (slot && forget)
		*slot = NULL;
	return slot != NULL;
}

/*
 * An attempt that is not linked (welcome received) within ConnectTimeout is
 * given up and retried with the usual backoff. lws times out most stalls
 * itself, but not all: a client wsi was seen waiting for a socket for
 * ever, with no callback to come (docs/bench.md, mission_tree), and the
 * child stayed unattached. An established link that gets no welcome is
 * closed; an attempt still connecting is abandoned: asked to close, and
 * its callbacks ignored from now on.
 */
static void on_connect_timeout(lws_sorted_usec_list_t *sul)
{
	struct uplink *u = lws_container_of(sul, struct uplink, conn_to);
	char why[80];
	struct lws *w = u->l.wsi;

	(void)sul;
	snprintf(why, sizeof(why), "not linked within %us", u->d->conf.connect_timeout_s);
	if (u->st == L_OPEN) {
		link_close(u, why);
		return;
	}
	if (u->st != L_CONNECTING)
		return;
	if (w) {
		struct lws **free_slot = abandoned_slot(u, NULL);

		if (free_slot)
			*free_slot = w;
		lws_set_timeout(w, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
	}
	u->l.wsi = NULL;
	link_down(u, why);
}

static void connect_parent(struct uplink *u)
{
	struct lws_client_connect_info ci;
	struct ctl_url url;
	struct lws *w;
	char err[256];

	if (tree_hub_url(parent_now(u), &url, err, sizeof(err))) {
		snprintf(u->a.last_error, sizeof(u->a.last_error), "parent URL: %.200s", err);
		set_phase(u, PH_INACTIVE, u->a.last_error);
		return;
	}
	memset(&ci, 0, sizeof(ci));
	ci.context = u->lws;
	ci.vhost = u->vh;
	ci.address = url.host;
	ci.port = url.port;
	ci.path = url.path;
	ci.host = url.host;
	ci.origin = url.host;
	ci.protocol = TREE_PROTOCOL;
	ci.local_protocol_name = TREE_PROTOCOL;
	ci.ietf_version_or_minus_one = -1;
	ci.ssl_connection = url.tls ? LCCSCF_USE_SSL : 0;
	ci.pwsi = &u->l.wsi;
	u->reg = u->a.phase == PH_REGISTERING;
	u->st = L_CONNECTING;
	lws_sul_schedule(u->lws, 0, &u->conn_to, on_connect_timeout,
			 (lws_usec_t)u->d->conf.connect_timeout_s * LWS_US_PER_SEC);
	w = lws_client_connect_via_info(&ci);
	if (w) /* at the address of an abandoned one: that one is gone */
		is_abandoned(u, w, true);
	if (!w && u->st == L_CONNECTING) {
		u->l.wsi = NULL;
		link_down(u, "connection failed");
	}
}

static void send_hello(struct uplink *u)
{
	struct ec_row r;
	char digest[TREE_DIGEST_HEX + 1] = "";
	json_t *h, *auth;

	if (ec_store_get(&u->d->store, EC_T_CLUSTERS, u->d->conf.name, &r)) {
		link_close(u, "cannot read this cluster's row");
		return;
	}
	ec_store_inherited_digest(&u->d->store, digest);
	auth = u->reg ? json_pack("{s:s}", "join", u->a.token)
		      : json_pack("{s:s}", "credential", u->a.credential);
	h = json_pack("{s:s,s:i,s:s,s:s,s:s,s:O,s:{s:s,s:s},s:o,s:b,s:s}", "type", "hello", "v", 1,
		      "name", u->d->conf.name, "uid", r.uid, "created", r.created, "labels",
		      u->d->self_labels, "spec", "distro", ec_distro_name(u->d->conf.distro),
		      "driver", ec_driver_name(u->d->conf.driver), "auth", auth, "register", u->reg,
		      "digest", digest);
	ec_row_free(&r);
	ctl_ws_send(&u->l, h);
}

/* ---- up: state owed, heartbeats ---- */

struct flush_ctx {
	struct uplink *u;
	json_t *items;
	int64_t max;
	size_t bytes;
};

static int flush_one(void *arg, const char *mission, int64_t seq)
{
	struct flush_ctx *f = arg;
	/* the state alone: the whole row (spec, labels) is not sent */
	json_t *map =
	    ec_store_state_report(&f->u->d->store, f->u->d->conf.name, mission, &f->bytes);

	f->max = seq;
	if (!map)
		return 0; /* deleted since: nothing to report, the ack clears it */
	f->bytes += strlen(mission) + 32;
	json_array_append_new(f->items, json_pack("{s:s,s:o}", "mission", mission, "state", map));
	return f->bytes >= TREE_BATCH_BYTES ? 1 : 0;
}

static void flush(struct uplink *u)
{
	for (;;) {
		struct flush_ctx f = {u, json_array(), 0, 0};
		int rc = ec_store_outbox_list(&u->d->store, u->sent_upto, flush_one, &f);

		if (rc < 0 || !f.max) {
			json_decref(f.items);
			return;
		}
		u->sent_upto = f.max;
		ctl_ws_send(&u->l, json_pack("{s:s,s:I,s:o}", "type", "state", "seq",
					     (json_int_t)f.max, "items", f.items));
		if (rc == 0)
			return;
	}
}

static void on_flush(lws_sorted_usec_list_t *sul)
{
	struct uplink *u = lws_container_of(sul, struct uplink, flush);
	if (u->st == L_READY && u->a.phase == PH_ACTIVE)
		flush(u);
}

/*
 * State goes up at once when nothing is in flight: the flush runs from a
 * zero-delay timer, after the callback that changed state (and its store
 * transaction) has ended, so one burst still goes up as one message. While
 * a message waits for its state-ack, further changes wait for that ack
 * (the round trip is the coalescing window), with a backstop in case the
 * ack never comes.
 */
void uplink_owe(struct uplink *u)
{
	if (u->st != L_READY)
		return;
	lws_sul_schedule(u->lws, 0, &u->flush, on_flush,
			 u->sent_upto > u->acked ? FLUSH_BACKSTOP_MS * LWS_US_PER_MS : 0);
}

static int on_state_ack(struct uplink *u, json_t *m)
{
	int64_t seq = json_integer_value(json_object_get(m, "seq"));

	if (ec_store_outbox_ack(&u->d->store, seq))
		return -1;
	if (seq > u->acked)
		u->acked = seq;
	uplink_owe(u); /* what changed while the message was in flight */
	return 0;
}

void uplink_state_changed(struct uplink *u, const char *mission)
{
	struct ecd *d = u->d;

	if (!u->tree.reports_up)
		return;
	if (ec_store_outbox_mark(&d->store, mission))
		ctl_log("uplink: cannot queue the state of %s: %s", mission,
			ec_store_errmsg(&d->store));
	uplink_owe(u);
}

static void send_heartbeat(struct uplink *u)
{
	json_t *self = tree_self_json(u->d), *kids = NULL, *k;
	char digest[TREE_DIGEST_HEX + 1] = "", path[EC_PATH_MAX * 2];
	size_t i;

	if (!self || tree_descendants_json(u->d, &kids) ||
	    ec_store_inherited_digest(&u->d->store, digest)) {
		json_decref(self);
		json_decref(kids);
		ctl_log("uplink: heartbeat: %s", ec_store_errmsg(&u->d->store));
		return;
	}
	json_array_foreach(kids, i, k)
	{
		json_t *st = json_object_get(k, "state");

		snprintf(path, sizeof(path), "%s/%s", u->d->conf.name,
			 json_string_value(json_object_get(st, "path")) ?: "");
		json_object_set_new(st, "path", json_string(path));
	}
	ctl_ws_send(&u->l, json_pack("{s:s,s:I,s:s,s:o,s:o}", "type", "heartbeat", "ack",
				     (json_int_t)u->ack, "digest", digest, "cluster", self,
				     "descendants", kids));
}

static void on_hb(lws_sorted_usec_list_t *sul)
{
	struct uplink *u = lws_container_of(sul, struct uplink, hb);
	if (u->st != L_READY)
		return;
	if (ctl_now_ms() - u->last_rx_ms > (uint64_t)u->to_s * 1000) {
		char why[64];

		snprintf(why, sizeof(why), "the parent was silent for more than %us", u->to_s);
		link_close(u, why);
		return;
	}
	send_heartbeat(u);
	lws_sul_schedule(u->lws, 0, sul, on_hb, (lws_usec_t)u->hb_s * LWS_US_PER_SEC);
}

static void take_credential(struct uplink *u, json_t *c)
{
	const char *v = json_string_value(json_object_get(c, "value"));
	json_int_t exp = json_integer_value(json_object_get(c, "expiresUnix"));

	if (!v || strlen(v) != TREE_CRED_LEN || exp <= 0)
		return;
	snprintf(u->a.credential, sizeof(u->a.credential), "%s", v);
	u->a.cred_expires = exp;
	save(u);
}

static int on_welcome(struct uplink *u, json_t *m)
{
	const char *pn = json_string_value(json_object_get(m, "name"));
	json_int_t hb = json_integer_value(json_object_get(m, "heartbeatSeconds"));
	json_int_t to = json_integer_value(json_object_get(m, "heartbeatTimeoutSeconds"));

	if (json_integer_value(json_object_get(m, "v")) != 1 || !pn || ec_check_dns_label(pn))
		return -1;
	if (json_object_get(m, "credential"))
		take_credential(u, json_object_get(m, "credential"));
	snprintf(u->a.parent_name, sizeof(u->a.parent_name), "%s", pn);
	u->attempts = 0;
	lws_sul_cancel(&u->conn_to);
	if (u->reg) {
		char why[128];

		if (!u->a.credential[0])
			return -1;
		u->a.token[0] = 0; /* the join token is spent: only the credential is kept */
		snprintf(why, sizeof(why), "registered with %s", pn);
		set_phase(u, PH_INSTALLING, why);
		link_close(u, NULL);
		return 0;
	}
	u->st = L_READY;
	u->tree.link_up = true;
	u->a.last_error[0] = 0;
	save(u);
	u->hb_s = hb >= 1 && hb <= 3600 ? (unsigned)hb : u->d->conf.heartbeat_s;
	u->to_s = to > (json_int_t)u->hb_s && to <= 86400 ? (unsigned)to : 3 * u->hb_s;
	ctl_log("uplink: linked to %s at %s%s", pn, parent_now(u),
		json_is_true(json_object_get(m, "resync")) ? " (it asks for all our state)" : "");
	if (u->a.phase == PH_DEREGISTERING) {
		ctl_ws_send(&u->l, json_pack("{s:s}", "type", "leave"));
		return 0;
	}
	u->ack = 0;
	u->sent_upto = 0;
	u->acked = 0;
	if (json_is_true(json_object_get(m, "resync")) && ec_store_outbox_mark_all(&u->d->store))
		ctl_log("uplink: cannot queue all state: %s", ec_store_errmsg(&u->d->store));
	send_heartbeat(u); /* the parent learns our subtree at once */
	flush(u);
	lws_sul_schedule(u->lws, 0, &u->hb, on_hb, (lws_usec_t)u->hb_s * LWS_US_PER_SEC);
	return 0;
}

static int on_error_msg(struct uplink *u, json_t *m)
{
	const char *code = json_string_value(json_object_get(m, "code"));
	const char *msg = json_string_value(json_object_get(m, "message"));

	snprintf(u->a.last_error, sizeof(u->a.last_error), "the parent refused: %s (%s)",
		 msg ? msg : "?", code ? code : "?");
	ctl_log("uplink: %s", u->a.last_error);
	if (code && (!strcmp(code, "unauthorized") || !strcmp(code, "expired"))) {
		if (u->a.phase == PH_REGISTERING) {
			u->a.token[0] = 0;
			set_phase(u, PH_INACTIVE, "the join token was refused");
		} else if (u->a.phase == PH_DEREGISTERING) {
			set_phase(u, PH_UNINSTALLING, "the parent no longer knows us");
		} else if (u->a.phase == PH_ACTIVE && u->d->conf.join_token[0]) {
			/* cut off past CredentialLifetime (or the parent lost its
			 * records): the config's JoinToken attaches it again, as at
			 * first start; refused, the phase goes inactive as then */
			snprintf(u->a.token, sizeof(u->a.token), "%s", u->d->conf.join_token);
			set_phase(u, PH_REGISTERING,
				  strcmp(code, "expired")
				      ? "the credential was refused: attaching again "
					"with the configured JoinToken"
				      : "the credential expired: attaching again with "
					"the configured JoinToken");
		} else {
			save(u);
		}
	}
	return -1;
}

static int on_message(struct uplink *u, json_t *m)
{
	const char *t = ctl_ws_type(m);

	u->last_rx_ms = ctl_now_ms();
	if (!strcmp(t, "error"))
		return on_error_msg(u, m);
	if (u->st == L_OPEN)
		return strcmp(t, "welcome") ? -1 : on_welcome(u, m);
	if (!strcmp(t, "missions"))
		return uplink_on_missions(u->d, u->a.parent_name, m, &u->ack);
	if (!strcmp(t, "list"))
		return uplink_on_list(u->d, u->a.parent_name, &u->l, m, &u->ack);
	if (!strcmp(t, "state-ack"))
		return on_state_ack(u, m);
	if (!strcmp(t, "heartbeat-ack")) {
		const char *ts = json_string_value(json_object_get(m, "time"));

		if (ts && strlen(ts) == EC_TS_LEN)
			snprintf(u->tree.parent_time, sizeof(u->tree.parent_time), "%s", ts);
		if (json_object_get(m, "credential"))
			take_credential(u, json_object_get(m, "credential"));
		return 0;
	}
	if (!strcmp(t, "left")) {
		set_phase(u, PH_UNINSTALLING, "the parent acknowledged the detach");
		link_close(u, NULL);
		return 0;
	}
	ctl_log("uplink: unexpected message '%.40s' from the parent", t);
	return -1;
}

/* The uplink of the vhost wsi is on: NULL once it stopped (lws still calls
 * back while the context goes). */
static struct uplink *uplink_of(struct lws *wsi)
{
	struct lws_vhost *vh = wsi ? lws_get_vhost(wsi) : NULL;
	struct uplink **slot =
	    vh ? lws_protocol_vh_priv_get(vh, lws_vhost_name_to_protocol(vh, TREE_PROTOCOL)) : NULL;

	return slot ? *slot : NULL;
}

static int cb_uplink(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		     size_t len)
{
	struct uplink *u = uplink_of(wsi);
	const char *why;
	json_t *m;
	int code, r;

	(void)user;
	if (!u || u->stopping)
		return 0;
	if (wsi && is_abandoned(u, wsi, reason == LWS_CALLBACK_WSI_DESTROY))
		return reason == LWS_CALLBACK_CLIENT_ESTABLISHED ? -1 : 0;
	switch (reason) {
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
		if (wsi == u->l.wsi || u->st == L_CONNECTING) {
			u->l.wsi = NULL;
			link_down(u, in && len ? (const char *)in : "connection error");
		}
		return 0;
	case LWS_CALLBACK_CLIENT_ESTABLISHED:
		u->l.wsi = wsi;
		u->st = L_OPEN;
		u->last_rx_ms = ctl_now_ms();
		send_hello(u);
		return 0;
	case LWS_CALLBACK_CLIENT_RECEIVE:
		if (wsi != u->l.wsi || u->l.close_after)
			return 0;
		r = ctl_ws_receive(&u->l, in, len, TREE_MSG_MAX, &m, &why, &code);
		if (r < 0) {
			ctl_log("uplink: from the parent: %s; closing", why);
			return -1;
		}
		if (r > 0) {
			r = on_message(u, m);
			json_decref(m);
			if (r < 0)
				link_close(u, NULL);
		}
		return 0;
	case LWS_CALLBACK_CLIENT_WRITEABLE:
		return wsi == u->l.wsi ? ctl_ws_writable(&u->l) : 0;
	case LWS_CALLBACK_CLIENT_CLOSED:
		if (wsi == u->l.wsi) {
			u->l.wsi = NULL;
			link_down(u, NULL);
		}
		return 0;
	default:
		return 0;
	}
}

static const struct lws_protocols protocols[] = {
    {TREE_PROTOCOL, cb_uplink, 0, 65536, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

/* ---- install / uninstall scripts ---- */

static void script_done(void *arg, int status, const char *what)
{
	struct uplink *u = arg;
	bool ok = status == 0;
	char why[300];

	if (u->a.phase == PH_INSTALLING) {
		if (ok) {
			set_phase(u, PH_ACTIVE, what);
			return;
		}
		snprintf(u->a.last_error, sizeof(u->a.last_error), "install failed: %s", what);
		u->a.credential[0] = 0;
		set_phase(u, PH_INACTIVE, u->a.last_error);
	} else if (u->a.phase == PH_UNINSTALLING) {
		if (!ok)
			snprintf(u->a.last_error, sizeof(u->a.last_error), "uninstall failed: %s",
				 what);
		snprintf(why, sizeof(why), "%s", ok ? what : u->a.last_error);
		u->a.credential[0] = u->a.token[0] = u->a.parent_name[0] = u->a.parent[0] = 0;
		u->a.cred_expires = 0;
		set_phase(u, PH_INACTIVE, why);
	}
}

static void script_start(struct uplink *u)
{
	bool install = u->a.phase == PH_INSTALLING;
	const char *path = install ? u->d->conf.install_script : u->d->conf.uninstall_script;
	char *argv[] = {(char *)path,
			install ? "install" : "uninstall",
			(char *)ec_distro_name(u->d->conf.distro),
			u->d->conf.name,
			u->a.parent,
			NULL};

	if (script_running(&u->script))
		return;
	if (!path[0]) { /* nothing to install for this distro: the phase is the record */
		script_done(u, 0,
			    install ? "installed (no InstallScript: recorded)"
				    : "uninstalled (no UninstallScript: recorded)");
		return;
	}
	script_run(&u->script, argv, script_done, u);
}

static void uninstall(struct uplink *u)
{
	struct ec_sync_out out;

	if (script_running(&u->script))
		return;
	/* the parent's missions leave with it (each one is reversed by the missions) */
	if (ec_store_inherited_drop(&u->d->store, &out)) {
		ctl_log("attach: removing the parent's missions: %s",
			ec_store_errmsg(&u->d->store));
		json_decref(out.changed);
	} else {
		uplink_notify(u->d, u->a.parent_name, &out);
	}
	ec_store_outbox_clear(&u->d->store);
	script_start(u);
}

/* ---- the state machine ---- */

static void sm_run(struct uplink *u)
{
	bool want_reg = u->a.phase == PH_REGISTERING;

	u->tree.reports_up =
	    u->a.phase == PH_REGISTERING || u->a.phase == PH_INSTALLING || u->a.phase == PH_ACTIVE;
	switch (u->a.phase) {
	case PH_INACTIVE:
		link_close(u, NULL);
		lws_sul_cancel(&u->retry);
		u->retry_pending = false;
		break;
	case PH_REGISTERING:
	case PH_ACTIVE:
	case PH_DEREGISTERING:
		if (u->st != L_DOWN && u->reg != want_reg) {
			link_close(u, NULL); /* wrong kind of link for this phase: again */
			break;
		}
		if (u->st == L_READY && u->a.phase == PH_DEREGISTERING)
			ctl_ws_send(&u->l, json_pack("{s:s}", "type", "leave"));
		if (u->st == L_DOWN && !u->retry_pending)
			connect_parent(u);
		break;
	case PH_INSTALLING:
		link_close(u, NULL);
		script_start(u);
		break;
	case PH_UNINSTALLING:
		link_close(u, NULL);
		uninstall(u);
		break;
	}
}

static void on_sm(lws_sorted_usec_list_t *sul)
{
	struct uplink *u = lws_container_of(sul, struct uplink, sm);
	sm_run(u);
}

/* from a callback: run the machine from the loop, not inside the caller */
static void schedule_sm(struct uplink *u)
{
	lws_sul_schedule(u->lws, 0, &u->sm, on_sm, 1);
}

void uplink_kick(struct uplink *u)
{
	if (ec_store_attach_get(&u->d->store, &u->a))
		return;
	u->attempts = 0;
	lws_sul_cancel(&u->retry);
	u->retry_pending = false;
	schedule_sm(u);
}

struct uplink *uplink_start(struct ecd *d, struct lws_context *lws, struct ctl_exec *x)
{
	struct lws_context_creation_info vi;
	struct uplink *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->d = d;
	u->lws = lws;
	u->script.x = x;
	u->script.timeout_ms = d->conf.command_timeout_s * 1000;
	if (ec_store_attach_get(&d->store, &u->a)) {
		free(u);
		return NULL;
	}
	memset(&vi, 0, sizeof(vi));
	vi.port = CONTEXT_PORT_NO_LISTEN;
	vi.protocols = protocols;
	vi.vhost_name = "uplink";
	/* the client TLS context: the parent's certificate is verified against CA */
	vi.options = LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
	if (d->conf.ca[0])
		vi.client_ssl_ca_filepath = d->conf.ca;
	u->vh = lws_create_vhost(lws, &vi);
	u->slot =
	    u->vh ? lws_protocol_vh_priv_zalloc(u->vh, &protocols[0], sizeof(*u->slot)) : NULL;
	if (!u->slot) {
		ctl_log("uplink: cannot create the client vhost (bad CA %s?)", d->conf.ca);
		free(u);
		return NULL;
	}
	*u->slot = u;
	if (u->a.phase != PH_INACTIVE) /* after a crash: the phase's work starts over */
		ctl_log("attach: %s at start (parent %s)", tree_phase_name(u->a.phase),
			u->a.parent);
	schedule_sm(u);
	return u;
}

const struct ec_link_state *uplink_link_state(const struct uplink *u)
{
	return &u->tree;
}

void uplink_stop(struct uplink *u)
{
	if (!u)
		return;
	u->stopping = true;
	*u->slot = NULL; /* the vhost (and the slot) goes with the context */
	lws_sul_cancel(&u->retry);
	lws_sul_cancel(&u->hb);
	lws_sul_cancel(&u->flush);
	lws_sul_cancel(&u->sm);
	lws_sul_cancel(&u->conn_to);
	script_stop(&u->script); /* the phase stays: the next start runs the script again */
	ctl_ws_reset(&u->l);
	sodium_memzero(&u->a, sizeof(u->a));
	free(u);
}
