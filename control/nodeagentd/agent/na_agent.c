// SPDX-License-Identifier: BSD-2-Clause
/*
 * The node's pods: placed on a slot of the pod CIDR (the slot names its
 * network namespace, its veth, its cgroup and its directory), plugged by
 * the network script (a namespace, a veth with the `agent` program on its
 * host side, an endpoint entry: the cold path, run on the base's command
 * runner), then started as a process tree in its cgroup and namespace.
 * Creating -> (its ports listen, its session service answers) -> Standby
 * (frozen) or Running. An exit is Failed, or Terminated when asked for;
 * either way its sessions are closed first and its network taken down.
 *
 * Every reported change is written with its revision before it is sent:
 * after a kill -9 the store holds what the core was told, and the pods it
 * names are adopted again if their leader still runs.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs.h"
#include "na_agent_int.h"

extern char **environ;

void agent_send(struct na_agent *a, json_t *m)
{
	if (a->ev.report)
		a->ev.report(a->ev.arg, m);
	else
		json_decref(m);
}

struct pod_rt *pod_find(struct na_agent *a, const char *id)
{
	for (struct pod_rt *r = a->pods; r; r = r->next)
		if (!strcmp(r->p.id, id))
			return r;
	return NULL;
}

/* Write the pod with its next revision, then tell the core. */
void pod_report(struct na_agent *a, struct pod_rt *r, enum na_pod_state st, const char *reason,
		const char *message)
{
	int64_t rev = 0;

	r->p.state = st;
	/* a state sent again (a repeated PodCreate or PodTerminate) passes the
	 * pod's own reason: copying a buffer onto itself would clear it */
	if (reason != r->p.reason)
		snprintf(r->p.reason, sizeof(r->p.reason), "%s", reason ? reason : "");
	if (message != r->p.message)
		snprintf(r->p.message, sizeof(r->p.message), "%s", message ? message : "");
	if (na_store_pod_put(a->store, &r->p, true, &rev)) {
		ctl_log("pod %s: cannot store state %s: %s", r->p.id, na_pod_state_name(st),
			na_store_errmsg(a->store));
		return;
	}
	if (st == NA_POD_FAILED)
		ctl_log("pod %s: Failed: %s %s", r->p.id, r->p.reason, r->p.message);
	agent_send(a, json_pack("{s:s,s:I,s:o}", "type", "PodState", "nodeRevision",
				(json_int_t)rev, "pod", na_pod_json(&r->p)));
}

/* A command for a pod that cannot be taken: reported, not kept. */
static void pod_refuse(struct na_agent *a, const char *id, const char *app, enum na_pod_state st,
		       const char *reason, const char *message)
{
	struct na_pod p;
	int64_t rev = 0;

	memset(&p, 0, sizeof(p));
	snprintf(p.id, sizeof(p.id), "%s", id);
	/* cut between characters: the report goes out as JSON */
	snprintf(p.app, sizeof(p.app), "%.*s", app ? na_quote_len(app, NA_ID_MAX) : 0,
		 app ? app : "");
	p.state = st;
	snprintf(p.reason, sizeof(p.reason), "%s", reason);
	snprintf(p.message, sizeof(p.message), "%s", message ? message : "");
	if (na_store_bump(a->store, &rev))
		return;
	agent_send(a, json_pack("{s:s,s:I,s:o}", "type", "PodState", "nodeRevision",
				(json_int_t)rev, "pod", na_pod_json(&p)));
}

static void names(struct na_agent *a, struct pod_rt *r)
{
	snprintf(r->netns, sizeof(r->netns), "%s%d", a->conf->netns_prefix, r->p.slot);
	snprintf(r->veth, sizeof(r->veth), "%s%d", a->conf->veth_prefix, r->p.slot);
	snprintf(r->cgname, sizeof(r->cgname), "slot%d", r->p.slot);
	snprintf(r->dir, sizeof(r->dir), "%s/pods/slot%d", a->conf->run_dir, r->p.slot);
}

/* ---- the network (na_podnet.c), on the next turn of the loop ---- */

static void pod_forget(struct pod_rt *r)
{
	struct na_agent *a = r->a;

	for (struct pod_rt **pp = &a->pods; *pp; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			break;
		}
	na_store_pod_del(a->store, r->p.id);
	na_svc_free(r->svc);
	json_decref(r->p.spec);
	free(r);
}

/* Another pod runs on r's slot (r ended and lingered, or came back from
 * the store after a restart): the slot's namespace and veth are its own. */
static bool slot_held(struct na_agent *a, const struct pod_rt *r)
{
	for (struct pod_rt *o = a->pods; o; o = o->next)
		if (o != r && o->p.slot == r->p.slot && !o->gone)
			return true;
	return false;
}

static void net_down_run(lws_sorted_usec_list_t *sul)
{
	struct pod_rt *r = lws_container_of(sul, struct pod_rt, net_sul);

	r->net_busy = false;
	if (r->a->stopping)
		return;
	if (!slot_held(r->a, r))
		podnet_down(r->a, r);
	r->forget_at_ms = ctl_now_ms() + ENDED_KEEP_MS;
	agent_tick_soon(r->a);
}

/* Not at once: the callers of pod_end still hold the pod. */
static void net_down(struct pod_rt *r)
{
	r->net_busy = true;
	lws_sul_schedule(r->a->lws, 0, &r->net_sul, net_down_run, 0);
}

/* The pod ended (or never started): what it holds goes, in order: the
 * sessions' entries, the processes, the cgroup, then the network. */
void pod_end(struct pod_rt *r, enum na_pod_state st, const char *reason, const char *msg)
{
	struct na_agent *a = r->a;

	if (r->gone)
		return;
	r->gone = true;
	sess_pod_gone(a, r, st == NA_POD_TERMINATED ? "PodTerminated" : "PodFailed");
	pod_ctrs_kill(r);
	na_cg_remove(&a->cg, r->cgname);
	na_svc_free(r->svc);
	r->svc = NULL;
	pod_report(a, r, st, reason, msg);
	if (!r->net_busy) /* else the network's callback sees gone */
		net_down(r);
}

/* Terminating: SIGTERM, SIGKILL once the grace is over. */
static void pod_stop(struct pod_rt *r, unsigned grace_ms, const char *reason)
{
	sess_pod_gone(r->a, r, reason);
	if (!pod_ctrs_any_alive(r)) {
		pod_end(r, NA_POD_TERMINATED, reason, NULL);
		return;
	}
	pod_report(r->a, r, NA_POD_TERMINATING, reason, NULL);
	pod_thaw(r);
	pod_ctrs_signal(r, SIGTERM);
	r->kill_at_ms = ctl_now_ms() + grace_ms;
	agent_tick_soon(r->a);
}

/* A pod holding live sessions it can be told about is Evacuating first:
 * they are closed through its session service, each within the pod's
 * grace period (the original's drain), and it stops once none is left or
 * the grace is over; the rest of the grace is its SIGTERM's. */
void pod_terminate(struct pod_rt *r, unsigned grace_ms, const char *reason)
{
	uint64_t now = ctl_now_ms();

	if (r->gone || r->p.terminating)
		return;
	r->p.terminating = true;
	if (!r->svc || r->frozen || !sess_pod_busy(r->a, r->p.id)) {
		pod_stop(r, grace_ms, reason);
		return;
	}
	r->evac_end_ms = now + grace_ms;
	pod_report(r->a, r, NA_POD_EVACUATING, reason, NULL);
	sess_pod_evacuate(r->a, r, grace_ms / 1000);
	agent_tick_soon(r->a);
}

/* Evacuating: on to Terminating once its sessions are closed (their own
 * grace ends them) or its grace is over. */
static bool pod_evacuating(struct pod_rt *r, uint64_t now)
{
	uint64_t end;

	if (!r->evac_end_ms) /* adopted Evacuating after a restart: its grace is not known */
		r->evac_end_ms = now + KILL_GRACE_MS;
	end = r->evac_end_ms;
	if (sess_pod_busy(r->a, r->p.id) && now < end)
		return true;
	r->evac_end_ms = 0;
	pod_stop(r, end > now ? (unsigned)(end - now) : 0, r->p.reason);
	return true;
}

int pod_thaw(struct pod_rt *r)
{
	if (!r->frozen)
		return 0;
	if (pod_ctrs_freeze(r, false)) {
		ctl_log("pod %s: cannot thaw: %s", r->p.id, strerror(errno));
		return -1;
	}
	r->frozen = false;
	/* what it was sent while frozen waited in the socket: it answers now */
	na_svc_ping_reset(r->svc);
	r->ping_at_ms = ctl_now_ms() + r->a->conf->ping_s * 1000ull;
	return 0;
}

void pod_to_standby(struct pod_rt *r)
{
	if (r->gone || r->p.terminating || sess_pod_busy(r->a, r->p.id))
		return;
	if (!r->frozen && pod_ctrs_freeze(r, true)) {
		pod_terminate(r, KILL_GRACE_MS, "FreezeFailed");
		return;
	}
	r->frozen = true;
	pod_report(r->a, r, NA_POD_STANDBY, NULL, NULL);
}

/* ---- starting ---- */

static void on_svc_msg(void *arg, json_t *m)
{
	sess_on_pod_msg(arg, m);
}

static void on_svc_closed(void *arg)
{
	struct pod_rt *r = arg;

	r->svc = NULL; /* na_svc frees the connection after this callback */
	ctl_log("pod %s: its session service closed the connection", r->p.id);
}

void pod_svc_connect(struct pod_rt *r)
{
	char path[PATH_MAX], err[256];

	if (r->svc || !r->p.svc)
		return;
	snprintf(path, sizeof(path), "%s/session.sock", r->dir);
	r->svc = na_svc_connect(r->a->svcs, path, on_svc_msg, on_svc_closed, r, err, sizeof(err));
	if (!r->svc)
		return;
	r->ping_at_ms = ctl_now_ms() + r->a->conf->ping_s * 1000ull;
	sess_on_svc_up(r);
}

/* A pod whose session service stopped answering (stopped, hung, or reading
 * nothing) cannot open or close a session: it has failed, and its sessions
 * are closed with the original's word for it (proto/session-service.md). */
static void pod_ping(struct pod_rt *r, uint64_t now)
{
	const struct na_config *c = r->a->conf;
	char msg[128];

	if (!c->ping_s || !r->svc || r->frozen || r->p.terminating ||
	    r->p.state == NA_POD_CREATING || now < r->ping_at_ms)
		return;
	r->ping_at_ms = now + c->ping_s * 1000ull;
	if (na_svc_ping(r->svc) <= c->ping_misses)
		return;
	snprintf(msg, sizeof(msg), "its session service answered none of %u pings, %us apart",
		 c->ping_misses, c->ping_s);
	sess_pod_gone(r->a, r, "NoHeartbeat");
	pod_end(r, NA_POD_FAILED, "NoHeartbeat", msg);
}

static void on_tick(lws_sorted_usec_list_t *sul);

static void net_up_run(lws_sorted_usec_list_t *sul)
{
	struct pod_rt *r = lws_container_of(sul, struct pod_rt, net_sul);
	char err[300], msg[320];
	uint64_t t0 = ctl_now_ms();

	r->net_busy = false;
	if (r->a->stopping)
		return;
	if (r->gone) { /* ended before its network was made */
		net_down(r);
		return;
	}
	if (podnet_up(r->a, r, err, sizeof(err))) {
		snprintf(msg, sizeof(msg), "pod network: %s", err);
		pod_end(r, NA_POD_FAILED, "NetworkFailed", msg);
		return;
	}
	r->net_up = true;
	if (ctl_now_ms() - t0 > 100)
		ctl_log("pod %s: its network took %llu ms", r->p.id,
			(unsigned long long)(ctl_now_ms() - t0));
	if (pod_spawn(r, err, sizeof(err))) {
		pod_end(r, NA_POD_FAILED, "StartFailed", err);
		return;
	}
	lws_sul_schedule(r->a->lws, 0, &r->a->tick, on_tick, TICK_START_MS * LWS_US_PER_MS);
}

static void net_up(struct pod_rt *r)
{
	r->net_busy = true;
	lws_sul_schedule(r->a->lws, 0, &r->net_sul, net_up_run, 0);
}

/* Creating: its ports listen and its session service answers -> Standby
 * or Running; past StartTimeoutSeconds -> Failed. */
static bool pod_starting(struct pod_rt *r, uint64_t now)
{
	bool up = true;

	if (r->net_busy || !r->p.pid)
		return true;
	for (int i = 0; i < r->p.n_ports && up; i++)
		up = na_proc_listening(r->p.pid, r->p.ports[i].port, r->p.ports[i].proto);
	if (up && r->p.svc)
		pod_svc_connect(r);
	if (up && (!r->p.svc || r->svc)) {
		if (r->p.standby) {
			if (pod_ctrs_freeze(r, true)) {
				pod_terminate(r, 0, "FreezeFailed");
				return false;
			}
			r->frozen = true;
			pod_report(r->a, r, NA_POD_STANDBY, NULL, NULL);
		} else {
			pod_report(r->a, r, NA_POD_RUNNING, NULL, NULL);
		}
		return false;
	}
	if (now - r->started_ms > r->a->conf->start_timeout_s * 1000ull) {
		char msg[96];

		snprintf(msg, sizeof(msg), "its ports did not listen within %us",
			 r->a->conf->start_timeout_s);
		r->p.terminating = false;
		pod_end(r, NA_POD_FAILED, "StartTimeout", msg);
		return false;
	}
	return true;
}

static void on_tick(lws_sorted_usec_list_t *sul)
{
	struct na_agent *a = lws_container_of(sul, struct na_agent, tick);
	uint64_t now = ctl_now_ms();
	bool fast = false, starting = false;
	struct pod_rt *r, *next;
	/* a fast tick (a pod starting) does not stat every log 100 times a second */
	bool logs = now >= a->logs_at_ms;

	if (logs)
		a->logs_at_ms = now + TICK_SLOW_MS;
	for (r = a->pods; r; r = next) {
		char why[NA_MSG_MAX];

		next = r->next;
		if (r->forget_at_ms && now >= r->forget_at_ms) {
			pod_forget(r);
			continue;
		}
		if (r->gone || !r->p.pid)
			continue;
		if (pod_ctrs_ended(r, why, sizeof(why))) {
			char reason[NA_REASON_MAX];

			/* asked to stop: the reason it was asked for stays */
			snprintf(reason, sizeof(reason), "%s",
				 r->p.terminating ? r->p.reason : "Exited");
			pod_end(r, r->p.terminating ? NA_POD_TERMINATED : NA_POD_FAILED, reason,
				why);
			continue;
		}
		if (r->p.state == NA_POD_CREATING && pod_starting(r, now))
			fast = starting = true;
		else if (r->p.state == NA_POD_EVACUATING)
			fast |= pod_evacuating(r, now);
		if (r->kill_at_ms) {
			if (now >= r->kill_at_ms)
				for (int i = 0; i < r->p.n_ctrs; i++)
					na_cg_kill(&a->cg, r->cgname, r->p.ctrs[i].pid);
			fast = true;
		}
		if (r->p.svc && !r->svc && !r->frozen && r->p.state != NA_POD_CREATING)
			pod_svc_connect(r); /* after a restart of ours, or of its service */
		pod_ping(r, now);
		if (logs)
			pod_logs_check(r);
	}
	/* an ingress host's entries have no pod here to watch */
	if (a->conf->role == NA_ROLE_POD)
		fast |= sess_tick(a, now);
	if (!fast && now - a->last_cmd_ms >= QUIET_MS && na_store_checkpoint(a->store) < 0)
		ctl_log("store: %s", na_store_errmsg(a->store));
	/* nothing to watch: no wakeups until a command brings a pod */
	if (!a->stopping && (a->pods || (a->sess && a->conf->role == NA_ROLE_POD))) {
		unsigned ms = TICK_SLOW_MS;

		if (starting)
			ms = TICK_START_MS;
		else if (fast)
			ms = TICK_FAST_MS;
		lws_sul_schedule(a->lws, 0, &a->tick, on_tick, ms * LWS_US_PER_MS);
	}
}

void agent_tick_soon(struct na_agent *a)
{
	if (!a->stopping)
		lws_sul_schedule(a->lws, 0, &a->tick, on_tick, TICK_FAST_MS * LWS_US_PER_MS);
}

/* ---- commands ---- */

static int slot_free(struct na_agent *a)
{
	for (int s = 0; s < (int)a->conf->max_pods; s++) {
		bool used = false;

		for (struct pod_rt *r = a->pods; r && !used; r = r->next)
			used = r->p.slot == s && !r->forget_at_ms;
		if (!used && na_slot_ip(a->net_be, a->plen, s))
			return s;
	}
	return -1;
}

static const char *str_field(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

int na_agent_pod_create(struct na_agent *a, json_t *m, char *err, size_t errlen)
{
	const char *id = str_field(m, "podIdentifier"), *app;
	json_t *pod = json_object_get(m, "pod");
	struct pod_rt *r;
	char why[200];

	a->last_cmd_ms = ctl_now_ms();
	if (!id || !*id || strlen(id) > NA_ID_MAX)
		return snprintf(err, errlen, "podIdentifier"), -1;
	if (!json_is_object(pod))
		return snprintf(err, errlen, "pod"), -1;
	if ((r = pod_find(a, id))) { /* sent again: its state again */
		pod_report(a, r, r->p.state, r->p.reason, r->p.message);
		return 0;
	}
	if (a->conf->role == NA_ROLE_INGRESS) { /* runs no pod */
		pod_refuse(a, id, str_field(pod, "application"), NA_POD_FAILED, "IngressHost",
			   NULL);
		return 0;
	}
	if (!na_agent_ready(a)) {
		pod_refuse(a, id, str_field(pod, "application"), NA_POD_FAILED, "NodeNotReady",
			   NULL);
		return 0;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return snprintf(err, errlen, "out of memory"), -1;
	r->a = a;
	snprintf(r->p.id, sizeof(r->p.id), "%s", id);
	app = str_field(pod, "application") ?: "";
	snprintf(r->p.app, sizeof(r->p.app), "%.*s", na_quote_len(app, NA_ID_MAX), app);
	r->p.spec = json_incref(pod);
	r->p.standby = json_is_true(json_object_get(m, "standby"));
	r->p.svc = json_is_true(json_object_get(pod, "usingNodeSessionService"));
	r->p.state = NA_POD_CREATING;
	if (na_pod_check_spec(pod, why, sizeof(why)) ||
	    na_pod_ports_from_spec(&r->p, why, sizeof(why))) {
		pod_refuse(a, id, r->p.app, NA_POD_FAILED, "InvalidSpec", why);
		json_decref(r->p.spec);
		free(r);
		return 0;
	}
	r->p.slot = slot_free(a);
	if (r->p.slot < 0) {
		pod_refuse(a, id, r->p.app, NA_POD_FAILED, "NodeFull", "no free pod address");
		json_decref(r->p.spec);
		free(r);
		return 0;
	}
	r->p.ip_be = na_slot_ip(a->net_be, a->plen, r->p.slot);
	names(a, r);
	if (fs_mkdir_p(r->dir, 0700)) {
		snprintf(why, sizeof(why), "%.150s: %s", r->dir, strerror(errno));
		pod_refuse(a, id, r->p.app, NA_POD_FAILED, "StartFailed", why);
		json_decref(r->p.spec);
		free(r);
		return 0;
	}
	{ /* a socket left by the slot's last pod would answer for nobody */
		char sock[PATH_MAX];

		snprintf(sock, sizeof(sock), "%s/session.sock", r->dir);
		unlink(sock);
	}
	r->next = a->pods;
	a->pods = r;
	pod_report(a, r, NA_POD_CREATING, NULL, NULL);
	net_up(r);
	return 0;
}

int na_agent_pod_terminate(struct na_agent *a, json_t *m, char *err, size_t errlen)
{
	const char *id = str_field(m, "podIdentifier");
	json_t *g = json_object_get(m, "gracePeriodSeconds");
	struct pod_rt *r;

	a->last_cmd_ms = ctl_now_ms();
	if (!id)
		return snprintf(err, errlen, "podIdentifier"), -1;
	if (g && (!json_is_integer(g) || json_integer_value(g) < 0))
		return snprintf(err, errlen, "gracePeriodSeconds"), -1;
	r = pod_find(a, id);
	if (!r) {
		pod_refuse(a, id, NULL, NA_POD_TERMINATED, "NotFound", NULL);
		return 0;
	}
	if (r->gone || r->p.terminating) {
		pod_report(a, r, r->p.state, r->p.reason, r->p.message);
		return 0;
	}
	pod_terminate(r, g ? (unsigned)json_integer_value(g) * 1000 : KILL_GRACE_MS,
		      "TerminatedByCore");
	return 0;
}
