/* SPDX-License-Identifier: BSD-2-Clause */
/* Small SQLite helpers shared by tree_store.c and tree_sync.c (one
 * transaction per call; see tree_store.c). Statements are kept (store.c). */
#ifndef ECD_TREE_DB_H
#define ECD_TREE_DB_H

#include <jansson.h>
#include <sqlite3.h>
#include <stdbool.h>

#include "store.h"

/* The kept statement of sql (a literal: see ec_store_stmt); give it back
 * with rel() or done(). */
static inline sqlite3_stmt *q(struct ec_store *s, const char *sql)
{
	return ec_store_stmt(s, sql);
}

static inline void rel(struct ec_store *s, sqlite3_stmt *st)
{
	ec_store_release(s, st);
}

/* Step a write once and give it back: 0 or -1 (also when st is NULL). */
static inline int done(struct ec_store *s, sqlite3_stmt *st)
{
	int rc = st && sqlite3_step(st) == SQLITE_DONE ? 0 : -1;

	ec_store_release(s, st);
	return rc;
}

static inline const char *col(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return t ? (const char *)t : "";
}

static inline int bump(struct ec_store *s, uint64_t *rev)
{
	return ec_store_bump(s, rev);
}

static inline bool same_text(const char *stored, json_t *v)
{
	json_t *a = json_loads(stored, 0, NULL);
	bool eq = a && json_equal(a, v);

	json_decref(a);
	return eq;
}

#endif
