/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * SQLite for the daemons' stores: kept prepared statements and
 * grouped commits. The schema and the statements stay with each store.
 *
 * Statements: parsing SQL was half of a store's CPU time, so every
 * statement is prepared once (SQLITE_PREPARE_PERSISTENT) into a slot found
 * by the address of its text (a string literal: it lives as long as the
 * store), then reset and reused. A statement whose kept copy is still
 * stepping (the same text used inside a loop over it) gets a loose copy
 * for one use.
 *
 * Groups: ctl_db_tx_begin/end pairs nest; the outermost opens a transaction
 * (BEGIN IMMEDIATE), a nested one a savepoint, so a write that fails inside
 * a group undoes only itself, and all of a group commits with one fsync
 * instead of one per write (what gave Fornax its p99). A repairable group
 * commits with synchronous=NORMAL: in WAL mode that survives a crash of the
 * process and loses at most the last commits on a power loss; it is for
 * what is sent again or re-derived, never for what a client was told is
 * written.
 */
#ifndef CTL_DB_H
#define CTL_DB_H

#include <sqlite3.h>
#include <stdbool.h>

#define CTL_DB_STMT_SLOTS 128
#define CTL_DB_STMT_LOOSE 8

struct ctl_db_slot {
	const char *key;  /* the SQL text or format it was prepared from */
	unsigned variant; /* what a format was filled with (0: the text itself) */
	sqlite3_stmt *st;
};

/* Part of its store (not copied while statements are kept: two copies would
 * each keep statements of the same connection). */
struct ctl_db {
	sqlite3 *db;
	int tx_depth;	/* open ctl_db_tx_begin()s */
	bool tx_normal; /* the open group commits with synchronous=NORMAL */
	struct ctl_db_slot stmts[CTL_DB_STMT_SLOTS];
	sqlite3_stmt *loose[CTL_DB_STMT_LOOSE];
	/* At the end of the outermost group, before COMMIT (rc 0) or ROLLBACK:
	 * the store's last word (counters it writes once per commit); returns
	 * the rc to go on with. It gets the ctl_db: a store finds itself from
	 * it (container), so the hook survives the store being moved. */
	int (*before_end)(struct ctl_db *db, int rc);
};

/* The kept statement of sql (a string that lives as long as the store),
 * prepared on first use; NULL if it does not prepare. Give it back with
 * ctl_db_release once its rows are read. */
sqlite3_stmt *ctl_db_stmt(struct ctl_db *db, const char *sql);
/* The same for a text built from key (a format) and variant (what filled
 * it, not 0): sql is what is prepared the first time. */
sqlite3_stmt *ctl_db_stmt_variant(struct ctl_db *db, const char *key, unsigned variant,
				  const char *sql);
/* Reset it (its column texts go) and clear its bindings; a loose copy is
 * finalized. st may be NULL. */
void ctl_db_release(struct ctl_db *db, sqlite3_stmt *st);
/* A kept statement without bindings or rows, run once: 0 or -1. */
int ctl_db_run(struct ctl_db *db, const char *sql);
/* Finalize every kept statement (before sqlite3_close). */
void ctl_db_forget(struct ctl_db *db);

int ctl_db_tx_begin(struct ctl_db *db, bool repairable);
/* rc 0 commits (the outermost pair) or releases (a nested one); nonzero
 * rolls back to the matching begin. Returns rc, or -1 when a commit failed. */
int ctl_db_tx_end(struct ctl_db *db, int rc);
/* For a write of one statement (atomic on its own): inside a group it joins
 * it without a savepoint, outside one it opens a transaction. Returns 1
 * (opened), 0 (joined) or -1; pass that to ctl_db_one_end with the result. */
int ctl_db_one_begin(struct ctl_db *db, bool repairable);
int ctl_db_one_end(struct ctl_db *db, int opened, int rc);

#endif
