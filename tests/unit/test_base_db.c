// SPDX-License-Identifier: BSD-2-Clause
/* The control base's SQLite statements and groups on a real file: a statement is kept
 * (the same one for the same text, a loose copy while it steps), groups
 * nest with savepoints (an inner failure undoes only itself, an outer one
 * everything), the store's last word before the commit can veto it, and a
 * repairable group commits with synchronous=NORMAL and goes back to FULL. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl_db.h"
#include "unit.h"

static int ends, veto;

static int before_end(struct ctl_db *db, int rc)
{
	(void)db;
	ends++;
	return veto ? -1 : rc;
}

static long count(struct ctl_db *db)
{
	sqlite3_stmt *st = ctl_db_stmt(db, "SELECT count(*) FROM t");
	long n = st && sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;

	ctl_db_release(db, st);
	return n;
}

static int insert(struct ctl_db *db, int v)
{
	sqlite3_stmt *st = ctl_db_stmt(db, "INSERT INTO t(v) VALUES (?1)");
	int rc;

	if (!st)
		return -1;
	sqlite3_bind_int(st, 1, v);
	rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
	ctl_db_release(db, st);
	return rc;
}

static int synchronous(struct ctl_db *db)
{
	sqlite3_stmt *st = ctl_db_stmt(db, "PRAGMA synchronous");
	int v = st && sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;

	ctl_db_release(db, st);
	return v;
}

int main(void)
{
	char dir[] = "/tmp/test_base_db.XXXXXX", path[300], cmd[400];
	static struct ctl_db db;
	sqlite3_stmt *a, *b, *c;

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/t.db", dir);
	if (sqlite3_open(path, &db.db) != SQLITE_OK ||
	    sqlite3_exec(db.db,
			 "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
			 "CREATE TABLE t(v INTEGER UNIQUE)",
			 NULL, NULL, NULL) != SQLITE_OK)
		return 1;
	db.before_end = before_end;

	a = ctl_db_stmt(&db, "SELECT v FROM t");
	ctl_db_release(&db, a);
	b = ctl_db_stmt(&db, "SELECT v FROM t");
	CHECK(a && a == b, "the same text: the same kept statement");
	ctl_db_release(&db, b);
	CHECK(!ctl_db_stmt(&db, "SELEC nonsense"), "a statement that does not prepare: NULL");

	CHECK(!ctl_db_tx_begin(&db, false) && !insert(&db, 1) && !insert(&db, 2), "a group");
	CHECK(!ctl_db_tx_begin(&db, false) && insert(&db, 1) == -1 && ctl_db_tx_end(&db, -1) == -1,
	      "a nested write fails (a duplicate): its savepoint is undone");
	CHECK(!ctl_db_tx_begin(&db, false) && !insert(&db, 3) && ctl_db_tx_end(&db, 0) == 0,
	      "a nested write that works is released into the group");
	CHECK(ctl_db_tx_end(&db, 0) == 0 && count(&db) == 3 && ends == 1,
	      "the group commits once, with what worked (3 rows, one before_end)");

	CHECK(!ctl_db_tx_begin(&db, false) && !insert(&db, 4) && ctl_db_tx_end(&db, -1) == -1 &&
		  count(&db) == 3,
	      "an outer failure rolls everything back");
	veto = 1;
	CHECK(!ctl_db_tx_begin(&db, false) && !insert(&db, 5) && ctl_db_tx_end(&db, 0) == -1 &&
		  count(&db) == 3,
	      "before_end vetoes the commit: rolled back");
	veto = 0;

	CHECK(ctl_db_one_begin(&db, false) == 1 && !insert(&db, 6) &&
		  ctl_db_one_end(&db, 1, 0) == 0 && count(&db) == 4,
	      "one write outside a group opens its own");
	CHECK(!ctl_db_tx_begin(&db, true) && synchronous(&db) == 1 && db.tx_normal &&
		  ctl_db_one_begin(&db, false) == 0 && !insert(&db, 7) &&
		  ctl_db_one_end(&db, 0, 0) == 0 && ctl_db_tx_end(&db, 0) == 0,
	      "a repairable group runs with synchronous=NORMAL; one write joins it");
	CHECK(synchronous(&db) == 2 && !db.tx_normal && db.tx_depth == 0 && count(&db) == 5,
	      "then synchronous=FULL again");

	a = ctl_db_stmt(&db, "SELECT v FROM t ORDER BY v");
	c = NULL;
	if (a && sqlite3_step(a) == SQLITE_ROW) {
		c = ctl_db_stmt(&db, "SELECT v FROM t ORDER BY v");
		CHECK(c && c != a && sqlite3_step(c) == SQLITE_ROW,
		      "the same text while it steps: a loose copy that works");
		ctl_db_release(&db, c);
	}
	ctl_db_release(&db, a);
	CHECK(c != NULL, "the outer statement stepped");

	ctl_db_forget(&db);
	sqlite3_close(db.db);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		return 1;
	return unit_summary();
}
