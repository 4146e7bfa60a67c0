// SPDX-License-Identifier: BSD-2-Clause
/*
 * The parts of the API whose size grows with the number of missions: the
 * list GET, written as it is read, and the MissionList POST, a bulk create.
 *
 * A list is read in one read transaction of a connection of its own, opened
 * for that list: in WAL mode that is a snapshot (the revision and every row
 * as of one commit) that the daemon's writes, on the store's connection, go
 * on past meanwhile; the same connection could not give one, as it sees its
 * own writes. The answer is produced a chunk at a time as the transport can
 * send it (api_stream_next), so the daemon holds one row and one chunk, not
 * the whole list; a slow client keeps its snapshot (and the WAL from being
 * checkpointed past it) until the transport's stall timeout cuts it.
 *
 * A MissionList is validated whole first (every item, the names unique),
 * then created in one store transaction: one fsync for all, or nothing.
 */
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"

/* The snapshot connection's page cache: rows stream through it once, so a
 * large cache would only add to the RSS (SQLite's default is 2 MB). */
#define SNAPSHOT_CACHE "PRAGMA cache_size=-128"

/* ---- lists ---- */

struct api_stream {
	sqlite3 *db; /* the snapshot's own connection; NULL once read to the end */
	sqlite3_stmt *st;
	const char *kind;
	char *head; /* the List envelope up to and with "items":[ */
	struct ec_selector sel;
	size_t items; /* written so far */
	bool started, done;
};

static void snapshot_close(struct api_stream *s)
{
	sqlite3_finalize(s->st);
	s->st = NULL;
	if (s->db)
		sqlite3_close(s->db); /* ends the read transaction: the snapshot */
	s->db = NULL;
}

void api_stream_free(struct api_stream *s)
{
	if (!s)
		return;
	snapshot_close(s);
	free(s->head);
	free(s);
}

/* Open the read transaction and read the revision in it; prepare the rows. */
static int snapshot_open(struct ecd *d, struct api_stream *s, uint64_t *rev)
{
	const char *file = sqlite3_db_filename(d->store.db, "main");
	sqlite3_stmt *st = NULL;
	int rc;

	if (!file || !*file) {
		ctl_log("list missions: the store has no file to read a snapshot from");
		return -1;
	}
	if (sqlite3_open_v2(file, &s->db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_busy_timeout(s->db, 2000);
	if (sqlite3_exec(s->db, SNAPSHOT_CACHE ";BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, "SELECT v FROM meta WHERE k='revision'", -1, &st, NULL) !=
		SQLITE_OK)
		goto fail;
	/* the first read fixes the snapshot: the revision and the rows below are of one commit */
	rc = sqlite3_step(st);
	*rev = rc == SQLITE_ROW ? (uint64_t)sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		goto fail;
	if (sqlite3_prepare_v2(s->db, "SELECT " EC_MISSION_COLS " FROM missions ORDER BY name", -1,
			       &s->st, NULL) != SQLITE_OK)
		goto fail;
	return 0;
fail:
	ctl_log("store: list missions: %s", s->db ? sqlite3_errmsg(s->db) : "out of memory");
	snapshot_close(s);
	return -1;
}

int api_mission_list(struct ecd *d, const struct api_req *rq, struct api_resp *rs)
{
	char buf[4096], why[256];
	const char *sel = api_query(rq->query, "labelSelector", buf, sizeof(buf));
	struct api_stream *s = calloc(1, sizeof(*s));
	json_t *env;
	uint64_t rev;
	size_t n;

	if (!s)
		return api_errorf(rs, 500, NULL, NULL, "out of memory");
	s->kind = "Mission";
	if (sel && ec_selector_parse(sel, &s->sel, why, sizeof(why))) {
		api_stream_free(s);
		return api_errorf(rs, 400, NULL, "labelSelector", "labelSelector: %s", why);
	}
	if (snapshot_open(d, s, &rev)) {
		api_stream_free(s);
		return api_errorf(rs, 500, NULL, NULL,
				  "the store failed (list missions); nothing was written");
	}
	/* the envelope as ec_list_json writes it, cut before the items' "]}" */
	env = ec_list_json(s->kind, rev, json_array());
	s->head = env ? json_dumps(env, JSON_COMPACT) : NULL;
	json_decref(env);
	n = s->head ? strlen(s->head) : 0;
	if (n < 2 || strcmp(s->head + n - 2, "]}")) {
		api_stream_free(s);
		return api_errorf(rs, 500, NULL, NULL, "out of memory");
	}
	s->head[n - 2] = 0;
	rs->code = 200;
	rs->content_type = "application/json";
	rs->stream = s;
	return 0;
}

static const char *text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return t ? (const char *)t : "";
}

static int dump_cb(const char *buf, size_t size, void *data)
{
	return xg_buf_put(data, buf, size, 0);
}

/* The row the statement is on, if the selector takes it. */
static int put_row(struct api_stream *s, struct xg_buf *b)
{
	sqlite3_stmt *st = s->st;
	struct ec_row r = {0};
	json_t *o;
	int rc;

	if (s->sel.n) {
		json_t *labels = json_loads(text(st, 4), 0, NULL);
		bool take = ec_selector_match(&s->sel, labels);

		json_decref(labels);
		if (!take)
			return 0;
	}
	snprintf(r.name, sizeof(r.name), "%s", text(st, 0));
	snprintf(r.uid, sizeof(r.uid), "%s", text(st, 1));
	r.rv = (uint64_t)sqlite3_column_int64(st, 2);
	snprintf(r.created, sizeof(r.created), "%s", text(st, 3));
	/* borrowed from the statement: ec_object_json only reads them */
	r.labels = (char *)text(st, 4);
	r.spec = (char *)text(st, 5);
	r.state = (char *)text(st, 6);
	o = ec_object_json(s->kind, &r);
	if (!o)
		return -1;
	rc = (s->items && xg_buf_put(b, ",", 1, 0)) ||
	     json_dump_callback(o, dump_cb, b, JSON_COMPACT);
	json_decref(o);
	s->items++;
	return rc ? -1 : 0;
}

int api_stream_next(struct api_stream *s, struct xg_buf *b, size_t min)
{
	size_t start = b->len;
	int rc;

	if (s->done)
		return 0;
	if (!s->started) {
		if (xg_buf_put(b, s->head, strlen(s->head), 0))
			return -1;
		s->started = true;
	}
	while (b->len - start < min) {
		rc = sqlite3_step(s->st);
		if (rc == SQLITE_DONE) {
			snapshot_close(s);
			s->done = true;
			return xg_buf_put(b, "]}", 2, 0) ? -1 : 0;
		}
		if (rc != SQLITE_ROW || put_row(s, b)) {
			ctl_log("list %ss: %s after %zu items; the answer is cut short", s->kind,
				rc == SQLITE_ROW ? "out of memory" : sqlite3_errmsg(s->db),
				s->items);
			return -1;
		}
	}
	return 1;
}

/* ---- MissionList: a bulk create ---- */

/* The created object, sharing labels and spec with the request (a copy of
 * what ec_object_json would give for the stored row, without parsing it). */
static json_t *created_json(const struct ec_row *r, const struct ec_mission_in *in)
{
	char rv[24];

	snprintf(rv, sizeof(rv), "%" PRIu64, r->rv);
	return json_pack("{s:s,s:s,s:{s:s,s:s,s:s,s:s,s:O},s:O,s:{}}", "apiVersion", EC_API_VERSION,
			 "kind", "Mission", "metadata", "name", r->name, "uid", r->uid,
			 "resourceVersion", rv, "creationTimestamp", r->created, "labels",
			 in->labels, "spec", in->spec, "state");
}

static void rows_free(struct ec_row *rows, size_t n)
{
	for (size_t i = 0; rows && i < n; i++)
		ec_row_free(&rows[i]);
	free(rows);
}

int api_mission_create_list(struct ecd *d, const struct api_req *rq, json_t *body,
			    struct api_resp *rs)
{
	struct ec_mission_in *ins;
	struct ec_row *rows = NULL;
	struct ec_verr e;
	json_t *items = NULL;
	time_t now = time(NULL);
	uint64_t rev = 0;
	size_t n, i = 0;
	int rc = 0;

	if (ec_mission_list_validate(body, API_LIST_ITEMS_MAX, d->conf.max_body, &ins, &n, &e)) {
		api_error(rs, e.code, NULL, e.msg, e.field);
		return 0;
	}
	rows = calloc(n ? n : 1, sizeof(*rows));
	if (!rows || (n && ec_store_tx_begin(&d->store, 0))) {
		api_store_failed(d, rs, "create a MissionList");
		goto out;
	}
	/* every create is a savepoint in the group: the first that fails ends it */
	for (rc = 0, i = 0; !rc && i < n; i++) {
		rc = api_row_from_in(&rows[i], &ins[i]);
		ec_uuid4(rows[i].uid);
		ec_timestamp(now, rows[i].created);
		if (!rc)
			rc = ec_store_create(&d->store, EC_T_MISSIONS, &rows[i]);
	}
	if (n) /* the one commit: one fsync for all of them; or the rollback of all */
		rc = ec_store_tx_end(&d->store, rc);
	if (rc == EC_ST_EXISTS) {
		char f[64];

		snprintf(f, sizeof(f), "items[%zu].metadata.name", i - 1);
		api_errorf(rs, 409, "AlreadyExists", f,
			   "%s: missions \"%s\" already exists; nothing was created", f,
			   rows[i - 1].name);
		goto out;
	}
	if (rc) {
		api_store_failed(d, rs, "create a MissionList");
		goto out;
	}
	rev = n ? rows[n - 1].rv : 0;
	if (!n && ec_store_revision(&d->store, &rev)) {
		api_store_failed(d, rs, "read the revision");
		goto out;
	}
	items = json_array();
	for (i = 0; i < n; i++) {
		ctl_log("mission %s created (rv %" PRIu64 ") by %s (MissionList item %zu of %zu)",
			rows[i].name, rows[i].rv, rq->peer, i + 1, n);
		/* the stored texts are not needed any more: the answer shares the request's */
		ec_row_free(&rows[i]);
		json_array_append_new(items, created_json(&rows[i], &ins[i]));
	}
	api_respond(rs, 201, ec_list_json("Mission", rev, items));
	if (d->on_mission) /* apply each here if it matches, as one create does */
		for (i = 0; i < n; i++)
			d->on_mission(d, rows[i].name, false);
out:
	rows_free(rows, n);
	ec_mission_list_free(ins, n);
	return 0;
}
