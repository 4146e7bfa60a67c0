/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * gatewayd's persistent state in SQLite (WAL): learned routes with origin,
 * version and state, and small counters (our own announcement version).
 * Changes are batched: gw_store_begin/commit around a burst of updates
 * (gatewayd: every frame batch read from a session, a whole full exchange),
 * so a resync is one transaction, not one per route.
 *
 * Durability: a commit that returned 0 is in the WAL file, so it survives
 * the gatewayd process dying at any point (kill -9, crash); an interrupted
 * transaction is rolled back as a whole on the next open. Plain commits run
 * with synchronous=NORMAL (no fsync): a power loss or kernel crash may roll
 * the database back to an earlier consistent state, which for learned
 * routes the peers' next full sync repairs. gw_store_begin_durable makes
 * its commit fsync the WAL (synchronous=FULL), for state that others hold
 * copies of and nobody can repair (our own subnets and their versions).
 */
#ifndef GWD_STORE_H
#define GWD_STORE_H

#include <sqlite3.h>
#include <stdint.h>

#include "routes.h"

struct gw_store {
	sqlite3 *db;
	sqlite3_stmt *put, *del, *del_origin, *put_own, *kv_get, *kv_put;
	sqlite3_stmt *mark_put, *mark_del, *mark_has;
	int durable; /* the open transaction commits with synchronous=FULL */
};

int gw_store_open(struct gw_store *s, const char *path, char *err, size_t errlen);
void gw_store_close(struct gw_store *s);
int gw_store_begin(struct gw_store *s);
int gw_store_begin_durable(struct gw_store *s);
/* 0 committed; -1 failed, and then the transaction is rolled back. */
int gw_store_commit(struct gw_store *s);
void gw_store_rollback(struct gw_store *s);
int gw_store_put_route(struct gw_store *s, const struct route *r);
int gw_store_del_route(struct gw_store *s, const char *origin, const struct rt_key *k);
/* Make the stored routes of origin exactly those of the table. */
int gw_store_replace_origin(struct gw_store *s, const struct rt_table *t, const char *origin);
/* Load every stored route into t (as stored; the caller decides freshness). */
int gw_store_load(struct gw_store *s, struct rt_table *t);
/* Our own subnets (announced by us), with where they came from. */
typedef void (*gw_own_cb)(void *arg, const struct rt_key *k, uint64_t version, int withdrawn,
			  int from_config);
int gw_store_put_own(struct gw_store *s, const struct rt_key *k, uint64_t version, int withdrawn,
		     int from_config);
int gw_store_load_own(struct gw_store *s, gw_own_cb cb, void *arg);
/* The entries gatewayd wrote into a divider instance's subnet map (by the
 * instance's name), so that it removes those and no others: an operator's
 * own `remote` entries there are left alone. */
int gw_store_put_mark(struct gw_store *s, const char *divider, const struct rt_key *k);
int gw_store_del_mark(struct gw_store *s, const char *divider, const struct rt_key *k);
/* 1 marked by us, 0 not, -1 error. */
int gw_store_has_mark(struct gw_store *s, const char *divider, const struct rt_key *k);
typedef void (*gw_mark_cb)(void *arg, const struct rt_key *k);
int gw_store_each_mark(struct gw_store *s, const char *divider, gw_mark_cb cb, void *arg);
int gw_store_get_u64(struct gw_store *s, const char *key, uint64_t *v);
int gw_store_put_u64(struct gw_store *s, const char *key, uint64_t v);

#endif
