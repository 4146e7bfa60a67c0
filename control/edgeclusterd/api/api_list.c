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

/* ---- lists ---- */

struct api_stream {
	struct ec_snapshot *sn;
	const char *kind;
	char *head; /* the List envelope up to and with "items":[ */
	struct ec_selector sel;
	size_t items; /* written so far */
	bool started, done;
};

void api_stream_free(struct api_stream *s)
{
	if (!s)
		return;
	ec_snapshot_close(s->sn);
	free(s->head);
	free(s);
}

int api_mission_list(struct ecd *d, const struct api_req *rq, struct api_resp *rs)
{
	char buf[4096], why[256], err[300];
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
	if (!(s->sn = ec_store_snapshot_missions(&d->store, &rev, err, sizeof(err)))) {
		ctl_log("store: list missions: %s", err);
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

static int dump_cb(const char *buf, size_t size, void *data)
{
	return xg_buf_put(data, buf, size, 0);
}

/* The snapshot's row r, if the selector takes it. */
static int put_row(struct api_stream *s, const struct ec_row *r, struct xg_buf *b)
{
	json_t *o;
	int rc;

	if (s->sel.n) {
		json_t *labels = json_loads(r->labels, 0, NULL);
		bool take = ec_selector_match(&s->sel, labels);

		json_decref(labels);
		if (!take)
			return 0;
	}
	o = ec_object_json(s->kind, r);
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
		struct ec_row r = {0};

		rc = ec_snapshot_next(s->sn, &r);
		if (rc == 0) {
			ec_snapshot_close(s->sn); /* ends the read transaction */
			s->sn = NULL;
			s->done = true;
			return xg_buf_put(b, "]}", 2, 0) ? -1 : 0;
		}
		if (rc < 0 || put_row(s, &r, b)) {
			ctl_log("list %ss: %s after %zu items; the answer is cut short", s->kind,
				rc > 0 ? "out of memory" : ec_snapshot_errmsg(s->sn), s->items);
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
