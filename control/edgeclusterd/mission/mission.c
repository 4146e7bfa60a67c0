// SPDX-License-Identifier: BSD-2-Clause
/*
 * Missions applied on this cluster. One reconciler per mission
 * name compares what the store wants (the mission row and its placement)
 * with what this cluster applied (the `applied` table) and runs the
 * difference through the driver, one operation at a time per mission
 * (the operations: mission_ops.c).
 *
 * Reconciles and state checks wait in a queue and run in turns from a
 * zero-delay timer, each turn's store writes one group: a batch of a
 * thousand missions neither blocks the loop nor costs a thousand commits.
 *
 * "applying" is recorded before the first command runs and "applied" after
 * the last one succeeded, so a restart re-runs exactly what may not have
 * completed (the contract for mission authors: applies and reverses are
 * idempotent) and never what completed. The record keeps the spec that was
 * applied: a deleted mission's row is gone, its reverse runs from there.
 * Everything runs from lws callbacks and timers; commands never block the
 * loop (the runner, ctl_exec.c). State values: docs/edgecluster.md, "Mission state".
 */
#include <errno.h>
#include <signal.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mission.h"

/* A turn of the work queue ends after this many missions or this long,
 * whichever comes first: the API, the hub and the uplink are served in
 * between (a batch of 1000 in one callback kept them silent for a minute). */
#define CHUNK_MAX 128
#define CHUNK_US  4000

/* ---- runtimes, timers, spec fields ---- */

static const char *mission_rt_key(const void *e)
{
	return ((const struct mission_rt *)e)->name;
}

static struct mission_rt *get(struct ec_run *rn, const char *name)
{
	struct mission_rt *m = htab_find(&rn->byname, name);

	if (m || strlen(name) > EC_MISSION_NAME_MAX || !(m = calloc(1, sizeof(*m))))
		return m;
	m->run = rn;
	strcpy(m->name, name);
	if (htab_add(&rn->byname, m)) {
		free(m);
		return NULL;
	}
	return m;
}

static void mission_rt_free(struct mission_rt *m)
{
	lws_sul_cancel(&m->sul);
	lws_dll2_remove(&m->q);
	json_decref(m->spec);
	free(m->spec_text);
	free(m->state);
	free(m);
}

static void forget(struct mission_rt *m)
{
	htab_del(&m->run->byname, m);
	mission_rt_free(m);
}

static void on_timer(lws_sorted_usec_list_t *sul);

/* A check its timer queued is moot once the timer is re-armed or disarmed. */
static void unqueue_check(struct mission_rt *m)
{
	m->qflags &= ~(unsigned)Q_CHECK;
	if (!m->qflags)
		lws_dll2_remove(&m->q);
}

void mission_arm(struct mission_rt *m, enum mission_timer t, unsigned seconds)
{
	unqueue_check(m);
	m->timer = t;
	lws_sul_schedule(m->run->lws, 0, &m->sul, on_timer, (lws_usec_t)seconds * LWS_US_PER_SEC);
}

void mission_disarm(struct mission_rt *m)
{
	unqueue_check(m);
	m->timer = T_NONE;
	lws_sul_cancel(&m->sul);
}

unsigned mission_seconds_at(json_t *spec, const char *obj, const char *key, unsigned dflt)
{
	json_t *v = json_object_get(json_object_get(spec, obj), key);

	return json_is_integer(v) && json_integer_value(v) > 0 ? (unsigned)json_integer_value(v)
							       : dflt;
}

char **mission_argv_at(json_t *spec, const char *obj, const char *key)
{
	json_t *a = json_object_get(json_object_get(spec, obj), key), *v;
	char **argv;
	size_t i;

	if (!json_array_size(a) || !(argv = calloc(json_array_size(a) + 1, sizeof(*argv))))
		return NULL;
	json_array_foreach(a, i, v) if (!(argv[i] = strdup(json_string_value(v) ?: "")))
	{
		ec_argv_free(argv);
		return NULL;
	}
	return argv;
}

const char *mission_content_of(json_t *spec)
{
	return json_string_value(json_object_get(spec, "content"));
}

/* What "the same spec" means for applying: uid, content and command.
 * Placement, stateCheck and labels can change without re-running anything. */
static void digest_of(const char *uid, json_t *spec, char out[33])
{
	json_t *what =
	    json_pack("{s:s,s:O?,s:O?}", "uid", uid, "content", json_object_get(spec, "content"),
		      "command", json_object_get(spec, "command"));
	char *text = json_dumps(what, JSON_COMPACT | JSON_SORT_KEYS);
	unsigned char h[16];

	crypto_generichash(h, sizeof(h), (const unsigned char *)(text ? text : ""),
			   text ? strlen(text) : 0, NULL, 0);
	sodium_bin2hex(out, 33, h, sizeof(h));
	free(text);
	json_decref(what);
}

/* This cluster's own key of the mission's state: written only when it
 * changes, and then the tree is told (on_state: the uplink reports it). */
void mission_set_state(struct mission_rt *m, const char *value)
{
	struct ecd *d = m->run->d;
	char v[STATE_MAX + 8];
	int rc;

	m->state_said++;
	ec_state_text(value, strlen(value), v, sizeof(v), STATE_MAX);
	if (m->cached && m->state && !strcmp(m->state, v))
		return;
	rc = ec_store_state_put(&d->store, m->name, d->conf.name, v);
	if (rc == -1) {
		ctl_log("mission %s: store: state: %s", m->name, ec_store_errmsg(&d->store));
		return;
	}
	free(m->state);
	m->state = strdup(v);
	m->cached = m->state != NULL;
	if (!rc && d->on_state)
		d->on_state(d, m->name);
}

void mission_set_statef(struct mission_rt *m, const char *fmt, ...)
{
	char v[STATE_MAX + 256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(v, sizeof(v), fmt, ap);
	va_end(ap);
	mission_set_state(m, v);
}

/* Remember the stored value of our key, so restarts do not rewrite it. */
static void cache_state(struct mission_rt *m)
{
	char *v;
	int rc;

	if (m->cached)
		return;
	rc = ec_store_state_get(&m->run->d->store, m->name, m->run->d->conf.name, &v);
	if (rc == -1)
		return; /* asked again next time */
	free(m->state);
	m->state = v;
	m->cached = true;
}

/* ---- the record, the end of an operation ---- */

void mission_put_record(struct mission_rt *m, const char *phase)
{
	struct ec_store *s = &m->run->d->store;
	struct ec_applied a = {0};

	snprintf(a.name, sizeof(a.name), "%s", m->name);
	snprintf(a.uid, sizeof(a.uid), "%s", m->uid);
	snprintf(a.digest, sizeof(a.digest), "%s", m->digest);
	snprintf(a.phase, sizeof(a.phase), "%s", phase);
	a.spec = m->spec_text;
	a.fails = m->fails;
	if (!a.spec || ec_store_applied_put(s, &a))
		ctl_log("mission %s: store: record %s: %s", m->name, phase, ec_store_errmsg(s));
}

void mission_finish_op(struct mission_rt *m)
{
	m->op = OP_NONE;
	json_decref(m->spec);
	m->spec = NULL;
	free(m->spec_text);
	m->spec_text = NULL;
	if (m->dirty) {
		m->dirty = false;
		mission_reconcile(m, false);
	}
}

/* ---- the work queue: reconciles and checks in turns ---- */

/*
 * The store writes of one turn (records, states, outbox entries) are one
 * repairable group: one commit without an fsync instead of ~6 fsynced ones
 * per mission. What they record is re-derived or sent again: the missions
 * and the records say what to redo after a crash. The group commits before
 * the callback returns, so before the runner spawns anything the turn queued
 * (it spawns from a timer of its own): "applying" is committed before the
 * first command of an apply runs.
 */
void mission_group_begin(struct ec_run *rn)
{
	struct ec_store *s = &rn->d->store;

	if (ec_store_tx_begin(s, EC_TX_REPAIRABLE))
		ctl_log("missions: store: cannot open a group (writing one by one): %s",
			ec_store_errmsg(s));
	else
		rn->grouped++;
}

void mission_group_end(struct ec_run *rn)
{
	struct ec_store *s = &rn->d->store;
	struct mission_rt *m;

	if (!rn->grouped)
		return;
	rn->grouped--;
	if (!ec_store_tx_end(s, 0))
		return;
	/* rolled back: what we remember of our state keys may be wrong now */
	ctl_log("missions: store: commit: %s (states are written again at their next change)",
		ec_store_errmsg(s));
	for (size_t i = 0; (m = htab_next(&rn->byname, &i));)
		m->cached = false;
}

static uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void on_work(lws_sorted_usec_list_t *sul);

/* Owe m a reconcile or a check: it runs from the queue, in arrival order. */
static void enqueue(struct mission_rt *m, unsigned what)
{
	struct ec_run *rn = m->run;

	m->qflags |= what;
	if (lws_dll2_is_detached(&m->q))
		lws_dll2_add_tail(&m->q, &rn->queue);
	if (!rn->work_armed) {
		rn->work_armed = true;
		lws_sul_schedule(rn->lws, 0, &rn->sul_work, on_work, 0);
	}
}

static void on_work(lws_sorted_usec_list_t *sul)
{
	struct ec_run *rn = lws_container_of(sul, struct ec_run, sul_work);
	uint64_t t0 = mono_us();
	int n = 0;

	rn->work_armed = false;
	mission_group_begin(rn);
	while (rn->queue.head && n < CHUNK_MAX && (!n || mono_us() - t0 < CHUNK_US)) {
		struct mission_rt *m = lws_container_of(rn->queue.head, struct mission_rt, q);
		unsigned what = m->qflags;

		lws_dll2_remove(&m->q);
		m->qflags = 0;
		n++;
		if (what & (Q_RECONCILE | Q_RETRY))
			mission_reconcile(m, what & Q_RETRY); /* may free m */
		else
			mission_op_check(m);
	}
	mission_group_end(rn);
	if (rn->queue.head && !rn->work_armed) {
		rn->work_armed = true; /* the rest after the loop served everyone else */
		lws_sul_schedule(rn->lws, 0, &rn->sul_work, on_work, 0);
	}
}

static void on_timer(lws_sorted_usec_list_t *sul)
{
	struct mission_rt *m = lws_container_of(sul, struct mission_rt, sul);
	enum mission_timer t = m->timer;

	m->timer = T_NONE;
	enqueue(m, t == T_CHECK ? Q_CHECK : Q_RECONCILE | Q_RETRY);
}

struct want {
	bool row, matched;
	struct ec_row r;
	json_t *spec;
	char digest[33];
};

static int load_want(struct mission_rt *m, struct want *w)
{
	struct ecd *d = m->run->d;
	int rc;

	memset(w, 0, sizeof(*w));
	rc = ec_store_mission_bare(&d->store, m->name, &w->r);
	if (rc == EC_ST_NOTFOUND)
		return 0;
	if (rc)
		return -1;
	w->row = true;
	w->spec = json_loads(w->r.spec, 0, NULL);
	w->matched = w->spec && ec_placement_match(w->spec, d->conf.name, d->self_labels);
	if (w->matched)
		digest_of(w->r.uid, w->spec, w->digest);
	cache_state(m);
	return 0;
}

static void want_free(struct want *w)
{
	if (w->row)
		ec_row_free(&w->r);
	json_decref(w->spec);
}

/* A root on etcd resumes the records of the root that led before it, which
 * may have run on another host: with the local driver the content file it
 * wrote is in that process's work directory, not in this one's. It is
 * written here (nothing runs again: the command ran where it was applied). */
static void restore_content(struct mission_rt *m, json_t *spec)
{
	struct ec_run *rn = m->run;
	const char *content = mission_content_of(spec);
	char dir[EC_PATH_MAX + 300], path[EC_PATH_MAX + 310];

	if (!rn->d->conf.etcd || rn->dv.kind != EC_DRIVER_LOCAL || !content ||
	    ec_drv_workdir(&rn->dv, m->name, false, dir, sizeof(dir)) ||
	    (size_t)snprintf(path, sizeof(path), "%s/content", dir) >= sizeof(path) ||
	    !access(path, F_OK))
		return;
	if (ec_drv_write_content(&rn->dv, m->name, content, path, sizeof(path)))
		ctl_log("mission %s: content: cannot write %s: %s", m->name, path, strerror(errno));
	else
		ctl_log("mission %s: content written to %s (applied by the root that led before)",
			m->name, path);
}

void mission_reconcile(struct mission_rt *m, bool retry)
{
	struct ec_store *s = &m->run->d->store;
	struct ec_applied a;
	struct want w;
	int arc;

	if (load_want(m, &w)) {
		ctl_log("mission %s: store: %s", m->name, ec_store_errmsg(s));
		return;
	}
	if (m->job) {
		/* one operation at a time; a reverse always completes (it cleans up) */
		bool same = w.matched && !strcmp(w.r.uid, m->uid) && !strcmp(w.digest, m->digest);

		if (m->op == OP_CHECK || m->op == OP_REVERSE || !same)
			m->dirty = true;
		if (m->op != OP_REVERSE && !same)
			ctl_job_cancel(m->job); /* its callback reconciles */
		want_free(&w);
		return;
	}
	arc = ec_store_applied_get(s, m->name, &a);
	if (arc == -1) {
		ctl_log("mission %s: store: %s", m->name, ec_store_errmsg(s));
		want_free(&w);
		return;
	}
	if (!w.matched || (!arc && strcmp(a.uid, w.r.uid))) {
		/* not (or no longer) here, or another incarnation was applied */
		if (!arc)
			mission_op_reverse(m, &a);
		else if (w.row) {
			mission_disarm(m);
			mission_set_state(m, "not matched");
		} else {
			want_free(&w);
			forget(m);
			return;
		}
	} else if (!arc && !strcmp(a.digest, w.digest) && !strcmp(a.phase, "applied")) {
		/* applied already: nothing runs again; keep the reverse current */
		restore_content(m, w.spec);
		if (strcmp(w.r.spec, a.spec)) {
			snprintf(m->uid, sizeof(m->uid), "%s", a.uid);
			snprintf(m->digest, sizeof(m->digest), "%s", a.digest);
			m->fails = 0;
			m->spec_text = w.r.spec;
			mission_put_record(m, "applied");
			m->spec_text = NULL;
		}
		if (json_object_get(w.spec, "stateCheck"))
			mission_arm(m, T_CHECK, 0);
		else {
			mission_disarm(m);
			mission_set_state(m, "applied");
		}
	} else if (!arc && !strcmp(a.digest, w.digest) && !strcmp(a.phase, "failed") && !retry) {
		/* failed with this spec: the retry timer (armed at the failure, or
		 * now after a restart) tries again */
		if (m->timer != T_RETRY)
			mission_arm(m, T_RETRY, RETRY_BASE_S);
	} else {
		/* new, changed, failed and due, or interrupted (applying/reversing);
		 * a retry of the same spec keeps counting failures (backoff) */
		mission_op_start(m, w.r.uid, w.spec, w.r.spec, w.digest,
				 !arc && !strcmp(a.digest, w.digest) ? a.fails : 0);
	}
	if (!arc)
		ec_applied_free(&a);
	want_free(&w);
}

/* ---- start and stop ---- */

void mission_changed(struct ec_run *rn, const char *name, bool deleted)
{
	struct mission_rt *m;

	(void)deleted; /* the store says what is there; a delete is a missing row */
	if ((m = get(rn, name)))
		enqueue(m, Q_RECONCILE);
}

const struct ec_nodes *mission_nodes(const struct ec_run *rn)
{
	return &rn->np.lists;
}

static int kill_orphan(void *arg, struct ec_applied *a)
{
	(void)arg;
	/* the previous run was killed while this ran: stop it before applying
	 * again, unless the pid now belongs to someone else (start time differs) */
	if (a->pgid > 0 && a->pstart && ec_proc_starttime(a->pgid) == a->pstart &&
	    !kill(-a->pgid, SIGKILL))
		ctl_log("mission %s: killed process group %d left %s by the previous run", a->name,
			a->pgid, a->phase);
	return 0;
}

static int collect_row(void *arg, struct ec_row *r)
{
	json_object_set_new(arg, r->name, json_true());
	return 0;
}

static int collect_applied(void *arg, struct ec_applied *a)
{
	json_object_set_new(arg, a->name, json_true());
	return 0;
}

struct ec_run *mission_start(struct ecd *d, struct lws_context *lws, struct ctl_exec *x)
{
	struct ec_run *rn = calloc(1, sizeof(*rn));
	json_t *names = json_object(), *v;
	const char *name;
	int rc = 0;

	if (!rn || !names) {
		ctl_log("missions: %s", strerror(errno));
		free(rn);
		json_decref(names);
		return NULL;
	}
	rn->d = d;
	rn->lws = lws;
	rn->x = x;
	rn->byname.key = mission_rt_key;
	ec_drv_init(&rn->dv, &d->conf);
	/* names first, then reconcile: no store write while a read is open */
	if (ec_store_applied_list(&d->store, kill_orphan, NULL) ||
	    ec_store_list(&d->store, EC_T_MISSIONS, collect_row, names) ||
	    ec_store_applied_list(&d->store, collect_applied, names)) {
		ctl_log("missions: store: %s", ec_store_errmsg(&d->store));
		rc = -1;
	}
	json_object_foreach(names, name, v) mission_changed(rn, name, false);
	nodes_start(rn);
	ctl_log("missions: driver %s, work directory %s, %zu missions or records",
		ec_driver_name(rn->dv.kind), rn->dv.workroot, json_object_size(names));
	json_decref(names);
	if (rc) {
		mission_stop(rn);
		return NULL;
	}
	return rn;
}

void mission_stop(struct ec_run *rn)
{
	struct mission_rt *m;

	if (!rn)
		return;
	lws_sul_cancel(&rn->sul_work);
	nodes_stop(rn);
	ec_drv_close(&rn->dv);
	for (size_t i = 0; (m = htab_next(&rn->byname, &i));)
		mission_rt_free(m);
	htab_free(&rn->byname);
	free(rn);
}
