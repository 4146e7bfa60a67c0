/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An etcd v3 client over etcd's gRPC-JSON gateway (POST /v3/...; keys and
 * values base64, int64s as JSON strings), on libcurl: Debian ships etcd
 * 3.4 and no C client (docs/architecture.md "etcd from C" says why this
 * and not the lws client).
 *
 * Two halves. The requests (range, put, delete, txn, leases) are
 * synchronous, with a deadline: they are for what already waits on a
 * durable write (an application's create, a node's first registration,
 * a leader's fenced write), never the session-open path. The watch is
 * asynchronous (curl's multi socket interface), stepped by ctl_etcd_watch_poll
 * from the owner's loop, and is a list-and-watch: it hands over a full
 * read first (and again whenever etcd has compacted the revision it would
 * resume from), then the events after it, and resumes a broken stream from
 * the last revision it delivered, on the next endpoint if need be.
 *
 * Failures are told apart (enum ctl_etcd_rc), and ctl_etcd_errmsg quotes
 * the endpoint and etcd's own words. Endpoints are tried in order; a
 * request moves to the next one only when it cannot have been applied
 * (the connection was refused, or etcd said the member has no leader).
 */
#ifndef CTL_ETCD_H
#define CTL_ETCD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ctl_etcd_rc {
	CTL_ETCD_OK = 0,
	CTL_ETCD_UNREACHABLE = -1, /* no endpoint accepted a connection */
	CTL_ETCD_TIMEOUT = -2,	   /* an endpoint took it and did not answer in time */
	CTL_ETCD_NO_QUORUM = -3,   /* the member answers but has no leader */
	CTL_ETCD_ERROR = -4,	   /* etcd refused it (its message in errmsg) or spoke nonsense */
};

#define CTL_ETCD_MAX_ENDPOINTS 16
#define CTL_ETCD_URL_MAX       255

struct ctl_etcd_conf {
	const char *endpoints; /* "http(s)://host:port[,...]" */
	const char *ca;	       /* TLS: the CA that signs the members' certificates, or NULL */
	const char *cert;      /* TLS client certificate and key, or NULL */
	const char *key;
	unsigned timeout_ms; /* per request; 0: 5000 */
};

struct ctl_etcd;

struct ctl_etcd *ctl_etcd_new(const struct ctl_etcd_conf *c, char *err, size_t errlen);
void ctl_etcd_free(struct ctl_etcd *e);
/* the last failure: which endpoint, what happened */
const char *ctl_etcd_errmsg(const struct ctl_etcd *e);
/* The last request failed, but a member took it and did not answer: it
 * may still be applied (a write's outcome is unknown; read it back). */
bool ctl_etcd_maybe_applied(const struct ctl_etcd *e);
const char *ctl_etcd_rc_name(int rc);

struct ctl_etcd_kv {
	char *key; /* NUL-terminated copies */
	char *value;
	size_t value_len;
	int64_t create_rev, mod_rev, version, lease;
};

struct ctl_etcd_kvs {
	struct ctl_etcd_kv *kv;
	size_t n;
	int64_t revision; /* the store's revision the read saw */
};
void ctl_etcd_kvs_free(struct ctl_etcd_kvs *r);

/* One key (n = 0 or 1), or with prefix every key that starts with key.
 * serializable: answered by the member from its own copy, without the
 * leader (so it works without a quorum, and may be behind). */
int ctl_etcd_get(struct ctl_etcd *e, const char *key, bool prefix, bool serializable,
		 struct ctl_etcd_kvs *out);
/* lease 0: none. rev (may be NULL): the revision the write made. */
int ctl_etcd_put(struct ctl_etcd *e, const char *key, const void *value, size_t len, int64_t lease,
		 int64_t *rev);
/* deleted (may be NULL): how many keys went */
int ctl_etcd_delete(struct ctl_etcd *e, const char *key, bool prefix, int64_t *deleted);

/* A transaction: if every compare holds, the success ops, else the
 * failure ops, atomically. */
enum ctl_etcd_target {
	CTL_ETCD_VERSION,
	CTL_ETCD_CREATE,
	CTL_ETCD_MOD,
	CTL_ETCD_VALUE,
	CTL_ETCD_LEASE
};
enum ctl_etcd_cmp { CTL_ETCD_EQUAL, CTL_ETCD_GREATER, CTL_ETCD_LESS, CTL_ETCD_NOT_EQUAL };
struct ctl_etcd_txn;
struct ctl_etcd_txn *ctl_etcd_txn_new(void);
void ctl_etcd_txn_free(struct ctl_etcd_txn *t);
/* number: the revision, version or lease compared with (not CTL_ETCD_VALUE) */
int ctl_etcd_txn_cmp(struct ctl_etcd_txn *t, const char *key, enum ctl_etcd_target target,
		     enum ctl_etcd_cmp result, int64_t number);
int ctl_etcd_txn_cmp_value(struct ctl_etcd_txn *t, const char *key, enum ctl_etcd_cmp result,
			   const void *value, size_t len);
int ctl_etcd_txn_put(struct ctl_etcd_txn *t, bool on_success, const char *key, const void *value,
		     size_t len, int64_t lease);
int ctl_etcd_txn_delete(struct ctl_etcd_txn *t, bool on_success, const char *key, bool prefix);
/* inner (its compares and branches) as one op of t's branch; inner is
 * copied by reference: build it whole first */
int ctl_etcd_txn_nest(struct ctl_etcd_txn *t, bool on_success, struct ctl_etcd_txn *inner);
/* succeeded: whether the compares held; rev (may be NULL): the revision after it.
 * deleted (may be NULL): the keys the first delete of the branch taken removed. */
int ctl_etcd_txn_commit(struct ctl_etcd *e, struct ctl_etcd_txn *t, bool *succeeded, int64_t *rev,
			int64_t *deleted);

/* Leases. keepalive: *ttl 0 when the lease has expired or was revoked. */
int ctl_etcd_lease_grant(struct ctl_etcd *e, int64_t ttl_s, int64_t *id);
int ctl_etcd_lease_keepalive(struct ctl_etcd *e, int64_t id, int64_t *ttl);
int ctl_etcd_lease_revoke(struct ctl_etcd *e, int64_t id);

/* ---- leader election (ctl_etcd_elect.c) ----
 * A leader is who created KEY (its value: the leader's id) on a lease of
 * its own; the key goes with the lease. The key's create_revision while
 * we hold it is the fence: a write only the leader may make is a txn that
 * compares it (ctl_etcd_elect_fence), so a leader deposed while it was
 * not looking (paused past its TTL, cut off) cannot write: the key it
 * created is gone, and a new one has another create_revision.
 * Nothing here blocks for an election: ctl_etcd_elect_step tries once (a
 * campaign is a create-if-absent) and renews the lease when due; call it
 * from a timer, at least every TTL/3. */
struct ctl_etcd_elect;
struct ctl_etcd_elect *ctl_etcd_elect_new(struct ctl_etcd *e, const char *key, const char *id,
					  int64_t ttl_s);
/* Campaign or renew as due. *leader: whether we hold the key now. */
int ctl_etcd_elect_step(struct ctl_etcd_elect *el, bool *leader);
/* Our key's create_revision while we lead, else 0. */
int64_t ctl_etcd_elect_revision(const struct ctl_etcd_elect *el);
/* Add the fence to t: it holds only while our key is the one there. */
int ctl_etcd_elect_fence(const struct ctl_etcd_elect *el, struct ctl_etcd_txn *t);
/* The key watched, so that a standby campaigns the moment the key is
 * deleted instead of on its next timer (keep the timer: it is the
 * fallback while the watch is down). poll steps the watch, opening it the
 * first time, and never waits; true: the key was seen absent since our
 * last campaign, so campaign now (ctl_etcd_elect_step). For an event loop,
 * as ctl_etcd_watch_fd and _next_ms. */
bool ctl_etcd_elect_poll(struct ctl_etcd_elect *el);
int ctl_etcd_elect_fd(const struct ctl_etcd_elect *el);
int ctl_etcd_elect_next_ms(const struct ctl_etcd_elect *el);
/* Give it up now (revoke the lease: the key goes at once), and free. */
void ctl_etcd_elect_free(struct ctl_etcd_elect *el, bool resign);

/* Compact the history up to rev (operators and tests). */
int ctl_etcd_compact(struct ctl_etcd *e, int64_t rev);

/* ---- the watch (ctl_etcd_watch.c) ---- */
enum ctl_etcd_ev { CTL_ETCD_PUT, CTL_ETCD_DELETE };
struct ctl_etcd_event {
	enum ctl_etcd_ev type;
	struct ctl_etcd_kv kv; /* a delete carries the key and mod_rev only */
};

struct ctl_etcd_watch_hooks {
	void *arg;
	/* Everything under the prefix at revision rev: replace what you knew.
	 * Called first, and again after a compaction made the gap unreadable. */
	void (*snapshot)(void *arg, const struct ctl_etcd_kvs *all);
	/* What changed since, in order. */
	void (*events)(void *arg, const struct ctl_etcd_event *ev, size_t n);
	/* The stream broke or a reread failed (rc, errmsg); it is retried. May be NULL. */
	void (*trouble)(void *arg, int rc, const char *msg);
};

struct ctl_etcd_watch;
/* Watch every key under prefix. from_rev 0: start with a snapshot; else
 * resume at from_rev (a revision already compacted away gives a snapshot). */
struct ctl_etcd_watch *ctl_etcd_watch_start(struct ctl_etcd *e, const char *prefix,
					    int64_t from_rev, const struct ctl_etcd_watch_hooks *h);
/* Move it on: read what arrived, reconnect if due. Waits at most
 * timeout_ms for something (0: never waits; -1: until something is due).
 * Returns the number of hooks called, or a ctl_etcd_rc. */
int ctl_etcd_watch_poll(struct ctl_etcd_watch *w, int timeout_ms);
/* For an event loop: an fd (the watch's, for its lifetime; do not close)
 * that is readable when the watch has input, and the ms until it wants a
 * poll anyway (-1: only when the fd is readable). The loop calls
 * ctl_etcd_watch_poll(w, 0) on either, then asks again. */
int ctl_etcd_watch_fd(const struct ctl_etcd_watch *w);
int ctl_etcd_watch_next_ms(const struct ctl_etcd_watch *w);
/* The last revision delivered (a snapshot's or an event's). */
int64_t ctl_etcd_watch_revision(const struct ctl_etcd_watch *w);
void ctl_etcd_watch_stop(struct ctl_etcd_watch *w);

/* ---- shared with ctl_etcd_watch.c ---- */
struct json_t;
int ctl_etcd_kv_parse(struct json_t *o, struct ctl_etcd_kv *kv);
void ctl_etcd_kv_clear(struct ctl_etcd_kv *kv);
/* the endpoint to use now, and the request's deadline */
const char *ctl_etcd_endpoint(const struct ctl_etcd *e);
void ctl_etcd_next_endpoint(struct ctl_etcd *e);
void ctl_etcd_curl_setup(const struct ctl_etcd *e, void *curl);
/* base64 of (p, len), to free */
char *ctl_etcd_b64(const void *p, size_t len);
/* the end of the range of keys that start with prefix, base64, to free */
char *ctl_etcd_prefix_end_b64(const char *prefix);

#endif
