// SPDX-License-Identifier: BSD-2-Clause
/*
 * The nodes of a cluster run by the kubectl driver, for its EdgeCluster
 * state (`nodes`, `edgeNodes` of EdgeClusterState): every
 * `[Intervals] StateCheck`, `kubectl get nodes -o name`, then the same with
 * `-l node-role.kubernetes.io/edge` (KubeEdge's label for an edge node), as
 * commands like the missions' (never on the loop). A failing kubectl keeps
 * the last lists and logs once per distinct error. The local driver's node
 * is this host (tree.c). The lists are the missions' runtime's; main shows
 * them to the tree through the context (mission_nodes).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mission.h"

#define EDGE_LABEL "node-role.kubernetes.io/edge"

static void on_timer(lws_sorted_usec_list_t *sul);

static void again(struct ec_run *rn)
{
	lws_sul_schedule(rn->lws, 0, &rn->np.sul, on_timer,
			 (lws_usec_t)rn->d->conf.statecheck_s * LWS_US_PER_SEC);
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

static void failed(struct ec_run *rn, const char *why)
{
	if (strcmp(why, rn->np.last_error))
		ctl_log("nodes: %s (the EdgeCluster keeps the last lists)", why);
	snprintf(rn->np.last_error, sizeof(rn->np.last_error), "%s", why);
	json_decref(rn->np.all);
	rn->np.all = NULL;
	again(rn);
}

static void query(struct ec_run *rn, bool edge);

static void done(void *arg, const struct ctl_job_result *r)
{
	struct ec_run *rn = arg;
	json_t *names;
	char desc[300];

	rn->np.job = NULL;
	if (r->end != CTL_JOB_EXITED || r->code) {
		char why[400];

		ctl_job_describe(r, desc, sizeof(desc));
		snprintf(why, sizeof(why), "kubectl get nodes%s %s",
			 rn->np.all ? " -l " EDGE_LABEL : "", desc);
		failed(rn, why);
		return;
	}
	if (r->out_truncated || !(names = names_of(r->out))) {
		failed(rn, "kubectl get nodes -o name: not a list of node/NAME lines");
		return;
	}
	if (!rn->np.all) { /* the nodes; now the edge nodes among them */
		rn->np.all = names;
		query(rn, true);
		return;
	}
	json_decref(rn->np.lists.all);
	json_decref(rn->np.lists.edge);
	rn->np.lists.all = rn->np.all;
	rn->np.lists.edge = names;
	rn->np.all = NULL;
	if (rn->np.last_error[0])
		ctl_log("nodes: kubectl answers again (%zu nodes, %zu edge nodes)",
			json_array_size(rn->np.lists.all), json_array_size(rn->np.lists.edge));
	rn->np.last_error[0] = 0;
	again(rn);
}

static void query(struct ec_run *rn, bool edge)
{
	char **argv = ec_drv_kubectl_get_nodes(&rn->dv, edge ? EDGE_LABEL : NULL);
	char kc[EC_PATH_MAX + 16], *env[] = {kc, NULL};
	struct ctl_job_spec js = {.argv = argv,
				  .env = rn->dv.kubeconfig[0] ? env : NULL,
				  .timeout_ms = rn->d->conf.command_timeout_s * 1000,
				  .done = done,
				  .arg = rn};

	snprintf(kc, sizeof(kc), "KUBECONFIG=%s", rn->dv.kubeconfig);
	rn->np.job = argv ? ctl_exec_run(rn->x, &js) : NULL;
	ec_argv_free(argv);
	if (!rn->np.job)
		failed(rn, "out of memory");
}

static void on_timer(lws_sorted_usec_list_t *sul)
{
	struct ec_run *rn = lws_container_of(sul, struct ec_run, np.sul);

	if (!rn->np.job)
		query(rn, false);
}

void nodes_start(struct ec_run *rn)
{
	memset(&rn->np, 0, sizeof(rn->np));
	if (rn->dv.kind == EC_DRIVER_KUBECTL)
		lws_sul_schedule(rn->lws, 0, &rn->np.sul, on_timer, 0);
}

/* Before the runner goes: it drops the job without calling back. */
void nodes_stop(struct ec_run *rn)
{
	lws_sul_cancel(&rn->np.sul);
	json_decref(rn->np.all);
	json_decref(rn->np.lists.all);
	json_decref(rn->np.lists.edge);
	memset(&rn->np, 0, sizeof(rn->np));
}
