/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An etcd v3 client over etcd's gRPC-JSON gateway (POST /v3/...; keys and
 * values base64, int64s as JSON strings), on libcurl: Debian ships etcd
 * 3.4 and no C client (docs/architecture.md "etcd from C" says why this
 * and not the lws client).
 *
 * Three parts. The requests (range, put, delete, txn, leases) are
 * synchronous, with a deadline: for a start, a takeover's reads, an
 * election's renewal, a node's first registration; never the session-open
 * path. A txn can also go without waiting (ctl_etcd_async.c: an
 * application's write, while the loop serves on). The watch is
 * asynchronous (curl's multi socket interface), stepped by ctl_etcd_watch_poll
 * from the owner's loop, and is a list-and-watch: it hands over a full
 * read first (and again whenever etcd has compacted the revision it would
 * resume from), then the events after it, and resumes a broken stream from
 * the last revision it delivered, on the next endpoint if need be. Its
 * reads are asynchronous too: no part of the watch holds the loop.
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
 * Nothing here blocks for an election: a campaign is one create-if-absent.
 * The owner calls ctl_etcd_elect_step from a timer (at least every TTL/3,
 * for the renewal) and whenever ctl_etcd_elect_poll says so, and paces
 * nothing itself: the election decides when a campaign is due
 * (struct ctl_etcd_pace below). */
struct ctl_etcd_elect;
struct ctl_etcd_elect *ctl_etcd_elect_new(struct ctl_etcd *e, const char *key, const char *id,
					  int64_t ttl_s);
/* Renew the lease when due; while we do not lead, campaign when one is due
 * (the first step always campaigns). *leader: whether we hold the key now.
 * Returns 0 (nothing was due, or what was asked was answered: a campaign
 * won or lost), or the ctl_etcd_rc of the renewal or campaign that failed
 * (logged here with when the next campaign is due; errmsg says more).
 * A standby's lease that could not be renewed is dropped, as a campaign
 * that failed: its next campaign grants another. */
int ctl_etcd_elect_step(struct ctl_etcd_elect *el, bool *leader);
/* Our key's create_revision while we lead, else 0. */
int64_t ctl_etcd_elect_revision(const struct ctl_etcd_elect *el);
/* Add the fence to t: it holds only while our key is the one there. */
int ctl_etcd_elect_fence(const struct ctl_etcd_elect *el, struct ctl_etcd_txn *t);
/* The key watched, so that a standby campaigns the moment the key is
 * deleted instead of on the fallback period (kept for a watch that is
 * down). poll steps the watch, opening it the first time, and never
 * waits; true: the key was seen absent since our last campaign, a
 * campaign is due now (whatever a back-off said): call ctl_etcd_elect_step.
 * For an event loop, as ctl_etcd_watch_fd and _next_ms. */
bool ctl_etcd_elect_poll(struct ctl_etcd_elect *el);
int ctl_etcd_elect_fd(const struct ctl_etcd_elect *el);
int ctl_etcd_elect_next_ms(const struct ctl_etcd_elect *el);
/* Start-up only, before the owner serves: step the watch, waiting, until
 * it has read the key (at most the client's Timeout), so that the first
 * answer names the leader. Whether it did (else it goes on in the loop). */
bool ctl_etcd_elect_wait(struct ctl_etcd_elect *el);
/* Who leads: the key's value (the leader's id) as that watch delivered it
 * last, learnt without a request of its own, so that naming the leader
 * never holds the owner's loop. Our own id while we lead; else "" when the
 * key was seen absent (nobody leads) or the watch has not read it yet (its
 * read of the key is sent by the first poll and answered in a later one). While the watch is
 * down it is the last value seen, which may be stale: the watch resumes
 * from its revision, or rereads the key if etcd compacted that away, and
 * corrects it then. Valid until the next ctl_etcd_elect_poll or _free. */
const char *ctl_etcd_elect_leader(const struct ctl_etcd_elect *el);
/* Give the lead up and stay in the election: the lease is revoked (the
 * key goes at once; if etcd does not answer, with the lease's TTL), and
 * the next campaign waits the back-off, so that another campaigner goes
 * first. For an owner that won but cannot act on it (its reads failed). */
void ctl_etcd_elect_resign(struct ctl_etcd_elect *el);
/* Give it up now (revoke the lease: the key goes at once), and free. */
void ctl_etcd_elect_free(struct ctl_etcd_elect *el, bool resign);

/* When a campaign is due, as pure functions of the caller's clock (the
 * election's is CLOCK_MONOTONIC ms), so that it is tested without waiting.
 * A campaign is due:
 *  - at once at the start, and when the key's watch saw the key absent
 *    since the last campaign, whatever a back-off says (a watch that
 *    delivers is an etcd that answers), unless we just resigned;
 *  - else period_ms after a campaign etcd answered (won or lost: the key
 *    is someone else's), the fallback for a watch that is down;
 *  - else, after one that failed (unreachable, timeout, no quorum: it held
 *    the loop up to Timeout; or refused, which a retry would not change),
 *    the back-off: CTL_ETCD_PACE_BACKOFF_MS, doubling with each failure in
 *    a row up to CTL_ETCD_PACE_BACKOFF_MAX_MS; one answered clears it.
 * docs/architecture.md "etcd from C" says why these numbers. */
#define CTL_ETCD_PACE_BACKOFF_MS     1000u
#define CTL_ETCD_PACE_BACKOFF_MAX_MS 8000u
struct ctl_etcd_pace {
	uint64_t period_ms; /* the fallback period */
	uint64_t due_ms;    /* the next campaign, unless the watch says sooner */
	uint64_t hold_ms;   /* no campaign before, whatever the watch says */
	unsigned failed;    /* campaigns in a row that failed */
	bool vacant;	    /* the key was seen absent since the last campaign */
};
/* The fallback period for a lease of ttl_s: a tenth of it, 1 s at most
 * (100 ms with a 1 s lease); ttl_s <= 0: 1 s. */
uint64_t ctl_etcd_pace_period_ms(int64_t ttl_s);
/* period_ms 0: 1 s. Due at once. */
void ctl_etcd_pace_init(struct ctl_etcd_pace *p, uint64_t period_ms);
bool ctl_etcd_pace_due(const struct ctl_etcd_pace *p, uint64_t now_ms);
/* The watch saw the key absent (true) or present (false: someone leads). */
void ctl_etcd_pace_vacant(struct ctl_etcd_pace *p, bool vacant);
/* A campaign came to rc (a ctl_etcd_rc; 0: answered, won or lost) and
 * ended at now_ms: the vacancy is answered, and the next is due after the
 * period or the back-off, counted from now_ms. Returns that wait. */
uint64_t ctl_etcd_pace_done(struct ctl_etcd_pace *p, int rc, uint64_t now_ms);
/* We gave the lead up (ctl_etcd_elect_resign): as a failed campaign, and
 * no campaign before the back-off is over even when the watch sees the key
 * go (our own revoke deletes it), so that another campaigner goes first. */
void ctl_etcd_pace_hold(struct ctl_etcd_pace *p, uint64_t now_ms);
/* The back-off after failed campaigns in a row (failed >= 1). */
uint64_t ctl_etcd_pace_backoff_ms(unsigned failed);

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
	 * Called first, and again after a compaction made the gap unreadable.
	 * The read is sent by a poll and handed over by a later one, when etcd
	 * answers (a failed one is retried, on the next endpoint, after a
	 * backoff of 100 ms doubling up to 2 s): never during the first poll,
	 * and no event comes before it. An owner that must not serve before
	 * its view is loaded reads it itself at start-up (ctl_etcd_get), and
	 * starts the watch at that read's revision + 1. */
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
/* Move it on: read what arrived, send the read or reconnect if due.
 * Waits at most timeout_ms for something (0: never waits; -1: until
 * something is due; a read in flight never makes it wait longer).
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

/* ---- requests without waiting (ctl_etcd_async.c) ----
 * The same transactions on curl's multi socket interface, stepped from the
 * owner's loop as the watch is (an fd readable when a request has input,
 * and a deadline): the loop goes on serving while etcd commits. A request
 * follows the synchronous one's rules (endpoints in turn within the
 * deadline, failures named the same; when it failed, whether it may still
 * be applied); only naming a failure still asks the members' status
 * synchronously (at most 500 ms each, and only after a failure). */
struct ctl_etcd_async;
struct ctl_etcd_result {
	int rc; /* enum ctl_etcd_rc */
	bool succeeded, maybe_applied;
	int64_t rev, deleted; /* as ctl_etcd_txn_commit's */
	const char *err;      /* the failure (rc != 0), valid during the call */
};
typedef void (*ctl_etcd_done)(void *arg, const struct ctl_etcd_result *r);
/* The requests ride on e (its endpoints, TLS, deadline); NULL: out of memory. */
struct ctl_etcd_async *ctl_etcd_async_new(struct ctl_etcd *e);
/* Commit t (copied: free it when you like); done is called once from
 * ctl_etcd_async_poll (never from here). 0, or -1 (not sent, done not called). */
int ctl_etcd_txn_commit_async(struct ctl_etcd_async *as, struct ctl_etcd_txn *t, ctl_etcd_done done,
			      void *arg);
/* As ctl_etcd_watch_fd/next_ms/poll (poll never waits). */
int ctl_etcd_async_fd(const struct ctl_etcd_async *as);
int ctl_etcd_async_next_ms(const struct ctl_etcd_async *as);
void ctl_etcd_async_poll(struct ctl_etcd_async *as);
/* Requests in flight are dropped without their done. */
void ctl_etcd_async_free(struct ctl_etcd_async *as);

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
/* ---- shared with ctl_etcd_async.c ---- */
/* What an attempt came to: CTL_ETCD_OK (*out the answer), a ctl_etcd_rc,
 * or AGAIN (it cannot have been applied: another endpoint may take it) or
 * SILENT (no answer in time); c is curl's code, detail its error buffer. */
#define CTL_ETCD_AGAIN	1
#define CTL_ETCD_SILENT 2
int ctl_etcd_classify(struct ctl_etcd *e, const char *ep, const char *path, int c,
		      const char *detail, const char *text, long status, struct json_t **out);
/* The failure of a request whose last attempt was AGAIN or SILENT (silent:
 * the last endpoint that said nothing; silent_at: the indexes of those that
 * did, as bits); sets maybe_applied and errmsg. */
int ctl_etcd_conclude(struct ctl_etcd *e, int rc, const char *silent, unsigned silent_at,
		      bool no_leader);
int ctl_etcd_n_endpoints(const struct ctl_etcd *e);
int ctl_etcd_cur(const struct ctl_etcd *e); /* the index of ctl_etcd_endpoint */
long ctl_etcd_timeout_ms(const struct ctl_etcd *e);
/* t as JSON text (*text, to free; NULL if it could not be built) */
const char *ctl_etcd_txn_text(struct ctl_etcd_txn *t, char **text);
void ctl_etcd_txn_result(struct json_t *o, bool *succeeded, int64_t *rev, int64_t *deleted);

/* ---- etcd's answers without a request (tests/fuzz/fuzz_etcd_resp.c) ----
 * What a request makes of the gateway's answer o (its JSON, as the request
 * parses it, an answer holding "error" aside), by the request's path:
 * "/v3/kv/range" kvs (free them with ctl_etcd_kvs_free), "/v3/kv/put"
 * revision, "/v3/kv/deleterange" deleted, "/v3/kv/txn" succeeded, revision
 * and deleted, "/v3/lease/grant" id, "/v3/lease/keepalive" ttl. The same
 * parsing as after the POST. */
struct ctl_etcd_answer {
	struct ctl_etcd_kvs kvs;
	int64_t revision, deleted, id, ttl;
	bool succeeded;
};
int ctl_etcd_answer_parse(struct ctl_etcd *e, const char *path, struct json_t *o,
			  struct ctl_etcd_answer *out);
/* The watch stream's bytes as curl hands them over: lines put together,
 * events and trouble delivered to the hooks. n, or 0 when the watch would
 * end the transfer here (cancelled, nonsense, a line too long). */
size_t ctl_etcd_watch_feed(struct ctl_etcd_watch *w, const char *p, size_t n);

#endif
