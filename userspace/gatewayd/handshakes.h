/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The handshakes under way (accepted and dialled), each with a deadline for
 * the whole of it: a peer that sends one byte every few seconds must not
 * hold a handshake, and its thread, for ever. Accepted ones are capped, so
 * strangers cannot make gatewayd start threads without end; dialled ones
 * are at most one per peer. A watchdog shuts down the socket of any
 * handshake past its deadline, which ends the blocked reads of its thread.
 */
#ifndef GWD_HANDSHAKES_H
#define GWD_HANDSHAKES_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"

#define GW_HS_INBOUND_MAX 64 /* accepted handshakes at once */
#define GW_HS_PER_ADDR	  8  /* of them from one source address: one host cannot take all */
#define GW_HS_SLOTS	  (GW_HS_INBOUND_MAX + GW_MAX_PEERS)

struct gw_hs_slot {
	int fd;
	uint32_t addr_be; /* source address of an accepted one */
	bool used, inbound, expired;
	uint64_t deadline_ms;
};

struct gw_hs_table {
	pthread_mutex_t lock;
	unsigned max_inbound, n_inbound;
	struct gw_hs_slot slot[GW_HS_SLOTS];
};

void gw_hs_init(struct gw_hs_table *t, unsigned max_inbound);
void gw_hs_destroy(struct gw_hs_table *t);
/* A handshake on fd begins, to be done by deadline_ms: its slot, or -1 when
 * inbound and max_inbound are under way already, or GW_HS_PER_ADDR from
 * addr_be (accepted ones only; dialled ones pass 0). */
int gw_hs_begin(struct gw_hs_table *t, int fd, bool inbound, uint32_t addr_be,
		uint64_t deadline_ms);
/* It is over (done or failed), before fd is closed. Returns true if the
 * watchdog had cut it (then its failure is the deadline's). */
bool gw_hs_end(struct gw_hs_table *t, int slot);
/* The watchdog: shuts down (both ways) the sockets of handshakes past their
 * deadline, once each; returns how many. */
int gw_hs_expire(struct gw_hs_table *t, uint64_t now_ms);
/* Accepted handshakes under way. */
unsigned gw_hs_inbound(struct gw_hs_table *t);

#endif
