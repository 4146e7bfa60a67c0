// SPDX-License-Identifier: BSD-2-Clause
/*
 * The nodes of a cluster run by the kubectl driver, for its EdgeCluster
 * state (`nodes`, `edgeNodes`; seed 000's EdgeClusterState): every
 * `[Intervals] StateCheck`, `kubectl get nodes -o name`, then the same with
 * `-l node-role.kubernetes.io/edge` (KubeEdge's label for an edge node), as
 * commands like the missions' (never on the loop). A failing kubectl keeps
 * the last lists and logs once per distinct error. The local driver's node
 * is this host (tree.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mission.h"

#define EDGE_LABEL "node-role.kubernetes.io/edge"

static struct {
	struct ec_run *rn;
	lws_sorted_usec_list_t sul;
	struct ec_job *job;
	json_t *all; /* of the first query, until the second one ends */
	char last_error[400];
} N;

static void on_timer(lws_sorted_usec_list_t *sul);

static void again(void)
{
	lws_sul_schedule(N.rn->d->lws, 0, &N.sul, on_timer,
			 (lws_usec_t)N.rn->d->conf.statecheck_s * LWS_US_PER_SEC);
}

/* "node/NAME" lines; NULL if the output is not that. */
static json_t *names_of(const char *out)
{
	json_t *names = json_array();
	const char *p = out;

	while (names && *p) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char name[EC_MISSION_NAME_MAX + 1]; /* a node's name is a DNS subdomain too */

		if (n && (n <= 5 || n - 5 >= sizeof(name) || strncmp(p, "node/", 5))) {
			json_decref(names);
			return NULL;
		}
		if (n) {
			memcpy(name, p + 5, n - 5);
			name[n - 5] = 0;
			if (ec_check_dns_subdomain(name)) {
				json_decref(names);
				return NULL;
			}
			json_array_append_new(names, json_string(name));
		}
		p += n + (e ? 1 : 0);
	}
	return names;
}

static void failed(const char *why)
{
	if (strcmp(why, N.last_error))
		ctl_log("nodes: %s (the EdgeCluster keeps the last lists)", why);
	snprintf(N.last_error, sizeof(N.last_error), "%s", why);
	json_decref(N.all);
	N.all = NULL;
	again();
}

static void query(bool edge);

static void done(void *arg, const struct ec_job_result *r)
{
	struct ecd *d = N.rn->d;
	json_t *names;
	char desc[300];

	(void)arg;
	N.job = NULL;
	if (r->end != EC_JOB_EXITED || r->code) {
		char why[400];

		ec_job_describe(r, desc, sizeof(desc));
		snprintf(why, sizeof(why), "kubectl get nodes%s %s", N.all ? " -l " EDGE_LABEL : "",
			 desc);
		failed(why);
		return;
	}
	if (r->out_truncated || !(names = names_of(r->out))) {
		failed("kubectl get nodes -o name: not a list of node/NAME lines");
		return;
	}
	if (!N.all) { /* the nodes; now the edge nodes among them */
		N.all = names;
		query(true);
		return;
	}
	json_decref(d->nodes);
	json_decref(d->edge_nodes);
	d->nodes = N.all;
	d->edge_nodes = names;
	N.all = NULL;
	if (N.last_error[0])
		ctl_log("nodes: kubectl answers again (%zu nodes, %zu edge nodes)",
			json_array_size(d->nodes), json_array_size(d->edge_nodes));
	N.last_error[0] = 0;
	again();
}

static void query(bool edge)
{
	char **argv = ec_drv_kubectl_get_nodes(&N.rn->dv, edge ? EDGE_LABEL : NULL);
	char kc[EC_PATH_MAX + 16], *env[] = {kc, NULL};
	struct ec_job_spec js = {.argv = argv,
				 .env = N.rn->dv.kubeconfig[0] ? env : NULL,
				 .timeout_ms = N.rn->d->conf.command_timeout_s * 1000,
				 .done = done};

	snprintf(kc, sizeof(kc), "KUBECONFIG=%s", N.rn->dv.kubeconfig);
	N.job = argv ? ec_exec_run(N.rn->x, &js) : NULL;
	ec_argv_free(argv);
	if (!N.job)
		failed("out of memory");
}

static void on_timer(lws_sorted_usec_list_t *sul)
{
	(void)sul;
	if (!N.job)
		query(false);
}

void nodes_start(struct ec_run *rn)
{
	memset(&N, 0, sizeof(N));
	N.rn = rn;
	if (rn->dv.kind == EC_DRIVER_KUBECTL)
		lws_sul_schedule(rn->d->lws, 0, &N.sul, on_timer, 0);
}

/* Before the runner goes: it drops the job without calling back. */
void nodes_stop(struct ec_run *rn)
{
	if (N.rn != rn)
		return;
	lws_sul_cancel(&N.sul);
	json_decref(N.all);
	memset(&N, 0, sizeof(N));
}
