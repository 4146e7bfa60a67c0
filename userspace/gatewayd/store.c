// SPDX-License-Identifier: BSD-2-Clause
/* SQLite persistence for gatewayd; see store.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "store.h"

static const char schema[] =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=NORMAL;"
    "CREATE TABLE IF NOT EXISTS routes ("
    " origin TEXT NOT NULL, vni INTEGER NOT NULL, ip INTEGER NOT NULL, plen INTEGER NOT NULL,"
    " version INTEGER NOT NULL, state INTEGER NOT NULL, since_ms INTEGER NOT NULL,"
    " expires_ms INTEGER NOT NULL, PRIMARY KEY (origin, vni, ip, plen));"
    "CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY, v INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS own (vni INTEGER NOT NULL, ip INTEGER NOT NULL,"
    " plen INTEGER NOT NULL, version INTEGER NOT NULL, withdrawn INTEGER NOT NULL,"
    " from_config INTEGER NOT NULL, PRIMARY KEY (vni, ip, plen));"
    "CREATE TABLE IF NOT EXISTS divider_marks (divider TEXT NOT NULL, vni INTEGER NOT NULL,"
    " ip INTEGER NOT NULL, plen INTEGER NOT NULL, PRIMARY KEY (divider, vni, ip, plen));";

int gw_store_open(struct gw_store *s, const char *path, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	if (db_open(&s->db, path, err, errlen))
		return -1;
	if (db_exec(s->db, path, schema, err, errlen)) {
		gw_store_close(s);
		return -1;
	}
	if (sqlite3_prepare_v2(s->db,
			       "INSERT OR REPLACE INTO routes VALUES (?1,?2,?3,?4,?5,?6,?7,?8)", -1,
			       &s->put, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(
		s->db, "DELETE FROM routes WHERE origin=?1 AND vni=?2 AND ip=?3 AND plen=?4", -1,
		&s->del, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, "DELETE FROM routes WHERE origin=?1", -1, &s->del_origin,
			       NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, "INSERT OR REPLACE INTO own VALUES (?1,?2,?3,?4,?5,?6)", -1,
			       &s->put_own, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, "SELECT v FROM kv WHERE k=?1", -1, &s->kv_get, NULL) !=
		SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, "INSERT OR REPLACE INTO kv VALUES (?1,?2)", -1, &s->kv_put,
			       NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, "INSERT OR IGNORE INTO divider_marks VALUES (?1,?2,?3,?4)",
			       -1, &s->mark_put, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db,
			       "DELETE FROM divider_marks WHERE divider=?1 AND vni=?2 AND ip=?3 "
			       "AND plen=?4",
			       -1, &s->mark_del, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db,
			       "SELECT 1 FROM divider_marks WHERE divider=?1 AND vni=?2 AND ip=?3 "
			       "AND plen=?4",
			       -1, &s->mark_has, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", path, sqlite3_errmsg(s->db));
		gw_store_close(s);
		return -1;
	}
	return 0;
}

void gw_store_close(struct gw_store *s)
{
	sqlite3_finalize(s->put);
	sqlite3_finalize(s->del);
	sqlite3_finalize(s->del_origin);
	sqlite3_finalize(s->put_own);
	sqlite3_finalize(s->kv_get);
	sqlite3_finalize(s->kv_put);
	sqlite3_finalize(s->mark_put);
	sqlite3_finalize(s->mark_del);
	sqlite3_finalize(s->mark_has);
	if (s->db)
		sqlite3_close(s->db);
	memset(s, 0, sizeof(*s));
}

int gw_store_begin(struct gw_store *s)
{
	return sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

int gw_store_begin_durable(struct gw_store *s)
{
	if (sqlite3_exec(s->db, "PRAGMA synchronous=FULL", NULL, NULL, NULL) != SQLITE_OK)
		return -1;
	s->durable = 1;
	if (!gw_store_begin(s))
		return 0;
	sqlite3_exec(s->db, "PRAGMA synchronous=NORMAL", NULL, NULL, NULL);
	s->durable = 0;
	return -1;
}

int gw_store_commit(struct gw_store *s)
{
	int rc = sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;

	/* a failed COMMIT may leave the transaction open: end it */
	if (rc && !sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	if (s->durable) {
		sqlite3_exec(s->db, "PRAGMA synchronous=NORMAL", NULL, NULL, NULL);
		s->durable = 0;
	}
	return rc;
}

void gw_store_rollback(struct gw_store *s)
{
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	if (s->durable) {
		sqlite3_exec(s->db, "PRAGMA synchronous=NORMAL", NULL, NULL, NULL);
		s->durable = 0;
	}
}

static int step(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

int gw_store_put_route(struct gw_store *s, const struct route *r)
{
	sqlite3_bind_text(s->put, 1, r->origin, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s->put, 2, r->key.vni);
	sqlite3_bind_int64(s->put, 3, r->key.ip_be);
	sqlite3_bind_int(s->put, 4, r->key.plen);
	sqlite3_bind_int64(s->put, 5, (sqlite3_int64)r->version);
	sqlite3_bind_int(s->put, 6, r->state);
	sqlite3_bind_int64(s->put, 7, (sqlite3_int64)r->since_ms);
	sqlite3_bind_int64(s->put, 8, (sqlite3_int64)r->expires_ms);
	return step(s->put);
}

int gw_store_del_route(struct gw_store *s, const char *origin, const struct rt_key *k)
{
	sqlite3_bind_text(s->del, 1, origin, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s->del, 2, k->vni);
	sqlite3_bind_int64(s->del, 3, k->ip_be);
	sqlite3_bind_int(s->del, 4, k->plen);
	return step(s->del);
}

int gw_store_load(struct gw_store *s, struct rt_table *t)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(s->db, "SELECT * FROM routes", -1, &st, NULL) != SQLITE_OK)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct route *r;

		if (t->n == t->cap) {
			int cap = t->cap ? t->cap * 2 : 64;
			struct route *nr = realloc(t->r, sizeof(*nr) * cap);

			if (!nr)
				break;
			t->r = nr;
			t->cap = cap;
		}
		r = &t->r[t->n++];
		memset(r, 0, sizeof(*r));
		snprintf(r->origin, sizeof(r->origin), "%s", sqlite3_column_text(st, 0));
		r->key.vni = (uint32_t)sqlite3_column_int64(st, 1);
		r->key.ip_be = (uint32_t)sqlite3_column_int64(st, 2);
		r->key.plen = (uint8_t)sqlite3_column_int(st, 3);
		r->version = (uint64_t)sqlite3_column_int64(st, 4);
		r->state = (enum rt_state)sqlite3_column_int(st, 5);
		r->since_ms = (uint64_t)sqlite3_column_int64(st, 6);
		r->expires_ms = (uint64_t)sqlite3_column_int64(st, 7);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

int gw_store_get_u64(struct gw_store *s, const char *key, uint64_t *v)
{
	int rc;

	sqlite3_bind_text(s->kv_get, 1, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(s->kv_get);
	if (rc == SQLITE_ROW)
		*v = (uint64_t)sqlite3_column_int64(s->kv_get, 0);
	sqlite3_reset(s->kv_get);
	sqlite3_clear_bindings(s->kv_get);
	return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? 1 : -1;
}

int gw_store_put_u64(struct gw_store *s, const char *key, uint64_t v)
{
	sqlite3_bind_text(s->kv_put, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s->kv_put, 2, (sqlite3_int64)v);
	return step(s->kv_put);
}

int gw_store_replace_origin(struct gw_store *s, const struct rt_table *t, const char *origin)
{
	int rc;

	sqlite3_bind_text(s->del_origin, 1, origin, -1, SQLITE_STATIC);
	rc = step(s->del_origin);
	for (int i = 0; !rc && i < t->n; i++)
		if (!strcmp(t->r[i].origin, origin))
			rc = gw_store_put_route(s, &t->r[i]);
	return rc;
}

int gw_store_put_own(struct gw_store *s, const struct rt_key *k, uint64_t version, int withdrawn,
		     int from_config)
{
	sqlite3_stmt *st = s->put_own;

	sqlite3_bind_int64(st, 1, k->vni);
	sqlite3_bind_int64(st, 2, k->ip_be);
	sqlite3_bind_int(st, 3, k->plen);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)version);
	sqlite3_bind_int(st, 5, withdrawn);
	sqlite3_bind_int(st, 6, from_config);
	return step(st);
}

int gw_store_load_own(struct gw_store *s, gw_own_cb cb, void *arg)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(s->db, "SELECT * FROM own", -1, &st, NULL) != SQLITE_OK)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct rt_key k = {
		    .vni = (uint32_t)sqlite3_column_int64(st, 0),
		    .ip_be = (uint32_t)sqlite3_column_int64(st, 1),
		    .plen = (uint8_t)sqlite3_column_int(st, 2),
		};

		cb(arg, &k, (uint64_t)sqlite3_column_int64(st, 3), sqlite3_column_int(st, 4),
		   sqlite3_column_int(st, 5));
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

static void bind_mark(sqlite3_stmt *st, const char *divider, const struct rt_key *k)
{
	sqlite3_bind_text(st, 1, divider, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, k->vni);
	sqlite3_bind_int64(st, 3, k->ip_be);
	sqlite3_bind_int(st, 4, k->plen);
}

int gw_store_put_mark(struct gw_store *s, const char *divider, const struct rt_key *k)
{
	bind_mark(s->mark_put, divider, k);
	return step(s->mark_put);
}

int gw_store_del_mark(struct gw_store *s, const char *divider, const struct rt_key *k)
{
	bind_mark(s->mark_del, divider, k);
	return step(s->mark_del);
}

int gw_store_has_mark(struct gw_store *s, const char *divider, const struct rt_key *k)
{
	int rc;

	bind_mark(s->mark_has, divider, k);
	rc = sqlite3_step(s->mark_has);
	sqlite3_reset(s->mark_has);
	sqlite3_clear_bindings(s->mark_has);
	return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

int gw_store_each_mark(struct gw_store *s, const char *divider, gw_mark_cb cb, void *arg)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(s->db, "SELECT vni, ip, plen FROM divider_marks WHERE divider=?1",
			       -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(st, 1, divider, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct rt_key k = {
		    .vni = (uint32_t)sqlite3_column_int64(st, 0),
		    .ip_be = (uint32_t)sqlite3_column_int64(st, 1),
		    .plen = (uint8_t)sqlite3_column_int(st, 2),
		};

		cb(arg, &k);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}
