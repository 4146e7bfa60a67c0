// SPDX-License-Identifier: BSD-2-Clause
/*
 * The hub: the WebSocket protocol edge.xgate.io.v1 at
 * /apis/edge.xgate.io/v1/hub on the API's own vhost, where children attach
 * (proto/edgecluster.md "Hub protocol").
 *
 * Down: every mission goes to every child (each level evaluates placement
 * for itself, so a grandchild that attaches while its parent is cut from us
 * still gets everything from its parent). Any write that bumps the
 * revision counter (API, or our own sync from our parent) schedules a scan
 * at once (SQLite's update hook; a 1 s poll as a backstop for writers from
 * outside); the changed missions go to every child as one "missions"
 * message, and the digest of (name, uid, rv) is recomputed. A child whose heartbeat digest
 * differs once it has applied everything we sent gets the full list.
 *
 * Up: state reports replace the child's subtree keys in one transaction;
 * heartbeats rewrite its subtree's EdgeCluster rows. A child silent for
 * HeartbeatTimeout is closed, marked disconnected, its descendants and its
 * subtree's mission state unreachable, and it owes us its full state when
 * it comes back (hub_creds.resync).
 *
 * Bad input closes that link only, with one log line.
 */
#include <inttypes.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hub_int.h"

#define SCAN_BACKSTOP_MS 1000 /* a write we were not told of (another process) */

void hub_log(struct hub_conn *c, const char *fmt, ...)
{
	char msg[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ctl_log("hub: %s%s(%s): %s", c->name[0] ? c->name : "", c->name[0] ? " " : "", c->peer,
		msg);
}

/* Refuse this link: one log line, an error message, the close. */
int hub_refuse(struct hub_conn *c, int close_code, const char *code, const char *why)
{
	hub_log(c, "%s; link closed", why);
	ctl_ws_fail(&c->l, close_code, code, why);
	c->dead = true;
	return 0;
}

struct hub_child *hub_child_find(struct hub *h, const char *name)
{
	for (size_t i = 0; i < h->n_kids; i++)
		if (!strcmp(h->kids[i].name, name))
			return &h->kids[i];
	return NULL;
}

static struct hub_child *child_add(struct hub *h, const char *name)
{
	struct hub_child *k = hub_child_find(h, name), *n;

	if (k)
		return k;
	n = realloc(h->kids, (h->n_kids + 1) * sizeof(*n));
	if (!n)
		return NULL;
	h->kids = n;
	k = &h->kids[h->n_kids++];
	memset(k, 0, sizeof(*k));
	snprintf(k->name, sizeof(k->name), "%s", name);
	k->last_rx_ms = ctl_now_ms();
	return k;
}

static void child_del(struct hub *h, const char *name)
{
	struct hub_child *k = hub_child_find(h, name);

	if (!k)
		return;
	*k = h->kids[--h->n_kids];
}

bool hub_owes_up(const struct hub *h)
{
	return h->d->link && h->d->link->reports_up;
}

void hub_owe_kick(struct hub *h)
{
	if (h->d->on_owed)
		h->d->on_owed(h->d);
}

/* ---- down: the mission index, the digest, changes to every child ---- */

/* *bytes: about what it adds to a message (the stored texts and the
 * envelope), so that batches are cut without serialising each one twice. */
static json_t *mission_msg(struct ecd *d, const char *name, size_t *bytes)
{
	struct ec_row r;
	json_t *o;

	if (ec_store_mission_bare(&d->store, name, &r))
		return NULL;
	*bytes = strlen(r.spec) + strlen(r.labels) + strlen(r.name) + 200;
	o = ec_object_json("Mission", &r);
	ec_row_free(&r);
	json_object_del(o, "state"); /* ours; the child has its own */
	/* kubectl's bookkeeping here (last-applied) is no business of the
	 * child's, and would double the size of what goes down */
	json_object_del(json_object_get(o, "metadata"), "annotations");
	return o;
}

/* Send upserts (names from *from) and deletes ([{name, uid}]) to one child
 * or all, cut into batches of about TREE_BATCH_BYTES; at most max batches. */
static void send_from(struct hub *h, struct hub_conn *only, json_t *names, size_t *from,
		      json_t *deletes, size_t max)
{
	size_t i = *from, n = json_array_size(names);
	bool first = true;

	while ((first || i < n) && max--) {
		json_t *msg = json_pack("{s:s,s:[],s:o}", "type", "missions", "upsert", "delete",
					first && deletes ? json_copy(deletes) : json_array());
		size_t bytes = 0;

		first = false;
		for (; i < n && bytes < TREE_BATCH_BYTES; i++) {
			size_t sz = 0;
			json_t *o =
			    mission_msg(h->d, json_string_value(json_array_get(names, i)), &sz);

			if (!o) { /* gone since: say so */
				json_array_append_new(
				    json_object_get(msg, "delete"),
				    json_pack("{s:s}", "name",
					      json_string_value(json_array_get(names, i))));
				continue;
			}
			bytes += sz;
			json_array_append_new(json_object_get(msg, "upsert"), o);
		}
		for (struct hub_conn *c = h->conns; c; c = c->next) {
			if ((only && c != only) || !c->authed || c->registering || c->dead)
				continue;
			json_object_set_new(msg, "seq", json_integer(++c->sent_seq));
			ctl_ws_send(&c->l, json_incref(msg));
		}
		json_decref(msg);
	}
	*from = i;
}

static void send_missions(struct hub *h, struct hub_conn *only, json_t *names, json_t *deletes)
{
	size_t i = 0;

	send_from(h, only, names, &i, deletes, SIZE_MAX);
}

/* The next batch of what c fetched, once its queue is empty. */
static void fetch_more(struct hub_conn *c)
{
	if (!c->h || !c->fetch || c->l.head || c->dead || c->l.overflowed)
		return;
	send_from(c->h, c, c->fetch, &c->fetch_i, NULL, 1);
	if (c->fetch_i >= json_array_size(c->fetch)) {
		json_decref(c->fetch);
		c->fetch = NULL;
		c->fetch_i = 0;
	}
}

struct scan_ctx {
	json_t *index;
	struct ec_digest g;
};

static int scan_one(void *arg, const char *name, const char *uid, uint64_t rv)
{
	struct scan_ctx *s = arg;

	json_object_set_new(s->index, name, json_pack("[s,I]", uid, (json_int_t)rv));
	ec_digest_add(&s->g, name, uid, rv);
	return 0;
}

/* Bring the index up to the store; tell the children what changed. */
void hub_scan_now(struct hub *h)
{
	json_t *changed = json_array(), *deletes = json_array(), *v, *old;
	struct scan_ctx s;
	const char *name;
	uint64_t rev;

	s.index = json_object();
	if (ec_store_revision(&h->d->store, &rev) || (h->scanned && rev == h->rev))
		goto out;
	ec_digest_init(&s.g);
	if (ec_store_mission_index(&h->d->store, scan_one, &s)) {
		ctl_log("hub: reading the missions: %s", ec_store_errmsg(&h->d->store));
		goto out;
	}
	ec_digest_final(&s.g, h->digest);
	json_object_foreach(s.index, name, v)
	{
		old = json_object_get(h->index, name);
		if (!old || !json_equal(old, v))
			json_array_append_new(changed, json_string(name));
	}
	json_object_foreach(h->index, name, old) if (!json_object_get(s.index, name))
	    json_array_append_new(
		deletes, json_pack("{s:s,s:O}", "name", name, "uid", json_array_get(old, 0)));
	if (h->scanned && (json_array_size(changed) || json_array_size(deletes)))
		send_missions(h, NULL, changed, deletes);
	json_decref(h->index);
	h->index = json_incref(s.index);
	h->rev = rev;
	h->scanned = true;
out:
	json_decref(s.index);
	json_decref(changed);
	json_decref(deletes);
}

static bool any_linked(const struct hub *h)
{
	for (struct hub_conn *c = h->conns; c; c = c->next)
		if (c->authed && !c->registering && !c->dead)
			return true;
	return false;
}

/*
 * With no child linked there is nobody to tell: the scan (the index of
 * every mission, the digest) waits until one says hello (on_hello scans
 * before it compares digests). A leaf would otherwise rebuild its index
 * for every batch from its parent, for nobody.
 */
static void on_scan(lws_sorted_usec_list_t *sul)
{
	struct hub *h = lws_container_of(sul, struct hub, scan);

	if (any_linked(h))
		hub_scan_now(h);
	lws_sul_schedule(h->lws, 0, sul, on_scan, SCAN_BACKSTOP_MS * LWS_US_PER_MS);
}

/*
 * Every write that changes a mission bumps the store's revision, whoever
 * made it (the API, our sync from our parent). The scan runs from a
 * zero-delay timer, after the callback that wrote (and its transaction)
 * has ended, so the writes of one callback go down in one message. Called
 * inside the write (ec_store_on_revision): nothing here may touch the
 * database.
 */
static void on_revision(void *arg)
{
	struct hub *h = arg;

	lws_sul_schedule(h->lws, 0, &h->scan, on_scan, 0);
}

void hub_send_list(struct hub_conn *c)
{
	struct hub *h = c->h;
	json_t *items = json_array(), *v;
	const char *name;
	char rv[24];

	hub_scan_now(h); /* whatever is pending goes out first: the list is not older */
	json_object_foreach(h->index, name, v)
	{
		snprintf(rv, sizeof(rv), "%" JSON_INTEGER_FORMAT,
			 json_integer_value(json_array_get(v, 1)));
		json_array_append_new(items, json_pack("{s:s,s:O,s:s}", "name", name, "uid",
						       json_array_get(v, 0), "rv", rv));
	}
	ctl_ws_send(&c->l,
		    json_pack("{s:s,s:I,s:s,s:o}", "type", "list", "seq", (json_int_t)++c->sent_seq,
			      "digest", h->digest, "items", items));
}

/* ---- authentication ---- */

void hub_issue(struct hub *h, struct ec_cred *cr, json_t **out, bool rotate)
{
	char text[TREE_CRED_LEN + 1], ts[EC_TS_LEN + 1];
	int64_t now = (int64_t)time(NULL);

	tree_new_credential(text);
	if (rotate) { /* the old one stays good until it expires: the child may not get this one */
		memcpy(cr->prev, cr->cur, EC_HASH_LEN);
		cr->prev_expires = cr->cur_expires;
	} else {
		memset(cr->prev, 0, EC_HASH_LEN);
		cr->prev_expires = 0;
	}
	ctl_token_digest(text, strlen(text), cr->cur);
	cr->cur_expires = now + h->d->conf.credential_s;
	ec_timestamp((time_t)cr->cur_expires, ts);
	*out = json_pack("{s:s,s:s,s:I}", "value", text, "expires", ts, "expiresUnix",
			 (json_int_t)cr->cur_expires);
	sodium_memzero(text, sizeof(text));
}

/* 0 ok; else the refusal's code ("unauthorized", "expired") and message. */
static const char *check_auth(struct hub_conn *c, json_t *auth, struct ec_cred *cr, bool *joined,
			      char *why, size_t len)
{
	struct hub *h = c->h;
	const char *join = json_string_value(json_object_get(auth, "join"));
	const char *cred = json_string_value(json_object_get(auth, "credential"));
	unsigned char got[EC_HASH_LEN];
	int64_t now = (int64_t)time(NULL);
	int have = ec_store_cred_get(&h->d->store, c->name, cr);
	bool ok = false;

	*joined = false;
	if (have < 0) {
		snprintf(why, len, "the store failed");
		return "internal";
	}
	if (have)
		memset(cr, 0, sizeof(*cr));
	snprintf(cr->name, sizeof(cr->name), "%s", c->name);
	if (!json_is_object(auth) || !!join == !!cred) {
		snprintf(why, len, "hello.auth needs a join token or a credential");
		return "unauthorized";
	}
	ctl_token_digest(join ? join : cred, strlen(join ? join : cred), got);
	if (join) {
		if (!ctl_token_match(got, h->d->conf.join_tokens, h->d->conf.n_join_tokens)) {
			snprintf(why, len, "join token refused");
			return "unauthorized";
		}
		*joined = true;
		return NULL;
	}
	if (have) {
		snprintf(why, len, "no credential was issued to %s: attach with a join token",
			 c->name);
		return "unauthorized";
	}
	if (cr->cur_expires && ctl_token_match(got, &cr->cur, 1))
		ok = cr->cur_expires > now ? true
					   : (snprintf(why, len, "credential expired"), false);
	else if (cr->prev_expires && ctl_token_match(got, &cr->prev, 1))
		ok = cr->prev_expires > now ? true
					    : (snprintf(why, len, "credential expired"), false);
	else
		snprintf(why, len, "credential refused");
	return ok ? NULL : strstr(why, "expired") ? "expired" : "unauthorized";
}

static int on_hello(struct hub_conn *c, json_t *m)
{
	struct hub *h = c->h;
	const char *name = json_string_value(json_object_get(m, "name"));
	const char *digest = json_string_value(json_object_get(m, "digest"));
	json_t *credential = NULL, *welcome;
	char why[200], path[512], now[EC_TS_LEN + 1];
	struct ec_cred cr;
	const char *code;
	struct hub_child *k;
	bool joined;

	if (strcmp(ctl_ws_type(m), "hello"))
		return hub_refuse(c, LWS_CLOSE_STATUS_PROTOCOL_ERR, "protocol",
				  "the first message must be a hello");
	if (json_integer_value(json_object_get(m, "v")) != 1)
		return hub_refuse(c, LWS_CLOSE_STATUS_PROTOCOL_ERR, "version",
				  "hello.v: this hub speaks version 1");
	if (!name || ec_check_dns_label(name))
		return hub_refuse(c, LWS_CLOSE_STATUS_PROTOCOL_ERR, "invalid",
				  "hello.name: must be a DNS-1123 label");
	snprintf(c->name, sizeof(c->name), "%s", name);
	code = check_auth(c, json_object_get(m, "auth"), &cr, &joined, why, sizeof(why));
	if (code)
		return hub_refuse(c,
				  strcmp(code, "internal") ? LWS_CLOSE_STATUS_POLICY_VIOLATION
							   : LWS_CLOSE_STATUS_UNEXPECTED_CONDITION,
				  code, why);
	if (!strcmp(name, h->d->conf.name))
		return hub_refuse(c, LWS_CLOSE_STATUS_POLICY_VIOLATION, "conflict",
				  "that is this hub's own name");
	if (ec_store_cluster_path(&h->d->store, name, path, sizeof(path)))
		return hub_refuse(c, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION, "internal",
				  "the store failed");
	if (path[0] && strcmp(path, name)) {
		snprintf(why, sizeof(why), "the name %s is already in this tree at %.100s", name,
			 path);
		return hub_refuse(c, LWS_CLOSE_STATUS_POLICY_VIOLATION, "conflict", why);
	}
	c->registering = joined && json_is_true(json_object_get(m, "register"));
	if (joined)
		hub_issue(h, &cr, &credential, false);
	k = child_add(h, name);
	if (joined)
		cr.resync = true; /* a new member: all of its state is news */
	if (!k || (joined && ec_store_cred_put(&h->d->store, &cr))) {
		json_decref(credential);
		return hub_refuse(c, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION, "internal",
				  "the store failed");
	}
	c->authed = true;
	if (c->l.wsi) /* NULL in the fuzz harness, which has no socket */
		lws_set_timeout(c->l.wsi, NO_PENDING_TIMEOUT, 0);
	ec_timestamp(time(NULL), now);
	welcome =
	    json_pack("{s:s,s:i,s:s,s:s,s:i,s:i,s:b}", "type", "welcome", "v", 1, "name",
		      h->d->conf.name, "time", now, "heartbeatSeconds", h->d->conf.heartbeat_s,
		      "heartbeatTimeoutSeconds", h->d->conf.heartbeat_timeout_s, "resync",
		      !c->registering && (cr.resync || k->marked || !k->synced));
	if (credential)
		json_object_set_new(welcome, "credential", credential);
	ctl_ws_send(&c->l, welcome);
	if (c->registering) {
		/* registration only: the child installs, then comes back with the credential */
		hub_log(c, "registered (credential issued, expires in %us)",
			h->d->conf.credential_s);
		c->l.close_after = true;
		c->l.close_code = LWS_CLOSE_STATUS_NORMAL;
		return 0;
	}
	if (k->conn && k->conn != c) {
		hub_log(k->conn, "replaced by a new link from %s", c->peer);
		k->conn->dead = true;
		k->conn->l.close_after = true;
		k->conn->l.close_code = LWS_CLOSE_STATUS_GOINGAWAY;
		lws_callback_on_writable(k->conn->l.wsi);
	}
	k->conn = c;
	k->last_rx_ms = ctl_now_ms();
	k->marked = false;
	k->synced = true;
	if (cr.resync) { /* cleared once told: the child keeps owing it in its outbox */
		cr.resync = false;
		ec_store_cred_put(&h->d->store, &cr);
	}
	ec_store_subtree_health(&h->d->store, name, "ok", NULL);
	hub_log(c, "attached%s", joined ? " with a join token (credential issued)" : "");
	hub_scan_now(h);
	if (!digest || strcmp(digest, h->digest))
		hub_send_list(c);
	return 0;
}

/* ---- leave, fetch (state and heartbeats: hub_reports.c) ---- */

static int on_fetch(struct hub_conn *c, json_t *m)
{
	struct hub *h = c->h;
	json_t *names = json_object_get(m, "names"), *v;
	size_t i;

	if (!json_is_array(names))
		return hub_refuse(c, LWS_CLOSE_STATUS_PROTOCOL_ERR, "protocol",
				  "fetch: needs names (array)");
	json_array_foreach(
	    names, i, v) if (!json_is_string(v) ||
			     ec_check_dns_subdomain(json_string_value(
				 v))) return hub_refuse(c, LWS_CLOSE_STATUS_PROTOCOL_ERR,
							"protocol", "fetch.names[]: mission names");
	hub_scan_now(h);
	if (!json_array_size(names))
		return 0;
	if (!c->fetch)
		c->fetch = json_array();
	json_array_extend(c->fetch, names);
	fetch_more(c);
	return 0;
}

static int on_leave(struct hub_conn *c)
{
	struct hub *h = c->h;
	if (ec_store_subtree_drop(&h->d->store, c->name, hub_owes_up(h)))
		return hub_refuse(c, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION, "internal",
				  "the store failed");
	hub_log(c, "left the tree (credential, rows and state keys removed)");
	child_del(h, c->name);
	ctl_ws_send(&c->l, json_pack("{s:s}", "type", "left"));
	c->authed = false;
	c->dead = true;
	c->l.close_after = true;
	c->l.close_code = LWS_CLOSE_STATUS_NORMAL;
	if (hub_owes_up(h))
		hub_owe_kick(h);
	return 0;
}

int hub_on_message(struct hub_conn *c, json_t *m)
{
	struct hub *h = c->h;
	const char *t = ctl_ws_type(m);
	struct hub_child *k;

	if (!c->authed)
		return on_hello(c, m);
	if ((k = hub_child_find(h, c->name)) && k->conn == c)
		k->last_rx_ms = ctl_now_ms();
	if (c->registering)
		return hub_refuse(c, LWS_CLOSE_STATUS_PROTOCOL_ERR, "protocol",
				  "a registration link carries nothing after the hello");
	if (!strcmp(t, "heartbeat"))
		return hub_on_heartbeat(c, m);
	if (!strcmp(t, "state"))
		return hub_on_state(c, m);
	if (!strcmp(t, "fetch"))
		return on_fetch(c, m);
	if (!strcmp(t, "leave"))
		return on_leave(c);
	if (!strcmp(t, "error")) {
		hub_log(c, "the child reports an error: %.300s; link closed",
			json_string_value(json_object_get(m, "message")) ?: "?");
		c->dead = true;
		c->l.close_after = true;
		c->l.close_code = LWS_CLOSE_STATUS_NORMAL;
		if (c->l.wsi)
			lws_callback_on_writable(c->l.wsi);
		return 0;
	}
	if (!strcmp(t, "hello"))
		return hub_refuse(c, LWS_CLOSE_STATUS_PROTOCOL_ERR, "protocol", "a second hello");
	{
		char why[128];

		snprintf(why, sizeof(why), "unknown message type '%.40s'", t);
		return hub_refuse(c, LWS_CLOSE_STATUS_PROTOCOL_ERR, "protocol", why);
	}
}

/* ---- lws ---- */

static bool path_is_hub(struct lws *wsi)
{
	char uri[256];

	return lws_hdr_copy(wsi, uri, sizeof(uri), WSI_TOKEN_GET_URI) > 0 &&
	       !strcmp(uri, TREE_HUB_PATH);
}

static void conn_gone(struct hub_conn *c)
{
	struct hub *h = c->h;
	struct hub_child *k = h && c->name[0] ? hub_child_find(h, c->name) : NULL;

	if (!h) { /* the hub stopped before the context closed this link */
		ctl_ws_reset(&c->l);
		json_decref(c->fetch);
		free(c);
		return;
	}
	if (k && k->conn == c) {
		k->conn = NULL;
		ec_store_subtree_health(&h->d->store, c->name, "disconnected", NULL);
		if (c->l.overflowed)
			hub_log(c,
				"not reading: over SendQueueMax (%zu bytes queued); link closed, "
				"it catches up by digest when it comes back",
				c->l.queued);
		else if (!c->dead) /* else the reason was logged already */
			hub_log(c, "link closed");
	}
	for (struct hub_conn **p = &h->conns; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	ctl_ws_reset(&c->l);
	json_decref(c->fetch);
	free(c);
}

/* The hub of the vhost wsi is on: NULL before hub_start and after hub_stop
 * (lws still calls back while the context goes). */
static struct hub *hub_of(struct lws *wsi)
{
	struct lws_vhost *vh = wsi ? lws_get_vhost(wsi) : NULL;
	struct hub **slot =
	    vh ? lws_protocol_vh_priv_get(vh, lws_vhost_name_to_protocol(vh, TREE_PROTOCOL)) : NULL;

	return slot ? *slot : NULL;
}

int hub_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		 size_t len)
{
	struct hub *h = hub_of(wsi);
	struct hub_sess *s = user;
	struct hub_conn *c = s ? s->c : NULL;
	const char *why;
	json_t *m;
	int code, r;

	switch (reason) {
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		/* a standby root takes no children: they go to the leader (their
		 * Parent lists both roots) */
		return h && path_is_hub(wsi) && !h->d->standby ? 0 : 1; /* else: refused upgrade */
	case LWS_CALLBACK_ESTABLISHED:
		c = h ? calloc(1, sizeof(*c)) : NULL;
		if (!c)
			return -1;
		s->c = c;
		c->h = h;
		c->l.wsi = wsi;
		c->l.max_queued = h->d->conf.hub_queue_max;
		if (!lws_get_peer_simple(wsi, c->peer, sizeof(c->peer)))
			snprintf(c->peer, sizeof(c->peer), "?");
		c->next = h->conns;
		h->conns = c;
		/* authenticate within this time or go */
		lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, TREE_HELLO_SECS);
		return 0;
	case LWS_CALLBACK_RECEIVE:
		if (!c || c->dead || !c->h)
			return 0; /* refused (or the hub stopped): the rest is not read */
		r = ctl_ws_receive(&c->l, in, len, c->authed ? TREE_MSG_MAX : TREE_HELLO_MAX, &m,
				   &why, &code);
		if (r < 0)
			return hub_refuse(c, code,
					  code == LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE ? "too-big"
										     : "protocol",
					  why);
		if (r > 0) {
			hub_on_message(c, m);
			json_decref(m);
		}
		return 0;
	case LWS_CALLBACK_SERVER_WRITEABLE:
		if (!c)
			return 0;
		r = ctl_ws_writable(&c->l);
		if (!r)
			fetch_more(c);
		return r;
	case LWS_CALLBACK_CLOSED:
		if (c)
			conn_gone(c);
		s->c = NULL;
		return 0;
	default:
		return 0;
	}
}

/* ---- the tick: silent children ---- */

static void on_tick(lws_sorted_usec_list_t *sul)
{
	struct hub *h = lws_container_of(sul, struct hub, tick);
	uint64_t now = ctl_now_ms(), to = (uint64_t)h->d->conf.heartbeat_timeout_s * 1000;

	/* a standby root has no children; what it knows of them is the leader's */
	for (size_t i = 0; i < h->n_kids && !h->d->standby; i++) {
		struct hub_child *k = &h->kids[i];
		struct ec_cred cr;

		if (now - k->last_rx_ms <= to)
			continue;
		if (k->conn && !k->conn->dead) {
			hub_log(k->conn, "silent for %us; link closed",
				h->d->conf.heartbeat_timeout_s);
			k->conn->dead = true;
			lws_set_timeout(k->conn->l.wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
		}
		if (k->marked)
			continue;
		if (ec_store_state_mark_subtree(&h->d->store, k->name, "unreachable",
						hub_owes_up(h)) ||
		    ec_store_subtree_health(&h->d->store, k->name, "disconnected", "unreachable") ||
		    ec_store_cred_get(&h->d->store, k->name, &cr)) {
			ctl_log("hub: marking %s disconnected: %s", k->name,
				ec_store_errmsg(&h->d->store));
			continue;
		}
		cr.resync = true;
		ec_store_cred_put(&h->d->store, &cr);
		k->marked = true;
		ctl_log("hub: %s silent for more than %us: disconnected, its subtree's mission "
			"state unreachable",
			k->name, h->d->conf.heartbeat_timeout_s);
		if (hub_owes_up(h))
			hub_owe_kick(h);
	}
	lws_sul_schedule(h->lws, 0, sul, on_tick, LWS_US_PER_SEC);
}

static int load_child(void *arg, const struct ec_cred *c)
{
	struct hub *h = arg;
	struct hub_child *k = child_add(h, c->name);

	if (!k)
		return -1;
	k->marked = c->resync; /* marked before a restart: still unreachable */
	/* no link yet: disconnected until it comes back (within the timeout, nothing
	 * else changes) */
	ec_store_subtree_health(&h->d->store, c->name, "disconnected", NULL);
	return 0;
}

struct hub *hub_start(struct ecd *d, struct lws_context *lws, struct lws_vhost *vh)
{
	const struct lws_protocols *prot = lws_vhost_name_to_protocol(vh, TREE_PROTOCOL);
	struct hub *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->d = d;
	h->lws = lws;
	h->index = json_object();
	h->slot = prot ? lws_protocol_vh_priv_zalloc(vh, prot, sizeof(*h->slot)) : NULL;
	/* a standby learns its children when it leads (hub_lead) */
	if (!h->slot || (!d->standby && ec_store_cred_list(&d->store, load_child, h))) {
		ctl_log("hub: reading the children: %s", ec_store_errmsg(&d->store));
		json_decref(h->index);
		free(h->kids);
		free(h);
		return NULL;
	}
	*h->slot = h;
	/* the first scan waits for the first child (on_scan) */
	lws_sul_schedule(lws, 0, &h->tick, on_tick, LWS_US_PER_SEC);
	lws_sul_schedule(lws, 0, &h->scan, on_scan, SCAN_BACKSTOP_MS * LWS_US_PER_MS);
	ec_store_on_revision(&d->store, on_revision, h);
	ctl_log("hub: %s on %s (%d join token%s, %zu child%s known)", TREE_PROTOCOL, TREE_HUB_PATH,
		d->conf.n_join_tokens, d->conf.n_join_tokens == 1 ? "" : "s", h->n_kids,
		h->n_kids == 1 ? "" : "ren");
	return h;
}

int hub_lead(struct hub *h)
{
	if (ec_store_cred_list(&h->d->store, load_child, h)) {
		ctl_log("hub: reading the children: %s", ec_store_errmsg(&h->d->store));
		return -1;
	}
	ctl_log("hub: leading: %zu child%s known (they have HeartbeatTimeout to link here)",
		h->n_kids, h->n_kids == 1 ? "" : "ren");
	return 0;
}

void hub_stop(struct hub *h)
{
	if (!h)
		return;
	ec_store_on_revision(&h->d->store, NULL, h);
	*h->slot = NULL; /* the vhost (and the slot) goes with the context */
	lws_sul_cancel(&h->tick);
	lws_sul_cancel(&h->scan);
	/* the connections go with the context: detached from us, they only free themselves */
	for (struct hub_conn *c = h->conns; c; c = c->next)
		c->h = NULL;
	json_decref(h->index);
	free(h->kids);
	free(h);
}
