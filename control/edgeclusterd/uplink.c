// SPDX-License-Identifier: BSD-2-Clause
/*
 * The link to the parent's hub and the attach state machine of seed 003:
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

#include "links.h"

enum link_st { L_DOWN, L_CONNECTING, L_OPEN, L_READY };

#define FLUSH_BACKSTOP_MS 1000 /* state waiting for an ack that does not come */

static struct {
	struct ecd *d;
	struct ec_tree tree;
	struct ec_attach a;
	struct lws_vhost *vh;
	struct wslink l;
	struct attach_script script;
	enum link_st st;
	bool reg;	    /* the link registers (join token), nothing else */
	bool retry_pending; /* a reconnect is scheduled */
	bool quiet;	    /* we close the link for a new phase: no backoff, no log */
	bool stopping;
	unsigned attempts;   /* failures in a row */
	unsigned hb_s, to_s; /* heartbeat interval and parent-silence timeout */
	uint64_t last_rx_ms;
	int64_t ack;	   /* seq of the last list/missions applied */
	int64_t sent_upto; /* outbox seq sent on this link */
	int64_t acked;	   /* outbox seq the parent acknowledged on this link */
	lws_sorted_usec_list_t retry, hb, flush, sm, conn_to;
	/* attempts given up on by the connect timeout, until lws destroys them:
	 * their late callbacks must not touch the current link */
	struct lws *abandoned[4];
} U;

static void sm_run(void);
static void schedule_sm(void);

static void set_phase(enum ec_phase to, const char *why)
{
	if (tree_attach_set(U.d, &U.a, to, why))
		return;
	U.tree.reports_up = to == PH_REGISTERING || to == PH_INSTALLING || to == PH_ACTIVE;
	schedule_sm();
}

static void save(void)
{
	if (ec_store_attach_put(&U.d->store, &U.a))
		ctl_log("attach: cannot store the record: %s", ec_store_errmsg(&U.d->store));
}

/* ---- the link ---- */

static void link_close(const char *why)
{
	if (!U.l.wsi)
		return;
	if (why)
		ctl_log("uplink: closing the link to %s: %s", U.a.parent, why);
	U.quiet = !why;
	U.l.close_after = true;
	U.l.close_code = LWS_CLOSE_STATUS_NORMAL;
	lws_set_timeout(U.l.wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
}

static void on_retry(lws_sorted_usec_list_t *sul)
{
	(void)sul;
	U.retry_pending = false;
	sm_run();
}

static void schedule_retry(void)
{
	uint64_t max_ms = (uint64_t)U.d->conf.reconnect_max_s * 1000, ms;

	ms = 500ull << (U.attempts < 16 ? U.attempts : 16);
	if (ms > max_ms)
		ms = max_ms;
	/* jitter: a parent that comes back is not hit by all its children at once */
	ms = ms / 2 + randombytes_uniform((uint32_t)(ms / 2 + 1));
	U.attempts++;
	U.retry_pending = true;
	lws_sul_schedule(U.d->lws, 0, &U.retry, on_retry, (lws_usec_t)ms * LWS_US_PER_MS);
}

static void link_down(const char *why)
{
	bool was_ready = U.st == L_READY;

	if (U.st == L_DOWN)
		return;
	U.st = L_DOWN;
	U.tree.link_up = false;
	ws_reset(&U.l);
	lws_sul_cancel(&U.hb);
	lws_sul_cancel(&U.flush);
	lws_sul_cancel(&U.conn_to);
	if (U.quiet || U.a.phase == PH_INACTIVE) { /* we ended it, or nothing wants it */
		U.quiet = false;
		schedule_sm();
		return;
	}
	if (was_ready || U.attempts == 0 || U.attempts % 10 == 0)
		ctl_log("uplink: %s %s%s%s", was_ready ? "lost the link to" : "cannot reach",
			U.a.parent, why ? ": " : "", why ? why : "");
	if (U.a.phase == PH_DEREGISTERING && !was_ready && U.attempts >= 3) {
		snprintf(U.a.last_error, sizeof(U.a.last_error),
			 "the parent could not be told of the detach");
		set_phase(PH_UNINSTALLING, "the parent is unreachable: detaching without it");
		return;
	}
	schedule_retry();
}

/* The slot of U.abandoned holding w (NULL: a free one), or NULL. */
static struct lws **abandoned_slot(const struct lws *w)
{
	for (size_t i = 0; i < sizeof(U.abandoned) / sizeof(U.abandoned[0]); i++)
		if (U.abandoned[i] == w)
			return &U.abandoned[i];
	return NULL;
}

static bool is_abandoned(struct lws *wsi, bool forget)
{
	struct lws **slot = abandoned_slot(wsi);

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
	char why[80];
	struct lws *w = U.l.wsi;

	(void)sul;
	snprintf(why, sizeof(why), "not linked within %us", U.d->conf.connect_timeout_s);
	if (U.st == L_OPEN) {
		link_close(why);
		return;
	}
	if (U.st != L_CONNECTING)
		return;
	if (w) {
		struct lws **free_slot = abandoned_slot(NULL);

		if (free_slot)
			*free_slot = w;
		lws_set_timeout(w, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
	}
	U.l.wsi = NULL;
	link_down(why);
}

static void connect_parent(void)
{
	struct lws_client_connect_info ci;
	struct ctl_url u;
	struct lws *w;
	char err[256];

	if (tree_hub_url(U.a.parent, &u, err, sizeof(err))) {
		snprintf(U.a.last_error, sizeof(U.a.last_error), "parent URL: %.200s", err);
		set_phase(PH_INACTIVE, U.a.last_error);
		return;
	}
	memset(&ci, 0, sizeof(ci));
	ci.context = U.d->lws;
	ci.vhost = U.vh;
	ci.address = u.host;
	ci.port = u.port;
	ci.path = u.path;
	ci.host = u.host;
	ci.origin = u.host;
	ci.protocol = TREE_PROTOCOL;
	ci.local_protocol_name = TREE_PROTOCOL;
	ci.ietf_version_or_minus_one = -1;
	ci.ssl_connection = u.tls ? LCCSCF_USE_SSL : 0;
	ci.pwsi = &U.l.wsi;
	U.reg = U.a.phase == PH_REGISTERING;
	U.st = L_CONNECTING;
	lws_sul_schedule(U.d->lws, 0, &U.conn_to, on_connect_timeout,
			 (lws_usec_t)U.d->conf.connect_timeout_s * LWS_US_PER_SEC);
	w = lws_client_connect_via_info(&ci);
	if (w) /* at the address of an abandoned one: that one is gone */
		is_abandoned(w, true);
	if (!w && U.st == L_CONNECTING) {
		U.l.wsi = NULL;
		link_down("connection failed");
	}
}

static void send_hello(void)
{
	struct ec_row r;
	char digest[TREE_DIGEST_HEX + 1] = "";
	json_t *h, *auth;

	if (ec_store_get(&U.d->store, EC_T_CLUSTERS, U.d->conf.name, &r)) {
		link_close("cannot read this cluster's row");
		return;
	}
	ec_store_inherited_digest(&U.d->store, digest);
	auth = U.reg ? json_pack("{s:s}", "join", U.a.token)
		     : json_pack("{s:s}", "credential", U.a.credential);
	h = json_pack("{s:s,s:i,s:s,s:s,s:s,s:O,s:{s:s,s:s},s:o,s:b,s:s}", "type", "hello", "v", 1,
		      "name", U.d->conf.name, "uid", r.uid, "created", r.created, "labels",
		      U.d->self_labels, "spec", "distro", ec_distro_name(U.d->conf.distro),
		      "driver", ec_driver_name(U.d->conf.driver), "auth", auth, "register", U.reg,
		      "digest", digest);
	ec_row_free(&r);
	ws_send(&U.l, h);
}

/* ---- up: state owed, heartbeats ---- */

struct flush_ctx {
	json_t *items;
	int64_t max;
	size_t bytes;
};

/* A mission's map as the parent stores it: our own key stays, a
 * descendant's gets our name in front ("c/d" -> "b/c/d"); NULL if the
 * mission is gone. */
static json_t *report_map(const char *mission, size_t *bytes)
{
	/* a row with NULLs for a mission without keys; none for one gone */
	sqlite3_stmt *st = ec_store_stmt(&U.d->store, "SELECT s.path, s.value FROM missions m"
						      " LEFT JOIN mstate s ON s.mission=m.name"
						      " WHERE m.name=?1");
	const char *self = U.d->conf.name;
	char key[EC_PATH_MAX * 2];
	json_t *out = NULL;
	int rc;

	if (!st)
		return NULL;
	sqlite3_bind_text(st, 1, mission, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		const char *v = (const char *)sqlite3_column_text(st, 1);

		if (!out)
			out = json_object();
		if (!k || !v)
			continue;
		if (strcmp(k, self))
			snprintf(key, sizeof(key), "%s/%s", self, k);
		json_object_set_new(out, strcmp(k, self) ? key : k, json_string(v));
		*bytes += strlen(k) + strlen(v) + strlen(self) + 8;
	}
	ec_store_release(&U.d->store, st);
	if (rc != SQLITE_DONE) {
		json_decref(out);
		return NULL;
	}
	return out;
}

static int flush_one(void *arg, const char *mission, int64_t seq)
{
	struct flush_ctx *f = arg;
	/* the state alone: the whole row (spec, labels) is not sent */
	json_t *map = report_map(mission, &f->bytes);

	f->max = seq;
	if (!map)
		return 0; /* deleted since: nothing to report, the ack clears it */
	f->bytes += strlen(mission) + 32;
	json_array_append_new(f->items, json_pack("{s:s,s:o}", "mission", mission, "state", map));
	return f->bytes >= TREE_BATCH_BYTES ? 1 : 0;
}

static void flush(void)
{
	for (;;) {
		struct flush_ctx f = {json_array(), 0, 0};
		int rc = ec_store_outbox_list(&U.d->store, U.sent_upto, flush_one, &f);

		if (rc < 0 || !f.max) {
			json_decref(f.items);
			return;
		}
		U.sent_upto = f.max;
		ws_send(&U.l, json_pack("{s:s,s:I,s:o}", "type", "state", "seq", (json_int_t)f.max,
					"items", f.items));
		if (rc == 0)
			return;
	}
}

static void on_flush(lws_sorted_usec_list_t *sul)
{
	(void)sul;
	if (U.st == L_READY && U.a.phase == PH_ACTIVE)
		flush();
}

/*
 * State goes up at once when nothing is in flight: the flush runs from a
 * zero-delay timer, after the callback that changed state (and its store
 * transaction) has ended, so one burst still goes up as one message. While
 * a message waits for its state-ack, further changes wait for that ack
 * (the round trip is the coalescing window), with a backstop in case the
 * ack never comes.
 */
static void owe(struct ecd *d)
{
	if (U.st != L_READY)
		return;
	lws_sul_schedule(d->lws, 0, &U.flush, on_flush,
			 U.sent_upto > U.acked ? FLUSH_BACKSTOP_MS * LWS_US_PER_MS : 0);
}

static int on_state_ack(json_t *m)
{
	int64_t seq = json_integer_value(json_object_get(m, "seq"));

	if (ec_store_outbox_ack(&U.d->store, seq))
		return -1;
	if (seq > U.acked)
		U.acked = seq;
	owe(U.d); /* what changed while the message was in flight */
	return 0;
}

static void on_state(struct ecd *d, const char *mission)
{
	if (!U.tree.reports_up)
		return;
	if (ec_store_outbox_mark(&d->store, mission))
		ctl_log("uplink: cannot queue the state of %s: %s", mission,
			ec_store_errmsg(&d->store));
	owe(d);
}

static void send_heartbeat(void)
{
	json_t *self = tree_self_json(U.d), *kids = NULL, *k;
	char digest[TREE_DIGEST_HEX + 1] = "", path[EC_PATH_MAX * 2];
	size_t i;

	if (!self || tree_descendants_json(U.d, &kids) ||
	    ec_store_inherited_digest(&U.d->store, digest)) {
		json_decref(self);
		json_decref(kids);
		ctl_log("uplink: heartbeat: %s", ec_store_errmsg(&U.d->store));
		return;
	}
	json_array_foreach(kids, i, k)
	{
		json_t *st = json_object_get(k, "state");

		snprintf(path, sizeof(path), "%s/%s", U.d->conf.name,
			 json_string_value(json_object_get(st, "path")) ?: "");
		json_object_set_new(st, "path", json_string(path));
	}
	ws_send(&U.l,
		json_pack("{s:s,s:I,s:s,s:o,s:o}", "type", "heartbeat", "ack", (json_int_t)U.ack,
			  "digest", digest, "cluster", self, "descendants", kids));
}

static void on_hb(lws_sorted_usec_list_t *sul)
{
	if (U.st != L_READY)
		return;
	if (ctl_now_ms() - U.last_rx_ms > (uint64_t)U.to_s * 1000) {
		char why[64];

		snprintf(why, sizeof(why), "the parent was silent for more than %us", U.to_s);
		link_close(why);
		return;
	}
	send_heartbeat();
	lws_sul_schedule(U.d->lws, 0, sul, on_hb, (lws_usec_t)U.hb_s * LWS_US_PER_SEC);
}

static void take_credential(json_t *c)
{
	const char *v = json_string_value(json_object_get(c, "value"));
	json_int_t exp = json_integer_value(json_object_get(c, "expiresUnix"));

	if (!v || strlen(v) != TREE_CRED_LEN || exp <= 0)
		return;
	snprintf(U.a.credential, sizeof(U.a.credential), "%s", v);
	U.a.cred_expires = exp;
	save();
}

static int on_welcome(json_t *m)
{
	const char *pn = json_string_value(json_object_get(m, "name"));
	json_int_t hb = json_integer_value(json_object_get(m, "heartbeatSeconds"));
	json_int_t to = json_integer_value(json_object_get(m, "heartbeatTimeoutSeconds"));

	if (json_integer_value(json_object_get(m, "v")) != 1 || !pn || ec_check_dns_label(pn))
		return -1;
	if (json_object_get(m, "credential"))
		take_credential(json_object_get(m, "credential"));
	snprintf(U.a.parent_name, sizeof(U.a.parent_name), "%s", pn);
	U.attempts = 0;
	lws_sul_cancel(&U.conn_to);
	if (U.reg) {
		char why[128];

		if (!U.a.credential[0])
			return -1;
		U.a.token[0] = 0; /* the join token is spent: only the credential is kept */
		snprintf(why, sizeof(why), "registered with %s", pn);
		set_phase(PH_INSTALLING, why);
		link_close(NULL);
		return 0;
	}
	U.st = L_READY;
	U.tree.link_up = true;
	U.a.last_error[0] = 0;
	save();
	U.hb_s = hb >= 1 && hb <= 3600 ? (unsigned)hb : U.d->conf.heartbeat_s;
	U.to_s = to > (json_int_t)U.hb_s && to <= 86400 ? (unsigned)to : 3 * U.hb_s;
	ctl_log("uplink: linked to %s at %s%s", pn, U.a.parent,
		json_is_true(json_object_get(m, "resync")) ? " (it asks for all our state)" : "");
	if (U.a.phase == PH_DEREGISTERING) {
		ws_send(&U.l, json_pack("{s:s}", "type", "leave"));
		return 0;
	}
	U.ack = 0;
	U.sent_upto = 0;
	U.acked = 0;
	if (json_is_true(json_object_get(m, "resync")) && ec_store_outbox_mark_all(&U.d->store))
		ctl_log("uplink: cannot queue all state: %s", ec_store_errmsg(&U.d->store));
	send_heartbeat(); /* the parent learns our subtree at once */
	flush();
	lws_sul_schedule(U.d->lws, 0, &U.hb, on_hb, (lws_usec_t)U.hb_s * LWS_US_PER_SEC);
	return 0;
}

static int on_error_msg(json_t *m)
{
	const char *code = json_string_value(json_object_get(m, "code"));
	const char *msg = json_string_value(json_object_get(m, "message"));

	snprintf(U.a.last_error, sizeof(U.a.last_error), "the parent refused: %s (%s)",
		 msg ? msg : "?", code ? code : "?");
	ctl_log("uplink: %s", U.a.last_error);
	if (code && (!strcmp(code, "unauthorized") || !strcmp(code, "expired"))) {
		if (U.a.phase == PH_REGISTERING) {
			U.a.token[0] = 0;
			set_phase(PH_INACTIVE, "the join token was refused");
		} else if (U.a.phase == PH_DEREGISTERING) {
			set_phase(PH_UNINSTALLING, "the parent no longer knows us");
		} else if (U.a.phase == PH_ACTIVE && U.d->conf.join_token[0]) {
			/* cut off past CredentialLifetime (or the parent lost its
			 * records): the config's JoinToken attaches it again, as at
			 * first start; refused, the phase goes inactive as then */
			snprintf(U.a.token, sizeof(U.a.token), "%s", U.d->conf.join_token);
			set_phase(PH_REGISTERING,
				  strcmp(code, "expired")
				      ? "the credential was refused: attaching again "
					"with the configured JoinToken"
				      : "the credential expired: attaching again with "
					"the configured JoinToken");
		} else {
			save();
		}
	}
	return -1;
}

static int on_message(json_t *m)
{
	const char *t = ws_type(m);

	U.last_rx_ms = ctl_now_ms();
	if (!strcmp(t, "error"))
		return on_error_msg(m);
	if (U.st == L_OPEN)
		return strcmp(t, "welcome") ? -1 : on_welcome(m);
	if (!strcmp(t, "missions"))
		return uplink_on_missions(U.d, U.a.parent_name, m, &U.ack);
	if (!strcmp(t, "list"))
		return uplink_on_list(U.d, U.a.parent_name, &U.l, m, &U.ack);
	if (!strcmp(t, "state-ack"))
		return on_state_ack(m);
	if (!strcmp(t, "heartbeat-ack")) {
		const char *ts = json_string_value(json_object_get(m, "time"));

		if (ts && strlen(ts) == EC_TS_LEN)
			snprintf(U.tree.parent_time, sizeof(U.tree.parent_time), "%s", ts);
		if (json_object_get(m, "credential"))
			take_credential(json_object_get(m, "credential"));
		return 0;
	}
	if (!strcmp(t, "left")) {
		set_phase(PH_UNINSTALLING, "the parent acknowledged the detach");
		link_close(NULL);
		return 0;
	}
	ctl_log("uplink: unexpected message '%.40s' from the parent", t);
	return -1;
}

static int cb_uplink(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		     size_t len)
{
	const char *why;
	json_t *m;
	int code, r;

	(void)user;
	if (U.stopping || !U.d)
		return 0;
	if (wsi && is_abandoned(wsi, reason == LWS_CALLBACK_WSI_DESTROY))
		return reason == LWS_CALLBACK_CLIENT_ESTABLISHED ? -1 : 0;
	switch (reason) {
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
		if (wsi == U.l.wsi || U.st == L_CONNECTING) {
			U.l.wsi = NULL;
			link_down(in && len ? (const char *)in : "connection error");
		}
		return 0;
	case LWS_CALLBACK_CLIENT_ESTABLISHED:
		U.l.wsi = wsi;
		U.st = L_OPEN;
		U.last_rx_ms = ctl_now_ms();
		send_hello();
		return 0;
	case LWS_CALLBACK_CLIENT_RECEIVE:
		if (wsi != U.l.wsi || U.l.close_after)
			return 0;
		r = ws_receive(&U.l, in, len, TREE_MSG_MAX, &m, &why, &code);
		if (r < 0) {
			ctl_log("uplink: from the parent: %s; closing", why);
			return -1;
		}
		if (r > 0) {
			r = on_message(m);
			json_decref(m);
			if (r < 0)
				link_close(NULL);
		}
		return 0;
	case LWS_CALLBACK_CLIENT_WRITEABLE:
		return wsi == U.l.wsi ? ws_writable(&U.l) : 0;
	case LWS_CALLBACK_CLIENT_CLOSED:
		if (wsi == U.l.wsi) {
			U.l.wsi = NULL;
			link_down(NULL);
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
	bool ok = status == 0;
	char why[300];

	(void)arg;

	if (U.a.phase == PH_INSTALLING) {
		if (ok) {
			set_phase(PH_ACTIVE, what);
			return;
		}
		snprintf(U.a.last_error, sizeof(U.a.last_error), "install failed: %s", what);
		U.a.credential[0] = 0;
		set_phase(PH_INACTIVE, U.a.last_error);
	} else if (U.a.phase == PH_UNINSTALLING) {
		if (!ok)
			snprintf(U.a.last_error, sizeof(U.a.last_error), "uninstall failed: %s",
				 what);
		snprintf(why, sizeof(why), "%s", ok ? what : U.a.last_error);
		U.a.credential[0] = U.a.token[0] = U.a.parent_name[0] = U.a.parent[0] = 0;
		U.a.cred_expires = 0;
		set_phase(PH_INACTIVE, why);
	}
}

static void script_start(void)
{
	bool install = U.a.phase == PH_INSTALLING;
	const char *path = install ? U.d->conf.install_script : U.d->conf.uninstall_script;
	char *argv[] = {(char *)path,
			install ? "install" : "uninstall",
			(char *)ec_distro_name(U.d->conf.distro),
			U.d->conf.name,
			U.a.parent,
			NULL};

	if (script_running(&U.script))
		return;
	if (!path[0]) { /* nothing to install for this distro: the phase is the record */
		script_done(NULL, 0,
			    install ? "installed (no InstallScript: recorded)"
				    : "uninstalled (no UninstallScript: recorded)");
		return;
	}
	script_run(&U.script, argv, script_done, NULL);
}

static void uninstall(void)
{
	struct ec_sync_out out;

	if (script_running(&U.script))
		return;
	/* the parent's missions leave with it (each one is reversed by slice 3) */
	if (ec_store_inherited_drop(&U.d->store, &out)) {
		ctl_log("attach: removing the parent's missions: %s", ec_store_errmsg(&U.d->store));
		json_decref(out.changed);
	} else {
		uplink_notify(U.d, U.a.parent_name, &out);
	}
	ec_store_outbox_clear(&U.d->store);
	script_start();
}

/* ---- the state machine ---- */

static void sm_run(void)
{
	bool want_reg = U.a.phase == PH_REGISTERING;

	U.tree.reports_up =
	    U.a.phase == PH_REGISTERING || U.a.phase == PH_INSTALLING || U.a.phase == PH_ACTIVE;
	switch (U.a.phase) {
	case PH_INACTIVE:
		link_close(NULL);
		lws_sul_cancel(&U.retry);
		U.retry_pending = false;
		break;
	case PH_REGISTERING:
	case PH_ACTIVE:
	case PH_DEREGISTERING:
		if (U.st != L_DOWN && U.reg != want_reg) {
			link_close(NULL); /* wrong kind of link for this phase: again */
			break;
		}
		if (U.st == L_READY && U.a.phase == PH_DEREGISTERING)
			ws_send(&U.l, json_pack("{s:s}", "type", "leave"));
		if (U.st == L_DOWN && !U.retry_pending)
			connect_parent();
		break;
	case PH_INSTALLING:
		link_close(NULL);
		script_start();
		break;
	case PH_UNINSTALLING:
		link_close(NULL);
		uninstall();
		break;
	}
}

static void on_sm(lws_sorted_usec_list_t *sul)
{
	(void)sul;
	sm_run();
}

/* from a callback: run the machine from the loop, not inside the caller */
static void schedule_sm(void)
{
	lws_sul_schedule(U.d->lws, 0, &U.sm, on_sm, 1);
}

static void kick(struct ecd *d)
{
	if (ec_store_attach_get(&d->store, &U.a))
		return;
	U.attempts = 0;
	lws_sul_cancel(&U.retry);
	U.retry_pending = false;
	schedule_sm();
}

int uplink_start(struct ecd *d, struct ec_exec *x)
{
	struct lws_context_creation_info vi;

	memset(&U, 0, sizeof(U));
	U.d = d;
	U.script.x = x;
	U.script.timeout_ms = d->conf.command_timeout_s * 1000;
	if (ec_store_attach_get(&d->store, &U.a))
		return -1;
	memset(&vi, 0, sizeof(vi));
	vi.port = CONTEXT_PORT_NO_LISTEN;
	vi.protocols = protocols;
	vi.vhost_name = "uplink";
	/* the client TLS context: the parent's certificate is verified against CA */
	vi.options = LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
	if (d->conf.ca[0])
		vi.client_ssl_ca_filepath = d->conf.ca;
	U.vh = lws_create_vhost(d->lws, &vi);
	if (!U.vh) {
		ctl_log("uplink: cannot create the client vhost (bad CA %s?)", d->conf.ca);
		return -1;
	}
	U.tree.kick = kick;
	U.tree.owe = owe;
	d->tree = &U.tree;
	d->on_state = on_state;
	if (U.a.phase != PH_INACTIVE) /* after a crash: the phase's work starts over */
		ctl_log("attach: %s at start (parent %s)", tree_phase_name(U.a.phase), U.a.parent);
	schedule_sm();
	return 0;
}

void uplink_stop(struct ecd *d)
{
	U.stopping = true;
	lws_sul_cancel(&U.retry);
	lws_sul_cancel(&U.hb);
	lws_sul_cancel(&U.flush);
	lws_sul_cancel(&U.sm);
	lws_sul_cancel(&U.conn_to);
	script_stop(&U.script); /* the phase stays: the next start runs the script again */
	d->on_state = NULL;
	d->tree = NULL;
	ws_reset(&U.l);
	sodium_memzero(&U.a, sizeof(U.a));
}

int links_start(struct ecd *d, struct ec_exec *x)
{
	return hub_start(d) || uplink_start(d, x) ? -1 : 0;
}

void links_stop(struct ecd *d)
{
	uplink_stop(d);
	hub_stop(d);
}
