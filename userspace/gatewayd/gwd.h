/* SPDX-License-Identifier: BSD-2-Clause */
/* gatewayd: shared daemon state. One mutex guards everything below; each
 * peer session runs in its own thread with blocking I/O and timeouts. */
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
 * send_lock. Freed by its reader thread when it ends. */
struct conn {
	struct gw_session s;
	pthread_mutex_t send_lock;
	uint64_t last_tx_ms;
};

struct peer {
	struct gw_peer_conf *conf;
	enum peer_state state;
	struct conn *conn;          /* the current session, NULL unless PEER_UP */
	uint64_t last_handshake_ms, last_rx_ms, next_dial_ms;
	unsigned backoff_ms;
	uint32_t public_ip_be;      /* learned from its INFO */
	uint16_t public_port_be;
	uint64_t rx_frames, tx_frames, refused;
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
void gwd_dial_due(struct gwd *g);
void gwd_keepalives(struct gwd *g);
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
