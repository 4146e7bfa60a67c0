// SPDX-License-Identifier: BSD-2-Clause
/*
 * Missions applied on this cluster (slice 3). One reconciler per mission
 * name compares what the store wants (the mission row and its placement)
 * with what this cluster applied (the `applied` table) and runs the
 * difference through the driver, one operation at a time per mission:
 *
 *   trigger  -> (outcome wanted?) -> apply: content, then command
 *   reverse: reverseCommand, then the content's removal, then the record
 *   check:   stateCheck, every intervalSeconds, while applied
 *
 * "applying" is recorded before the first command runs and "applied" after
 * the last one succeeded, so a restart re-runs exactly what may not have
 * completed (the contract for mission authors: applies and reverses are
 * idempotent) and never what completed. The record keeps the spec that was
 * applied: a deleted mission's row is gone, its reverse runs from there.
 * Everything runs from lws callbacks and timers; commands never block the
 * loop (exec.c). State values: docs/edgecluster.md, "Mission state".
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libwebsockets.h>

#include "driver.h"
#include "ecd.h"

#define MAX_RUNNING   4	   /* children at once; the rest queue */
#define KILL_GRACE_MS 5000 /* SIGTERM -> SIGKILL */
#define RETRY_BASE_S  30   /* a failed apply is retried after 30 s, 60 s, ... */
#define RETRY_MAX_S   3600
#define STATE_MAX     1024 /* a state value, as the design says */
#define CHECK_OUT_MAX 4096

enum op { OP_NONE, OP_TRIGGER, OP_APPLY, OP_REVERSE, OP_CHECK };
enum tmr { T_NONE, T_RETRY, T_TRIGGER, T_CHECK };

struct mrt {
	struct mrt *next;
	struct ec_run *run;
	char name[EC_MISSION_NAME_MAX + 1];
	enum op op;
	int step;
	const char *what; /* the step running, for messages */
	struct ec_job *job;
	json_t *spec; /* the spec of the operation in flight */
	char uid[EC_UID_LEN + 1], digest[33];
	unsigned fails;
	bool dirty;  /* changed while busy: reconcile when the operation ends */
	bool cached; /* state holds our key's stored value */
	char *state;
	enum tmr timer;
	lws_sorted_usec_list_t sul;
};

struct ec_run {
	struct ecd *d;
	struct ec_exec *x;
	struct ec_drv dv;
	struct mrt *list;
};

static void reconcile(struct mrt *m, bool retry);

/* ---- small helpers ---- */

static struct mrt *find(struct ec_run *rn, const char *name)
{
	for (struct mrt *m = rn->list; m; m = m->next)
		if (!strcmp(m->name, name))
			return m;
	return NULL;
}

static struct mrt *get(struct ec_run *rn, const char *name)
{
	struct mrt *m = find(rn, name);

	if (m || strlen(name) > EC_MISSION_NAME_MAX || !(m = calloc(1, sizeof(*m))))
		return m;
	m->run = rn;
	strcpy(m->name, name);
	m->next = rn->list;
	rn->list = m;
	return m;
}

static void mrt_free(struct mrt *m)
{
	lws_sul_cancel(&m->sul);
	json_decref(m->spec);
	free(m->state);
	free(m);
}

static void forget(struct mrt *m)
{
	struct mrt **pp = &m->run->list;

	while (*pp && *pp != m)
		pp = &(*pp)->next;
	if (*pp)
		*pp = m->next;
	mrt_free(m);
}

static void on_timer(lws_sorted_usec_list_t *sul);

static void arm(struct mrt *m, enum tmr t, unsigned seconds)
{
	m->timer = t;
	lws_sul_schedule(m->run->d->lws, 0, &m->sul, on_timer,
			 (lws_usec_t)seconds * LWS_US_PER_SEC);
}

static void disarm(struct mrt *m)
{
	m->timer = T_NONE;
	lws_sul_cancel(&m->sul);
}

static unsigned seconds_at(json_t *spec, const char *obj, const char *key, unsigned dflt)
{
	json_t *v = json_object_get(json_object_get(spec, obj), key);

	return json_is_integer(v) && json_integer_value(v) > 0 ? (unsigned)json_integer_value(v)
							       : dflt;
}

static char **argv_at(json_t *spec, const char *obj, const char *key)
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

static const char *content_of(json_t *spec)
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
 * changes, and then the tree is told (slice 2 reports it upward). */
static void set_state(struct mrt *m, const char *value)
{
	struct ecd *d = m->run->d;
	char v[STATE_MAX + 8];
	int rc;

	ec_state_text(value, strlen(value), v, sizeof(v), STATE_MAX);
	if (m->cached && m->state && !strcmp(m->state, v))
		return;
	rc = ec_store_state_put(&d->store, m->name, d->conf.name, v);
	if (rc == -1) {
		ecd_log("mission %s: store: state: %s", m->name, ec_store_errmsg(&d->store));
		return;
	}
	free(m->state);
	m->state = strdup(v);
	m->cached = m->state != NULL;
	if (!rc && d->on_state)
		d->on_state(d, m->name);
}

static void set_statef(struct mrt *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_statef(struct mrt *m, const char *fmt, ...)
{
	char v[STATE_MAX + 256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(v, sizeof(v), fmt, ap);
	va_end(ap);
	set_state(m, v);
}

/* Remember the stored value of our key, so restarts do not rewrite it. */
static void cache_state(struct mrt *m, const struct ec_row *row)
{
	json_t *st, *v;

	if (m->cached || !row)
		return;
	st = json_loads(row->state, 0, NULL);
	v = json_object_get(st, m->run->d->conf.name);
	free(m->state);
	m->state = json_is_string(v) ? strdup(json_string_value(v)) : NULL;
	m->cached = true;
	json_decref(st);
}

/* ---- running one command for a mission ---- */

static void job_done(void *arg, const struct ec_job_result *r);

static void job_started(void *arg, pid_t pid, unsigned long long starttime)
{
	struct mrt *m = arg;

	/* so that a restart after kill -9 can stop what this run left behind */
	if (m->op == OP_APPLY || m->op == OP_REVERSE)
		ec_store_applied_proc(&m->run->d->store, m->name, (int)pid, starttime);
}

static int envf(char **env, int *n, const char *k, const char *v)
{
	size_t len = strlen(k) + strlen(v) + 2;

	if (!(env[*n] = malloc(len)))
		return -1;
	snprintf(env[(*n)++], len, "%s=%s", k, v);
	return 0;
}

static int run(struct mrt *m, const char *what, char **argv, bool stdin_content, bool in_dir,
	       unsigned timeout_s, size_t out_max)
{
	static const char *const ops[] = {"", "trigger", "apply", "reverse", "check"};
	struct ec_run *rn = m->run;
	char dir[EC_PATH_MAX + 256], file[EC_PATH_MAX + 300];
	const char *content = content_of(m->spec);
	char *env[8] = {0};
	int n = 0, rc = -1;
	struct ec_job_spec js = {.argv = argv,
				 .env = env,
				 .timeout_ms = timeout_s * 1000,
				 .out_max = out_max,
				 .done = job_done,
				 .started = job_started,
				 .arg = m};

	if (!argv)
		return -1;
	if (ec_drv_workdir(&rn->dv, m->name, in_dir, dir, sizeof(dir)))
		goto out;
	if (in_dir)
		js.cwd = dir;
	if (stdin_content && content) {
		js.in = content;
		js.in_len = strlen(content);
	}
	snprintf(file, sizeof(file), "%s/content", dir);
	if (envf(env, &n, "XGATE_CLUSTER", rn->d->conf.name) ||
	    envf(env, &n, "XGATE_MISSION", m->name) || envf(env, &n, "XGATE_MISSION_UID", m->uid) ||
	    envf(env, &n, "XGATE_MISSION_OP", ops[m->op]) ||
	    envf(env, &n, "XGATE_MISSION_DIR", dir) ||
	    (rn->dv.kind == EC_DRIVER_LOCAL && content &&
	     envf(env, &n, "XGATE_MISSION_CONTENT", file)) ||
	    (rn->dv.kind == EC_DRIVER_KUBECTL && rn->dv.kubeconfig[0] &&
	     envf(env, &n, "KUBECONFIG", rn->dv.kubeconfig)))
		goto out;
	m->what = what;
	m->job = ec_exec_run(rn->x, &js);
	rc = m->job ? 0 : -1;
out:
	for (int i = 0; i < n; i++)
		free(env[i]);
	ec_argv_free(argv);
	return rc;
}

static void finish_op(struct mrt *m)
{
	m->op = OP_NONE;
	json_decref(m->spec);
	m->spec = NULL;
	if (m->dirty) {
		m->dirty = false;
		reconcile(m, false);
	}
}

/* ---- apply ---- */

static void put_record(struct mrt *m, const char *phase)
{
	struct ec_store *s = &m->run->d->store;
	struct ec_applied a = {0};

	snprintf(a.name, sizeof(a.name), "%s", m->name);
	snprintf(a.uid, sizeof(a.uid), "%s", m->uid);
	snprintf(a.digest, sizeof(a.digest), "%s", m->digest);
	snprintf(a.phase, sizeof(a.phase), "%s", phase);
	a.spec = json_dumps(m->spec, JSON_COMPACT);
	a.fails = m->fails;
	if (!a.spec || ec_store_applied_put(s, &a))
		ecd_log("mission %s: store: record %s: %s", m->name, phase, ec_store_errmsg(s));
	free(a.spec);
}

static void apply_failed(struct mrt *m, const char *why)
{
	unsigned wait = RETRY_BASE_S;

	m->fails++;
	for (unsigned i = 1; i < m->fails && wait < RETRY_MAX_S; i++)
		wait *= 2;
	wait = wait > RETRY_MAX_S ? RETRY_MAX_S : wait;
	put_record(m, "failed");
	ecd_log("mission %s: apply failed: %s (retry in %us)", m->name, why, wait);
	set_statef(m, "failed: %s", why);
	arm(m, T_RETRY, wait);
	finish_op(m);
}

static void apply_step(struct mrt *m)
{
	struct ec_run *rn = m->run;
	const char *content = content_of(m->spec);
	unsigned to =
	    seconds_at(m->spec, "command", "timeoutSeconds", rn->d->conf.command_timeout_s);
	char path[EC_PATH_MAX + 300], why[512];

	for (;;) {
		switch (m->step++) {
		case 0: /* the content: kubectl apply, or the local driver's file */
			if (!content)
				continue;
			if (rn->dv.kind == EC_DRIVER_KUBECTL) {
				if (run(m, "kubectl apply", ec_drv_kubectl_argv(&rn->dv, true),
					true, true, to, 0))
					break;
				return;
			}
			if (ec_drv_write_content(&rn->dv, m->name, content, path, sizeof(path))) {
				snprintf(why, sizeof(why), "content: cannot write %.300s: %s",
					 rn->dv.workroot, strerror(errno));
				apply_failed(m, why);
				return;
			}
			continue;
		case 1:
			if (!json_object_get(json_object_get(m->spec, "command"), "command"))
				continue;
			if (run(m, "command", argv_at(m->spec, "command", "command"), true, true,
				to, 0))
				break;
			return;
		default:
			m->fails = 0;
			put_record(m, "applied");
			ecd_log("mission %s: applied", m->name);
			if (json_object_get(m->spec, "stateCheck"))
				arm(m, T_CHECK, 0); /* the state is its first result */
			else
				set_state(m, "applied");
			finish_op(m);
			return;
		}
		apply_failed(m, "out of memory");
		return;
	}
}

static void begin_apply(struct mrt *m)
{
	struct ec_store *s = &m->run->d->store;
	struct ec_applied old;

	/* a retry of the same spec keeps counting failures (backoff) */
	m->fails = 0;
	if (!ec_store_applied_get(s, m->name, &old)) {
		if (!strcmp(old.digest, m->digest))
			m->fails = old.fails;
		ec_applied_free(&old);
	}
	m->op = OP_APPLY;
	m->step = 0;
	put_record(m, "applying"); /* before anything runs: a crash applies again */
	ecd_log("mission %s: applying", m->name);
	apply_step(m);
}

/* ---- trigger ---- */

static void start(struct mrt *m, const char *uid, json_t *spec, const char *digest)
{
	struct ecd *d = m->run->d;

	m->spec = json_incref(spec);
	snprintf(m->uid, sizeof(m->uid), "%s", uid);
	snprintf(m->digest, sizeof(m->digest), "%s", digest);
	disarm(m);
	if (!m->state || strncmp(m->state, "pending", 7))
		set_state(m, "pending");
	if (!json_object_get(json_object_get(spec, "command"), "trigger")) {
		begin_apply(m);
		return;
	}
	m->op = OP_TRIGGER;
	if (run(m, "trigger", argv_at(spec, "command", "trigger"), false, false,
		seconds_at(spec, "command", "timeoutSeconds", d->conf.command_timeout_s), 0)) {
		set_state(m, "failed: trigger: out of memory");
		arm(m, T_TRIGGER, d->conf.statecheck_s);
		finish_op(m);
	}
}

static void trigger_done(struct mrt *m, const struct ec_job_result *r, const char *desc)
{
	json_t *want =
	    json_object_get(json_object_get(m->spec, "command"), "runWhenTriggerSucceeds");
	unsigned every =
	    seconds_at(m->spec, "stateCheck", "intervalSeconds", m->run->d->conf.statecheck_s);

	if (r->end == EC_JOB_EXITED && (r->code == 0) == (want ? json_is_true(want) : true)) {
		begin_apply(m);
		return;
	}
	/* not yet (or the trigger itself failed): ask it again later */
	if (r->end == EC_JOB_EXITED)
		set_statef(m, "pending: waiting for trigger (%s)", desc);
	else
		set_statef(m, "failed: trigger %s", desc);
	arm(m, T_TRIGGER, every);
	finish_op(m);
}

/* ---- reverse ---- */

static void reverse_step(struct mrt *m)
{
	struct ec_run *rn = m->run;
	unsigned to =
	    seconds_at(m->spec, "command", "timeoutSeconds", rn->d->conf.command_timeout_s);

	for (;;) {
		switch (m->step++) {
		case 0:
			if (!json_object_get(json_object_get(m->spec, "command"), "reverseCommand"))
				continue;
			if (run(m, "reverseCommand", argv_at(m->spec, "command", "reverseCommand"),
				true, true, to, 0))
				continue;
			return;
		case 1:
			if (!content_of(m->spec) || rn->dv.kind != EC_DRIVER_KUBECTL)
				continue;
			if (run(m, "kubectl delete", ec_drv_kubectl_argv(&rn->dv, false), true,
				true, to, 0))
				continue;
			return;
		case 2: /* the work directory, with the local driver's content file */
			if (run(m, "rm", ec_drv_remove_argv(&rn->dv, m->name), false, false, to, 0))
				continue;
			return;
		default:
			/* the reverse is best effort: what failed was logged, the record goes */
			if (ec_store_applied_delete(&rn->d->store, m->name))
				ecd_log("mission %s: store: %s", m->name,
					ec_store_errmsg(&rn->d->store));
			ecd_log("mission %s: reversed", m->name);
			m->dirty = true; /* not matched, deleted, or a new incarnation next */
			finish_op(m);
			return;
		}
	}
}

static void begin_reverse(struct mrt *m, struct ec_applied *a)
{
	disarm(m);
	m->op = OP_REVERSE;
	m->step = 0;
	m->spec = json_loads(a->spec, 0, NULL);
	snprintf(m->uid, sizeof(m->uid), "%s", a->uid);
	snprintf(m->digest, sizeof(m->digest), "%s", a->digest);
	m->fails = a->fails;
	put_record(m, "reversing");
	ecd_log("mission %s: reversing what was applied (%s)", m->name, a->phase);
	reverse_step(m);
}

/* ---- stateCheck ---- */

static void run_check(struct mrt *m)
{
	struct ecd *d = m->run->d;
	struct ec_row row;
	json_t *spec;

	if (m->job || ec_store_get(&d->store, EC_T_MISSIONS, m->name, &row))
		return;
	spec = json_loads(row.spec, 0, NULL);
	ec_row_free(&row);
	if (!json_object_get(spec, "stateCheck")) {
		set_state(m, "applied");
		json_decref(spec);
		return;
	}
	m->op = OP_CHECK;
	m->spec = spec;
	if (run(m, "stateCheck", argv_at(spec, "stateCheck", "command"), false, true,
		seconds_at(spec, "stateCheck", "timeoutSeconds", d->conf.command_timeout_s),
		CHECK_OUT_MAX)) {
		arm(m, T_CHECK,
		    seconds_at(spec, "stateCheck", "intervalSeconds", d->conf.statecheck_s));
		finish_op(m);
	}
}

static void check_done(struct mrt *m, const struct ec_job_result *r, const char *desc)
{
	char v[STATE_MAX + 8];

	ec_state_text(r->out, r->out_len, v, sizeof(v), STATE_MAX);
	if (r->end == EC_JOB_EXITED && r->code == 0)
		set_state(m, v[0] ? v : "applied"); /* silent success: nothing more to say */
	else
		set_statef(m, "failed: stateCheck %s", desc);
	arm(m, T_CHECK,
	    seconds_at(m->spec, "stateCheck", "intervalSeconds", m->run->d->conf.statecheck_s));
	finish_op(m);
}

/* ---- the reconciler ---- */

static void job_done(void *arg, const struct ec_job_result *r)
{
	struct mrt *m = arg;
	char desc[600], why[700];

	m->job = NULL;
	ec_job_describe(r, desc, sizeof(desc));
	if (r->end == EC_JOB_CANCELLED) {
		/* the mission changed under it: the record says what is left to do */
		ecd_log("mission %s: %s stopped (the mission changed)", m->name, m->what);
		m->dirty = true;
		finish_op(m);
		return;
	}
	switch (m->op) {
	case OP_TRIGGER:
		trigger_done(m, r, desc);
		break;
	case OP_APPLY:
		if (r->end == EC_JOB_EXITED && r->code == 0) {
			apply_step(m);
		} else {
			snprintf(why, sizeof(why), "%s %s", m->what, desc);
			apply_failed(m, why);
		}
		break;
	case OP_REVERSE:
		if (r->end != EC_JOB_EXITED || r->code)
			ecd_log("mission %s: reverse: %s %s", m->name, m->what, desc);
		reverse_step(m);
		break;
	case OP_CHECK:
		check_done(m, r, desc);
		break;
	case OP_NONE:
		break;
	}
}

static void on_timer(lws_sorted_usec_list_t *sul)
{
	struct mrt *m = lws_container_of(sul, struct mrt, sul);
	enum tmr t = m->timer;

	m->timer = T_NONE;
	if (t == T_CHECK)
		run_check(m);
	else
		reconcile(m, true);
}

struct want {
	bool row, matched;
	struct ec_row r;
	json_t *spec;
	char digest[33];
};

static int load_want(struct mrt *m, struct want *w)
{
	struct ecd *d = m->run->d;
	int rc;

	memset(w, 0, sizeof(*w));
	rc = ec_store_get(&d->store, EC_T_MISSIONS, m->name, &w->r);
	if (rc == EC_ST_NOTFOUND)
		return 0;
	if (rc)
		return -1;
	w->row = true;
	w->spec = json_loads(w->r.spec, 0, NULL);
	w->matched = w->spec && ec_placement_match(w->spec, d->conf.name, d->self_labels);
	if (w->matched)
		digest_of(w->r.uid, w->spec, w->digest);
	cache_state(m, &w->r);
	return 0;
}

static void want_free(struct want *w)
{
	if (w->row)
		ec_row_free(&w->r);
	json_decref(w->spec);
}

static void reconcile(struct mrt *m, bool retry)
{
	struct ec_store *s = &m->run->d->store;
	struct ec_applied a;
	struct want w;
	int arc;

	if (load_want(m, &w)) {
		ecd_log("mission %s: store: %s", m->name, ec_store_errmsg(s));
		return;
	}
	if (m->job) {
		/* one operation at a time; a reverse always completes (it cleans up) */
		bool same = w.matched && !strcmp(w.r.uid, m->uid) && !strcmp(w.digest, m->digest);

		if (m->op == OP_CHECK || m->op == OP_REVERSE || !same)
			m->dirty = true;
		if (m->op != OP_REVERSE && !same)
			ec_job_cancel(m->job); /* its callback reconciles */
		want_free(&w);
		return;
	}
	arc = ec_store_applied_get(s, m->name, &a);
	if (arc == -1) {
		ecd_log("mission %s: store: %s", m->name, ec_store_errmsg(s));
		want_free(&w);
		return;
	}
	if (!w.matched || (!arc && strcmp(a.uid, w.r.uid))) {
		/* not (or no longer) here, or another incarnation was applied */
		if (!arc)
			begin_reverse(m, &a);
		else if (w.row) {
			disarm(m);
			set_state(m, "not matched");
		} else {
			want_free(&w);
			forget(m);
			return;
		}
	} else if (!arc && !strcmp(a.digest, w.digest) && !strcmp(a.phase, "applied")) {
		/* applied already: nothing runs again; keep the reverse current */
		char *now = json_dumps(w.spec, JSON_COMPACT);

		if (now && strcmp(now, a.spec)) {
			snprintf(m->uid, sizeof(m->uid), "%s", a.uid);
			snprintf(m->digest, sizeof(m->digest), "%s", a.digest);
			m->fails = 0;
			m->spec = json_incref(w.spec);
			put_record(m, "applied");
			json_decref(m->spec);
			m->spec = NULL;
		}
		free(now);
		if (json_object_get(w.spec, "stateCheck"))
			arm(m, T_CHECK, 0);
		else {
			disarm(m);
			set_state(m, "applied");
		}
	} else if (!arc && !strcmp(a.digest, w.digest) && !strcmp(a.phase, "failed") && !retry) {
		/* failed with this spec: the retry timer (armed at the failure, or
		 * now after a restart) tries again */
		if (m->timer != T_RETRY)
			arm(m, T_RETRY, RETRY_BASE_S);
	} else {
		/* new, changed, failed and due, or interrupted (applying/reversing) */
		start(m, w.r.uid, w.spec, w.digest);
	}
	if (!arc)
		ec_applied_free(&a);
	want_free(&w);
}

/* ---- start and stop ---- */

static void on_mission(struct ecd *d, const char *name, bool deleted)
{
	struct mrt *m;

	(void)deleted; /* the store says what is there; a delete is a missing row */
	if (d->run && (m = get(d->run, name)))
		reconcile(m, false);
}

static int kill_orphan(void *arg, struct ec_applied *a)
{
	(void)arg;
	/* the previous run was killed while this ran: stop it before applying
	 * again, unless the pid now belongs to someone else (start time differs) */
	if (a->pgid > 0 && a->pstart && ec_proc_starttime(a->pgid) == a->pstart &&
	    !kill(-a->pgid, SIGKILL))
		ecd_log("mission %s: killed process group %d left %s by the previous run", a->name,
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

int mission_start(struct ecd *d)
{
	struct ec_run *rn = calloc(1, sizeof(*rn));
	json_t *names = json_object(), *v;
	const char *name;
	int rc = 0;

	if (!rn || !names || !(rn->x = ec_exec_new(d->lws, MAX_RUNNING, KILL_GRACE_MS))) {
		ecd_log("missions: cannot set up the command runner: %s", strerror(errno));
		free(rn);
		json_decref(names);
		return -1;
	}
	rn->d = d;
	ec_drv_init(&rn->dv, &d->conf);
	d->run = rn;
	d->on_mission = on_mission;
	/* names first, then reconcile: no store write while a read is open */
	if (ec_store_applied_list(&d->store, kill_orphan, NULL) ||
	    ec_store_list(&d->store, EC_T_MISSIONS, collect_row, names) ||
	    ec_store_applied_list(&d->store, collect_applied, names)) {
		ecd_log("missions: store: %s", ec_store_errmsg(&d->store));
		rc = -1;
	}
	json_object_foreach(names, name, v) on_mission(d, name, false);
	ecd_log("missions: driver %s, work directory %s, %zu missions or records",
		ec_driver_name(rn->dv.kind), rn->dv.workroot, json_object_size(names));
	json_decref(names);
	return rc;
}

void mission_stop(struct ecd *d)
{
	struct ec_run *rn = d->run;
	struct mrt *m;

	if (!rn)
		return;
	d->on_mission = NULL;
	ec_exec_free(rn->x); /* interrupted applies stay "applying": the next start redoes them */
	while ((m = rn->list)) {
		rn->list = m->next;
		mrt_free(m);
	}
	free(rn);
	d->run = NULL;
}
