// SPDX-License-Identifier: BSD-2-Clause
/*
 * The tree's SQLite tables (created with the rest of the schema in store.c):
 * attach (the state machine's one row), hub_creds (credentials this hub
 * issued, as digests), inherited (what the parent sent: its uid and
 * resourceVersion per mission, and our rv when we wrote it), outbox (the
 * missions whose state we owe the parent), plus the mission state maps and
 * the descendants' EdgeCluster rows.
 *
 * (missions received from the parent and the digest: tree_sync.c.)
 *
 * Each function is one transaction (or a savepoint in a caller's group): a
 * sync batch, a state report or a heartbeat's rows commit as a whole (one
 * fsync, or none for what is repairable: the outbox, a heartbeat's rows),
 * never one per object.
 * State writes do not bump the revision (state is a report, not a change of
 * the object: a client that read a mission can still replace it with that
 * resourceVersion while states stream in). Cluster rows bump it only when
 * their labels, spec or uid change; health and heartbeats are state.
 */
#include <inttypes.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_stmt.h"
#include "tree_store.h"

/* ---- the attach record ---- */

int ec_store_attach_get(struct ec_store *s, struct ec_attach *a)
{
	sqlite3_stmt *st =
	    ec_store_stmt(s, "SELECT phase, parent, token, credential, cred_expires, since,"
			     " last_error, parent_name FROM attach WHERE id=1");
	int rc;

	if (!st)
		return -1;
	memset(a, 0, sizeof(*a));
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		for (int i = 0; i <= PH_UNINSTALLING; i++)
			if (!strcmp(ec_store_col_text(st, 0), tree_phase_name((enum ec_phase)i)))
				a->phase = (enum ec_phase)i;
		snprintf(a->parent, sizeof(a->parent), "%s", ec_store_col_text(st, 1));
		snprintf(a->token, sizeof(a->token), "%s", ec_store_col_text(st, 2));
		snprintf(a->credential, sizeof(a->credential), "%s", ec_store_col_text(st, 3));
		a->cred_expires = sqlite3_column_int64(st, 4);
		snprintf(a->since, sizeof(a->since), "%s", ec_store_col_text(st, 5));
		snprintf(a->last_error, sizeof(a->last_error), "%s", ec_store_col_text(st, 6));
		snprintf(a->parent_name, sizeof(a->parent_name), "%s", ec_store_col_text(st, 7));
	}
	ec_store_release(s, st);
	return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? EC_ST_NOTFOUND : -1;
}

int ec_store_attach_put(struct ec_store *s, const struct ec_attach *a)
{
	sqlite3_stmt *st =
	    ec_store_stmt(s, "INSERT OR REPLACE INTO attach (id, phase, parent, token,"
			     " credential, cred_expires, since, last_error, parent_name)"
			     " VALUES (1,?1,?2,?3,?4,?5,?6,?7,?8)");

	if (!st)
		return -1;
	sqlite3_bind_text(st, 1, tree_phase_name(a->phase), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, a->parent, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, a->token, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, a->credential, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, a->cred_expires);
	sqlite3_bind_text(st, 6, a->since, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, a->last_error, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 8, a->parent_name, -1, SQLITE_STATIC);
	return ec_store_step_release(s, st);
}

/* ---- the outbox ---- */

static int outbox_mark_tx(struct ec_store *s, const char *mission)
{
	int64_t seq = ec_store_outbox_next(s);
	sqlite3_stmt *st =
	    seq < 0 ? NULL
		    : ec_store_stmt(s, "INSERT INTO outbox (mission, seq) VALUES (?1,?2)"
				       " ON CONFLICT (mission) DO UPDATE SET seq=excluded.seq");

	if (st) {
		sqlite3_bind_text(st, 1, mission, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, seq);
	}
	return ec_store_step_release(s, st);
}

/* The outbox is repairable: an entry a power loss takes back was for a
 * state that is re-derived (and owed again) with it, or it is owed again
 * at the next resync; an ack taken back only sends a state twice. */
int ec_store_outbox_mark(struct ec_store *s, const char *mission)
{
	int own = ec_store_one_begin(s, EC_TX_REPAIRABLE);

	return own < 0 ? -1 : ec_store_one_end(s, own, outbox_mark_tx(s, mission));
}

int ec_store_outbox_mark_all(struct ec_store *s)
{
	int64_t seq;
	sqlite3_stmt *st;

	if (ec_store_tx_begin(s, EC_TX_REPAIRABLE))
		return -1;
	/* one new seq for all: the whole set is owed again */
	seq = ec_store_outbox_next(s);
	st = seq < 0
		 ? NULL
		 : ec_store_stmt(
		       s, "INSERT INTO outbox (mission, seq) SELECT name, ?1 FROM missions WHERE 1"
			  " ON CONFLICT (mission) DO UPDATE SET seq=excluded.seq");
	if (st)
		sqlite3_bind_int64(st, 1, seq);
	return ec_store_tx_end(s, ec_store_step_release(s, st));
}

/* The callback of a list and its argument, for the ec_each_fn below. */
struct outbox_list {
	ec_outbox_cb cb;
	void *arg;
};

static int outbox_row(void *p, sqlite3_stmt *st)
{
	struct outbox_list *l = p;

	return l->cb(l->arg, ec_store_col_text(st, 0), sqlite3_column_int64(st, 1));
}

int ec_store_outbox_list(struct ec_store *s, int64_t after, ec_outbox_cb cb, void *arg)
{
	sqlite3_stmt *st =
	    ec_store_stmt(s, "SELECT mission, seq FROM outbox WHERE seq > ?1 ORDER BY seq");
	struct outbox_list l = {cb, arg};

	if (st)
		sqlite3_bind_int64(st, 1, after);
	return ec_store_each(s, st, outbox_row, &l);
}

int ec_store_outbox_ack(struct ec_store *s, int64_t upto)
{
	sqlite3_stmt *st;

	if (ec_store_tx_begin(s, EC_TX_REPAIRABLE))
		return -1;
	st = ec_store_stmt(s, "DELETE FROM outbox WHERE seq <= ?1");
	if (st)
		sqlite3_bind_int64(st, 1, upto);
	return ec_store_tx_end(s, ec_store_step_release(s, st));
}

int ec_store_outbox_clear(struct ec_store *s)
{
	return sqlite3_exec(s->sql.db, "DELETE FROM outbox", NULL, NULL, NULL) == SQLITE_OK ? 0
											    : -1;
}

/* ---- mission state maps ---- */

/* The child's keys of a mission's map: the child's own ("b") and those below
 * it ("b/..."): '/' + 1 is '0', so "b/" <= key < "b0" is the subtree. */
#define SUBTREE_SQL "(path=?2 OR (path>=?3 AND path<?4))"

/* Bind the subtree of child to ?2..?4 (buf holds the two bounds). */
static int bind_subtree(sqlite3_stmt *st, const char *child, char *buf, size_t len)
{
	size_t n = strlen(child);

	if (2 * (n + 2) > len)
		return -1;
	memcpy(buf, child, n);
	memcpy(buf + n, "/", 2);
	memcpy(buf + n + 2, child, n);
	memcpy(buf + 2 * n + 2, "0", 2);
	sqlite3_bind_text(st, 2, child, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, buf, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, buf + n + 2, -1, SQLITE_STATIC);
	return 0;
}

/* Make the child's keys of one mission what map says (its other keys are
 * not the child's to say: ignored); *changed if any row was written. Only
 * the keys that differ are written: at a parent most reports change one key
 * of a map that holds a key per descendant. */
static int replace_keys(struct ec_store *s, const char *mission, const char *child, json_t *map,
			bool *changed)
{
	sqlite3_stmt *st =
	    ec_store_stmt(s, "SELECT path, value FROM mstate WHERE mission=?1 AND " SUBTREE_SQL);
	json_t *had = json_object(), *v;
	const char *k;
	char bounds[2 * EC_PATH_MAX + 8];
	int rc;

	*changed = false;
	if (!st || !had || bind_subtree(st, child, bounds, sizeof(bounds))) {
		ec_store_release(s, st);
		json_decref(had);
		return -1;
	}
	sqlite3_bind_text(st, 1, mission, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_object_set_new(had, ec_store_col_text(st, 0),
				    json_string(ec_store_col_text(st, 1)));
	ec_store_release(s, st);
	rc = rc == SQLITE_DONE ? 0 : -1;
	json_object_foreach(had, k, v)
	{
		if (rc || json_object_get(map, k))
			continue;
		rc = ec_store_state_key(s, mission, k, NULL);
		*changed = true;
	}
	json_object_foreach(map, k, v)
	{
		const char *now = json_string_value(v), *was;

		if (rc || !now || !tree_in_subtree(k, child))
			continue;
		was = json_string_value(json_object_get(had, k));
		if (was && !strcmp(was, now))
			continue;
		rc = ec_store_state_key(s, mission, k, now);
		*changed = true;
	}
	json_decref(had);
	return rc;
}

/* Repairable: the hub asks each child for all of its state again on its
 * first link after a start (hub.c, kid.synced), so what a power loss takes
 * back is sent again; an fsync per report was what a parent of many
 * children waited for most on a disk. */
int ec_store_state_replace_batch(struct ec_store *s, const char *child, struct ec_state_item *items,
				 size_t n, bool owe)
{
	int rc = 0;

	if (ec_store_tx_begin(s, EC_TX_REPAIRABLE))
		return -1;
	for (size_t i = 0; i < n && !rc; i++) {
		bool changed;
		int r = ec_store_mission_exists(s, items[i].mission);

		items[i].found = r == 0;
		if (r == EC_ST_NOTFOUND)
			continue; /* gone here: the report is moot */
		rc = r ? r : replace_keys(s, items[i].mission, child, items[i].map, &changed);
		if (!rc && changed && owe)
			rc = outbox_mark_tx(s, items[i].mission);
	}
	return ec_store_tx_end(s, rc);
}

int ec_store_state_replace_subtree(struct ec_store *s, const char *mission, const char *child,
				   json_t *map)
{
	struct ec_state_item it = {.mission = mission, .map = map};
	int rc = ec_store_state_replace_batch(s, child, &it, 1, false);

	return rc ? rc : it.found ? 0 : EC_ST_NOTFOUND;
}

/* For every mission: set (value NULL: remove) the child's subtree keys. */
static int mark_tx(struct ec_store *s, const char *child, const char *value, bool owe)
{
	sqlite3_stmt *st = ec_store_stmt(s, "SELECT DISTINCT mission FROM mstate WHERE " SUBTREE_SQL
					    " AND (?1 IS NULL OR value<>?1)");
	json_t *todo = json_array(), *v;
	char bounds[2 * EC_PATH_MAX + 8];
	size_t i;
	int rc;

	if (!st || !todo || bind_subtree(st, child, bounds, sizeof(bounds))) {
		ec_store_release(s, st);
		json_decref(todo);
		return -1;
	}
	if (value)
		sqlite3_bind_text(st, 1, value, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(todo, json_string(ec_store_col_text(st, 0)));
	ec_store_release(s, st);
	rc = rc == SQLITE_DONE ? 0 : -1;
	st = rc || !json_array_size(todo)
		 ? NULL
		 : ec_store_stmt(s, value ? "UPDATE mstate SET value=?1 WHERE " SUBTREE_SQL
					    " AND value<>?1"
					  : "DELETE FROM mstate WHERE " SUBTREE_SQL);
	if (st && !bind_subtree(st, child, bounds, sizeof(bounds))) {
		if (value)
			sqlite3_bind_text(st, 1, value, -1, SQLITE_STATIC);
		rc = ec_store_step_release(s, st);
	} else if (st) {
		ec_store_release(s, st);
		rc = -1;
	}
	json_array_foreach(todo, i, v) if (!rc && owe) rc = outbox_mark_tx(s, json_string_value(v));
	json_decref(todo);
	return rc;
}

int ec_store_state_mark_subtree(struct ec_store *s, const char *child, const char *value, bool owe)
{
	if (ec_store_tx_begin(s, 0))
		return -1;
	return ec_store_tx_end(s, mark_tx(s, child, value, owe));
}

/* ---- credentials this hub issued ---- */

static void blob(sqlite3_stmt *st, int i, unsigned char out[EC_HASH_LEN])
{
	const void *b = sqlite3_column_blob(st, i);

	memset(out, 0, EC_HASH_LEN);
	if (b && sqlite3_column_bytes(st, i) == EC_HASH_LEN)
		memcpy(out, b, EC_HASH_LEN);
}

/* An ec_from_fn: *out is a struct ec_cred. */
static int cred_from(sqlite3_stmt *st, void *out)
{
	struct ec_cred *c = memset(out, 0, sizeof(struct ec_cred));

	snprintf(c->name, sizeof(c->name), "%s", ec_store_col_text(st, 0));
	blob(st, 1, c->cur);
	c->cur_expires = sqlite3_column_int64(st, 2);
	blob(st, 3, c->prev);
	c->prev_expires = sqlite3_column_int64(st, 4);
	c->resync = sqlite3_column_int(st, 5) != 0;
	return 0;
}

#define CRED_COLS "name, cur, cur_expires, prev, prev_expires, resync"

int ec_store_cred_get(struct ec_store *s, const char *name, struct ec_cred *c)
{
	return ec_store_one(s,
			    ec_store_stmt(s, "SELECT " CRED_COLS " FROM hub_creds WHERE name=?1"),
			    name, cred_from, c);
}

int ec_store_cred_put(struct ec_store *s, const struct ec_cred *c)
{
	sqlite3_stmt *st = ec_store_stmt(s, "INSERT OR REPLACE INTO hub_creds (" CRED_COLS
					    ") VALUES (?1,?2,?3,?4,?5,?6)");

	if (!st)
		return -1;
	sqlite3_bind_text(st, 1, c->name, -1, SQLITE_STATIC);
	sqlite3_bind_blob(st, 2, c->cur, EC_HASH_LEN, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, c->cur_expires);
	sqlite3_bind_blob(st, 4, c->prev, EC_HASH_LEN, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, c->prev_expires);
	sqlite3_bind_int(st, 6, c->resync);
	return ec_store_step_release(s, st);
}

struct cred_list {
	ec_cred_cb cb;
	void *arg;
};

static int cred_row(void *p, sqlite3_stmt *st)
{
	struct cred_list *l = p;
	struct ec_cred c;

	cred_from(st, &c);
	return l->cb(l->arg, &c);
}

int ec_store_cred_list(struct ec_store *s, ec_cred_cb cb, void *arg)
{
	struct cred_list l = {cb, arg};

	return ec_store_each(
	    s, ec_store_stmt(s, "SELECT " CRED_COLS " FROM hub_creds ORDER BY name"), cred_row, &l);
}

/* ---- descendants' EdgeCluster rows ---- */

/* name -> {path, labels, spec, uid, state} of every row but self's. */
static int rows_by_name(struct ec_store *s, const char *self, json_t **out)
{
	sqlite3_stmt *st = ec_store_stmt(s, "SELECT name, uid, labels, spec, state FROM clusters");
	int rc;

	*out = json_object();
	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *state;

		if (!strcmp(ec_store_col_text(st, 0), self))
			continue;
		state = json_loads(ec_store_col_text(st, 4), 0, NULL);
		json_object_set_new(
		    *out, ec_store_col_text(st, 0),
		    json_pack("{s:s,s:s,s:s,s:s,s:o}", "path",
			      json_string_value(json_object_get(state, "path"))
				  ? json_string_value(json_object_get(state, "path"))
				  : "",
			      "uid", ec_store_col_text(st, 1), "labels", ec_store_col_text(st, 2),
			      "spec", ec_store_col_text(st, 3), "state",
			      state ? state : json_object()));
	}
	ec_store_release(s, st);
	return rc == SQLITE_DONE ? 0 : -1;
}

static int row_write(struct ec_store *s, json_t *obj, json_t *old)
{
	json_t *md = json_object_get(obj, "metadata");
	const char *name = json_string_value(json_object_get(md, "name"));
	const char *uid = json_string_value(json_object_get(md, "uid"));
	const char *created = json_string_value(json_object_get(md, "creationTimestamp"));
	json_t *labels = json_object_get(md, "labels"), *spec = json_object_get(obj, "spec");
	char *tl = json_dumps(labels ? labels : json_object(), JSON_COMPACT | JSON_SORT_KEYS);
	char *ts = json_dumps(spec ? spec : json_object(), JSON_COMPACT | JSON_SORT_KEYS);
	char *tst = json_dumps(json_object_get(obj, "state"), JSON_COMPACT | JSON_SORT_KEYS);
	sqlite3_stmt *st = NULL;
	uint64_t rev = 0;
	int rc = tl && ts && tst ? 0 : -1;
	bool structural =
	    !old || strcmp(json_string_value(json_object_get(old, "uid")), uid ? uid : "") ||
	    !ec_json_same_text(json_string_value(json_object_get(old, "labels")), labels) ||
	    !ec_json_same_text(json_string_value(json_object_get(old, "spec")), spec);

	if (!rc && structural)
		rc = ec_store_bump(s, &rev);
	if (!rc && !old)
		st = ec_store_stmt(
		    s, "INSERT INTO clusters (name, uid, rv, created, labels, spec, state)"
		       " VALUES (?1,?2,?3,?4,?5,?6,?7)");
	else if (!rc && structural)
		st = ec_store_stmt(
		    s, "UPDATE clusters SET uid=?2, rv=?3, created=?4, labels=?5, spec=?6,"
		       " state=?7 WHERE name=?1");
	else if (!rc)
		st = ec_store_stmt(s, "UPDATE clusters SET state=?7 WHERE name=?1");
	if (st) {
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, uid ? uid : "", -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, (sqlite3_int64)rev);
		sqlite3_bind_text(st, 4, created ? created : "", -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 5, tl, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 6, ts, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 7, tst, -1, SQLITE_STATIC);
	}
	if (!rc)
		rc = ec_store_step_release(s, st);
	free(tl);
	free(ts);
	free(tst);
	return rc;
}

static int row_delete(struct ec_store *s, const char *name)
{
	sqlite3_stmt *st = ec_store_stmt(s, "DELETE FROM clusters WHERE name=?1");
	uint64_t rev;

	if (!st || ec_store_bump(s, &rev)) {
		ec_store_release(s, st);
		return -1;
	}
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	return ec_store_step_release(s, st);
}

int ec_store_subtree_sync(struct ec_store *s, const char *self, const char *child, json_t *objs,
			  int *clashes)
{
	json_t *rows, *seen = json_object(), *obj, *v;
	const char *name;
	size_t i;
	int rc;

	*clashes = 0;
	/* repairable: every heartbeat of the child carries its whole subtree again */
	if (ec_store_tx_begin(s, EC_TX_REPAIRABLE))
		return -1;
	rc = rows_by_name(s, self, &rows);
	json_array_foreach(objs, i, obj)
	{
		json_t *old;
		const char *path =
		    json_string_value(json_object_get(json_object_get(obj, "state"), "path"));

		name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
		if (rc || !name || !path)
			break;
		old = json_object_get(rows, name);
		if (!strcmp(name, self) || json_object_get(seen, name) ||
		    (old &&
		     !tree_in_subtree(json_string_value(json_object_get(old, "path")), child))) {
			(*clashes)++; /* this name is another cluster elsewhere in the tree */
			continue;
		}
		json_object_set_new(seen, name, json_true());
		rc = row_write(s, obj, old);
	}
	json_object_foreach(rows, name, v)
	{
		if (!rc && tree_in_subtree(json_string_value(json_object_get(v, "path")), child) &&
		    !json_object_get(seen, name))
			rc = row_delete(s, name);
	}
	json_decref(rows);
	json_decref(seen);
	return ec_store_tx_end(s, rc);
}

int ec_store_subtree_health(struct ec_store *s, const char *child, const char *child_health,
			    const char *desc_health)
{
	json_t *rows, *v;
	const char *name;
	int rc;

	if (ec_store_tx_begin(s, 0))
		return -1;
	rc = rows_by_name(s, "", &rows);
	json_object_foreach(rows, name, v)
	{
		const char *path = json_string_value(json_object_get(v, "path"));
		json_t *state = json_object_get(v, "state");
		sqlite3_stmt *st;
		char *text;

		if (rc || !tree_in_subtree(path, child) || (!desc_health && strcmp(path, child)))
			continue;
		json_object_set_new(state, "health",
				    json_string(strcmp(path, child) ? desc_health : child_health));
		text = json_dumps(state, JSON_COMPACT | JSON_SORT_KEYS);
		st = text ? ec_store_stmt(s, "UPDATE clusters SET state=?2 WHERE name=?1") : NULL;
		if (st) {
			sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
			sqlite3_bind_text(st, 2, text, -1, SQLITE_STATIC);
		}
		rc = ec_store_step_release(s, st);
		free(text);
	}
	json_decref(rows);
	return ec_store_tx_end(s, rc);
}

int ec_store_subtree_drop(struct ec_store *s, const char *child, bool owe)
{
	json_t *rows, *v;
	const char *name;
	sqlite3_stmt *st;
	int rc;

	if (ec_store_tx_begin(s, 0))
		return -1;
	rc = rows_by_name(s, "", &rows);
	json_object_foreach(
	    rows, name, v) if (!rc && tree_in_subtree(json_string_value(json_object_get(v, "path")),
						      child)) rc = row_delete(s, name);
	json_decref(rows);
	if (!rc)
		rc = mark_tx(s, child, NULL, owe);
	if (!rc && (st = ec_store_stmt(s, "DELETE FROM hub_creds WHERE name=?1"))) {
		sqlite3_bind_text(st, 1, child, -1, SQLITE_STATIC);
		rc = ec_store_step_release(s, st);
	}
	return ec_store_tx_end(s, rc);
}

int ec_store_cluster_path(struct ec_store *s, const char *name, char *path, size_t len)
{
	sqlite3_stmt *st = ec_store_stmt(s, "SELECT state FROM clusters WHERE name=?1");
	int rc;

	path[0] = 0;
	if (!st)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		json_t *state = json_loads(ec_store_col_text(st, 0), 0, NULL);
		const char *p = json_string_value(json_object_get(state, "path"));

		/* the serving cluster's own row has no stored path */
		snprintf(path, len, "%s", p ? p : "");
		json_decref(state);
	}
	ec_store_release(s, st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

/* ---- this cluster's mission counts (heartbeats, GET of our EdgeCluster) ---- */

struct counts_ctx {
	const char *self;
	json_t *labels;
	int *known, *matched, *active;
};

static int count_one(void *arg, sqlite3_stmt *st)
{
	struct counts_ctx *c = arg;
	const char *pl = (const char *)sqlite3_column_text(st, 0);
	const char *own = (const char *)sqlite3_column_text(st, 1);
	bool match = true;

	(*c->known)++;
	if (pl) { /* only a mission with a placement needs parsing (a few bytes) */
		json_t *p = json_loads(pl, 0, NULL);
		json_t *spec = p ? json_pack("{s:o}", "placement", p) : NULL;

		match = spec && ec_placement_match(spec, c->self, c->labels);
		json_decref(spec);
	}
	if (!match)
		return 0;
	(*c->matched)++;
	/* applied and checked: anything but the placeholders */
	if (own && *own && strncmp(own, "pending", 7) && strcmp(own, "not matched") &&
	    strncmp(own, "failed", 6) && strcmp(own, "unreachable"))
		(*c->active)++;
	return 0;
}

/*
 * Asked by every heartbeat and every GET of our EdgeCluster. SQLite's
 * json_extract picks the placement out of the spec text and our own state
 * key is one row: parsing every spec into jansson objects was most of a
 * poll's cost.
 */
int ec_store_mission_counts(struct ec_store *s, const char *self, json_t *labels, int *known,
			    int *matched, int *active)
{
	static const char sql[] = "SELECT json_extract(spec, '$.placement'), (SELECT value FROM"
				  " mstate WHERE mission=missions.name AND path=?1) FROM missions";
	struct counts_ctx c = {self, labels, known, matched, active};
	sqlite3_stmt *st = ec_store_stmt(s, sql);

	*known = *matched = *active = 0;
	if (st && sqlite3_bind_text(st, 1, self, -1, SQLITE_TRANSIENT) != SQLITE_OK) {
		ec_store_release(s, st);
		return -1;
	}
	return ec_store_each(s, st, count_one, &c) ? -1 : 0;
}

/* ---- what goes up ---- */

/* A mission's map as the parent stores it: our own key stays, a
 * descendant's gets our name in front ("c/d" -> "b/c/d"); NULL if the
 * mission is gone. */
json_t *ec_store_state_report(struct ec_store *s, const char *self, const char *mission,
			      size_t *bytes)
{
	/* a row with NULLs for a mission without keys; none for one gone */
	sqlite3_stmt *st = ec_store_stmt(s, "SELECT s.path, s.value FROM missions m"
					    " LEFT JOIN mstate s ON s.mission=m.name"
					    " WHERE m.name=?1");
	char key[EC_PATH_MAX * 2];
	json_t *out = NULL;
	int rc;

	if (!st)
		return NULL;
	sqlite3_bind_text(st, 1, mission, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		const char *v = (const char *)sqlite3_column_text(st, 1);

		if (!out)
			out = json_object();
		if (!k || !v)
			continue;
		if (strcmp(k, self))
			snprintf(key, sizeof(key), "%s/%s", self, k);
		json_object_set_new(out, strcmp(k, self) ? key : k, json_string(v));
		*bytes += strlen(k) + strlen(v) + strlen(self) + 8;
	}
	ec_store_release(s, st);
	if (rc != SQLITE_DONE) {
		json_decref(out);
		return NULL;
	}
	return out;
}
