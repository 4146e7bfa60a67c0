// SPDX-License-Identifier: BSD-2-Clause
/* edgeclusterd's store on a real SQLite file: create/replace/delete with
 * the revision counter and optimistic concurrency, reopen keeps everything,
 * a database from a newer schema is refused, one of schema 1 migrated. */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"
#include "store.h"

/* the permission bits of PATH SUFFIX, -1 if it is not there */
static int mode_of(const char *path, const char *suffix)
{
	char p[160];
	struct stat st;

	snprintf(p, sizeof(p), "%s%s", path, suffix);
	return stat(p, &st) ? -1 : (int)(st.st_mode & 07777);
}

static struct ec_row mk(const char *name, const char *spec)
{
	struct ec_row r = {0};

	snprintf(r.name, sizeof(r.name), "%s", name);
	ec_uuid4(r.uid);
	ec_timestamp(1700000000, r.created);
	r.labels = strdup("{\"app\":\"x\"}");
	r.spec = strdup(spec);
	return r;
}

static int count_cb(void *arg, struct ec_row *r)
{
	(void)r;
	++*(int *)arg;
	return 0;
}

/* A database of schema 1 (each mission's state map as JSON text in its row,
 * as edgeclusterd wrote it before schema 2) opens with its maps as rows. */
static void migrate_from_1(const char *dir)
{
	static const char v1[] =
	    "CREATE TABLE meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL);"
	    "CREATE TABLE missions (name TEXT PRIMARY KEY, uid TEXT NOT NULL,"
	    " rv INTEGER NOT NULL, created TEXT NOT NULL, labels TEXT NOT NULL, spec TEXT NOT NULL,"
	    " state TEXT NOT NULL DEFAULT '{}');"
	    "INSERT INTO meta VALUES ('revision', 7);"
	    "INSERT INTO missions VALUES ('m1', 'u1', 6, '2025-01-01T00:00:00Z', '{}',"
	    " '{\"content\":\"x\"}', '{\"b\":\"applied\",\"b/c\":\"ok "
	    "\\\"quoted\\\"\",\"a\":\"pending\"}');"
	    "INSERT INTO missions VALUES ('m2', 'u2', 7, '2025-01-01T00:00:00Z', '{}',"
	    " '{\"content\":\"y\"}', '{}');"
	    "CREATE TABLE outbox (mission TEXT PRIMARY KEY, seq INTEGER NOT NULL);"
	    "INSERT INTO outbox VALUES ('m2', 5);"
	    "PRAGMA user_version=1;";
	struct ec_store s;
	struct ec_row r;
	sqlite3 *db;
	char path[512], err[512] = "";
	uint64_t rev = 0;

	snprintf(path, sizeof(path), "%s/v1.db", dir);
	CHECK(sqlite3_open(path, &db) == SQLITE_OK &&
		  sqlite3_exec(db, v1, NULL, NULL, NULL) == SQLITE_OK,
	      "a database of schema 1");
	sqlite3_close(db);
	chmod(path, 0644); /* as versions before 0600 left it */
	CHECK(ec_store_open(&s, path, err, sizeof(err)) == 0, "schema 1 opens: %s", err);
	CHECK(mode_of(path, "") == 0600, "an existing 0644 database is made 0600: %o",
	      mode_of(path, ""));
	CHECK(ec_store_get(&s, EC_T_MISSIONS, "m1", &r) == 0 &&
		  !strcmp(r.state, "{\"a\":\"pending\",\"b\":\"applied\","
				   "\"b/c\":\"ok \\\"quoted\\\"\"}") &&
		  r.rv == 6,
	      "its state map is rows now, in key order: %s", r.state);
	ec_row_free(&r);
	CHECK(ec_store_get(&s, EC_T_MISSIONS, "m2", &r) == 0 && !strcmp(r.state, "{}"),
	      "an empty map stays empty: %s", r.state);
	ec_row_free(&r);
	CHECK(ec_store_revision(&s, &rev) == 0 && rev == 7, "the revision is kept: %llu",
	      (unsigned long long)rev);
	{
		sqlite3_stmt *st = ec_store_stmt(
		    &s, "SELECT (SELECT group_concat(mission || '=' || seq) FROM outbox),"
			" (SELECT sql FROM sqlite_master WHERE name='outbox')");
		const char *rows = NULL, *sql = NULL;

		if (st && sqlite3_step(st) == SQLITE_ROW) {
			rows = (const char *)sqlite3_column_text(st, 0);
			sql = (const char *)sqlite3_column_text(st, 1);
		}
		CHECK(rows && !strcmp(rows, "m2=5") && sql && strstr(sql, "WITHOUT ROWID"),
		      "the outbox is kept, as one b-tree now: %s / %s", rows ? rows : "-",
		      sql ? sql : "-");
		ec_store_release(&s, st);
	}
	CHECK(ec_store_get(&s, EC_T_MISSIONS, "m1", &r) == 0 && r.annotations &&
		  !strcmp(r.annotations, "{}"),
	      "missions gain the annotations column, empty: %s",
	      r.annotations ? r.annotations : "-");
	free(r.annotations);
	r.annotations = strdup("{\"k\":\"v\"}");
	CHECK(ec_store_replace(&s, EC_T_MISSIONS, &r, r.rv) == 0 &&
		  !strcmp(r.annotations, "{\"k\":\"v\"}"),
	      "and keep what is written there");
	ec_row_free(&r);
	CHECK(ec_store_state_put(&s, "m1", "b", "gone") == 0 &&
		  ec_store_state_put(&s, "m1", "a", NULL) == 0 &&
		  ec_store_get(&s, EC_T_MISSIONS, "m1", &r) == 0 &&
		  !strcmp(r.state, "{\"b\":\"gone\",\"b/c\":\"ok \\\"quoted\\\"\"}"),
	      "a key set, a key removed: %s", r.state);
	ec_row_free(&r);
	ec_store_close(&s);
	CHECK(ec_store_open(&s, path, err, sizeof(err)) == 0 &&
		  ec_store_get(&s, EC_T_MISSIONS, "m1", &r) == 0 &&
		  !strcmp(r.state, "{\"b\":\"gone\",\"b/c\":\"ok \\\"quoted\\\"\"}"),
	      "reopened: migrated once, not again (the edits stay): %s", r.state);
	ec_row_free(&r);
	CHECK(ec_store_delete(&s, EC_T_MISSIONS, "m1", 0, &r) == 0, "delete m1");
	ec_row_free(&r);
	CHECK(ec_store_state_put(&s, "m1", "b", "x") == EC_ST_NOTFOUND,
	      "a state for a mission gone: not found");
	{
		sqlite3_stmt *st = ec_store_stmt(&s, "SELECT count(*) FROM mstate");

		CHECK(st && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 0,
		      "its state rows went with it");
		ec_store_release(&s, st);
	}
	ec_store_close(&s);
}

/* The same statement text used inside its own rows: the kept statement is
 * stepping, so the inner list needs a copy of its own. */
struct nest {
	struct ec_store *s;
	int outer, inner;
};

static int nested_cb(void *arg, struct ec_row *r)
{
	struct nest *n = arg;
	int inner = 0;

	(void)r;
	n->outer++;
	if (ec_store_list(n->s, EC_T_MISSIONS, count_cb, &inner) == 0)
		n->inner += inner;
	return 0;
}

static int stop_cb(void *arg, struct ec_row *r)
{
	(void)arg;
	(void)r;
	return 7;
}

int main(void)
{
	char dir[] = "/tmp/ec-store-XXXXXX", path[128], err[256], cmd[160];
	struct ec_store s;
	struct ec_row a, b, got, old;
	uint64_t rev = 99, rv_a;
	int n = 0, rc;

	if (sodium_init() < 0 || !mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/t.db", dir);
	CHECK(ec_store_open(&s, path, err, sizeof(err)) == 0, "open a new database (%s)", err);
	CHECK(ec_store_revision(&s, &rev) == 0 && rev == 0, "a new database is at revision 0");
	CHECK(mode_of(path, "") == 0600 && mode_of(path, "-wal") == 0600 &&
		  mode_of(path, "-shm") == 0600,
	      "the database (it holds the credential), -wal and -shm are 0600: %o %o %o",
	      mode_of(path, ""), mode_of(path, "-wal"), mode_of(path, "-shm"));

	a = mk("a", "{\"content\":\"1\"}");
	b = mk("b", "{\"content\":\"2\"}");
	CHECK(ec_store_create(&s, EC_T_MISSIONS, &a) == 0 && a.rv == 1, "create a -> rv 1");
	CHECK(ec_store_create(&s, EC_T_MISSIONS, &b) == 0 && b.rv == 2, "create b -> rv 2");
	CHECK(ec_store_create(&s, EC_T_MISSIONS, &a) == EC_ST_EXISTS, "create a again: exists");
	CHECK(ec_store_revision(&s, &rev) == 0 && rev == 2, "a refused create bumps nothing");
	CHECK(ec_store_create(&s, EC_T_CLUSTERS, &a) == 0 && a.rv == 3,
	      "clusters share the revision counter (rv 3)");
	rv_a = 1;

	rc = ec_store_get(&s, EC_T_MISSIONS, "a", &got);
	CHECK(rc == 0 && got.rv == rv_a && !strcmp(got.uid, a.uid) &&
		  !strcmp(got.created, "2023-11-14T22:13:20Z") && !strcmp(got.spec, a.spec) &&
		  !strcmp(got.state, "{}"),
	      "get a: as created, state {}");
	ec_row_free(&got);
	CHECK(ec_store_get(&s, EC_T_MISSIONS, "zz", &got) == EC_ST_NOTFOUND,
	      "get missing: not found");

	free(a.spec);
	a.spec = strdup("{\"content\":\"1b\"}");
	CHECK(ec_store_replace(&s, EC_T_MISSIONS, &a, 7) == EC_ST_CONFLICT,
	      "replace with a stale rv: conflict");
	CHECK(ec_store_replace(&s, EC_T_MISSIONS, &a, rv_a) == 0 && a.rv == 4 &&
		  !strcmp(a.spec, "{\"content\":\"1b\"}") &&
		  !strcmp(a.created, "2023-11-14T22:13:20Z"),
	      "replace with the current rv: rv 4, created kept");
	CHECK(ec_store_replace(&s, EC_T_MISSIONS, &a, rv_a) == EC_ST_CONFLICT,
	      "the old rv is stale now");
	{
		struct ec_row z = mk("zz", "{}");

		CHECK(ec_store_replace(&s, EC_T_MISSIONS, &z, 1) == EC_ST_NOTFOUND,
		      "replace missing: not found");
		ec_row_free(&z);
	}
	CHECK(ec_store_delete(&s, EC_T_MISSIONS, "b", 1, &old) == EC_ST_CONFLICT,
	      "delete with a stale rv: conflict");
	CHECK(ec_store_delete(&s, EC_T_MISSIONS, "b", 2, &old) == 0 && old.rv == 2 &&
		  !strcmp(old.uid, b.uid),
	      "delete with the current rv returns the deleted row");
	ec_row_free(&old);
	CHECK(ec_store_delete(&s, EC_T_MISSIONS, "b", 0, &old) == EC_ST_NOTFOUND,
	      "delete again: not found");
	CHECK(ec_store_revision(&s, &rev) == 0 && rev == 5, "revision 5 after 5 writes");
	CHECK(ec_store_list(&s, EC_T_MISSIONS, count_cb, &n) == 0 && n == 1,
	      "list: one mission left");
	ec_store_close(&s);

	CHECK(ec_store_open(&s, path, err, sizeof(err)) == 0, "reopen (%s)", err);
	rc = ec_store_get(&s, EC_T_MISSIONS, "a", &got);
	CHECK(rc == 0 && got.rv == 4 && !strcmp(got.uid, a.uid) &&
		  !strcmp(got.spec, "{\"content\":\"1b\"}"),
	      "after reopen: same uid, rv and spec");
	ec_row_free(&got);
	CHECK(ec_store_revision(&s, &rev) == 0 && rev == 5, "after reopen: revision 5");

	/* a group: two creates and a refused one commit as one transaction */
	{
		struct ec_row g1 = mk("g1", "{}"), g2 = mk("g2", "{}");
		sqlite3 *peek;
		int seen = -1;

		CHECK(ec_store_tx_begin(&s, EC_TX_REPAIRABLE) == 0, "open a group");
		CHECK(ec_store_create(&s, EC_T_MISSIONS, &g1) == 0, "create g1 in the group");
		CHECK(ec_store_create(&s, EC_T_MISSIONS, &a) == EC_ST_EXISTS,
		      "a refused create inside the group");
		CHECK(ec_store_create(&s, EC_T_MISSIONS, &g2) == 0 && g2.rv == 7,
		      "create g2 after it (rv 7: the refused one bumped nothing)");
		/* another connection sees nothing before the commit */
		if (sqlite3_open(path, &peek) == SQLITE_OK) {
			sqlite3_stmt *st;

			if (sqlite3_prepare_v2(peek, "SELECT count(*) FROM missions", -1, &st,
					       NULL) == SQLITE_OK &&
			    sqlite3_step(st) == SQLITE_ROW)
				seen = sqlite3_column_int(st, 0);
			sqlite3_finalize(st);
			sqlite3_close(peek);
		}
		CHECK(seen == 1, "uncommitted: another reader sees 1 mission, not %d", seen);
		CHECK(ec_store_tx_end(&s, 0) == 0 && s.tx_depth == 0 && !s.tx_normal,
		      "commit the group; synchronous back to FULL");
		n = 0;
		CHECK(ec_store_list(&s, EC_T_MISSIONS, count_cb, &n) == 0 && n == 3,
		      "both creates committed (3 missions)");

		CHECK(ec_store_tx_begin(&s, 0) == 0 &&
			  ec_store_delete(&s, EC_T_MISSIONS, "g1", 0, &old) == 0,
		      "a group deleting g1");
		ec_row_free(&old);
		CHECK(ec_store_tx_end(&s, -1) == -1, "rolled back as a whole");
		CHECK(ec_store_get(&s, EC_T_MISSIONS, "g1", &got) == 0, "g1 is still there");
		ec_row_free(&got);
		CHECK(ec_store_revision(&s, &rev) == 0 && rev == 7, "revision still 7");
		ec_row_free(&g1);
		ec_row_free(&g2);
	}

	/* kept statements: reused after an early stop, nested, deep savepoints */
	{
		struct nest ns = {&s, 0, 0};
		int depth = 0, three = 0;

		CHECK(ec_store_list(&s, EC_T_MISSIONS, stop_cb, NULL) == 7,
		      "a list stopped by its callback returns the callback's result");
		CHECK(ec_store_list(&s, EC_T_MISSIONS, count_cb, &three) == 0 && three == 3,
		      "the same list again reads every row (the statement was reset)");
		CHECK(ec_store_list(&s, EC_T_MISSIONS, nested_cb, &ns) == 0 && ns.outer == 3 &&
			  ns.inner == 9,
		      "a list inside its own rows: 3 x 3 (outer %d, inner %d)", ns.outer, ns.inner);
		for (int i = 0; i < 9; i++)
			depth += ec_store_tx_begin(&s, 0) == 0;
		CHECK(depth == 9 && ec_store_delete(&s, EC_T_MISSIONS, "g2", 0, &old) == 0,
		      "9 nested groups (savepoints past the kept ones), a delete inside");
		ec_row_free(&old);
		for (int i = 8; i > 0; i--)
			depth -= ec_store_tx_end(&s, 0) == 0;
		CHECK(depth == 1 && ec_store_tx_end(&s, -1) == -1 &&
			  ec_store_get(&s, EC_T_MISSIONS, "g2", &got) == 0,
		      "released one by one, rolled back at the outermost: g2 is back");
		ec_row_free(&got);
	}
	ec_store_close(&s);

	{
		sqlite3 *db;

		CHECK(sqlite3_open(path, &db) == SQLITE_OK &&
			  sqlite3_exec(db, "PRAGMA user_version=4", NULL, NULL, NULL) == SQLITE_OK,
		      "mark the database as schema 4");
		sqlite3_close(db);
		CHECK(ec_store_open(&s, path, err, sizeof(err)) < 0 && strstr(err, "newer"),
		      "a newer schema is refused: %s", err);
		ec_store_close(&s);
	}
	migrate_from_1(dir);
	CHECK(ec_store_open(&s, "/nonexistent/dir/x.db", err, sizeof(err)) < 0 &&
		  strstr(err, "/nonexistent/dir/x.db"),
	      "unopenable path named: %s", err);
	ec_row_free(&a);
	ec_row_free(&b);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		return 1;
	return unit_summary();
}
