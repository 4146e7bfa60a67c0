// SPDX-License-Identifier: BSD-2-Clause
/*
 * Missions received from the parent, on the child's side: every batch the
 * parent sends is applied in one transaction, writing only what differs
 * (an unchanged mission keeps its resourceVersion and is not applied
 * again), and table inherited records the parent's uid and resourceVersion
 * of each, with our own rv when we wrote it. The digest of what we hold
 * counts only what is still as the parent sent it, so a local edit or
 * delete makes the digests differ and the parent's copy comes back.
 */
#include <inttypes.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_stmt.h"
#include "tree_store.h"

/* ---- missions received from the parent ---- */

struct local {
	bool exists;
	char uid[EC_UID_LEN + 1];
	uint64_t rv;
	char *labels, *spec;
};

static int local_get(struct ec_store *s, const char *name, struct local *l)
{
	sqlite3_stmt *st =
	    ec_store_stmt(s, "SELECT uid, rv, labels, spec FROM missions WHERE name=?1");
	int rc;

	memset(l, 0, sizeof(*l));
	if (!st)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		l->exists = true;
		snprintf(l->uid, sizeof(l->uid), "%s", ec_store_col_text(st, 0));
		l->rv = (uint64_t)sqlite3_column_int64(st, 1);
		l->labels = strdup(ec_store_col_text(st, 2));
		l->spec = strdup(ec_store_col_text(st, 3));
	}
	ec_store_release(s, st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

static void local_free(struct local *l)
{
	free(l->labels);
	free(l->spec);
}

/* One statement binding ?1 to a text. */
static int exec1(struct ec_store *s, const char *sql, const char *a)
{
	sqlite3_stmt *st = ec_store_stmt(s, sql);

	if (!st)
		return -1;
	sqlite3_bind_text(st, 1, a, -1, SQLITE_STATIC);
	return ec_store_step_release(s, st);
}

static int inherited_put(struct ec_store *s, const char *name, const char *uid, int64_t prv,
			 int64_t lrv)
{
	sqlite3_stmt *st = ec_store_stmt(s, "INSERT OR REPLACE INTO inherited (name, uid, prv, lrv)"
					    " VALUES (?1,?2,?3,?4)");

	if (!st)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, uid, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, prv);
	sqlite3_bind_int64(st, 4, lrv);
	return ec_store_step_release(s, st);
}

/* One upsert: write only what differs; the row keeps its state unless the
 * uid changed (then it is another object with the same name). */
static int upsert_one(struct ec_store *s, json_t *m, json_t *changed)
{
	json_t *md = json_object_get(m, "metadata");
	const char *name = json_string_value(json_object_get(md, "name"));
	const char *uid = json_string_value(json_object_get(md, "uid"));
	const char *created = json_string_value(json_object_get(md, "creationTimestamp"));
	const char *prv_s = json_string_value(json_object_get(md, "resourceVersion"));
	json_t *labels = json_object_get(md, "labels"), *spec = json_object_get(m, "spec");
	int64_t prv = prv_s ? strtoll(prv_s, NULL, 10) : 0;
	char *tl = NULL, *ts = NULL;
	struct local l;
	uint64_t rev = 0;
	int rc = local_get(s, name, &l);

	if (!labels)
		labels = json_object();
	if (!rc && l.exists && !strcmp(l.uid, uid) && ec_json_same_text(l.labels, labels) &&
	    ec_json_same_text(l.spec, spec)) {
		rev = l.rv; /* the same object: record the parent's version only */
	} else if (!rc) {
		tl = json_dumps(labels, JSON_COMPACT | JSON_SORT_KEYS);
		ts = json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS);
		rc = tl && ts ? ec_store_bump(s, &rev) : -1;
		if (!rc && l.exists && strcmp(l.uid, uid))
			rc = exec1(s, "DELETE FROM missions WHERE name=?1", name);
		if (!rc && l.exists && !strcmp(l.uid, uid)) {
			/* the parent's version whole: a local apply's annotations go too */
			sqlite3_stmt *st =
			    ec_store_stmt(s, "UPDATE missions SET rv=?2, labels=?3,"
					     " spec=?4, annotations='{}' WHERE name=?1");

			if (st) {
				sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
				sqlite3_bind_int64(st, 2, (sqlite3_int64)rev);
				sqlite3_bind_text(st, 3, tl, -1, SQLITE_STATIC);
				sqlite3_bind_text(st, 4, ts, -1, SQLITE_STATIC);
			}
			rc = ec_store_step_release(s, st);
		} else if (!rc) {
			sqlite3_stmt *st = ec_store_stmt(
			    s, "INSERT INTO missions (name, uid, rv, created,"
			       " labels, spec, state) VALUES (?1,?2,?3,?4,?5,?6,'{}')");

			if (st) {
				sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
				sqlite3_bind_text(st, 2, uid, -1, SQLITE_STATIC);
				sqlite3_bind_int64(st, 3, (sqlite3_int64)rev);
				sqlite3_bind_text(st, 4, created ? created : "", -1, SQLITE_STATIC);
				sqlite3_bind_text(st, 5, tl, -1, SQLITE_STATIC);
				sqlite3_bind_text(st, 6, ts, -1, SQLITE_STATIC);
			}
			rc = ec_store_step_release(s, st);
		}
		if (!rc)
			json_array_append_new(changed, json_pack("[s,b]", name, 0));
	}
	if (!rc)
		rc = inherited_put(s, name, uid, prv, (int64_t)rev);
	local_free(&l);
	free(tl);
	free(ts);
	return rc;
}

static int delete_one(struct ec_store *s, const char *name, json_t *changed)
{
	sqlite3_stmt *st = ec_store_stmt(s, "SELECT 1 FROM inherited WHERE name=?1");
	uint64_t rev;
	int rc;

	if (!st)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	ec_store_release(s, st);
	if (rc == SQLITE_DONE)
		return 0; /* not the parent's: a mission created here stays */
	if (rc != SQLITE_ROW || ec_store_bump(s, &rev))
		return -1;
	rc = exec1(s, "DELETE FROM missions WHERE name=?1", name);
	if (!rc)
		rc = exec1(s, "DELETE FROM inherited WHERE name=?1", name);
	if (!rc)
		rc = exec1(s, "DELETE FROM outbox WHERE mission=?1", name);
	if (!rc)
		json_array_append_new(changed, json_pack("[s,b]", name, 1));
	return rc;
}

static int sync_apply(struct ec_store *s, json_t *upserts, json_t *deletes, struct ec_sync_out *out,
		      unsigned flags)
{
	json_t *v;
	size_t i;
	int rc = 0;

	out->changed = json_array();
	if (ec_store_tx_begin(s, flags))
		return -1;
	json_array_foreach(deletes, i, v) if (!rc) rc =
	    delete_one(s, json_string_value(v), out->changed);
	json_array_foreach(upserts, i, v) if (!rc) rc = upsert_one(s, v, out->changed);
	rc = ec_store_tx_end(s, rc);
	if (rc) /* rolled back: nothing changed */
		json_array_clear(out->changed);
	return rc;
}

/* Repairable: what a power loss takes back, the parent's digest check sends
 * again (the ack goes after the commit, but the digest is what counts). */
int ec_store_sync_apply(struct ec_store *s, json_t *upserts, json_t *deletes,
			struct ec_sync_out *out)
{
	return sync_apply(s, upserts, deletes, out, EC_TX_REPAIRABLE);
}

int ec_store_inherited_map(struct ec_store *s, json_t **out)
{
	sqlite3_stmt *st =
	    ec_store_stmt(s, "SELECT i.name, i.uid, i.prv,"
			     " (m.uid IS NOT NULL AND m.uid=i.uid AND m.rv=i.lrv)"
			     " FROM inherited i LEFT JOIN missions m ON m.name=i.name");
	char rv[24];
	int rc;

	*out = json_object();
	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		snprintf(rv, sizeof(rv), "%lld", (long long)sqlite3_column_int64(st, 2));
		json_object_set_new(*out, ec_store_col_text(st, 0),
				    json_pack("{s:s,s:s,s:b}", "uid", ec_store_col_text(st, 1),
					      "rv", rv, "ok", sqlite3_column_int(st, 3)));
	}
	ec_store_release(s, st);
	return rc == SQLITE_DONE ? 0 : -1;
}

int ec_store_inherited_digest(struct ec_store *s, char hex[TREE_DIGEST_HEX + 1])
{
	/* only what is still as the parent sent it: a local edit or delete makes
	 * the digests differ, and the parent's copy comes back */
	sqlite3_stmt *st =
	    ec_store_stmt(s, "SELECT i.name, i.uid, i.prv FROM inherited i JOIN missions m"
			     " ON m.name=i.name AND m.uid=i.uid AND m.rv=i.lrv ORDER BY i.name");
	struct ec_digest g;
	int rc;

	if (!st)
		return -1;
	ec_digest_init(&g);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		ec_digest_add(&g, ec_store_col_text(st, 0), ec_store_col_text(st, 1),
			      (uint64_t)sqlite3_column_int64(st, 2));
	ec_store_release(s, st);
	ec_digest_final(&g, hex);
	return rc == SQLITE_DONE ? 0 : -1;
}

int ec_store_inherited_drop(struct ec_store *s, struct ec_sync_out *out)
{
	sqlite3_stmt *st = ec_store_stmt(s, "SELECT name FROM inherited");
	json_t *names = json_array();
	int rc;

	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(names, json_string(ec_store_col_text(st, 0)));
	ec_store_release(s, st);
	rc = rc == SQLITE_DONE ? 0 : -1;
	/* not repairable: nobody would delete them again after a detach */
	if (!rc)
		rc = sync_apply(s, NULL, names, out, 0);
	json_decref(names);
	return rc;
}

int ec_store_mission_index(struct ec_store *s, ec_index_cb cb, void *arg)
{
	sqlite3_stmt *st = ec_store_stmt(s, "SELECT name, uid, rv FROM missions ORDER BY name");
	int rc;

	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int stop = cb(arg, ec_store_col_text(st, 0), ec_store_col_text(st, 1),
			      (uint64_t)sqlite3_column_int64(st, 2));

		if (stop) {
			ec_store_release(s, st);
			return stop;
		}
	}
	ec_store_release(s, st);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* ---- the digest ---- */

_Static_assert(sizeof(crypto_generichash_state) <= sizeof(((struct ec_digest *)0)->st),
	       "ec_digest too small");

void ec_digest_init(struct ec_digest *g)
{
	crypto_generichash_init((crypto_generichash_state *)(void *)g->st, NULL, 0, 32);
}

void ec_digest_add(struct ec_digest *g, const char *name, const char *uid, uint64_t rv)
{
	char line[EC_MISSION_NAME_MAX + EC_UID_LEN + 32];
	int n = snprintf(line, sizeof(line), "%s\n%s\n%" PRIu64 "\n", name, uid, rv);

	crypto_generichash_update((crypto_generichash_state *)(void *)g->st,
				  (const unsigned char *)line, (size_t)n);
}

void ec_digest_final(struct ec_digest *g, char hex[TREE_DIGEST_HEX + 1])
{
	unsigned char h[32];

	crypto_generichash_final((crypto_generichash_state *)(void *)g->st, h, sizeof(h));
	sodium_bin2hex(hex, TREE_DIGEST_HEX + 1, h, sizeof(h));
}
