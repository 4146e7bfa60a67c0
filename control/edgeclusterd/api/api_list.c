// SPDX-License-Identifier: BSD-2-Clause
/*
 * The parts of the API whose size grows with the number of missions: the
 * list GET, written as it is read, and the MissionList POST, a bulk create.
 *
 * A list is read from a snapshot of the store (ec_store_snapshot_missions:
 * the revision and every row as of one commit, while writes go on). The
 * answer is produced a chunk at a time as the transport can send it
 * (api_stream_next), so the daemon holds one row and one chunk, not the
 * whole list; a slow client keeps its snapshot until the transport's stall
 * timeout cuts it.
 *
 * A MissionList is validated whole first (every item, the names unique),
 * then created in one store transaction: one fsync for all, or nothing.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "ctl_list.h"
#include "ctl_watch.h"

/* ---- lists ---- */

/* A streamed answer: a List read from a snapshot (the base's ctl_list), or
 * a watch (the base's ctl_watch, api_watch.c). */
struct api_stream {
	struct ctl_list *list;
	struct ctl_watcher *watcher;
	void (*wake)(void *conn); /* the transport's, once it writes the stream */
	void *conn;
};

/* The list's source: the snapshot's rows in name order, as objects (the
 * base's list takes what the selectors and the page select). */
struct mission_rows {
	struct ec_snapshot *sn;
};

static int rows_next(void *src, json_t **item)
{
	struct mission_rows *m = src;
	struct ec_row r = {0};
	int rc = ec_snapshot_next(m->sn, &r);

	if (rc <= 0)
		return rc;
	*item = ec_object_json("Mission", &r);
	return *item ? 1 : -1;
}

static const char *rows_errmsg(void *src)
{
	struct mission_rows *m = src;

	return m->sn ? ec_snapshot_errmsg(m->sn) : "out of memory";
}

static void rows_close(void *src)
{
	struct mission_rows *m = src;

	ec_snapshot_close(m->sn); /* ends the read transaction */
	free(m);
}

static const struct ctl_list_source mission_rows = {rows_next, rows_errmsg, rows_close, NULL};

int api_mission_list(struct ecd *d, const struct api_req *rq, struct api_resp *rs)
{
	char buf[4096], fbuf[1024], lbuf[32], cbuf[1100], why[400], err[300];
	const char *sel = api_query(rq->query, "labelSelector", buf, sizeof(buf));
	const char *fsel = api_query(rq->query, "fieldSelector", fbuf, sizeof(fbuf));
	const char *limit = api_query(rq->query, "limit", lbuf, sizeof(lbuf));
	const char *cont = api_query(rq->query, "continue", cbuf, sizeof(cbuf));
	struct ctl_list_opts *o = malloc(sizeof(*o));
	struct mission_rows *m = calloc(1, sizeof(*m));
	const char *param = NULL;
	uint64_t rev = 0;
	int code;

	if (!m || !o || ec_store_revision(&d->store, &rev)) {
		free(m);
		free(o);
		return m && o
			   ? api_errorf(rs, 500, NULL, NULL, "the store failed (read the revision)")
			   : api_errorf(rs, 500, NULL, NULL, "out of memory");
	}
	/* a continue token from before what the watch can resume is too old */
	if ((code = ctl_list_opts_parse(o, limit, cont, sel, fsel,
					d->watch ? api_watch_floor(d->watch) : 0, rev, why,
					sizeof(why), &param))) {
		free(m);
		free(o);
		return api_errorf(rs, code, NULL, param, "%s", why);
	}
	if (!(m->sn = ec_store_snapshot_missions(&d->store, &rev, err, sizeof(err)))) {
		ctl_log("store: list missions: %s", err);
		free(m);
		free(o);
		return api_errorf(rs, 500, NULL, NULL,
				  "the store failed (list missions); nothing was written");
	}
	rs->stream = calloc(1, sizeof(*rs->stream));
	if (rs->stream)
		rs->stream->list =
		    ctl_list_new_opts(EC_API_VERSION, "Mission", rev, o, &mission_rows, m);
	else
		rows_close(m);
	free(o);
	if (!rs->stream || !rs->stream->list) {
		free(rs->stream);
		rs->stream = NULL;
		return api_errorf(rs, 500, NULL, NULL, "out of memory");
	}
	rs->code = 200;
	rs->content_type = "application/json";
	return 0;
}

static void watcher_wake(void *arg)
{
	struct api_stream *st = arg;

	/* before the transport took the stream it asks anyway */
	if (st->wake && st->conn)
		st->wake(st->conn);
}

struct api_stream *api_stream_watch(struct ctl_watch *w, uint64_t from, const char *name,
				    const struct ctl_k8s_selector *sel, bool *expired)
{
	struct api_stream *st = calloc(1, sizeof(*st));

	if (st &&
	    !(st->watcher = ctl_watch_open_sel(w, from, name, sel, watcher_wake, st, expired))) {
		free(st);
		return NULL;
	}
	return st;
}

int api_stream_added(struct api_stream *st, json_t *object)
{
	return ctl_watcher_add(st->watcher, "ADDED", object);
}

void api_stream_conn(struct api_stream *st, void (*wake)(void *conn), void *conn)
{
	st->wake = wake;
	st->conn = conn;
}

int api_stream_next(struct api_stream *st, struct xg_buf *b, size_t min)
{
	if (st->watcher)
		return ctl_watcher_next(st->watcher, b, min);
	return ctl_list_next(st->list, b, min);
}

void api_stream_free(struct api_stream *st)
{
	if (!st)
		return;
	ctl_watcher_free(st->watcher);
	ctl_list_free(st->list);
	free(st);
}

/* ---- MissionList: a bulk create ---- */

/* The created object, sharing labels and spec with the request (a copy of
 * what ec_object_json would give for the stored row, without parsing it). */
static json_t *created_json(const struct ec_row *r, const struct ec_mission_in *in)
{
	char rv[24];
	json_t *o;

	snprintf(rv, sizeof(rv), "%" PRIu64, r->rv);
	o = json_pack("{s:s,s:s,s:{s:s,s:s,s:s,s:s,s:O},s:O,s:{}}", "apiVersion", EC_API_VERSION,
		      "kind", "Mission", "metadata", "name", r->name, "uid", r->uid,
		      "resourceVersion", rv, "creationTimestamp", r->created, "labels", in->labels,
		      "spec", in->spec, "state");
	if (o && json_object_size(in->annotations))
		json_object_set(json_object_get(o, "metadata"), "annotations", in->annotations);
	return o;
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
