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
	uint64_t last_tx_ms;        /* atomic; written under send_lock */
	bool dialled_by_lower;      /* opened by the gateway whose name sorts lower */
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
	bool dial_lower;            /* we are that lower one */
	unsigned backoff_ms;        /* last delay after a failed dial, 0 after success */
	uint64_t unreachable_ms;    /* since when dials fail, 0 while they succeed */
	bool dialing;               /* a dialler thread runs for it */
	uint64_t inbound_ms;        /* atomic: a handshake from it began then (0: none) */
	uint32_t public_ip_be;      /* learned from its INFO */
	uint16_t public_port_be;
	uint64_t last_rx_ms, rx_frames; /* atomic: keepalives update them unlocked */
	uint64_t tx_frames, refused;
	bool store_dirty;           /* a commit of its routes failed: rewrite them */
	/* data-plane key of our sending direction: announced, waiting for ack */
	uint32_t tx_epoch;
	uint8_t tx_pending_id;
	bool tx_pending;
	bool syncing;               /* inside FULL_BEGIN .. FULL_END */
	uint64_t next_rekey_ms;
	uint64_t last_rekey_ms;
};

struct own_subnet {
	struct rt_key key;
	uint64_t version;
	bool withdrawn;
	bool from_config;
};

struct gwd {
	struct gw_conf conf;
	pthread_mutex_t lock;
	pthread_mutex_t conn_lock;  /* peers[].conn, for the keepalive thread */
	struct peer peers[GW_MAX_PEERS];
	int n_peers;
	struct rt_table routes;
	struct gw_store store;
	struct own_subnet own[GW_MAX_SUBNETS];
	int n_own;
	uint64_t own_version;
	struct gw_dp dp;
	int listen_fd, ctl_fd;
	char ctl_path[256];
	volatile int stop;
};

uint64_t gwd_now_ms(void);
void gwd_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* peer.c */
void *gwd_acceptor(void *arg);
/* When to dial p first: at start, or after its session ended (lock held). */
void gwd_dial_first(struct peer *p);
/* Peers due for a dial (lock held): marked connecting, their indexes in
 * idx (room for n_peers); returns how many. */
int gwd_dial_due(struct gwd *g, int *idx);
/* Start the dialler threads of those (lock NOT held). */
void gwd_dial(struct gwd *g, const int *idx, int n);
/* Sends every keepalive that is due; runs until g->stop, never takes lock. */
void *gwd_keepalive_thread(void *arg);
/* Announce a new sending key to every peer that is up and due (lock held). */
void gwd_rekeys(struct gwd *g);
/* Send an own-subnet change to every peer that is up (lock held). */
void gwd_broadcast(struct gwd *g, uint8_t type, const struct own_subnet *o);

/* ctl.c: the local control socket `xgate gw` talks to */
int gwd_ctl_open(struct gwd *g);
void gwd_ctl_serve(struct gwd *g);

/* main.c */
int gwd_own_set(struct gwd *g, const struct rt_key *k, bool add, char *err, size_t errlen);

#endif
