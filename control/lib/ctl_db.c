// SPDX-License-Identifier: BSD-2-Clause
/* Kept statements and grouped commits; see ctl_db.h. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ctl_db.h"

static sqlite3_stmt *prepare(struct ctl_db *db, const char *sql)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v3(db->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK)
		return NULL;
	return st;
}

static sqlite3_stmt *loose(struct ctl_db *db, const char *sql)
{
	for (int i = 0; i < CTL_DB_STMT_LOOSE; i++)
		if (!db->loose[i])
			return db->loose[i] = prepare(db, sql);
	return NULL; /* CTL_DB_STMT_LOOSE statements of the same texts nested: a bug */
}

/* key and variant find the slot (open addressing; slots are never freed
 * before ctl_db_forget); sql is what is prepared there. */
sqlite3_stmt *ctl_db_stmt_variant(struct ctl_db *db, const char *key, unsigned variant,
				  const char *sql)
{
	uintptr_t h = ((uintptr_t)key >> 3) * 0x9e3779b97f4a7c15ull + variant;
	struct ctl_db_slot *sl;

	for (unsigned i = 0; i < CTL_DB_STMT_SLOTS; i++) {
		sl = &db->stmts[(h + i) % CTL_DB_STMT_SLOTS];
		if (sl->key == key && sl->variant == variant)
			return sqlite3_stmt_busy(sl->st) ? loose(db, sql) : sl->st;
		if (!sl->key) {
			if (!(sl->st = prepare(db, sql)))
				return NULL;
			sl->key = key;
			sl->variant = variant;
			return sl->st;
		}
	}
	return loose(db, sql);
}

sqlite3_stmt *ctl_db_stmt(struct ctl_db *db, const char *sql)
{
	return ctl_db_stmt_variant(db, sql, 0, sql);
}

void ctl_db_release(struct ctl_db *db, sqlite3_stmt *st)
{
	if (!st)
		return;
	for (int i = 0; i < CTL_DB_STMT_LOOSE; i++)
		if (db->loose[i] == st) {
			sqlite3_finalize(st);
			db->loose[i] = NULL;
			return;
		}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
}

void ctl_db_forget(struct ctl_db *db)
{
	for (int i = 0; i < CTL_DB_STMT_SLOTS; i++)
		sqlite3_finalize(db->stmts[i].st);
	for (int i = 0; i < CTL_DB_STMT_LOOSE; i++)
		sqlite3_finalize(db->loose[i]);
	memset(db->stmts, 0, sizeof(db->stmts));
	memset(db->loose, 0, sizeof(db->loose));
}

int ctl_db_run(struct ctl_db *db, const char *sql)
{
	sqlite3_stmt *st = ctl_db_stmt(db, sql);
	int rc = st && sqlite3_step(st) == SQLITE_DONE ? 0 : -1;

	ctl_db_release(db, st);
	return rc;
}

/* The savepoints of a group, kept too: a daemon may open a few per object. */
#define SP_KEPT 6
static const char *const sp_open[SP_KEPT] = {"SAVEPOINT s1", "SAVEPOINT s2", "SAVEPOINT s3",
					     "SAVEPOINT s4", "SAVEPOINT s5", "SAVEPOINT s6"};
static const char *const sp_release[SP_KEPT] = {"RELEASE s1", "RELEASE s2", "RELEASE s3",
						"RELEASE s4", "RELEASE s5", "RELEASE s6"};
static const char *const sp_undo[SP_KEPT] = {"ROLLBACK TO s1", "ROLLBACK TO s2", "ROLLBACK TO s3",
					     "ROLLBACK TO s4", "ROLLBACK TO s5", "ROLLBACK TO s6"};

/* "SAVEPOINT sD" and the like: kept up to SP_KEPT deep, else parsed each time. */
static int sp(struct ctl_db *db, const char *const kept_sql[SP_KEPT], const char *verb, int d)
{
	char sql[48];

	if (d >= 1 && d <= SP_KEPT)
		return ctl_db_run(db, kept_sql[d - 1]);
	snprintf(sql, sizeof(sql), "%s s%d", verb, d);
	return sqlite3_exec(db->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

/* Back to synchronous=FULL after a repairable group. */
static void tx_sync_restore(struct ctl_db *db)
{
	if (db->tx_normal && !ctl_db_run(db, "PRAGMA synchronous=FULL"))
		db->tx_normal = false;
}

int ctl_db_tx_begin(struct ctl_db *db, bool repairable)
{
	if (db->tx_depth == 0) {
		if (repairable && !ctl_db_run(db, "PRAGMA synchronous=NORMAL"))
			db->tx_normal = true;
		if (ctl_db_run(db, "BEGIN IMMEDIATE")) {
			tx_sync_restore(db);
			return -1;
		}
	} else if (sp(db, sp_open, "SAVEPOINT", db->tx_depth)) {
		return -1;
	}
	db->tx_depth++;
	return 0;
}

int ctl_db_tx_end(struct ctl_db *db, int rc)
{
	int d = --db->tx_depth;

	if (d > 0) {
		if (rc == 0 && !sp(db, sp_release, "RELEASE", d))
			return 0;
		sp(db, sp_undo, "ROLLBACK TO", d);
		sp(db, sp_release, "RELEASE", d);
		return rc ? rc : -1;
	}
	if (db->before_end)
		rc = db->before_end(db, rc);
	if (rc == 0 && !ctl_db_run(db, "COMMIT")) {
		tx_sync_restore(db);
		return 0;
	}
	sqlite3_exec(db->db, "ROLLBACK", NULL, NULL, NULL);
	tx_sync_restore(db);
	return rc ? rc : -1;
}

int ctl_db_one_begin(struct ctl_db *db, bool repairable)
{
	if (db->tx_depth)
		return 0;
	return ctl_db_tx_begin(db, repairable) ? -1 : 1;
}

int ctl_db_one_end(struct ctl_db *db, int opened, int rc)
{
	return opened ? ctl_db_tx_end(db, rc) : rc;
}
