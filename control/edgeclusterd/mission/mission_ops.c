// SPDX-License-Identifier: BSD-2-Clause
/*
 * A mission's operations on this cluster (mission.c decides which one runs):
 *
 *   trigger  -> (outcome wanted?) -> apply: content, then command
 *   reverse: reverseCommand, then the content's removal, then the record
 *   check:   stateCheck, every intervalSeconds, while applied
 *
 * Each is a sequence of steps; a step that runs a command continues from
 * job_done() when the command ended (the runner, ctl_exec.c, calls it from the loop). What
 * needs no command (the local driver's content file, an empty work
 * directory's removal) is done on the spot, so a content-only mission is
 * applied within the reconcile that started it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mission.h"

/* ---- running one command for a mission ---- */

static void job_done(void *arg, const struct ctl_job_result *r);

static void job_started(void *arg, pid_t pid, unsigned long long starttime)
{
	struct mission_rt *m = arg;
	struct ec_store *s = &m->run->d->store;

	/* so that a restart after kill -9 can stop what this run left behind;
	 * after a power loss there is nothing left to stop: repairable */
	if ((m->op == OP_APPLY || m->op == OP_REVERSE) && !ec_store_tx_begin(s, EC_TX_REPAIRABLE) &&
	    ec_store_tx_end(s, ec_store_applied_proc(s, m->name, (int)pid, starttime)))
		ctl_log("mission %s: store: process group: %s", m->name, ec_store_errmsg(s));
}

static int envf(char **env, int *n, const char *k, const char *v)
{
	size_t len = strlen(k) + strlen(v) + 2;

	if (!(env[*n] = malloc(len)))
		return -1;
	snprintf(env[(*n)++], len, "%s=%s", k, v);
	return 0;
}

/* Queue argv (consumed); 0, or -1 out of memory or no work directory. */
static int run(struct mission_rt *m, const char *what, char **argv, bool stdin_content, bool in_dir,
	       unsigned timeout_s, size_t out_max)
{
	static const char *const ops[] = {"", "trigger", "apply", "reverse", "check"};
	struct ec_run *rn = m->run;
	char dir[EC_PATH_MAX + 256], file[EC_PATH_MAX + 300];
	const char *content = mission_content_of(m->spec);
	char *env[8] = {0};
	int n = 0, rc = -1;
	struct ctl_job_spec js = {.argv = argv,
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
	m->job = ctl_exec_run(rn->x, &js);
	rc = m->job ? 0 : -1;
out:
	for (int i = 0; i < n; i++)
		free(env[i]);
	ec_argv_free(argv);
	return rc;
}

/* ---- apply ---- */

static void apply_failed(struct mission_rt *m, const char *why)
{
	unsigned wait = RETRY_BASE_S;

	m->fails++;
	for (unsigned i = 1; i < m->fails && wait < RETRY_MAX_S; i++)
		wait *= 2;
	wait = wait > RETRY_MAX_S ? RETRY_MAX_S : wait;
	mission_put_record(m, "failed");
	ctl_log("mission %s: apply failed: %s (retry in %us)", m->name, why, wait);
	mission_set_statef(m, "failed: %s", why);
	mission_arm(m, T_RETRY, wait);
	mission_finish_op(m);
}

/* Before the first command of an apply: "applying" goes into the callback's
 * group, which commits before the runner spawns anything (from a timer of its
 * own), so a crash from here on applies again. What is done without a
 * command (the content file) commits with "applied" as a whole, or not. */
static int run_apply(struct mission_rt *m, const char *what, char **argv, unsigned timeout_s)
{
	if (!m->recorded) {
		m->recorded = true;
		mission_put_record(m, "applying");
		ctl_log("mission %s: applying (%s)", m->name, what);
	}
	return run(m, what, argv, true, true, timeout_s, 0);
}

static void apply_step(struct mission_rt *m)
{
	struct ec_run *rn = m->run;
	const char *content = mission_content_of(m->spec);
	unsigned to =
	    mission_seconds_at(m->spec, "command", "timeoutSeconds", rn->d->conf.command_timeout_s);
	char path[EC_PATH_MAX + 300], why[512];

	for (;;) {
		switch (m->step++) {
		case 0: /* the content: kubectl apply, or the local driver's file */
			if (!content)
				continue;
			if (rn->dv.kind == EC_DRIVER_KUBECTL) {
				if (run_apply(m, "kubectl apply",
					      ec_drv_kubectl_argv(&rn->dv, true), to))
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
			if (run_apply(m, "command", mission_argv_at(m->spec, "command", "command"),
				      to))
				break;
			return;
		default:
			m->fails = 0;
			mission_put_record(m, "applied");
			ctl_log("mission %s: applied", m->name);
			if (json_object_get(m->spec, "stateCheck"))
				mission_arm(m, T_CHECK, 0); /* the state is its first result */
			else
				mission_set_state(m, "applied");
			mission_finish_op(m);
			return;
		}
		apply_failed(m, "out of memory");
		return;
	}
}

static void begin_apply(struct mission_rt *m, unsigned fails)
{
	m->fails = fails; /* a retry of the same spec keeps counting (backoff) */
	m->op = OP_APPLY;
	m->step = 0;
	m->recorded = false;
	apply_step(m);
}

/* ---- trigger ---- */

void mission_op_start(struct mission_rt *m, const char *uid, json_t *spec, const char *spec_text,
		      const char *digest, unsigned fails)
{
	struct ecd *d = m->run->d;
	unsigned said = m->state_said;

	m->spec = json_incref(spec);
	m->spec_text = strdup(spec_text);
	snprintf(m->uid, sizeof(m->uid), "%s", uid);
	snprintf(m->digest, sizeof(m->digest), "%s", digest);
	mission_disarm(m);
	if (!json_object_get(json_object_get(spec, "command"), "trigger")) {
		begin_apply(m, fails);
		/* "pending" only if the apply goes on (a command runs) or its
		 * outcome is a stateCheck's: a content-only apply said "applied" */
		if (m->state_said == said && (!m->state || strncmp(m->state, "pending", 7)))
			mission_set_state(m, "pending");
		return;
	}
	if (!m->state || strncmp(m->state, "pending", 7))
		mission_set_state(m, "pending");
	m->fails = fails;
	m->op = OP_TRIGGER;
	if (run(m, "trigger", mission_argv_at(spec, "command", "trigger"), false, false,
		mission_seconds_at(spec, "command", "timeoutSeconds", d->conf.command_timeout_s),
		0)) {
		mission_set_state(m, "failed: trigger: out of memory");
		mission_arm(m, T_TRIGGER, d->conf.statecheck_s);
		mission_finish_op(m);
	}
}

static void trigger_done(struct mission_rt *m, const struct ctl_job_result *r, const char *desc)
{
	json_t *want =
	    json_object_get(json_object_get(m->spec, "command"), "runWhenTriggerSucceeds");
	unsigned every = mission_seconds_at(m->spec, "stateCheck", "intervalSeconds",
					    m->run->d->conf.statecheck_s);

	if (r->end == CTL_JOB_EXITED && (r->code == 0) == (want ? json_is_true(want) : true)) {
		begin_apply(m, m->fails);
		return;
	}
	/* not yet (or the trigger itself failed): ask it again later */
	if (r->end == CTL_JOB_EXITED)
		mission_set_statef(m, "pending: waiting for trigger (%s)", desc);
	else
		mission_set_statef(m, "failed: trigger %s", desc);
	mission_arm(m, T_TRIGGER, every);
	mission_finish_op(m);
}

/* ---- reverse ---- */

static void reverse_step(struct mission_rt *m)
{
	struct ec_run *rn = m->run;
	unsigned to =
	    mission_seconds_at(m->spec, "command", "timeoutSeconds", rn->d->conf.command_timeout_s);

	for (;;) {
		switch (m->step++) {
		case 0:
			if (!json_object_get(json_object_get(m->spec, "command"), "reverseCommand"))
				continue;
			if (run(m, "reverseCommand",
				mission_argv_at(m->spec, "command", "reverseCommand"), true, true,
				to, 0))
				continue;
			return;
		case 1:
			if (!mission_content_of(m->spec) || rn->dv.kind != EC_DRIVER_KUBECTL)
				continue;
			if (run(m, "kubectl delete", ec_drv_kubectl_argv(&rn->dv, false), true,
				true, to, 0))
				continue;
			return;
		case 2: /* the work directory, with the local driver's content file */
			/* none, or only the content file: no rm process for that */
			if (ec_drv_remove_small(&rn->dv, m->name) == 0)
				continue;
			if (run(m, "rm", ec_drv_remove_argv(&rn->dv, m->name), false, false, to, 0))
				continue;
			return;
		default:
			/* the reverse is best effort: what failed was logged, the record goes */
			if (ec_store_applied_delete(&rn->d->store, m->name))
				ctl_log("mission %s: store: %s", m->name,
					ec_store_errmsg(&rn->d->store));
			ctl_log("mission %s: reversed", m->name);
			m->dirty = true; /* not matched, deleted, or a new incarnation next */
			mission_finish_op(m);
			return;
		}
	}
}

void mission_op_reverse(struct mission_rt *m, struct ec_applied *a)
{
	mission_disarm(m);
	m->op = OP_REVERSE;
	m->step = 0;
	m->spec = json_loads(a->spec, 0, NULL);
	m->spec_text = strdup(a->spec);
	snprintf(m->uid, sizeof(m->uid), "%s", a->uid);
	snprintf(m->digest, sizeof(m->digest), "%s", a->digest);
	m->fails = a->fails;
	mission_put_record(m, "reversing");
	ctl_log("mission %s: reversing what was applied (%s)", m->name, a->phase);
	reverse_step(m);
}

/* ---- stateCheck ---- */

void mission_op_check(struct mission_rt *m)
{
	struct ecd *d = m->run->d;
	struct ec_row row;
	json_t *spec;

	if (m->job || ec_store_mission_bare(&d->store, m->name, &row))
		return;
	spec = json_loads(row.spec, 0, NULL);
	ec_row_free(&row);
	if (!json_object_get(spec, "stateCheck")) {
		mission_set_state(m, "applied");
		json_decref(spec);
		return;
	}
	m->op = OP_CHECK;
	m->spec = spec;
	if (run(m, "stateCheck", mission_argv_at(spec, "stateCheck", "command"), false, true,
		mission_seconds_at(spec, "stateCheck", "timeoutSeconds", d->conf.command_timeout_s),
		CHECK_OUT_MAX)) {
		mission_arm(m, T_CHECK,
			    mission_seconds_at(spec, "stateCheck", "intervalSeconds",
					       d->conf.statecheck_s));
		mission_finish_op(m);
	}
}

static void check_done(struct mission_rt *m, const struct ctl_job_result *r, const char *desc)
{
	char v[STATE_MAX + 8];

	ec_state_text(r->out, r->out_len, v, sizeof(v), STATE_MAX);
	if (r->end == CTL_JOB_EXITED && r->code == 0)
		mission_set_state(m,
				  v[0] ? v : "applied"); /* silent success: nothing more to say */
	else
		mission_set_statef(m, "failed: stateCheck %s", desc);
	mission_arm(m, T_CHECK,
		    mission_seconds_at(m->spec, "stateCheck", "intervalSeconds",
				       m->run->d->conf.statecheck_s));
	mission_finish_op(m);
}

/* ---- a command ended ---- */

static void job_done_in(struct mission_rt *m, const struct ctl_job_result *r)
{
	char desc[600], why[700];

	m->job = NULL;
	ctl_job_describe(r, desc, sizeof(desc));
	if (r->end == CTL_JOB_CANCELLED) {
		/* the mission changed under it: the record says what is left to do */
		ctl_log("mission %s: %s stopped (the mission changed)", m->name, m->what);
		m->dirty = true;
		mission_finish_op(m);
		return;
	}
	switch (m->op) {
	case OP_TRIGGER:
		trigger_done(m, r, desc);
		break;
	case OP_APPLY:
		if (r->end == CTL_JOB_EXITED && r->code == 0) {
			apply_step(m);
		} else {
			snprintf(why, sizeof(why), "%s %s", m->what, desc);
			apply_failed(m, why);
		}
		break;
	case OP_REVERSE:
		if (r->end != CTL_JOB_EXITED || r->code)
			ctl_log("mission %s: reverse: %s %s", m->name, m->what, desc);
		reverse_step(m);
		break;
	case OP_CHECK:
		check_done(m, r, desc);
		break;
	case OP_NONE:
		break;
	}
}

/* The records and states a command's end writes commit together. */
static void job_done(void *arg, const struct ctl_job_result *r)
{
	struct mission_rt *m = arg;
	struct ec_run *rn = m->run;

	mission_group_begin(rn);
	job_done_in(m, r);
	mission_group_end(rn);
}
