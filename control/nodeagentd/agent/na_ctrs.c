// SPDX-License-Identifier: BSD-2-Clause
/*
 * A pod's containers: each its own process tree (its own session, so its
 * own process group) in the pod's one network namespace and one cgroup,
 * whose limits are the sum of the containers' (as a Kubernetes pod's
 * cgroup). Each writes to RUNDIR/POD/NAME.log; the pod fails when any
 * container exits.
 *
 * Logs are rotated by copy and truncate on the tick (docs/serverless.md
 * "Logs"): the container keeps the fd it inherited, opened O_APPEND, so
 * after the truncation its next write lands at the start of the file
 * again; the agent never reads a container's output on its loop.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "na_agent_int.h"

extern char **environ;

static void env_add(json_t *env, const char *k, const char *v)
{
	json_array_append_new(env, json_sprintf("%s=%s", k, v));
}

/* The daemon's PATH and the like, the node's variables, then the spec's. */
static json_t *ctr_env(struct pod_rt *r, json_t *c)
{
	json_t *envs = json_array(), *cd, *v;
	char ip[INET_ADDRSTRLEN], path[PATH_MAX + 32];
	size_t i;

	for (char **e = environ; *e; e++)
		if (!strncmp(*e, "PATH=", 5) || !strncmp(*e, "LANG=", 5))
			json_array_append_new(envs, json_string(*e));
	inet_ntop(AF_INET, &r->p.ip_be, ip, sizeof(ip));
	env_add(envs, "FORNAX_POD_IDENTIFIER", r->p.id);
	env_add(envs, "FORNAX_POD_IP", ip);
	env_add(envs, "FORNAX_NODE", r->a->conf->name);
	if (r->p.svc) { /* one socket per pod, whichever container answers it */
		snprintf(path, sizeof(path), "%s/session.sock", r->dir);
		env_add(envs, "FORNAX_SESSION_SOCKET", path);
	}
	cd = json_object_get(r->p.spec, "configData");
	if (json_is_object(cd)) {
		char *s = json_dumps(cd, JSON_COMPACT);

		env_add(envs, "FORNAX_CONFIG_DATA", s ? s : "{}");
		free(s);
	}
	json_array_foreach(json_object_get(c, "env"), i, v)
	{
		const char *k = json_string_value(json_object_get(v, "name"));
		const char *val = json_string_value(json_object_get(v, "value"));

		if (k && *k && !strchr(k, '='))
			env_add(envs, k, val ? val : "");
	}
	return envs;
}

static int ctr_spawn(struct pod_rt *r, int i, json_t *c, char (*cgp)[PATH_MAX], int n_cg, char *err,
		     size_t errlen)
{
	json_t *cmd = json_object_get(c, "command"), *args = json_object_get(c, "args"), *v;
	json_t *envs = ctr_env(r, c);
	char path[PATH_MAX + 32], log[PATH_MAX + 96], e[256];
	char **argv = calloc(json_array_size(cmd) + json_array_size(args) + 1, sizeof(char *));
	char **envp = calloc(json_array_size(envs) + 1, sizeof(char *));
	size_t k, n = 0, ne = 0;
	int rc = -1;

	if (!argv || !envp) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	json_array_foreach(cmd, k, v) argv[n++] = (char *)json_string_value(v);
	json_array_foreach(args, k, v) argv[n++] = (char *)json_string_value(v);
	json_array_foreach(envs, k, v) envp[ne++] = (char *)json_string_value(v);
	snprintf(path, sizeof(path), "/run/netns/%s", r->netns);
	snprintf(log, sizeof(log), "%s/%s.log", r->dir, r->ctr_names[i]);
	{
		struct na_spawn s = {argv, envp, path, log, cgp, n_cg};

		rc = na_proc_spawn(&s, &r->p.ctrs[i].pid, &r->p.ctrs[i].start, e, sizeof(e));
	}
	if (rc)
		snprintf(err, errlen, "containers[%d] %s: %s", i, r->ctr_names[i], e);
out:
	free(argv);
	free(envp);
	json_decref(envs);
	return rc;
}

void pod_ctr_names(struct pod_rt *r)
{
	json_t *cs = json_object_get(r->p.spec, "containers");

	for (int i = 0; i < NA_CTRS_MAX; i++)
		na_ctr_name(json_array_get(cs, (size_t)i), i, r->ctr_names[i],
			    sizeof(r->ctr_names[i]));
}

int pod_spawn(struct pod_rt *r, char *err, size_t errlen)
{
	struct na_agent *a = r->a;
	json_t *cs = json_object_get(r->p.spec, "containers"), *c;
	char cgp[4][PATH_MAX];
	int64_t cpu = 0, mem = 0;
	int n_cg;
	size_t i;

	json_array_foreach(cs, i, c)
	{
		json_t *lim = json_object_get(json_object_get(c, "resources"), "limits");
		int64_t q;

		if (!na_cpu_milli(json_string_value(json_object_get(lim, "cpu")), &q))
			cpu += q;
		if (!na_mem_bytes(json_string_value(json_object_get(lim, "memory")), &q))
			mem += q;
	}
	if (na_cg_create(&a->cg, r->cgname, cpu, mem, err, errlen))
		return -1;
	n_cg = na_cg_procs_files(&a->cg, r->cgname, cgp, 4);
	pod_ctr_names(r);
	r->p.n_ctrs = 0;
	json_array_foreach(cs, i, c)
	{
		if (i >= NA_CTRS_MAX)
			break;
		if (ctr_spawn(r, (int)i, c, cgp, n_cg, err, errlen))
			return -1; /* pod_end kills the ones started */
		r->p.n_ctrs = (int)i + 1;
		if (!i) {
			r->p.pid = r->p.ctrs[0].pid;
			r->p.start = r->p.ctrs[0].start;
		}
	}
	r->started_ms = ctl_now_ms();
	na_store_pod_put(a->store, &r->p, false, NULL);
	/* the spec is the store's now: ~5 KB of JSON tree per pod that
	 * nothing reads again (later writes keep the stored one) */
	json_decref(r->p.spec);
	r->p.spec = NULL;
	return 0;
}

int pod_ctrs_ended(struct pod_rt *r, char *why, size_t len)
{
	for (int i = 0; i < r->p.n_ctrs; i++) {
		const struct na_ctr *c = &r->p.ctrs[i];
		char st[32];
		int reaped = na_proc_reap(c->pid, st, sizeof(st));

		if (reaped > 0 || !na_proc_alive(c->pid, c->start)) {
			snprintf(why, len, "container %s: %s", r->ctr_names[i],
				 reaped > 0 ? st : "its process ended");
			return 1;
		}
	}
	return 0;
}

bool pod_ctrs_alive(struct pod_rt *r)
{
	for (int i = 0; i < r->p.n_ctrs; i++)
		if (!na_proc_alive(r->p.ctrs[i].pid, r->p.ctrs[i].start))
			return false;
	return r->p.n_ctrs > 0;
}

bool pod_ctrs_any_alive(struct pod_rt *r)
{
	for (int i = 0; i < r->p.n_ctrs; i++)
		if (na_proc_alive(r->p.ctrs[i].pid, r->p.ctrs[i].start))
			return true;
	return false;
}

void pod_ctrs_kill(struct pod_rt *r)
{
	char why[32];

	for (int i = 0; i < r->p.n_ctrs; i++)
		na_cg_kill(&r->a->cg, r->cgname, r->p.ctrs[i].pid);
	/* reaped (ours) or gone (adopted): then its cgroup can go */
	for (int i = 0; i < r->p.n_ctrs; i++)
		for (int t = 0; t < 2000 && na_proc_reap(r->p.ctrs[i].pid, why, sizeof(why)) == 0 &&
				na_proc_alive(r->p.ctrs[i].pid, r->p.ctrs[i].start);
		     t++)
			usleep(1000);
}

void pod_ctrs_signal(struct pod_rt *r, int sig)
{
	for (int i = 0; i < r->p.n_ctrs; i++)
		if (na_proc_alive(r->p.ctrs[i].pid, r->p.ctrs[i].start))
			kill(-r->p.ctrs[i].pid, sig);
}

int pod_ctrs_freeze(struct pod_rt *r, bool frozen)
{
	int rc = 0;

	for (int i = 0; i < r->p.n_ctrs; i++) {
		rc |= na_cg_freeze(&r->a->cg, r->cgname, r->p.ctrs[i].pid, frozen);
		if (r->a->cg.mode != NA_CG_NONE) /* the cgroup holds them all */
			break;
	}
	return rc;
}

/* NAME.log.(k-1) -> NAME.log.k, ..., a copy of NAME.log -> NAME.log.1,
 * then NAME.log truncated under the writer (its O_APPEND fd follows). What
 * the container writes between the copy and the truncation is lost: the
 * price of not reading its output through the agent. */
static void log_rotate(const char *log, unsigned keep)
{
	char from[PATH_MAX + 140], to[PATH_MAX + 140], buf[65536];
	int in, out = -1;
	ssize_t n;

	if (keep) {
		for (unsigned k = keep; k > 1; k--) {
			snprintf(from, sizeof(from), "%s.%u", log, k - 1);
			snprintf(to, sizeof(to), "%s.%u", log, k);
			rename(from, to);
		}
		snprintf(to, sizeof(to), "%s.1", log);
		in = open(log, O_RDONLY | O_CLOEXEC);
		if (in >= 0)
			out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
		while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
			if (write(out, buf, (size_t)n) != n)
				break;
		if (out >= 0)
			close(out);
		if (in >= 0)
			close(in);
	}
	if (truncate(log, 0))
		ctl_log("log %s: cannot truncate: %s", log, strerror(errno));
}

void pod_logs_check(struct pod_rt *r)
{
	const struct na_config *c = r->a->conf;
	char log[PATH_MAX + 96];
	struct stat st;

	for (int i = 0; i < r->p.n_ctrs; i++) {
		snprintf(log, sizeof(log), "%s/%s.log", r->dir, r->ctr_names[i]);
		if (!stat(log, &st) && (uint64_t)st.st_size > c->log_max_bytes)
			log_rotate(log, c->log_files);
	}
}
