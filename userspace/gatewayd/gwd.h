/* SPDX-License-Identifier: BSD-2-Clause */
/* gatewayd: shared daemon state. One mutex (lock) guards everything below
 * unless a field says otherwise; each peer session runs in its own thread
 * with blocking I/O and timeouts. Keepalives go from their own thread, which
 * never takes lock (see conn_lock), so slow work under lock (handshake
 * bookkeeping, SQLite commits, the control socket) cannot delay them.
 * Lock order: lock, then conn_lock, then a conn's send_lock. */
#ifndef GWD_H
#define GWD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "dataplane.h"
#include "handshakes.h"
#include "routes.h"
#include "session.h"
#include "store.h"

enum peer_state { PEER_IDLE, PEER_CONNECTING, PEER_UP };

/* One authenticated connection; its reader thread owns rx, senders take
 * send_lock. Freed by its reader thread when it ends, after it is no
 * longer any peer's conn. */
struct conn {
	struct gw_session s;
	pthread_mutex_t send_lock;
	uint64_t last_tx_ms;   /* atomic; written under send_lock */
	bool dialled_by_lower; /* opened by the gateway whose name sorts lower */
};

struct peer {
	struct gw_peer_conf *conf;
	enum peer_state state;
	/* the current session, NULL unless PEER_UP; changed under lock and
	 * conn_lock, so either one is enough to read it */
	struct conn *conn;
	uint64_t last_handshake_ms, next_dial_ms;
	/* dialling: the protocol's dialler is the gateway whose name sorts
	 * lower; the other dials too, later and less often, as a fallback */
	bool dial_lower;	 /* we are that lower one */
	unsigned backoff_ms;	 /* last delay after a failed dial, 0 after success */
	uint64_t unreachable_ms; /* since when dials fail, 0 while they succeed */
	bool dialing;		 /* a dialler thread runs for it */
	uint64_t inbound_ms;	 /* atomic: a handshake from it began then (0: none) */
	uint32_t public_ip_be;	 /* learned from its INFO */
	uint16_t public_port_be;
	unsigned cipher;       /* agreed in the session (enum xgt_cipher), 0 in auth mode */
	unsigned peer_ciphers; /* what its last INFO offered */
	uint64_t last_rx_ms, rx_frames; /* atomic: keepalives update them unlocked */
	uint64_t tx_frames, refused;
	bool store_dirty; /* a commit of its routes failed: rewrite them */
	/* data-plane key of our sending direction: announced, waiting for ack */
	uint32_t tx_epoch;
	uint8_t tx_pending_id;
	bool tx_pending;
	/* the announce's ephemeral X25519 pair, until its ack (then wiped) */
	unsigned char tx_eph_sk[32], tx_eph_pub[32];
	/* wipes of replaced keys in the maps (proto/gatewayd.md, "Wiping") */
	uint64_t tx_wipe_ms; /* the sending slot not in use is zeroed then (0: nothing due) */
	int rx_new_slot;     /* the newest receive key's slot, -1 when nothing waits */
	uint64_t rx_used_ms; /* when the peer was first seen using it (0: not yet) */
	bool syncing;	     /* inside FULL_BEGIN .. FULL_END */
	uint64_t next_rekey_ms;
	uint64_t last_rekey_ms;
	/* the peer's reserved counter when our sending key switched: the key
	 * has sent at most gwd_dp_tx_last - this (RekeyAfterMessages) */
	uint64_t tx_ctr_base;
};

struct own_subnet {
	struct rt_key key;
	uint64_t version;
	bool withdrawn;
	bool from_config;
};

/* A control socket client: its request, then its reply. */
#define GWD_CTL_CLIENTS	   32
#define GWD_CTL_REQ_MAX	   4096
#define GWD_CTL_TIMEOUT_MS 5000
struct ctl_client {
	int fd;
	uint64_t deadline_ms;
	size_t len;    /* of the request read so far */
	bool too_long; /* GWD_CTL_REQ_MAX read and no end yet */
	char in[GWD_CTL_REQ_MAX + 1];
	char *out; /* the reply, once the request is complete */
	size_t out_len, out_off;
};

struct gwd {
	struct gw_conf conf;
	pthread_mutex_t lock;
	pthread_mutex_t conn_lock; /* peers[].conn, for the keepalive thread */
	struct peer peers[GW_MAX_PEERS];
	int n_peers;
	struct rt_table routes;
	struct gw_store store;
	struct own_subnet own[GW_MAX_SUBNETS];
	int n_own;
	uint64_t own_version;
	struct gw_dp dp;
	int listen_fd, ctl_fd;
	int sig_fd;				/* SIGINT, SIGTERM: the main loop sets stop */
	struct ctl_client ctl[GWD_CTL_CLIENTS]; /* the main loop's only */
	int n_ctl;
	char ctl_path[256];
	volatile int stop;
	int threads;	       /* atomic: session and dialler threads running */
	struct gw_hs_table hs; /* handshakes under way (own lock) */
};

/* The handshake and both INFOs must be done within this, all of it (not
 * per read): see handshakes.h. */
#define GWD_HANDSHAKE_MS 5000

/* What a session thread starts from: an accepted or a dialled socket. */
struct gwd_start {
	struct gwd *g;
	int fd;
	enum gw_role role;
	struct peer *p;	      /* initiator: the peer dialled */
	struct peer *claimed; /* responder: the peer it proved to be, while its INFO is read */
	int hs_slot;	      /* in g->hs while the handshake and INFO run, else -1 */
	char addr[32];
};

/* How a session thread ended. */
enum gwd_outcome {
	GWD_FAILED,   /* handshake or INFO failed: no session */
	GWD_UNWANTED, /* authenticated, but the other session with that peer stays */
	GWD_ENDED,    /* it was up; it is down now and p->next_dial_ms is UINT64_MAX */
};

uint64_t gwd_now_ms(void);
void gwd_log(const struct gwd *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Modules, top to bottom; each calls only those below it.
 *   main.c        wiring, the main loop
 *   ctl.c         the control socket
 *   peer_dial.c   accepting and dialling, when to dial, handshake limits
 *   peer_session.c  one session's thread: handshake, INFO, frames; data keys
 *   own.c         our own subnets (config, control socket)
 *   peer_sync.c   route messages in and out, their store and data plane
 *   conn.c        sending on a session, keepalives
 *   dataplane.c   the XDP maps
 *   log.c         gwd_log, gwd_now_ms (every module uses them)
 */

/* peer_dial.c */
void *gwd_acceptor(void *arg);
/* When to dial p first: at start, or after its session ended (lock held). */
void gwd_dial_first(struct peer *p);
/* Peers due for a dial (lock held): marked connecting, their indexes in
 * idx (room for n_peers); returns how many. */
int gwd_dial_due(struct gwd *g, int *idx);
/* Start the dialler threads of those (lock NOT held). */
void gwd_dial(struct gwd *g, const int *idx, int n);

/* peer_session.c: runs a session on st->fd (closed when it returns). */
enum gwd_outcome gwd_session(struct gwd_start *st);
/* Announce a new sending key to every peer that is up and due, and zero
 * in the maps the keys whose grace has passed (lock held). */
void gwd_rekeys(struct gwd *g);

/* own.c (lock held) */
/* Our subnets from the store, then the config's: new ones announced, ones
 * no longer configured withdrawn. */
void gwd_own_start(struct gwd *g);
/* 0, or -EEXIST (announced already), -ENOENT (not ours), -EINVAL (host bits,
 * overlaps a peer's), -ENOSPC, -EIO; err says it in words. */
int gwd_own_set(struct gwd *g, const struct rt_key *k, bool add, char *err, size_t errlen);

/* peer_sync.c (lock held) */
struct batch {
	bool txn;    /* a store transaction is open */
	bool routes; /* the route table changed: the data plane follows after the commit */
	bool failed; /* a write failed: roll back, rewrite the origin next time */
};
/* A route message (ANNOUNCE, WITHDRAW, FULL_BEGIN, FULL_END) from p.
 * Returns NULL or a protocol error. */
const char *gwd_sync_frame(struct gwd *g, struct peer *p, struct batch *bt, uint8_t type,
			   const uint8_t *b, long n);
/* End of a batch: commit, then the data plane. */
void gwd_sync_batch_end(struct gwd *g, struct peer *p, struct batch *b);
/* Our full table to a new session: FULL_BEGIN, every subnet, FULL_END. */
void gwd_sync_send_full(struct gwd *g, struct conn *c);
/* p's session ended: its routes stale for GraceTime, stored. Returns how many. */
int gwd_sync_peer_down(struct gwd *g, struct peer *p);
/* Send an own-subnet change (GW_T_ANNOUNCE / GW_T_WITHDRAW) to every peer that is up. */
void gwd_broadcast(struct gwd *g, uint8_t type, const struct own_subnet *o);

/* conn.c */
int gwd_conn_send(struct conn *c, uint8_t type, const void *body, size_t len);
/* p's current session (lock held). */
void gwd_set_conn(struct gwd *g, struct peer *p, struct conn *c);
/* The session's socket closed and its keys wiped. */
void gwd_conn_end(struct conn *c, int fd);
/* Sends every keepalive that is due; runs until g->stop, never takes lock. */
void *gwd_keepalive_thread(void *arg);

/* ctl.c: the local control socket `xgate gw` talks to */
int gwd_ctl_open(struct gwd *g);
void gwd_ctl_serve(struct gwd *g);

#endif
