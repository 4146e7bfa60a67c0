/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * gatewayd -> XDP: programs the gateway program's pinned maps (peers, their
 * addresses and keys, remote routes) and marks remote subnets in the local
 * dividers' xg_subnet. Off unless the config names an Instance. Every write
 * is a reconcile (read, compare, write what differs), so a restart rewrites
 * nothing that is already right and forwarding never stops.
 * Peer ids in the maps are config positions + 1.
 */
#ifndef GWD_DATAPLANE_H
#define GWD_DATAPLANE_H

#include <stdbool.h>
#include <stdint.h>

#include "routes.h"
#include "session.h"
#include "xgate_abi.h"

struct gwd;

#define GW_MAX_DIVIDERS 8

struct gw_dp {
	bool on;
	int gw, peers, paddr, route, replay, pstats, txctr;
	int gen; /* the instance's xg_gen: bumped so per-CPU caches see changes */
	int div_subnet[GW_MAX_DIVIDERS], div_vpc[GW_MAX_DIVIDERS], div_gen[GW_MAX_DIVIDERS];
	int n_div;
	bool told_foreign[GW_MAX_DIVIDERS]; /* logged the entries not ours it leaves alone */
	struct xg_neigh *neigh; /* keeps the peers' next hops resolved (libxgate neigh.c) */
};

/* Open the maps, write the public side (xg_gw) and the peer entries. */
int gwd_dp_open(struct gwd *g, char *err, size_t errlen);
void gwd_dp_close(struct gwd *g);
/* Remote routes (and the dividers' marks) made equal to the route table. */
void gwd_dp_sync_routes(struct gwd *g);
/* The peer's public (tunnel) address learned from its INFO, and its type:
 * XG_GW_PEER_AEAD when the session agreed a cipher (a change of type wipes
 * the keys of the other one). */
void gwd_dp_peer_addr(struct gwd *g, int idx);
/* Can the data plane carry type 1? Yes without a data plane (nothing is
 * forwarded) and when xgate-cryptd registered its crypt interface in xg_gw;
 * otherwise encrypt sessions are refused rather than black-holed. */
bool gwd_dp_can_encrypt(struct gwd *g);
/* Install the key the peer announced as id as a receive key: the slot it
 * took (0 or 1), or -1 with errno (EINVAL: not a key of the peer's mode).
 * Encrypt mode: key, salt and the session's cipher, for the workers. */
int gwd_dp_rx_key(struct gwd *g, int idx, const struct gw_dkey *k, uint8_t id);
/* The highest counter a receive slot accepted (0: none yet, or no data plane). */
uint64_t gwd_dp_rx_top(struct gwd *g, int idx, int slot);
/* Zero a receive slot's key, or the sending slot not in use (tx): the
 * key bytes and the valid flag, in the map. */
int gwd_dp_wipe_key(struct gwd *g, int idx, bool tx, int slot);
/* Make k (id) our sending key (after the peer confirmed it holds it);
 * *base: the peer's highest reserved counter then, what gwd_dp_tx_last
 * is compared with for RekeyAfterMessages. */
int gwd_dp_tx_key(struct gwd *g, int idx, const struct gw_dkey *k, uint8_t id, uint64_t *base);
/* The highest counter reserved for sending to the peer (xg_gw_txctr): an
 * upper bound of the packets sent (0 without a data plane). */
uint64_t gwd_dp_tx_last(struct gwd *g, int idx);
/* The receive key in slot was first used with counters up to top: it may
 * carry RejectAfterMessages from there (its sender's count began below). */
int gwd_dp_rx_limit(struct gwd *g, int idx, int slot, uint64_t top);
/* The key id to announce next for this peer (differs from the current). */
uint8_t gwd_dp_next_id(struct gwd *g, int idx);
/* Per-peer traffic counters summed over CPUs (zeros if off). */
void gwd_dp_pstats(struct gwd *g, int idx, struct xg_gw_pstat *out);

#endif
