/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * edgeclusterd's state in SQLite (WAL, synchronous=FULL): missions, clusters
 * (this one in slice 1; its children later) and the revision counter that
 * every write bumps and that becomes the written object's resourceVersion.
 *
 * Every write below is one transaction (BEGIN IMMEDIATE .. COMMIT) and the
 * API acknowledges only after COMMIT returned: with synchronous=FULL the
 * WAL is fsync'ed by then, so an acknowledged write survives kill -9 and
 * power loss; an interrupted one is rolled back as a whole on next open.
 *
 * Results: 0 done, EC_ST_NOTFOUND, EC_ST_EXISTS, EC_ST_CONFLICT (the stored
 * resourceVersion is not the expected one), -1 database error (nothing was
 * written; the message is in ec_store_errmsg).
 */
#ifndef ECD_STORE_H
#define ECD_STORE_H

#include <sqlite3.h>
#include <stdint.h>

#include "resource.h"

enum { EC_ST_NOTFOUND = 1, EC_ST_EXISTS = 2, EC_ST_CONFLICT = 3 };
enum ec_table { EC_T_MISSIONS, EC_T_CLUSTERS };

struct ec_store {
	sqlite3 *db;
};

int ec_store_open(struct ec_store *s, const char *path, char *err, size_t errlen);
void ec_store_close(struct ec_store *s);
const char *ec_store_errmsg(struct ec_store *s);
/* The current revision (0 for a new database). */
int ec_store_revision(struct ec_store *s, uint64_t *rev);

/* Read one row; the row owns its strings (ec_row_free). */
int ec_store_get(struct ec_store *s, enum ec_table t, const char *name, struct ec_row *r);
/* Every row in name order; cb returns nonzero to stop (then that is the result). */
typedef int (*ec_row_cb)(void *arg, struct ec_row *r);
int ec_store_list(struct ec_store *s, enum ec_table t, ec_row_cb cb, void *arg);

/* Insert r (name, uid, created, labels, spec, state); sets r->rv. */
int ec_store_create(struct ec_store *s, enum ec_table t, struct ec_row *r);
/* Replace labels and spec (state, uid and created are kept) if the stored
 * rv is expect_rv; sets r->rv and fills r's uid/created from the store. */
int ec_store_replace(struct ec_store *s, enum ec_table t, struct ec_row *r, uint64_t expect_rv);
/* Delete if expect_rv is 0 or the stored rv; the deleted row goes to *old. */
int ec_store_delete(struct ec_store *s, enum ec_table t, const char *name, uint64_t expect_rv,
		    struct ec_row *old);

#endif
