// SPDX-License-Identifier: BSD-2-Clause
/* SQLite persistence for edgeclusterd; see store.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db.h"
#include "store.h"

/* user_version 3: the schema below. Schema 1 kept each mission's state map
 * as JSON text in missions.state; schema 2 keeps it as rows of mstate
 * (migrated in ec_store_open). missions.state stays, always '{}'. Schema 3
 * adds the annotations column (kubectl apply keeps what it applied there);
 * clusters have it too, always '{}', so that both tables have the same
 * columns. */
static const char schema[] =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=FULL;"
    "PRAGMA foreign_keys=OFF;"
    "CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS missions (name TEXT PRIMARY KEY, uid TEXT NOT NULL,"
    " rv INTEGER NOT NULL, created TEXT NOT NULL, labels TEXT NOT NULL, spec TEXT NOT NULL,"
    " state TEXT NOT NULL DEFAULT '{}', annotations TEXT NOT NULL DEFAULT '{}');"
    "CREATE TABLE IF NOT EXISTS clusters (name TEXT PRIMARY KEY, uid TEXT NOT NULL,"
    " rv INTEGER NOT NULL, created TEXT NOT NULL, labels TEXT NOT NULL, spec TEXT NOT NULL,"
    " state TEXT NOT NULL DEFAULT '{}', annotations TEXT NOT NULL DEFAULT '{}');"
    "INSERT OR IGNORE INTO meta VALUES ('revision', 0);"
    /* what this cluster applied (see store.h); a new table, so
     * databases of schema 1 without it just gain it */
    "CREATE TABLE IF NOT EXISTS applied (name TEXT PRIMARY KEY, uid TEXT NOT NULL,"
    " digest TEXT NOT NULL, phase TEXT NOT NULL, spec TEXT NOT NULL,"
    " pgid INTEGER NOT NULL DEFAULT 0, pstart INTEGER NOT NULL DEFAULT 0,"
    " fails INTEGER NOT NULL DEFAULT 0);"
    /* the tree (tree_store.h, tree_store.c): the attach record, credentials this hub
     * issued, missions received from the parent, state owed to it */
    "CREATE TABLE IF NOT EXISTS attach (id INTEGER PRIMARY KEY CHECK (id = 1),"
    " phase TEXT NOT NULL, parent TEXT NOT NULL, token TEXT NOT NULL, credential TEXT NOT NULL,"
    " cred_expires INTEGER NOT NULL, since TEXT NOT NULL, last_error TEXT NOT NULL,"
    " parent_name TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS hub_creds (name TEXT PRIMARY KEY, cur BLOB NOT NULL,"
    " cur_expires INTEGER NOT NULL, prev BLOB NOT NULL, prev_expires INTEGER NOT NULL,"
    " resync INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS inherited (name TEXT PRIMARY KEY, uid TEXT NOT NULL,"
    " prv INTEGER NOT NULL, lrv INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS outbox (mission TEXT PRIMARY KEY, seq INTEGER NOT NULL)"
    " WITHOUT ROWID;"
    "INSERT OR IGNORE INTO meta VALUES ('outbox_seq', 0);"
    /* schema 2: a mission's state map, a row per key. A parent replaces a
     * child's few keys of a map that holds one per cluster below it:
     * parsing and rewriting the whole map as JSON per report was most of a
     * root's CPU. Rows of a mission go with it (the trigger: every path
     * that deletes a mission row, or replaces it under another uid). */
    "CREATE TABLE IF NOT EXISTS mstate (mission TEXT NOT NULL, path TEXT NOT NULL,"
    " value TEXT NOT NULL, PRIMARY KEY (mission, path)) WITHOUT ROWID;"
    "CREATE TRIGGER IF NOT EXISTS mstate_gone AFTER DELETE ON missions"
    " BEGIN DELETE FROM mstate WHERE mission=OLD.name; END;";

/* Schema 1 -> 2, in one transaction: the JSON maps become rows. */
static const char migrate_1[] =
    "INSERT OR IGNORE INTO mstate (mission, path, value)"
    " SELECT m.name, j.key, j.value FROM missions m, json_each(m.state) j"
    " WHERE json_valid(m.state) AND j.type='text';"
    "UPDATE missions SET state='{}' WHERE state<>'{}';"
    /* one b-tree instead of a table and its key's index (written per report) */
    "CREATE TABLE outbox2 (mission TEXT PRIMARY KEY, seq INTEGER NOT NULL) WITHOUT ROWID;"
    "INSERT INTO outbox2 SELECT mission, seq FROM outbox;"
    "DROP TABLE outbox;"
    "ALTER TABLE outbox2 RENAME TO outbox;";

static const char *const tables[] = {"missions", "clusters"};

/* Schema 2 -> 3: the annotations column, in the tables that predate it (a
 * table the schema just created has it already). */
static int add_annotations(sqlite3 *db, const char *path, char *err, size_t errlen)
{
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		char sql[160];
		sqlite3_stmt *st;
		int has = 0;

		snprintf(sql, sizeof(sql),
			 "SELECT COUNT(*) FROM pragma_table_info('%s') WHERE name='annotations'",
			 tables[i]);
		if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
			snprintf(err, errlen, "%s: %s", path, sqlite3_errmsg(db));
			return -1;
		}
		if (sqlite3_step(st) == SQLITE_ROW)
			has = sqlite3_column_int(st, 0);
		sqlite3_finalize(st);
		snprintf(sql, sizeof(sql),
			 "ALTER TABLE %s ADD COLUMN annotations TEXT NOT NULL DEFAULT '{}'",
			 tables[i]);
		if (!has && db_exec(db, path, sql, err, errlen))
			return -1;
	}
	return 0;
}

static int before_end(struct ctl_db *db, int rc);

_Static_assert(offsetof(struct ec_store, tx_depth) == offsetof(struct ec_store, sql.tx_depth) &&
		   offsetof(struct ec_store, tx_normal) == offsetof(struct ec_store, sql.tx_normal),
	       "ec_store's names of ctl_db's first members");

/* The database holds this cluster's credential: owner-only, also when an
 * older version made it 0644. SQLite gives -wal and -shm the mode of the
 * database file, so creating that one 0600 is enough for new files. */
static int private_files(const char *path, char *err, size_t errlen)
{
	static const char *const sfx[] = {"-wal", "-shm"};
	char side[1024];
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

	if (fd < 0 || fchmod(fd, 0600)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		snprintf(side, sizeof(side), "%s%s", path, sfx[i]);
		if (chmod(side, 0600) && errno != ENOENT) {
			snprintf(err, errlen, "%s: %s", side, strerror(errno));
			return -1;
		}
	}
	return 0;
}

int ec_store_open(struct ec_store *s, const char *path, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int ver = -1;

	memset(s, 0, sizeof(*s));
	s->sql.before_end = before_end;
	if (private_files(path, err, errlen) || db_open(&s->sql.db, path, err, errlen))
		return -1;
	/* Refuse a database written by a newer schema rather than corrupt it. */
	if (sqlite3_prepare_v2(s->sql.db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			ver = sqlite3_column_int(st, 0);
		sqlite3_finalize(st);
	}
	if (ver < 0 || ver > 3) {
		snprintf(err, errlen, "%s: %s", path,
			 ver < 0 ? sqlite3_errmsg(s->sql.db)
				 : "written by a newer edgeclusterd (schema > 3)");
		ec_store_close(s);
		return -1;
	}
	if (db_exec(s->sql.db, path, schema, err, errlen)) {
		ec_store_close(s);
		return -1;
	}
	/* the version moves with the migration: interrupted, it runs again */
	if (ver < 3 && (db_exec(s->sql.db, path, "BEGIN IMMEDIATE", err, errlen) ||
			(ver == 1 && db_exec(s->sql.db, path, migrate_1, err, errlen)) ||
			add_annotations(s->sql.db, path, err, errlen) ||
			db_exec(s->sql.db, path, "PRAGMA user_version=3; COMMIT", err, errlen))) {
		sqlite3_exec(s->sql.db, "ROLLBACK", NULL, NULL, NULL);
		ec_store_close(s);
		return -1;
	}
	return 0;
}

void ec_store_close(struct ec_store *s)
{
	ctl_db_forget(&s->sql);
	if (s->sql.db)
		sqlite3_close(s->sql.db);
	s->sql.db = NULL;
}

const char *ec_store_errmsg(struct ec_store *s)
{
	if (s->hook_err[0])
		return s->hook_err;
	return s->sql.db ? sqlite3_errmsg(s->sql.db) : "no database";
}

bool ec_store_maybe_applied(const struct ec_store *s)
{
	return s->maybe_applied;
}

/* ---- statements (kept: ctl_db.h) ---- */

sqlite3_stmt *ec_store_stmt(struct ec_store *s, const char *sql)
{
	return ctl_db_stmt(&s->sql, sql);
}

void ec_store_release(struct ec_store *s, sqlite3_stmt *st)
{
	ctl_db_release(&s->sql, st);
}

/* A statement of fmt filled with table t's name. */
static sqlite3_stmt *prep(struct ec_store *s, const char *fmt, enum ec_table t)
{
	char sql[256];

	snprintf(sql, sizeof(sql), fmt, tables[t]);
	return ctl_db_stmt_variant(&s->sql, fmt, (unsigned)t + 1, sql);
}

int ec_store_one(struct ec_store *s, sqlite3_stmt *st, const char *name, ec_from_fn from, void *out)
{
	int rc;

	if (!st)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	rc = rc == SQLITE_ROW ? from(st, out) : rc == SQLITE_DONE ? EC_ST_NOTFOUND : -1;
	ec_store_release(s, st);
	return rc;
}

int ec_store_each(struct ec_store *s, sqlite3_stmt *st, ec_each_fn row, void *arg)
{
	int rc;

	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int stop = row(arg, st);

		if (stop) {
			ec_store_release(s, st);
			return stop;
		}
	}
	ec_store_release(s, st);
	return rc == SQLITE_DONE ? 0 : -1;
}

static char *dup_col(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return strdup(t ? (const char *)t : "{}");
}

#define ROW_COLS "name, uid, rv, created, labels, spec, state, annotations"
/* What a read returns as ROW_COLS: a mission's state is its mstate rows. */
static const char *const read_cols[] = {EC_MISSION_COLS, ROW_COLS};

/* A read of fmt ("SELECT %s FROM %s ...") filled with t's columns and name. */
static sqlite3_stmt *prep_read(struct ec_store *s, const char *fmt, enum ec_table t)
{
	char sql[512];

	snprintf(sql, sizeof(sql), fmt, read_cols[t], tables[t]);
	return ctl_db_stmt_variant(&s->sql, fmt, (unsigned)t + 1, sql);
}

/* An ec_from_fn: *out is a struct ec_row. */
static int row_from(sqlite3_stmt *st, void *out)
{
	struct ec_row *r = memset(out, 0, sizeof(struct ec_row));

	snprintf(r->name, sizeof(r->name), "%s", sqlite3_column_text(st, 0));
	snprintf(r->uid, sizeof(r->uid), "%s", sqlite3_column_text(st, 1));
	r->rv = (uint64_t)sqlite3_column_int64(st, 2);
	snprintf(r->created, sizeof(r->created), "%s", sqlite3_column_text(st, 3));
	r->labels = dup_col(st, 4);
	r->spec = dup_col(st, 5);
	r->state = dup_col(st, 6);
	r->annotations = dup_col(st, 7);
	if (!r->labels || !r->spec || !r->state || !r->annotations) {
		ec_row_free(r);
		return -1;
	}
	return 0;
}

static void on_update(void *arg, int op, const char *db, const char *table, sqlite3_int64 rowid)
{
	(void)op;
	(void)db;
	(void)rowid;
	if (!strcmp(table, "meta"))
		ec_store_notify(arg);
}

void ec_store_notify(struct ec_store *s)
{
	for (int i = 0; i < EC_STORE_HOOKS; i++)
		if (s->on_revision[i].fn)
			s->on_revision[i].fn(s->on_revision[i].arg);
}

int ec_store_on_revision(struct ec_store *s, void (*fn)(void *arg), void *arg)
{
	int i, free_slot = -1, any = 0;

	for (i = 0; i < EC_STORE_HOOKS; i++) {
		if (s->on_revision[i].fn && s->on_revision[i].arg == arg)
			s->on_revision[i].fn = NULL;
		if (!s->on_revision[i].fn && free_slot < 0)
			free_slot = i;
	}
	if (fn) {
		if (free_slot < 0)
			return -1;
		s->on_revision[free_slot].fn = fn;
		s->on_revision[free_slot].arg = arg;
	}
	for (i = 0; i < EC_STORE_HOOKS; i++)
		any |= s->on_revision[i].fn != NULL;
	sqlite3_update_hook(s->sql.db, any ? on_update : NULL, any ? s : NULL);
	return 0;
}

int ec_store_revision(struct ec_store *s, uint64_t *rev)
{
	sqlite3_stmt *st = ec_store_stmt(s, "SELECT v FROM meta WHERE k='revision'");
	int rc = -1;

	if (!st)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW) {
		*rev = (uint64_t)sqlite3_column_int64(st, 0);
		rc = 0;
	}
	ec_store_release(s, st);
	return rc;
}

int ec_store_get(struct ec_store *s, enum ec_table t, const char *name, struct ec_row *r)
{
	return ec_store_one(s, prep_read(s, "SELECT %s FROM %s WHERE name=?1", t), name, row_from,
			    r);
}

int ec_store_mission_bare(struct ec_store *s, const char *name, struct ec_row *r)
{
	/* missions.state is '{}' since schema 2: no state row is read */
	return ec_store_one(s, prep(s, "SELECT " ROW_COLS " FROM %s WHERE name=?1", EC_T_MISSIONS),
			    name, row_from, r);
}

/* The callback of a list and its argument, for the ec_each_fn below. */
struct row_list {
	ec_row_cb cb;
	void *arg;
};

static int list_row(void *p, sqlite3_stmt *st)
{
	struct row_list *l = p;
	struct ec_row r;
	int stop;

	if (row_from(st, &r))
		return -1;
	stop = l->cb(l->arg, &r);
	ec_row_free(&r);
	return stop;
}

int ec_store_list(struct ec_store *s, enum ec_table t, ec_row_cb cb, void *arg)
{
	struct row_list l = {cb, arg};

	return ec_store_each(s, prep_read(s, "SELECT %s FROM %s ORDER BY name", t), list_row, &l);
}

/* ---- transactions: one per write, or one per group of writes ---- */

/*
 * The outermost begin opens a transaction; a nested one a savepoint, so a
 * write that fails inside a group (a name that exists, a conflict) undoes
 * only itself. A group opened with EC_TX_REPAIRABLE commits with
 * synchronous=NORMAL: in WAL mode that survives a crash of the process and
 * loses at most the last commits on a power loss; it is for what the
 * parent sends again or what is re-derived (inherited missions, state
 * reports, applied records), never for what the API acknowledged.
 */
/* One kept statement without bindings or rows, run once: 0 or -1. */
static int run1(struct ec_store *s, const char *sql)
{
	return ctl_db_run(&s->sql, sql);
}

int ec_store_tx_begin(struct ec_store *s, unsigned flags)
{
	return ctl_db_tx_begin(&s->sql, flags & EC_TX_REPAIRABLE);
}

/* Step a write once and release it: 0 or -1 (also when st is NULL). */
static int step_done(struct ec_store *s, sqlite3_stmt *st)
{
	/* on etcd, every write is in a group: its end is where etcd gets it */
	int own = st && s->commit_hook ? ec_store_one_begin(s, 0) : 0;
	int rc = own >= 0 && st && sqlite3_step(st) == SQLITE_DONE ? 0 : -1;

	ec_store_release(s, st);
	return own > 0 ? ec_store_one_end(s, own, rc) : rc;
}

int ec_store_step_write(struct ec_store *s, sqlite3_stmt *st)
{
	return step_done(s, st);
}

/* The outbox counter as far as handed out, in the commit it was used in. */
static int outbox_save(struct ec_store *s)
{
	sqlite3_stmt *st = ec_store_stmt(s, "UPDATE meta SET v=?1 WHERE k='outbox_seq' AND v<?1");

	if (st)
		sqlite3_bind_int64(st, 1, s->outbox_seq);
	return step_done(s, st);
}

int64_t ec_store_outbox_next(struct ec_store *s)
{
	if (!s->sql.tx_depth)
		return -1;
	if (!s->outbox_loaded) {
		sqlite3_stmt *st = ec_store_stmt(s, "SELECT v FROM meta WHERE k='outbox_seq'");

		if (!st || sqlite3_step(st) != SQLITE_ROW) {
			ec_store_release(s, st);
			return -1;
		}
		s->outbox_seq = sqlite3_column_int64(st, 0);
		s->outbox_loaded = true;
		ec_store_release(s, st);
	}
	s->outbox_dirty = true;
	return ++s->outbox_seq;
}

/* The outermost group ends (ctl_db's before_end): the outbox counter goes
 * into the commit that used it. */
static int before_end(struct ctl_db *db, int rc)
{
	struct ec_store *s = (struct ec_store *)((char *)db - offsetof(struct ec_store, sql));

	if (rc == 0 && s->outbox_dirty && outbox_save(s))
		rc = -1;
	s->outbox_dirty = false;
	s->hook_err[0] = 0;
	s->maybe_applied = false;
	if (s->commit_hook)
		rc = s->commit_hook(s->commit_arg, rc);
	return rc;
}

int ec_store_tx_end(struct ec_store *s, int rc)
{
	return ctl_db_tx_end(&s->sql, rc);
}

int ec_store_one_begin(struct ec_store *s, unsigned flags)
{
	return ctl_db_one_begin(&s->sql, flags & EC_TX_REPAIRABLE);
}

int ec_store_one_end(struct ec_store *s, int opened, int rc)
{
	return ctl_db_one_end(&s->sql, opened, rc);
}

/* ---- writes: the revision bumped inside each ---- */

int ec_store_bump(struct ec_store *s, uint64_t *rev)
{
	if (run1(s, "UPDATE meta SET v=v+1 WHERE k='revision'"))
		return -1;
	return ec_store_revision(s, rev);
}

static int bump(struct ec_store *s, uint64_t *rev)
{
	return ec_store_bump(s, rev);
}

/* The stored rv of NAME: 0 and EC_ST_NOTFOUND if there is none. */
static int current_rv(struct ec_store *s, enum ec_table t, const char *name, uint64_t *rv)
{
	sqlite3_stmt *st = prep(s, "SELECT rv FROM %s WHERE name=?1", t);
	int rc;

	if (!st)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	*rv = rc == SQLITE_ROW ? (uint64_t)sqlite3_column_int64(st, 0) : 0;
	rc = rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? EC_ST_NOTFOUND : -1;
	ec_store_release(s, st);
	return rc;
}

/*
 * Open the transaction of a write of NAME's row and bump the revision into
 * *rev, if the row is as the write needs: absent (expect_rv NULL: else
 * EC_ST_EXISTS) or at *expect_rv (else EC_ST_NOTFOUND or EC_ST_CONFLICT).
 * 0 with the transaction open; otherwise the result, the transaction ended.
 */
static int begin_write(struct ec_store *s, enum ec_table t, const char *name,
		       const uint64_t *expect_rv, uint64_t *rev)
{
	uint64_t rv;
	int rc;

	if (ec_store_tx_begin(s, 0))
		return -1;
	rc = current_rv(s, t, name, &rv);
	if (!expect_rv && rc != EC_ST_NOTFOUND)
		return ec_store_tx_end(s, rc ? rc : EC_ST_EXISTS);
	if (expect_rv && (rc || rv != *expect_rv))
		return ec_store_tx_end(s, rc ? rc : EC_ST_CONFLICT);
	if (bump(s, rev))
		return ec_store_tx_end(s, -1);
	return 0;
}

int ec_store_create(struct ec_store *s, enum ec_table t, struct ec_row *r)
{
	sqlite3_stmt *st;
	uint64_t rev = 0;
	int rc = begin_write(s, t, r->name, NULL, &rev);

	if (rc)
		return rc;
	st = prep(s, "INSERT INTO %s (" ROW_COLS ") VALUES (?1,?2,?3,?4,?5,?6,?7,?8)", t);
	if (st) {
		sqlite3_bind_text(st, 1, r->name, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, r->uid, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, (sqlite3_int64)rev);
		sqlite3_bind_text(st, 4, r->created, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 5, r->labels ? r->labels : "{}", -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 6, r->spec ? r->spec : "{}", -1, SQLITE_STATIC);
		/* a mission's state is rows of mstate, written by state reports only */
		sqlite3_bind_text(st, 7, r->state && t != EC_T_MISSIONS ? r->state : "{}", -1,
				  SQLITE_STATIC);
		sqlite3_bind_text(st, 8, r->annotations ? r->annotations : "{}", -1, SQLITE_STATIC);
	}
	rc = ec_store_tx_end(s, step_done(s, st));
	if (!rc)
		r->rv = rev;
	return rc;
}

int ec_store_replace(struct ec_store *s, enum ec_table t, struct ec_row *r, uint64_t expect_rv)
{
	sqlite3_stmt *st;
	uint64_t rev = 0;
	int rc = begin_write(s, t, r->name, &expect_rv, &rev);

	if (rc)
		return rc;
	st = prep(s, "UPDATE %s SET rv=?2, labels=?3, spec=?4, annotations=?5 WHERE name=?1", t);
	if (st) {
		sqlite3_bind_text(st, 1, r->name, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)rev);
		sqlite3_bind_text(st, 3, r->labels ? r->labels : "{}", -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, r->spec ? r->spec : "{}", -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 5, r->annotations ? r->annotations : "{}", -1, SQLITE_STATIC);
	}
	rc = ec_store_tx_end(s, step_done(s, st));
	if (!rc) {
		struct ec_row now;

		/* the caller answers with the stored object: uid, created, state */
		if (ec_store_get(s, t, r->name, &now) == 0) {
			ec_row_free(r);
			*r = now;
		}
		r->rv = rev;
	}
	return rc;
}

int ec_store_delete(struct ec_store *s, enum ec_table t, const char *name, uint64_t expect_rv,
		    struct ec_row *old)
{
	sqlite3_stmt *st;
	uint64_t rev;
	int rc;

	if (ec_store_tx_begin(s, 0))
		return -1;
	rc = ec_store_get(s, t, name, old);
	if (rc)
		return ec_store_tx_end(s, rc);
	if (expect_rv && old->rv != expect_rv) {
		ec_row_free(old);
		return ec_store_tx_end(s, EC_ST_CONFLICT);
	}
	if (bump(s, &rev)) {
		ec_row_free(old);
		return ec_store_tx_end(s, -1);
	}
	st = prep(s, "DELETE FROM %s WHERE name=?1", t);
	if (st)
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	rc = ec_store_tx_end(s, step_done(s, st));
	if (rc)
		ec_row_free(old);
	return rc;
}

/* ---- the missions module: state keys and applied records ---- */

int ec_store_mission_exists(struct ec_store *s, const char *name)
{
	return current_rv(s, EC_T_MISSIONS, name, &(uint64_t){0});
}

int ec_store_state_key(struct ec_store *s, const char *mission, const char *key, const char *value)
{
	sqlite3_stmt *st =
	    ec_store_stmt(s, value ? "INSERT OR REPLACE INTO mstate (mission, path,"
				     " value) VALUES (?1,?2,?3)"
				   : "DELETE FROM mstate WHERE mission=?1 AND path=?2");

	if (st) {
		sqlite3_bind_text(st, 1, mission, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
		if (value)
			sqlite3_bind_text(st, 3, value, -1, SQLITE_STATIC);
	}
	return step_done(s, st);
}

int ec_store_state_get(struct ec_store *s, const char *mission, const char *key, char **value)
{
	sqlite3_stmt *st =
	    ec_store_stmt(s, "SELECT value FROM mstate WHERE mission=?1 AND path=?2");
	int rc;

	*value = NULL;
	if (!st)
		return -1;
	sqlite3_bind_text(st, 1, mission, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && !(*value = dup_col(st, 0)))
		rc = SQLITE_ERROR;
	ec_store_release(s, st);
	return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? EC_ST_NOTFOUND : -1;
}

int ec_store_state_put(struct ec_store *s, const char *mission, const char *key, const char *value)
{
	int own = ec_store_one_begin(s, 0), rc;

	if (own < 0)
		return -1;
	rc = ec_store_mission_exists(s, mission);
	return ec_store_one_end(s, own, rc ? rc : ec_store_state_key(s, mission, key, value));
}

void ec_applied_free(struct ec_applied *a)
{
	free(a->spec);
	a->spec = NULL;
}

#define APPLIED_COLS "name, uid, digest, phase, spec, pgid, pstart, fails"

/* An ec_from_fn: *out is a struct ec_applied. */
static int applied_from(sqlite3_stmt *st, void *out)
{
	struct ec_applied *a = memset(out, 0, sizeof(struct ec_applied));

	snprintf(a->name, sizeof(a->name), "%s", sqlite3_column_text(st, 0));
	snprintf(a->uid, sizeof(a->uid), "%s", sqlite3_column_text(st, 1));
	snprintf(a->digest, sizeof(a->digest), "%s", sqlite3_column_text(st, 2));
	snprintf(a->phase, sizeof(a->phase), "%s", sqlite3_column_text(st, 3));
	a->spec = dup_col(st, 4);
	a->pgid = sqlite3_column_int(st, 5);
	a->pstart = (unsigned long long)sqlite3_column_int64(st, 6);
	a->fails = (unsigned)sqlite3_column_int(st, 7);
	return a->spec ? 0 : -1;
}

int ec_store_applied_get(struct ec_store *s, const char *name, struct ec_applied *a)
{
	return ec_store_one(s,
			    ec_store_stmt(s, "SELECT " APPLIED_COLS " FROM applied WHERE name=?1"),
			    name, applied_from, a);
}

int ec_store_applied_put(struct ec_store *s, const struct ec_applied *a)
{
	sqlite3_stmt *st = ec_store_stmt(s, "INSERT OR REPLACE INTO applied (" APPLIED_COLS
					    ") VALUES (?1,?2,?3,?4,?5,?6,?7,?8)");

	if (!st)
		return -1;
	sqlite3_bind_text(st, 1, a->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, a->uid, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, a->digest, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, a->phase, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, a->spec ? a->spec : "{}", -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 6, a->pgid);
	sqlite3_bind_int64(st, 7, (sqlite3_int64)a->pstart);
	sqlite3_bind_int(st, 8, (int)a->fails);
	return step_done(s, st);
}

int ec_store_applied_proc(struct ec_store *s, const char *name, int pgid, unsigned long long pstart)
{
	sqlite3_stmt *st = ec_store_stmt(s, "UPDATE applied SET pgid=?2, pstart=?3 WHERE name=?1");

	if (!st)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, pgid);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)pstart);
	return step_done(s, st);
}

int ec_store_applied_delete(struct ec_store *s, const char *name)
{
	sqlite3_stmt *st = ec_store_stmt(s, "DELETE FROM applied WHERE name=?1");

	if (!st)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	return step_done(s, st);
}

struct applied_list {
	ec_applied_cb cb;
	void *arg;
};

static int applied_row(void *p, sqlite3_stmt *st)
{
	struct applied_list *l = p;
	struct ec_applied a;
	int rc = applied_from(st, &a);

	if (!rc)
		rc = l->cb(l->arg, &a);
	ec_applied_free(&a);
	return rc;
}

int ec_store_applied_list(struct ec_store *s, ec_applied_cb cb, void *arg)
{
	struct applied_list l = {cb, arg};

	return ec_store_each(s,
			     ec_store_stmt(s, "SELECT " APPLIED_COLS " FROM applied ORDER BY name"),
			     applied_row, &l);
}
