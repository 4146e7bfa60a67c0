// SPDX-License-Identifier: BSD-2-Clause
/*
 * Active/standby on etcd ([Store] Election = on; docs/serverless.md
 * "Active/standby"). Every fornaxd campaigns on one key under the store's
 * prefix; the leader fences the store's writes on its key, a standby keeps
 * its view of the applications current through the store's watch and
 * serves reads only. A standby that wins takes over: fence, reread, then
 * writes and nodes. A leader that loses the key stops (exit 3): the store
 * already refuses its writes.
 *
 * The module names neither the API nor the node links: what changes when
 * the lead does goes through the hook.
 */
#ifndef FXD_LEAD_H
#define FXD_LEAD_H

#include <stdbool.h>
#include <stdint.h>

#include "core.h"
#include "store.h"

struct fx_lead_hooks {
	void *arg;
	/* serve as a standby (reads only; leader: who leads, "" unknown) or
	 * as the leader (leader NULL) */
	void (*standby)(void *arg, bool standby, const char *leader);
};

struct fx_lead;

/* ttl_s 0: no election, this fornaxd leads. Else campaign once, on
 * PREFIX "leader", as id (the URL clients are sent to); a win fences the
 * store's writes on it. NULL: the election could not be set up (logged). */
struct fx_lead *fx_lead_new(struct fx_store *st, const char *prefix, const char *id,
			    unsigned ttl_s);
/* The core to keep current (a standby's view follows the store's watch),
 * once it exists; a standby tells the hook so. 0, or -1 (logged). */
int fx_lead_start(struct fx_lead *l, struct fx_core *core, const struct fx_lead_hooks *h);
/* From the tick: a campaign when ctl_etcd_elect says one is due, the lease's renewal.
 * -1: stop serving (the lead was lost, or a takeover failed). */
int fx_lead_step(struct fx_lead *l);
/* The view's watch, for the event loop: an fd readable when it has input
 * (the lead's; do not close), and a step that applies what arrived and
 * returns the ms until it wants a step anyway (-1: only on input). */
int fx_lead_watch_fd(const struct fx_lead *l);
int fx_lead_watch_step(struct fx_lead *l);
/* The election's watch of its key, for the event loop the same way: a
 * standby campaigns from the step as soon as the leader's key is deleted.
 * Without an election the fd is -1. *next_ms as fx_lead_watch_step's
 * return; the return as fx_lead_step's. */
int fx_lead_elect_step(struct fx_lead *l, int *next_ms);
int fx_lead_elect_fd(const struct fx_lead *l);
bool fx_lead_deposed(const struct fx_lead *l);
/* The lead's term while this fornaxd leads (the election key's
 * create_revision; 0 without an election), else -1. */
int64_t fx_lead_term(const struct fx_lead *l);
/* A leader that stops cleanly hands over now, not after its lease. */
void fx_lead_free(struct fx_lead *l);

#endif
