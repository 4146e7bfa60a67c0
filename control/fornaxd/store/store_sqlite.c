// SPDX-License-Identifier: BSD-2-Clause
/*
 * The SQLite backend of fornaxd's store (store.h): WAL, synchronous=FULL
 * (a client told an application is written must find it after a crash),
 * the base's kept statements (ctl_db). A write and the revision it moves
 * to commit together.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_db.h"
#include "store.h"

struct sqlite_store {
	struct fx_store pub;
	struct ctl_db sql;
	char err[256];
};

static const char schema[] =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=FULL;"
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
    "INSERT OR IGNORE INTO meta VALUES ('revision', 0);"
    "CREATE TABLE IF NOT EXISTS applications (ns TEXT NOT NULL, name TEXT NOT NULL,"
    " rv INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (ns, name));"
    "CREATE TABLE IF NOT EXISTS nodes (name TEXT PRIMARY KEY, digest BLOB NOT NULL,"
    " subnet INTEGER NOT NULL);";

static struct sqlite_store *S(struct fx_store *s)
{
	return (struct sqlite_store *)((char *)s - offsetof(struct sqlite_store, pub));
}

static int fail(struct sqlite_store *s, const char *what)
{
	snprintf(s->err, sizeof(s->err), "%s: %s", what, sqlite3_errmsg(s->sql.db));
	return -1;
}

/* one statement, bound by the caller, stepped to done */
static int step_done(struct sqlite_store *s, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);

	ctl_db_release(&s->sql, st);
	return rc == SQLITE_DONE ? 0 : fail(s, what);
}

static int bump(struct sqlite_store *s, uint64_t rv)
{
	sqlite3_stmt *st =
	    ctl_db_stmt(&s->sql, "UPDATE meta SET value = max(value, ?) WHERE key = 'revision'");

	if (!st)
		return fail(s, "revision");
	sqlite3_bind_int64(st, 1, (sqlite3_int64)rv);
	return step_done(s, st, "revision");
}

static int app_put(struct fx_store *p, const char *ns, const char *name, uint64_t rv,
		   const char *json)
{
	struct sqlite_store *s = S(p);
	sqlite3_stmt *st;
	int rc = -1;

	if (ctl_db_tx_begin(&s->sql, false))
		return fail(s, "begin");
	st = ctl_db_stmt(&s->sql, "INSERT OR REPLACE INTO applications VALUES (?, ?, ?, ?)");
	if (st) {
		sqlite3_bind_text(st, 1, ns, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, (sqlite3_int64)rv);
		sqlite3_bind_text(st, 4, json, -1, SQLITE_STATIC);
		rc = step_done(s, st, "write the application");
	} else {
		fail(s, "prepare");
	}
	if (!rc)
		rc = bump(s, rv);
	return ctl_db_tx_end(&s->sql, rc) ? -1 : 0;
}

static int app_del(struct fx_store *p, const char *ns, const char *name, uint64_t rv)
{
	struct sqlite_store *s = S(p);
	sqlite3_stmt *st;
	int rc = -1, gone = 0;

	if (ctl_db_tx_begin(&s->sql, false))
		return fail(s, "begin");
	st = ctl_db_stmt(&s->sql, "DELETE FROM applications WHERE ns = ? AND name = ?");
	if (st) {
		sqlite3_bind_text(st, 1, ns, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
		rc = step_done(s, st, "delete the application");
		gone = !rc && !sqlite3_changes(s->sql.db);
	} else {
		fail(s, "prepare");
	}
	if (!rc && !gone)
		rc = bump(s, rv);
	if (ctl_db_tx_end(&s->sql, rc))
		return -1;
	return gone;
}

static int app_each(struct fx_store *p, int (*fn)(void *arg, const char *json, uint64_t rv),
		    void *arg)
{
	struct sqlite_store *s = S(p);
	sqlite3_stmt *st = ctl_db_stmt(&s->sql, "SELECT body, rv FROM applications ORDER BY rv");
	int rc, r = 0;

	if (!st)
		return fail(s, "prepare");
	while (!r && (rc = sqlite3_step(st)) == SQLITE_ROW)
		r = fn(arg, (const char *)sqlite3_column_text(st, 0),
		       (uint64_t)sqlite3_column_int64(st, 1));
	if (!r && rc != SQLITE_DONE)
		r = fail(s, "read the applications");
	ctl_db_release(&s->sql, st);
	return r;
}

static int revision(struct fx_store *p, uint64_t *rv)
{
	struct sqlite_store *s = S(p);
	sqlite3_stmt *st = ctl_db_stmt(&s->sql, "SELECT value FROM meta WHERE key = 'revision'");
	int rc;

	if (!st)
		return fail(s, "prepare");
	rc = sqlite3_step(st);
	*rv = rc == SQLITE_ROW ? (uint64_t)sqlite3_column_int64(st, 0) : 0;
	ctl_db_release(&s->sql, st);
	return rc == SQLITE_ROW ? 0 : fail(s, "read the revision");
}

static int node_get(struct fx_store *p, const char *name, unsigned char digest[CTL_TOKEN_HASH_LEN],
		    int *subnet)
{
	struct sqlite_store *s = S(p);
	sqlite3_stmt *st = ctl_db_stmt(&s->sql, "SELECT digest, subnet FROM nodes WHERE name = ?");
	int rc, found = 0;

	if (!st)
		return fail(s, "prepare");
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_bytes(st, 0) == CTL_TOKEN_HASH_LEN) {
		memcpy(digest, sqlite3_column_blob(st, 0), CTL_TOKEN_HASH_LEN);
		*subnet = sqlite3_column_int(st, 1);
		found = 1;
	}
	ctl_db_release(&s->sql, st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? found : fail(s, "read a node");
}

static int node_put(struct fx_store *p, const char *name,
		    const unsigned char digest[CTL_TOKEN_HASH_LEN], int subnet)
{
	struct sqlite_store *s = S(p);
	sqlite3_stmt *st = ctl_db_stmt(&s->sql, "INSERT OR REPLACE INTO nodes VALUES (?, ?, ?)");
	int opened = ctl_db_one_begin(&s->sql, false), rc;

	if (opened < 0)
		return fail(s, "begin");
	if (!st)
		return ctl_db_one_end(&s->sql, opened, fail(s, "prepare"));
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_blob(st, 2, digest, CTL_TOKEN_HASH_LEN, SQLITE_STATIC);
	sqlite3_bind_int(st, 3, subnet);
	rc = step_done(s, st, "write a node");
	return ctl_db_one_end(&s->sql, opened, rc) ? -1 : 0;
}

static int node_del(struct fx_store *p, const char *name)
{
	struct sqlite_store *s = S(p);
	sqlite3_stmt *st = ctl_db_stmt(&s->sql, "DELETE FROM nodes WHERE name = ?");
	int opened = ctl_db_one_begin(&s->sql, false), rc;

	if (opened < 0)
		return fail(s, "begin");
	if (!st)
		return ctl_db_one_end(&s->sql, opened, fail(s, "prepare"));
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	rc = step_done(s, st, "delete a node");
	if (ctl_db_one_end(&s->sql, opened, rc))
		return -1;
	return sqlite3_changes(s->sql.db) ? 0 : 1;
}

static int node_each(struct fx_store *p, int (*fn)(void *arg, const char *name, int subnet),
		     void *arg)
{
	struct sqlite_store *s = S(p);
	sqlite3_stmt *st = ctl_db_stmt(&s->sql, "SELECT name, subnet FROM nodes ORDER BY name");
	int rc, r = 0;

	if (!st)
		return fail(s, "prepare");
	while (!r && (rc = sqlite3_step(st)) == SQLITE_ROW)
		r = fn(arg, (const char *)sqlite3_column_text(st, 0), sqlite3_column_int(st, 1));
	if (!r && rc != SQLITE_DONE)
		r = fail(s, "read the nodes");
	ctl_db_release(&s->sql, st);
	return r;
}

static const char *errmsg(struct fx_store *p)
{
	return S(p)->err;
}

static void store_close(struct fx_store *p)
{
	struct sqlite_store *s;

	if (!p)
		return;
	s = S(p);
	ctl_db_forget(&s->sql);
	sqlite3_close(s->sql.db);
	free(s);
}

/* a local fsync: done at once */
static int app_put_now(struct fx_store *p, const char *ns, const char *name, uint64_t rv,
		       const char *json, fx_store_done done, void *arg)
{
	int rc = app_put(p, ns, name, rv, json);

	done(arg, rc, S(p)->err);
	return 0;
}

static int app_del_now(struct fx_store *p, const char *ns, const char *name, uint64_t rv,
		       fx_store_done done, void *arg)
{
	int rc = app_del(p, ns, name, rv);

	done(arg, rc, S(p)->err);
	return 0;
}

static const struct fx_store_ops sqlite_ops = {
    .app_put = app_put,
    .app_del = app_del,
    .app_put_async = app_put_now,
    .app_del_async = app_del_now,
    .app_each = app_each,
    .revision = revision,
    .node_get = node_get,
    .node_put = node_put,
    .node_del = node_del,
    .node_each = node_each,
    .errmsg = errmsg,
    .close = store_close,
};

struct fx_store *fx_store_sqlite_open(const char *path, char *err, size_t errlen)
{
	struct sqlite_store *s = calloc(1, sizeof(*s));
	char *msg = NULL;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->pub.ops = &sqlite_ops;
	if (sqlite3_open_v2(path, &s->sql.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
		SQLITE_OK ||
	    sqlite3_busy_timeout(s->sql.db, 5000) != SQLITE_OK ||
	    sqlite3_exec(s->sql.db, schema, NULL, NULL, &msg) != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", path, msg ? msg : sqlite3_errmsg(s->sql.db));
		sqlite3_free(msg);
		sqlite3_close(s->sql.db);
		free(s);
		return NULL;
	}
	return &s->pub;
}
