/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The root's store on etcd ([Store] Backend = etcd; docs/architecture.md
 * "The edge root on etcd"). etcd is the durable copy of the tree's state:
 * every row of the tables the root's API, hub and reports write (meta,
 * missions, mstate, clusters, hub_creds) is a key
 * PREFIX "rows/" TABLE "/" [primary key as a JSON array], its value the
 * row as a JSON object. SQLite stays what every query runs on: a view of
 * those keys, on each root.
 *
 * The leader writes as before, in SQLite groups; at the end of a group,
 * before its COMMIT, what the group changed (SQLite's session extension
 * names the rows) goes to etcd in a txn fenced on the election key, and
 * only if etcd took it does SQLite commit. So etcd never lacks what a
 * client was told is written, and a deposed leader writes nothing.
 * A standby keeps its view current from a watch of the rows (a full
 * reread after a compaction) and refuses writes to them. Rows carry
 * their resourceVersions, and the revision counter is a row too: both
 * roots hand out the same resourceVersions.
 *
 * The other tables (applied, attach, inherited, outbox) are this process's
 * own and stay in SQLite alone.
 */
#ifndef ECD_STORE_ETCD_H
#define ECD_STORE_ETCD_H

#include <stdbool.h>
#include <stddef.h>

#include "store.h"

struct ec_etcd_conf {
	const char *endpoints, *prefix, *ca, *cert, *key;
	const char *id;	     /* who this root is: the URL a standby sends clients to */
	unsigned timeout_ms; /* per etcd request */
	unsigned ttl_s;	     /* the election's lease */
	unsigned max_ops;    /* ops per etcd txn (etcd's --max-txn-ops); 0: 128 */
};

struct ec_etcd;

/* Over s (open): the view is replaced by what etcd holds, then one
 * campaign. NULL with err when etcd cannot be read. */
struct ec_etcd *ec_etcd_open(struct ec_store *s, const struct ec_etcd_conf *c, char *err,
			     size_t errlen);
enum { EC_ETCD_SAME = 0, EC_ETCD_WON = 1, EC_ETCD_LOST = -1 };
/* From a timer (100 ms): the watch, a campaign when ctl_etcd_elect says one
 * is due (ctl_etcd_pace: at once when the leader's key goes), the lease's
 * renewal. EC_ETCD_WON: this root leads now (the view was reread first);
 * EC_ETCD_LOST: it no longer does (stop: its writes are refused already). */
int ec_etcd_step(struct ec_etcd *m);
bool ec_etcd_leading(const struct ec_etcd *m);
/* Who leads as the election key's watch last saw it ("" nobody, or not
 * known yet): no request, so it never holds the loop (ctl_etcd_elect_leader). */
const char *ec_etcd_leader(const struct ec_etcd *m);
/* resign: a leader that stops cleanly hands over now, not after its lease */
void ec_etcd_close(struct ec_etcd *m, bool resign);

#endif
