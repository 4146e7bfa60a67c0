/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * gatewayd's persistent state in SQLite (WAL): learned routes with origin,
 * version and state, and small counters (our own announcement version).
 * Changes are batched: rt_store_begin/commit around a burst of updates,
 * so a full resync is one transaction, not one per route.
 */
#ifndef GWD_STORE_H
#define GWD_STORE_H

#include <sqlite3.h>
#include <stdint.h>

#include "routes.h"

struct gw_store {
	sqlite3 *db;
	sqlite3_stmt *put, *del, *kv_get, *kv_put;
};

int gw_store_open(struct gw_store *s, const char *path, char *err, size_t errlen);
void gw_store_close(struct gw_store *s);
int gw_store_begin(struct gw_store *s);
int gw_store_commit(struct gw_store *s);
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
int gw_store_get_u64(struct gw_store *s, const char *key, uint64_t *v);
int gw_store_put_u64(struct gw_store *s, const char *key, uint64_t v);

#endif
