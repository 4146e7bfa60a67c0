// SPDX-License-Identifier: BSD-2-Clause
/* nodeagentd's SQLite store; see na_store.h. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "na_store.h"

static const char schema[] =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=NORMAL;"
    "CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS pods(id TEXT PRIMARY KEY, app TEXT NOT NULL,"
    " state TEXT NOT NULL, reason TEXT NOT NULL, message TEXT NOT NULL, slot INTEGER NOT NULL,"
    " ip INTEGER NOT NULL, pid INTEGER NOT NULL, start INTEGER NOT NULL,"
    " standby INTEGER NOT NULL, svc INTEGER NOT NULL, terminating INTEGER NOT NULL,"
    " spec TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS sessions(id TEXT PRIMARY KEY, pod TEXT NOT NULL,"
    " state TEXT NOT NULL, reason TEXT NOT NULL, clients INTEGER NOT NULL,"
    " grace INTEGER NOT NULL, kill INTEGER NOT NULL, data TEXT NOT NULL, eps TEXT NOT NULL);";

/* a store of a version with one container per pod gains every container's
 * pid and start time (adoption after a restart watches them all) */
static const char migrate_ctrs[] = "ALTER TABLE pods ADD COLUMN ctrs TEXT NOT NULL DEFAULT ''";
/* a store of a version before session owners: its sessions have none (they
 * count for nobody on a core that rebuilds them, as before) */
static const char migrate_owner[] =
    "ALTER TABLE sessions ADD COLUMN owner TEXT NOT NULL DEFAULT ''";

static const char q_rev_get[] = "SELECT v FROM meta WHERE k='revision'";
static const char q_rev_put[] = "INSERT OR REPLACE INTO meta(k,v) VALUES ('revision',?1)";
static const char q_meta_get[] = "SELECT v FROM meta WHERE k=?1";
static const char q_meta_put[] = "INSERT OR REPLACE INTO meta(k,v) VALUES (?1,?2)";
static const char q_pod_put[] =
    "INSERT OR REPLACE INTO pods(id,app,state,reason,message,slot,ip,pid,start,standby,svc,"
    "terminating,spec,ctrs) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14)";
/* a pod written without its spec (the agent drops it once the pod runs)
 * keeps the one written with it */
static const char q_pod_upd[] =
    "UPDATE pods SET app=?2,state=?3,reason=?4,message=?5,slot=?6,ip=?7,pid=?8,start=?9,"
    "standby=?10,svc=?11,terminating=?12,ctrs=?14 WHERE id=?1";
static const char q_pod_del[] = "DELETE FROM pods WHERE id=?1";
static const char q_pod_all[] =
    "SELECT id,app,state,reason,message,slot,ip,pid,start,standby,svc,terminating,spec,ctrs "
    "FROM pods ORDER BY slot";
static const char q_sess_put[] =
    "INSERT OR REPLACE INTO sessions(id,pod,state,reason,clients,grace,kill,data,eps,owner) "
    "VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)";
static const char q_sess_del[] = "DELETE FROM sessions WHERE id=?1";
static const char q_sess_all[] =
    "SELECT id,pod,state,reason,clients,grace,kill,data,eps,owner FROM sessions ORDER BY id";

static int fail(struct na_store *s, const char *what)
{
	snprintf(s->err, sizeof(s->err), "%s: %s", what, sqlite3_errmsg(s->sql.db));
	return -1;
}

const char *na_store_errmsg(struct na_store *s)
{
	return s->err;
}

int64_t na_store_revision(const struct na_store *s)
{
	return s->rev;
}

static int load_rev(struct na_store *s)
{
	sqlite3_stmt *st = ctl_db_stmt(&s->sql, q_rev_get);
	int rc;

	if (!st)
		return fail(s, "revision");
	rc = sqlite3_step(st);
	s->rev = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	ctl_db_release(&s->sql, st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : fail(s, "revision");
}

/* In place of SQLite's autocheckpoint (a hook replaces it): see na_store.h. */
static int on_wal(void *arg, sqlite3 *db, const char *name, int frames)
{
	struct na_store *s = arg;

	s->wal_frames = frames;
	if (frames >= NA_WAL_BACKSTOP &&
	    sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL) == SQLITE_OK)
		s->wal_frames = 0;
	return SQLITE_OK;
}

/* table's column col, added by the statement add when it is missing */
static int add_column(struct na_store *s, const char *table, const char *col, const char *add,
		      char **e)
{
	char q[64];
	sqlite3_stmt *st;
	bool has = false;

	snprintf(q, sizeof(q), "PRAGMA table_info(%s)", table);
	if (sqlite3_prepare_v2(s->sql.db, q, -1, &st, NULL) != SQLITE_OK)
		return fail(s, "columns");
	while (sqlite3_step(st) == SQLITE_ROW)
		has |= !strcmp((const char *)sqlite3_column_text(st, 1), col);
	sqlite3_finalize(st);
	return has ? 0 : sqlite3_exec(s->sql.db, add, NULL, NULL, e) != SQLITE_OK;
}

int na_store_open(struct na_store *s, const char *path, char *err, size_t errlen)
{
	char *e = NULL;

	memset(s, 0, sizeof(*s));
	if (sqlite3_open_v2(path, &s->sql.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
	    SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", path,
			 s->sql.db ? sqlite3_errmsg(s->sql.db) : "out of memory");
		sqlite3_close(s->sql.db);
		s->sql.db = NULL;
		return -1;
	}
	sqlite3_busy_timeout(s->sql.db, 5000);
	sqlite3_wal_hook(s->sql.db, on_wal, s);
	if (sqlite3_exec(s->sql.db, schema, NULL, NULL, &e) != SQLITE_OK ||
	    add_column(s, "pods", "ctrs", migrate_ctrs, &e) ||
	    add_column(s, "sessions", "owner", migrate_owner, &e) || load_rev(s)) {
		snprintf(err, errlen, "%s: %s", path, e ? e : s->err);
		sqlite3_free(e);
		na_store_close(s);
		return -1;
	}
	return 0;
}

void na_store_close(struct na_store *s)
{
	if (!s->sql.db)
		return;
	ctl_db_forget(&s->sql);
	sqlite3_close(s->sql.db);
	s->sql.db = NULL;
}

int na_store_meta_get(struct na_store *s, const char *key, char *buf, size_t len)
{
	sqlite3_stmt *st = ctl_db_stmt(&s->sql, q_meta_get);
	int rc;

	buf[0] = 0;
	if (!st)
		return fail(s, "meta");
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		snprintf(buf, len, "%s", (const char *)sqlite3_column_text(st, 0));
	ctl_db_release(&s->sql, st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return fail(s, "meta");
	return rc == SQLITE_ROW ? 0 : 1;
}

static int step_done(struct na_store *s, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);

	ctl_db_release(&s->sql, st);
	return rc == SQLITE_DONE ? 0 : fail(s, what);
}

int na_store_meta_put(struct na_store *s, const char *key, const char *val)
{
	sqlite3_stmt *st = ctl_db_stmt(&s->sql, q_meta_put);
	int opened, rc;

	if (!st)
		return fail(s, "meta");
	opened = ctl_db_one_begin(&s->sql, true);
	if (opened < 0) {
		ctl_db_release(&s->sql, st);
		return fail(s, "meta");
	}
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, val, -1, SQLITE_STATIC);
	rc = step_done(s, st, "meta");
	return ctl_db_one_end(&s->sql, opened, rc);
}

/* Inside a group: the revision + 1, written. */
static int bump_rev(struct na_store *s)
{
	sqlite3_stmt *st = ctl_db_stmt(&s->sql, q_rev_put);

	if (!st)
		return fail(s, "revision");
	sqlite3_bind_int64(st, 1, s->rev + 1);
	return step_done(s, st, "revision");
}

/* The group around a write and its revision: *rev and s->rev move only
 * once the commit went through. */
static int end_write(struct na_store *s, int rc, bool bump, int64_t *rev)
{
	rc = ctl_db_tx_end(&s->sql, rc);
	if (rc) {
		if (!s->err[0])
			fail(s, "commit");
		return -1;
	}
	if (bump) {
		s->rev++;
		if (rev)
			*rev = s->rev;
	}
	return 0;
}

int na_store_pod_put(struct na_store *s, const struct na_pod *p, bool bump, int64_t *rev)
{
	sqlite3_stmt *st;
	char *spec, *ctrs;
	int rc;

	s->err[0] = 0;
	if (ctl_db_tx_begin(&s->sql, true))
		return fail(s, "begin");
	st = ctl_db_stmt(&s->sql, p->spec ? q_pod_put : q_pod_upd);
	spec = p->spec ? json_dumps(p->spec, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
	if (!st || (p->spec && !spec)) {
		free(spec);
		ctl_db_release(&s->sql, st);
		return end_write(s, fail(s, "pod"), bump, rev);
	}
	sqlite3_bind_text(st, 1, p->id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, p->app, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, na_pod_state_name(p->state), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, p->reason, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, p->message, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 6, p->slot);
	sqlite3_bind_int64(st, 7, p->ip_be);
	sqlite3_bind_int64(st, 8, p->pid);
	sqlite3_bind_int64(st, 9, (sqlite3_int64)p->start);
	sqlite3_bind_int(st, 10, p->standby);
	sqlite3_bind_int(st, 11, p->svc);
	sqlite3_bind_int(st, 12, p->terminating);
	if (spec)
		sqlite3_bind_text(st, 13, spec, -1, SQLITE_TRANSIENT);
	free(spec);
	ctrs = na_ctrs_str(p);
	sqlite3_bind_text(st, 14, ctrs ? ctrs : "", -1, SQLITE_TRANSIENT);
	free(ctrs);
	rc = step_done(s, st, "pod");
	if (!rc && !p->spec && sqlite3_changes(s->sql.db) != 1) {
		snprintf(s->err, sizeof(s->err),
			 "pod %.200s: written without its spec and not stored before", p->id);
		rc = -1;
	}
	if (!rc && bump)
		rc = bump_rev(s);
	return end_write(s, rc, bump, rev);
}

static int del(struct na_store *s, const char *sql, const char *id)
{
	sqlite3_stmt *st = ctl_db_stmt(&s->sql, sql);
	int opened;

	if (!st)
		return fail(s, "delete");
	opened = ctl_db_one_begin(&s->sql, true);
	if (opened < 0) {
		ctl_db_release(&s->sql, st);
		return fail(s, "delete");
	}
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	return ctl_db_one_end(&s->sql, opened, step_done(s, st, "delete"));
}

int na_store_pod_del(struct na_store *s, const char *id)
{
	return del(s, q_pod_del, id);
}

int na_store_sess_del(struct na_store *s, const char *id)
{
	return del(s, q_sess_del, id);
}

int na_store_sess_put(struct na_store *s, const struct na_sess *x, bool bump, int64_t *rev)
{
	sqlite3_stmt *st;
	json_t *a = na_eps_json(x);
	char *eps;
	int rc;

	/* form 2 keeps the other host (and, on the ingress host, the pod's
	 * address) with the endpoints; form 1 rows stay a plain array */
	if (x->peer_be)
		a = json_pack("{s:o,s:I,s:I}", "endpoints", a, "peer", (json_int_t)x->peer_be,
			      "podIP", (json_int_t)x->pod_ip_be);
	s->err[0] = 0;
	if (ctl_db_tx_begin(&s->sql, true)) {
		json_decref(a);
		return fail(s, "begin");
	}
	st = ctl_db_stmt(&s->sql, q_sess_put);
	eps = json_dumps(a, JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(a);
	if (!st || !eps) {
		free(eps);
		ctl_db_release(&s->sql, st);
		return end_write(s, fail(s, "session"), bump, rev);
	}
	sqlite3_bind_text(st, 1, x->id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, x->pod, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, na_sess_state_name(x->state), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, x->reason, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 5, x->clients);
	sqlite3_bind_int(st, 6, (int)x->grace_s);
	sqlite3_bind_int(st, 7, x->kill_on_close);
	sqlite3_bind_text(st, 8, x->data ? x->data : "", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 9, eps, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 10, x->owner, -1, SQLITE_STATIC);
	free(eps);
	rc = step_done(s, st, "session");
	if (!rc && bump)
		rc = bump_rev(s);
	return end_write(s, rc, bump, rev);
}

static const char *col(sqlite3_stmt *st, int i)
{
	const char *v = (const char *)sqlite3_column_text(st, i);

	return v ? v : "";
}

static int load_pods(struct na_store *s, na_pod_fn pf, void *arg)
{
	sqlite3_stmt *st = ctl_db_stmt(&s->sql, q_pod_all);
	int rc = 0, r;

	if (!st)
		return fail(s, "pods");
	while (!rc && (r = sqlite3_step(st)) == SQLITE_ROW) {
		struct na_pod p;
		char err[128];

		memset(&p, 0, sizeof(p));
		snprintf(p.id, sizeof(p.id), "%s", col(st, 0));
		snprintf(p.app, sizeof(p.app), "%s", col(st, 1));
		if (na_pod_state_parse(col(st, 2), &p.state))
			p.state = NA_POD_FAILED;
		snprintf(p.reason, sizeof(p.reason), "%s", col(st, 3));
		snprintf(p.message, sizeof(p.message), "%s", col(st, 4));
		p.slot = sqlite3_column_int(st, 5);
		p.ip_be = (uint32_t)sqlite3_column_int64(st, 6);
		p.pid = (pid_t)sqlite3_column_int64(st, 7);
		p.start = (uint64_t)sqlite3_column_int64(st, 8);
		p.standby = sqlite3_column_int(st, 9);
		p.svc = sqlite3_column_int(st, 10);
		p.terminating = sqlite3_column_int(st, 11);
		p.spec = json_loads(col(st, 12), JSON_DECODE_ANY, NULL);
		/* a store of the one-container version: pid is the only one */
		if (na_ctrs_parse(&p, col(st, 13)) || (!p.n_ctrs && p.pid > 0)) {
			p.ctrs[0] = (struct na_ctr){p.pid, p.start};
			p.n_ctrs = 1;
		}
		na_pod_ports_from_spec(&p, err, sizeof(err)); /* checked when it was created */
		rc = pf(arg, &p);
	}
	ctl_db_release(&s->sql, st);
	return rc;
}

static int load_sessions(struct na_store *s, na_sess_fn sf, void *arg)
{
	sqlite3_stmt *st = ctl_db_stmt(&s->sql, q_sess_all);
	int rc = 0;

	if (!st)
		return fail(s, "sessions");
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		struct na_sess x;
		json_t *eps;

		memset(&x, 0, sizeof(x));
		snprintf(x.id, sizeof(x.id), "%s", col(st, 0));
		snprintf(x.pod, sizeof(x.pod), "%s", col(st, 1));
		if (na_sess_state_parse(col(st, 2), &x.state))
			x.state = NA_SESS_CLOSED;
		snprintf(x.reason, sizeof(x.reason), "%s", col(st, 3));
		x.clients = sqlite3_column_int(st, 4);
		x.grace_s = (unsigned)sqlite3_column_int(st, 5);
		x.kill_on_close = sqlite3_column_int(st, 6);
		x.data = strdup(col(st, 7));
		eps = json_loads(col(st, 8), 0, NULL);
		if (json_is_object(eps)) {
			x.peer_be = (uint32_t)json_integer_value(json_object_get(eps, "peer"));
			x.pod_ip_be = (uint32_t)json_integer_value(json_object_get(eps, "podIP"));
			na_eps_from_json(&x, json_object_get(eps, "endpoints"));
		} else {
			na_eps_from_json(&x, eps);
		}
		json_decref(eps);
		/* checked when it was opened; a store edited since is not trusted */
		snprintf(x.owner, sizeof(x.owner), "%s", col(st, 9));
		if (x.owner[0] && na_owner_check(x.owner))
			x.owner[0] = 0;
		rc = sf(arg, &x);
	}
	ctl_db_release(&s->sql, st);
	return rc;
}

int na_store_load(struct na_store *s, na_pod_fn pf, na_sess_fn sf, void *arg)
{
	return load_pods(s, pf, arg) || load_sessions(s, sf, arg) ? -1 : 0;
}

int na_store_reset(struct na_store *s)
{
	int rc = ctl_db_tx_begin(&s->sql, true);

	if (!rc)
		rc = ctl_db_run(&s->sql, "DELETE FROM pods") ||
		     ctl_db_run(&s->sql, "DELETE FROM sessions") ||
		     ctl_db_run(&s->sql, "DELETE FROM meta WHERE k='revision'");
	if (ctl_db_tx_end(&s->sql, rc ? -1 : 0))
		return fail(s, "reset");
	s->rev = 0;
	return 0;
}

int na_store_bump(struct na_store *s, int64_t *rev)
{
	s->err[0] = 0;
	if (ctl_db_tx_begin(&s->sql, true))
		return fail(s, "begin");
	return end_write(s, bump_rev(s), true, rev);
}

int na_store_checkpoint(struct na_store *s)
{
	sqlite3_stmt *st;
	int log = 0, done = 0, opened, rc;

	s->err[0] = 0;
	if (s->wal_frames < NA_WAL_QUIET_MIN)
		return 0;
	if (sqlite3_wal_checkpoint_v2(s->sql.db, NULL, SQLITE_CHECKPOINT_PASSIVE, &log, &done) !=
	    SQLITE_OK)
		return fail(s, "checkpoint");
	s->wal_frames = log - done;
	if (done < log)
		return 1; /* a reader holds the rest: the next quiet moment */
	/* the first write after a checkpoint restarts the WAL and syncs its
	 * header: this one (the revision as it is), not a report's */
	st = ctl_db_stmt(&s->sql, q_rev_put);
	if (!st)
		return fail(s, "checkpoint");
	opened = ctl_db_one_begin(&s->sql, true);
	if (opened < 0) {
		ctl_db_release(&s->sql, st);
		return fail(s, "checkpoint");
	}
	sqlite3_bind_int64(st, 1, s->rev);
	rc = step_done(s, st, "checkpoint");
	return ctl_db_one_end(&s->sql, opened, rc) ? -1 : 1;
}
