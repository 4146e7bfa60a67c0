// SPDX-License-Identifier: BSD-2-Clause
/*
 * A read snapshot of the missions for a list that is written as it is read
 * (store.h, ec_store_snapshot_missions). It is one read transaction of a
 * connection of its own: in WAL mode that is a snapshot (the revision and
 * every row as of one commit) that the daemon's writes, on the store's
 * connection, go on past meanwhile; the same connection could not give
 * one, as it sees its own writes. A slow reader keeps its snapshot (and
 * the WAL from being checkpointed past it) until it is closed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "store.h"
#include "store_stmt.h"

/* The snapshot connection's page cache: rows stream through it once, so a
 * large cache would only add to the RSS (SQLite's default is 2 MB). */
#define SNAPSHOT_CACHE "PRAGMA cache_size=-128"

struct ec_snapshot {
	sqlite3 *db; /* NULL once read to the end */
	sqlite3_stmt *st;
	char err[256];
};

static void snapshot_end(struct ec_snapshot *sn)
{
	sqlite3_finalize(sn->st);
	sn->st = NULL;
	if (sn->db)
		sqlite3_close(sn->db); /* ends the read transaction: the snapshot */
	sn->db = NULL;
}

void ec_snapshot_close(struct ec_snapshot *sn)
{
	if (!sn)
		return;
	snapshot_end(sn);
	free(sn);
}

const char *ec_snapshot_errmsg(const struct ec_snapshot *sn)
{
	return sn->err;
}

struct ec_snapshot *ec_store_snapshot_missions(struct ec_store *s, uint64_t *rev, char *err,
					       size_t errlen)
{
	const char *file = sqlite3_db_filename(s->sql.db, "main");
	struct ec_snapshot *sn = calloc(1, sizeof(*sn));
	sqlite3_stmt *st = NULL;
	int rc;

	if (!sn || !file || !*file) {
		snprintf(err, errlen, "%s",
			 sn ? "the store has no file to read a snapshot from" : "out of memory");
		free(sn);
		return NULL;
	}
	if (sqlite3_open_v2(file, &sn->db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_busy_timeout(sn->db, 2000);
	if (sqlite3_exec(sn->db, SNAPSHOT_CACHE ";BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(sn->db, "SELECT v FROM meta WHERE k='revision'", -1, &st, NULL) !=
		SQLITE_OK)
		goto fail;
	/* the first read fixes the snapshot: the revision and the rows below are of one commit */
	rc = sqlite3_step(st);
	*rev = rc == SQLITE_ROW ? (uint64_t)sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		goto fail;
	if (sqlite3_prepare_v2(sn->db, "SELECT " EC_MISSION_COLS " FROM missions ORDER BY name", -1,
			       &sn->st, NULL) != SQLITE_OK)
		goto fail;
	return sn;
fail:
	snprintf(err, errlen, "%s", sn->db ? sqlite3_errmsg(sn->db) : "out of memory");
	ec_snapshot_close(sn);
	return NULL;
}

int ec_snapshot_next(struct ec_snapshot *sn, struct ec_row *r)
{
	sqlite3_stmt *st = sn->st;
	int rc;

	if (!st)
		return 0;
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		snapshot_end(sn);
		return 0;
	}
	if (rc != SQLITE_ROW) {
		snprintf(sn->err, sizeof(sn->err), "%s", sqlite3_errmsg(sn->db));
		return -1;
	}
	snprintf(r->name, sizeof(r->name), "%s", ec_store_col_text(st, 0));
	snprintf(r->uid, sizeof(r->uid), "%s", ec_store_col_text(st, 1));
	r->rv = (uint64_t)sqlite3_column_int64(st, 2);
	snprintf(r->created, sizeof(r->created), "%s", ec_store_col_text(st, 3));
	/* borrowed from the statement until the next call */
	r->labels = (char *)ec_store_col_text(st, 4);
	r->spec = (char *)ec_store_col_text(st, 5);
	r->state = (char *)ec_store_col_text(st, 6);
	r->annotations = (char *)ec_store_col_text(st, 7);
	return 1;
}
