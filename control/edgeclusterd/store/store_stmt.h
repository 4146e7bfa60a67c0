/* SPDX-License-Identifier: BSD-2-Clause */
/* Statement steps shared by tree_store.c and tree_sync.c (one
 * transaction per call; see tree_store.c). Statements are kept (store.c). */
#ifndef ECD_STORE_STMT_H
#define ECD_STORE_STMT_H

#include <jansson.h>
#include <sqlite3.h>
#include <stdbool.h>

#include "store.h"

/* Step a write once and give its statement back: 0 or -1 (also when st is
 * NULL: its prepare failed). */
int ec_store_step_write(struct ec_store *s, sqlite3_stmt *st);
static inline int ec_store_step_release(struct ec_store *s, sqlite3_stmt *st)
{
	return ec_store_step_write(s, st);
}

/* Column i of the row st is on as text, "" for NULL. */
static inline const char *ec_store_col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return t ? (const char *)t : "";
}

#endif
