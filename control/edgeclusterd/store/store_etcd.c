// SPDX-License-Identifier: BSD-2-Clause
/*
 * The root's store on etcd (store_etcd.h). SQLite's session extension
 * (Debian builds it in) names the rows a group changed, with their
 * primary keys, also those a trigger changed (a mission's state rows go
 * with it): the group's rows are read back as they are before COMMIT and
 * sent; a row no longer there is a delete.
 */
#define SQLITE_ENABLE_SESSION	     1
#define SQLITE_ENABLE_PREUPDATE_HOOK 1
#include <inttypes.h>
#include <jansson.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_etcd.h"
#include "ctl_log.h"
#include "store_etcd.h"

#define N_TABLES  6
#define MAX_COLS  16
#define TXN_BYTES (768u << 10)

/* the tables whose rows etcd holds: what the API, the hub and the children's
 * reports write at a root, and what the root applied itself (a new leader
 * resumes from the last one's records instead of running every mission's
 * command again, as a restarted process does from its own); the rest is
 * this process's own */
static const char *const mirrored[N_TABLES] = {"meta",	   "missions",	"mstate",
					       "clusters", "hub_creds", "applied"};

struct table {
	const char *name;
	int ncol;
	char *col[MAX_COLS];
	bool pk[MAX_COLS];
	sqlite3_stmt *read, *upsert, *del; /* by primary key, in column order */
};

struct ec_etcd {
	struct ec_store *s;
	struct ctl_etcd *e;
	struct ctl_etcd_elect *el;
	struct ctl_etcd_watch *w;
	sqlite3_session *sess;
	struct table t[N_TABLES];
	char *rows, *lkey, *id; /* PREFIX "rows/", PREFIX "leader" */
	unsigned max_ops;
	bool leading, deposed;
	int64_t own_rev;  /* the newest etcd revision this root wrote or read whole */
	int64_t read_rev; /* the revision of the last full read */
	/* the revisions of the leader's last writes: a watch event at another is
	 * a write of ours etcd applied after it had not answered (504), maybe
	 * after a later write of the same row: the leader rereads everything */
	int64_t mine[512];
	unsigned n_mine;
	bool reread_due;
};

static struct table *table_of(struct ec_etcd *m, const char *name, size_t len)
{
	for (int i = 0; i < N_TABLES; i++)
		if (strlen(m->t[i].name) == len && !strncmp(m->t[i].name, name, len))
			return &m->t[i];
	return NULL;
}

/* ---- rows as JSON ---- */

static json_t *val_json(sqlite3_value *v)
{
	switch (v ? sqlite3_value_type(v) : SQLITE_NULL) {
	case SQLITE_INTEGER:
		return json_integer(sqlite3_value_int64(v));
	case SQLITE_FLOAT:
		return json_real(sqlite3_value_double(v));
	case SQLITE_TEXT:
		return json_stringn((const char *)sqlite3_value_text(v),
				    (size_t)sqlite3_value_bytes(v));
	case SQLITE_BLOB: {
		size_t n = (size_t)sqlite3_value_bytes(v);
		size_t bl = sodium_base64_ENCODED_LEN(n, sodium_base64_VARIANT_ORIGINAL);
		char *b = malloc(bl);
		json_t *o = NULL;

		if (b) {
			sodium_bin2base64(b, bl, sqlite3_value_blob(v), n,
					  sodium_base64_VARIANT_ORIGINAL);
			o = json_pack("{s:s}", "b64", b);
		}
		free(b);
		return o;
	}
	default:
		return json_null();
	}
}

static int bind_json(sqlite3_stmt *st, int i, json_t *v)
{
	if (json_is_integer(v))
		return sqlite3_bind_int64(st, i, json_integer_value(v));
	if (json_is_real(v))
		return sqlite3_bind_double(st, i, json_real_value(v));
	if (json_is_string(v))
		return sqlite3_bind_text(st, i, json_string_value(v), (int)json_string_length(v),
					 SQLITE_TRANSIENT);
	if (json_is_object(v) && json_is_string(json_object_get(v, "b64"))) {
		const char *b = json_string_value(json_object_get(v, "b64"));
		size_t len = strlen(b), n = 0;
		unsigned char *raw = malloc(len + 1);
		int rc;

		if (!raw || sodium_base642bin(raw, len + 1, b, len, NULL, &n, NULL,
					      sodium_base64_VARIANT_ORIGINAL)) {
			free(raw);
			return SQLITE_MISMATCH;
		}
		rc = sqlite3_bind_blob(st, i, raw, (int)n, SQLITE_TRANSIENT);
		free(raw);
		return rc;
	}
	return sqlite3_bind_null(st, i);
}

/* PREFIX "rows/" TABLE "/" PK, to free */
static char *row_key(struct ec_etcd *m, const struct table *t, json_t *pk)
{
	char *pks = json_dumps(pk, JSON_COMPACT | JSON_ENCODE_ANY), *k = NULL;

	if (pks && asprintf(&k, "%s%s/%s", m->rows, t->name, pks) < 0)
		k = NULL;
	free(pks);
	return k;
}

/* The row of t with primary key pk as it is now, or NULL (json null) if none. */
static json_t *row_now(struct table *t, json_t *pk)
{
	json_t *o = json_null();
	size_t i;
	int rc;

	for (i = 0; i < json_array_size(pk); i++)
		bind_json(t->read, (int)i + 1, json_array_get(pk, i));
	rc = sqlite3_step(t->read);
	if (rc == SQLITE_ROW) {
		o = json_object();
		for (int c = 0; c < t->ncol && o; c++)
			if (json_object_set_new(o, t->col[c],
						val_json(sqlite3_column_value(t->read, c))))
				o = (json_decref(o), NULL);
	} else if (rc != SQLITE_DONE) {
		o = NULL;
	}
	sqlite3_reset(t->read);
	sqlite3_clear_bindings(t->read);
	return o;
}

/* ---- the leader's writes ---- */

static int reset_session(struct ec_etcd *m)
{
	sqlite3 *db = m->s->sql.db;

	if (m->sess)
		sqlite3session_delete(m->sess);
	m->sess = NULL;
	if (sqlite3session_create(db, "main", &m->sess) != SQLITE_OK)
		return -1;
	for (int i = 0; i < N_TABLES; i++)
		if (sqlite3session_attach(m->sess, mirrored[i]) != SQLITE_OK) {
			sqlite3session_delete(m->sess);
			m->sess = NULL;
			return -1;
		}
	return 0;
}

/* the view's own writes (what etcd holds already) are not recorded */
static void recording(struct ec_etcd *m, int on)
{
	if (m->sess)
		sqlite3session_enable(m->sess, on);
}

/* [[key, row or null], ...] of what the open group changed */
static json_t *collect(struct ec_etcd *m)
{
	sqlite3_changeset_iter *it = NULL;
	json_t *ops = json_array();
	void *buf = NULL;
	int n = 0, rc;

	if (!ops || sqlite3session_changeset(m->sess, &n, &buf) != SQLITE_OK ||
	    sqlite3changeset_start(&it, n, buf) != SQLITE_OK)
		goto fail;
	while ((rc = sqlite3changeset_next(it)) == SQLITE_ROW) {
		const char *tab;
		unsigned char *pkf;
		int ncol, op, ind, npk;
		struct table *t;
		json_t *pk, *row;
		char *key;

		sqlite3changeset_op(it, &tab, &ncol, &op, &ind);
		sqlite3changeset_pk(it, &pkf, &npk);
		if (!(t = table_of(m, tab, strlen(tab))) || !(pk = json_array()))
			goto fail;
		for (int i = 0; i < ncol; i++) {
			sqlite3_value *v = NULL;

			if (!pkf[i])
				continue;
			if (op == SQLITE_INSERT)
				sqlite3changeset_new(it, i, &v);
			else
				sqlite3changeset_old(it, i, &v);
			json_array_append_new(pk, val_json(v));
		}
		key = row_key(m, t, pk);
		row = row_now(t, pk);
		json_decref(pk);
		if (!key || !row || json_array_append_new(ops, json_pack("[so]", key, row))) {
			free(key);
			goto fail;
		}
		free(key);
	}
	if (rc != SQLITE_DONE)
		goto fail;
	sqlite3changeset_finalize(it);
	sqlite3_free(buf);
	return ops;
fail:
	if (it)
		sqlite3changeset_finalize(it);
	sqlite3_free(buf);
	json_decref(ops);
	return NULL;
}

/* The ops in fenced txns of at most max_ops each: one, but for a group
 * larger than etcd takes at once (a child's full report). */
static int push(struct ec_etcd *m, json_t *ops)
{
	size_t i = 0, n = json_array_size(ops), sent = 0;

	while (i < n) {
		struct ctl_etcd_txn *t = ctl_etcd_txn_new();
		int64_t rev = 0;
		bool ok = false;
		int rc;

		if (!t || ctl_etcd_elect_fence(m->el, t)) {
			ctl_etcd_txn_free(t);
			snprintf(m->s->hook_err, sizeof(m->s->hook_err), "etcd: out of memory");
			return -1;
		}
		/* and about TXN_BYTES of keys and values (etcd refuses a request
		 * over its --max-request-bytes, 1.5 MiB by default): half of it, so
		 * that a row as large as MaxBody still fits with the ones before */
		for (size_t k = 0, bytes = 0; k < m->max_ops && i < n && bytes < TXN_BYTES;
		     k++, i++) {
			json_t *op = json_array_get(ops, i), *row = json_array_get(op, 1);
			const char *key = json_string_value(json_array_get(op, 0));
			char *txt;

			bytes += strlen(key);
			if (json_is_null(row)) {
				ctl_etcd_txn_delete(t, true, key, false);
				continue;
			}
			if (!(txt = json_dumps(row, JSON_COMPACT))) {
				ctl_etcd_txn_free(t);
				snprintf(m->s->hook_err, sizeof(m->s->hook_err),
					 "etcd: out of memory");
				return -1;
			}
			bytes += strlen(txt);
			ctl_etcd_txn_put(t, true, key, txt, strlen(txt), 0);
			free(txt);
		}
		rc = ctl_etcd_txn_commit(m->e, t, &ok, &rev, NULL);
		ctl_etcd_txn_free(t);
		if ((rc || !ok) && sent) {
			/* the group's first txns are in etcd and SQLite rolls back
			 * all of it: the client hears "may be applied", the view is
			 * read again from etcd */
			m->s->maybe_applied = true;
			m->reread_due = true;
		}
		if (rc) {
			snprintf(m->s->hook_err, sizeof(m->s->hook_err), "etcd: %s: %s",
				 ctl_etcd_rc_name(rc), ctl_etcd_errmsg(m->e));
			m->s->maybe_applied |= ctl_etcd_maybe_applied(m->e);
			return -1;
		}
		if (!ok) {
			/* the election key is not ours: another root leads */
			snprintf(m->s->hook_err, sizeof(m->s->hook_err),
				 "etcd refused the write: this root no longer leads");
			if (!m->deposed)
				ctl_log(
				    "election: a write was fenced off: this root no longer leads");
			m->deposed = true;
			return -1;
		}
		m->own_rev = rev;
		m->mine[m->n_mine++ % (sizeof(m->mine) / sizeof(m->mine[0]))] = rev;
		sent++;
	}
	return 0;
}

/* the store's commit_hook: etcd first, then SQLite's COMMIT */
static int commit_hook(void *arg, int rc)
{
	struct ec_etcd *m = arg;
	json_t *ops = NULL;

	/* without a session nothing says what changed: refuse rather than let
	 * SQLite hold what etcd would not */
	if (!m->sess && reset_session(m)) {
		snprintf(m->s->hook_err, sizeof(m->s->hook_err), "no change session: %s",
			 sqlite3_errmsg(m->s->sql.db));
		return rc ? rc : -1;
	}
	if (sqlite3session_isempty(m->sess))
		return rc;
	if (rc == 0 && !(ops = collect(m))) {
		snprintf(m->s->hook_err, sizeof(m->s->hook_err), "reading the changed rows: %s",
			 sqlite3_errmsg(m->s->sql.db));
		rc = -1;
	}
	if (reset_session(m))
		ctl_log("etcd: cannot restart the change session: %s",
			sqlite3_errmsg(m->s->sql.db));
	if (rc || !json_array_size(ops)) {
		json_decref(ops);
		return rc;
	}
	if (!m->leading || m->deposed) {
		snprintf(m->s->hook_err, sizeof(m->s->hook_err),
			 "this root is a standby: only the leader (%.250s) writes",
			 ec_etcd_leader(m)[0] ? ec_etcd_leader(m) : "not known yet");
		rc = -1;
	} else {
		rc = push(m, ops);
	}
	json_decref(ops);
	return rc;
}

/* SQLite's commit hook: a commit of changed rows that did not pass
 * commit_hook (a write outside a group) is turned into a rollback, so
 * that the view never holds what etcd does not */
static int commit_guard(void *arg)
{
	struct ec_etcd *m = arg;

	if (!m->sess || sqlite3session_isempty(m->sess))
		return 0;
	ctl_log("etcd: a write outside a group was rolled back (etcd would not have it)");
	return 1;
}

/* ---- the view: what etcd holds, in SQLite ---- */

static int exec(struct ec_etcd *m, const char *sql)
{
	return sqlite3_exec(m->s->sql.db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

/* One key's row into the view (value NULL: the row goes). */
static int apply_kv(struct ec_etcd *m, const char *key, const char *val, size_t len)
{
	size_t rl = strlen(m->rows);
	const char *tn = key + rl, *slash;
	struct table *t;
	json_t *pk, *row = NULL;
	sqlite3_stmt *st;
	int rc = -1;

	if (strncmp(key, m->rows, rl) || !(slash = strchr(tn, '/')) ||
	    !(t = table_of(m, tn, (size_t)(slash - tn))))
		return 0; /* not a row of ours: a newer root's table, say */
	if (!(pk = json_loads(slash + 1, JSON_DECODE_ANY, NULL)) || !json_is_array(pk))
		goto out;
	if (!val) {
		st = t->del;
		for (size_t i = 0; i < json_array_size(pk); i++)
			bind_json(st, (int)i + 1, json_array_get(pk, i));
	} else {
		if (!(row = json_loadb(val, len, 0, NULL)))
			goto out;
		st = t->upsert;
		for (int c = 0; c < t->ncol; c++)
			bind_json(st, c + 1, json_object_get(row, t->col[c]));
	}
	rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
out:
	if (rc)
		ctl_log("etcd: key %s: cannot apply it to the view: %s", key,
			sqlite3_errmsg(m->s->sql.db));
	json_decref(pk);
	json_decref(row);
	return rc;
}

/* The whole view replaced by what etcd holds (a first read, a takeover,
 * a compacted gap): rows it does not hold go. */
static int apply_all(struct ec_etcd *m, const struct ctl_etcd_kvs *all)
{
	char sql[64];
	int rc = 0;

	if (exec(m, "BEGIN IMMEDIATE"))
		return -1;
	recording(m, 0);
	for (int i = 0; i < N_TABLES && !rc; i++) {
		snprintf(sql, sizeof(sql), "DELETE FROM %s", mirrored[i]);
		rc = exec(m, sql);
	}
	/* what a new database starts with, for an etcd that holds nothing yet */
	if (!rc)
		rc =
		    exec(m, "INSERT OR IGNORE INTO meta VALUES ('revision', 0), ('outbox_seq', 0)");
	for (size_t i = 0; i < all->n && !rc; i++)
		rc = apply_kv(m, all->kv[i].key, all->kv[i].value, all->kv[i].value_len);
	recording(m, 1);
	if (rc || exec(m, "COMMIT")) {
		exec(m, "ROLLBACK");
		return -1;
	}
	if (all->revision > m->own_rev)
		m->own_rev = all->revision;
	m->read_rev = all->revision;
	return 0;
}

/* read every row from etcd: linearizable (it has all the leader wrote), or
 * serializable (a member's own copy, also without a quorum; maybe behind) */
static int read_all(struct ec_etcd *m, bool serializable)
{
	struct ctl_etcd_kvs all = {0};
	int rc = ctl_etcd_get(m->e, m->rows, true, serializable, &all);

	if (rc) {
		ctl_log("etcd: reading the rows: %s: %s", ctl_etcd_rc_name(rc),
			ctl_etcd_errmsg(m->e));
		return -1;
	}
	rc = apply_all(m, &all);
	ctl_etcd_kvs_free(&all);
	return rc;
}

static int reread(struct ec_etcd *m)
{
	return read_all(m, false);
}

static void w_snapshot(void *arg, const struct ctl_etcd_kvs *all)
{
	struct ec_etcd *m = arg;

	/* a leader's view is newer than a snapshot older than its own writes */
	if (all->revision < m->own_rev)
		return;
	if (apply_all(m, all))
		ctl_log("etcd: the rows at revision %" PRId64 " could not replace the view",
			all->revision);
}

static bool is_mine(const struct ec_etcd *m, int64_t rev)
{
	for (size_t i = 0; i < sizeof(m->mine) / sizeof(m->mine[0]); i++)
		if (m->mine[i] == rev)
			return true;
	return false;
}

static void w_events(void *arg, const struct ctl_etcd_event *ev, size_t n)
{
	struct ec_etcd *m = arg;
	int rc = 0;

	if (m->leading) {
		/* the leader's view has its own writes already: applying them
		 * again would briefly undo a newer write of the same row */
		for (size_t i = 0; i < n; i++)
			if (ev[i].kv.mod_rev > m->read_rev && !is_mine(m, ev[i].kv.mod_rev))
				m->reread_due = true;
		return;
	}
	if (exec(m, "BEGIN IMMEDIATE"))
		return;
	recording(m, 0);
	for (size_t i = 0; i < n && !rc; i++) {
		if (ev[i].kv.mod_rev <= m->own_rev) /* in the full read already */
			continue;
		rc = apply_kv(m, ev[i].kv.key, ev[i].type == CTL_ETCD_PUT ? ev[i].kv.value : NULL,
			      ev[i].kv.value_len);
	}
	recording(m, 1);
	if (rc || exec(m, "COMMIT"))
		exec(m, "ROLLBACK");
	if (n && ev[n - 1].kv.mod_rev > m->own_rev)
		m->own_rev = ev[n - 1].kv.mod_rev;
}

static void w_trouble(void *arg, int rc, const char *msg)
{
	(void)arg;
	ctl_log("etcd: the watch of the rows: %s: %s (retried)", ctl_etcd_rc_name(rc), msg);
}

/* ---- setup ---- */

static int table_setup(struct ec_etcd *m, struct table *t, const char *name, char *err,
		       size_t errlen)
{
	sqlite3 *db = m->s->sql.db;
	char q[128], where[256] = "", cols[512] = "", vals[256] = "", set[1024] = "",
		     conflict[256] = "", sql[4096];
	sqlite3_stmt *st;
	int np = 0;

	t->name = name;
	snprintf(q, sizeof(q), "SELECT name, pk FROM pragma_table_info('%s') ORDER BY cid", name);
	if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK)
		goto fail;
	while (sqlite3_step(st) == SQLITE_ROW && t->ncol < MAX_COLS) {
		const char *c = (const char *)sqlite3_column_text(st, 0);
		size_t o;

		t->col[t->ncol] = strdup(c);
		t->pk[t->ncol] = sqlite3_column_int(st, 1) > 0;
		o = strlen(cols);
		snprintf(cols + o, sizeof(cols) - o, "%s%s", t->ncol ? "," : "", c);
		o = strlen(vals);
		snprintf(vals + o, sizeof(vals) - o, "%s?%d", t->ncol ? "," : "", t->ncol + 1);
		if (t->pk[t->ncol]) {
			np++;
			o = strlen(where);
			snprintf(where + o, sizeof(where) - o, "%s%s=?%d", np > 1 ? " AND " : "", c,
				 np);
			o = strlen(conflict);
			snprintf(conflict + o, sizeof(conflict) - o, "%s%s", np > 1 ? "," : "", c);
		} else {
			o = strlen(set);
			snprintf(set + o, sizeof(set) - o, "%s%s=excluded.%s", set[0] ? "," : "", c,
				 c);
		}
		t->ncol++;
	}
	sqlite3_finalize(st);
	if (!np) {
		snprintf(err, errlen, "table %s: no columns or no primary key", name);
		return -1;
	}
	snprintf(sql, sizeof(sql), "SELECT %s FROM %s WHERE %s", cols, name, where);
	if (sqlite3_prepare_v2(db, sql, -1, &t->read, NULL) != SQLITE_OK)
		goto fail;
	snprintf(sql, sizeof(sql), "INSERT INTO %s (%s) VALUES (%s) ON CONFLICT (%s) DO %s%s", name,
		 cols, vals, conflict, set[0] ? "UPDATE SET " : "NOTHING", set);
	if (sqlite3_prepare_v2(db, sql, -1, &t->upsert, NULL) != SQLITE_OK)
		goto fail;
	snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE %s", name, where);
	if (sqlite3_prepare_v2(db, sql, -1, &t->del, NULL) != SQLITE_OK)
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "table %s: %s", name, sqlite3_errmsg(db));
	return -1;
}

static int take_over(struct ec_etcd *m)
{
	/* the watch may lag: what the last leader wrote is all read first */
	if (reread(m))
		return -1;
	m->leading = true;
	ctl_log("election: this root leads now (etcd revision %" PRId64 ")", m->own_rev);
	return 0;
}

struct ec_etcd *ec_etcd_open(struct ec_store *s, const struct ec_etcd_conf *c, char *err,
			     size_t errlen)
{
	const struct ctl_etcd_conf ec = {c->endpoints, c->ca, c->cert, c->key, c->timeout_ms};
	const struct ctl_etcd_watch_hooks wh = {NULL, w_snapshot, w_events, w_trouble};
	struct ctl_etcd_watch_hooks h = wh;
	struct ec_etcd *m = calloc(1, sizeof(*m));
	bool won = false;

	if (!m || asprintf(&m->rows, "%srows/", c->prefix) < 0 ||
	    asprintf(&m->lkey, "%sleader", c->prefix) < 0 || !(m->id = strdup(c->id))) {
		snprintf(err, errlen, "out of memory");
		free(m);
		return NULL;
	}
	m->s = s;
	m->max_ops = c->max_ops ? c->max_ops : 127; /* + the fence: etcd's default 128 */
	if (!(m->e = ctl_etcd_new(&ec, err, errlen)))
		goto fail;
	for (int i = 0; i < N_TABLES; i++)
		if (table_setup(m, &m->t[i], mirrored[i], err, errlen))
			goto fail;
	if (reset_session(m)) {
		snprintf(err, errlen, "the change session: %s", sqlite3_errmsg(s->sql.db));
		goto fail;
	}
	/* without a quorum, a member's own copy: this root starts as a standby
	 * that serves what etcd knew (a takeover reads again, linearizably) */
	if (reread(m)) {
		if (read_all(m, true)) {
			snprintf(err, errlen, "reading %s: %s", m->rows, ctl_etcd_errmsg(m->e));
			goto fail;
		}
		ctl_log("etcd: the rows as a member has them (no quorum?): serving them, maybe "
			"behind, until the quorum returns");
	}
	h.arg = m;
	if (!(m->w = ctl_etcd_watch_start(m->e, m->rows, m->own_rev + 1, &h)) ||
	    !(m->el = ctl_etcd_elect_new(m->e, m->lkey, m->id, c->ttl_s))) {
		snprintf(err, errlen, "cannot watch %s or campaign on %s", m->rows, m->lkey);
		goto fail;
	}
	s->commit_hook = commit_hook;
	s->commit_arg = m;
	sqlite3_commit_hook(s->sql.db, commit_guard, m);
	ctl_etcd_elect_step(m->el, &won); /* the first campaign (logged if it failed) */
	if (won && take_over(m)) {
		/* holding the key unused would keep the other root out */
		ctl_etcd_elect_resign(m->el);
		won = false;
	}
	if (!won) {
		/* the election's watch reads the key without holding the loop,
		 * an answer later: waited for here, once, before this root
		 * serves, so that the standby names the leader from its first
		 * answer (a campaign due, when the key is absent, is the step's) */
		ctl_etcd_elect_wait(m->el);
		ctl_log("election: standby as %s; another root leads (%s): serving reads only",
			m->id, ec_etcd_leader(m)[0] ? ec_etcd_leader(m) : "not known yet");
	}
	return m;
fail:
	ec_etcd_close(m, false);
	return NULL;
}

int ec_etcd_step(struct ec_etcd *m)
{
	bool leader = false;
	int rc;

	ctl_etcd_watch_poll(m->w, 0);
	/* true when the leader's key went: the step below campaigns now */
	ctl_etcd_elect_poll(m->el);
	if (m->deposed) {
		m->leading = false;
		return EC_ETCD_LOST;
	}
	if (!m->leading) {
		/* campaigns when ctl_etcd_elect says one is due (a failure is
		 * logged there, with when the next is due) */
		ctl_etcd_elect_step(m->el, &leader);
		if (!leader)
			return EC_ETCD_SAME;
		if (take_over(m)) {
			ctl_etcd_elect_resign(m->el);
			return EC_ETCD_SAME;
		}
		return EC_ETCD_WON;
	}
	/* renews the lease when due (a request every TTL/3), else nothing */
	rc = ctl_etcd_elect_step(m->el, &leader);
	if (leader) {
		if (m->reread_due && !reread(m)) {
			m->reread_due = false;
			ctl_log("etcd: a write of ours applied late: the view was reread");
		}
		return EC_ETCD_SAME;
	}
	ctl_log("election: no longer the leader%s%s", rc ? ": " : "",
		rc ? ctl_etcd_errmsg(m->e) : "");
	m->leading = false;
	m->deposed = true;
	return EC_ETCD_LOST;
}

bool ec_etcd_leading(const struct ec_etcd *m)
{
	return m && m->leading && !m->deposed;
}

const char *ec_etcd_leader(const struct ec_etcd *m)
{
	/* as the election's watch last saw the key, stepped with the rows'
	 * (ec_etcd_step): a read here would hold the loop for up to Timeout
	 * per member while etcd is in trouble, when a standby should answer */
	if (m->leading && !m->deposed)
		return m->id;
	return ctl_etcd_elect_leader(m->el);
}

void ec_etcd_close(struct ec_etcd *m, bool resign)
{
	if (!m)
		return;
	if (m->s->commit_arg == m) {
		m->s->commit_hook = NULL;
		m->s->commit_arg = NULL;
		sqlite3_commit_hook(m->s->sql.db, NULL, NULL);
	}
	if (m->w)
		ctl_etcd_watch_stop(m->w);
	ctl_etcd_elect_free(m->el, resign && m->leading && !m->deposed);
	if (m->sess)
		sqlite3session_delete(m->sess);
	for (int i = 0; i < N_TABLES; i++) {
		sqlite3_finalize(m->t[i].read);
		sqlite3_finalize(m->t[i].upsert);
		sqlite3_finalize(m->t[i].del);
		for (int c = 0; c < m->t[i].ncol; c++)
			free(m->t[i].col[c]);
	}
	ctl_etcd_free(m->e);
	free(m->rows);
	free(m->lkey);
	free(m->id);
	free(m);
}
