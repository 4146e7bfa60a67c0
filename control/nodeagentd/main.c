// SPDX-License-Identifier: BSD-2-Clause
/*
 * nodeagentd: one per node of a serverless cluster. Holds the node's pods
 * (process trees in their own network namespace and cgroup, plugged into
 * the tenant's VPC) and their sessions (ingress entries of the XDP data
 * plane), and reports them to fornaxd over the node link
 * (proto/fornax.md, docs/serverless.md "nodeagentd").
 *   nodeagentd -c FILE
 *
 * main owns the lws context, the signalfd, the command runner, the store
 * and the modules' handles, and wires the one event that goes up (the
 * agent's reports, to the link). Stopping leaves the pods running: the
 * next start adopts them, as after a kill -9.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>
#include <libwebsockets.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_exec.h"
#include "ctl_log.h"
#include "ctl_signal.h"
#include "dargs.h"
#include "fs.h"
#include "na_agent.h"
#include "na_config.h"
#include "na_link.h"
#include "na_store.h"

#define SCRIPTS_RUNNING 4    /* pod network scripts at once; the rest queue */
#define KILL_GRACE_MS	5000 /* a script past its timeout: SIGTERM -> SIGKILL */

struct daemon {
	struct na_config conf;
	struct na_store store;
	struct lws_context *lws;
	struct ctl_signals *signals;
	struct ctl_exec *exec;
	struct na_agent *agent;
	struct na_link *link;
	volatile sig_atomic_t stop;
};

static void on_signal(void *arg, int signo)
{
	struct daemon *dm = arg;

	ctl_log("signal %d: stopping (the pods keep running)", signo);
	dm->stop = 1;
	lws_cancel_service(dm->lws);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: nodeagentd -c FILE\n"
		   "  -c, --config FILE   configuration ([Node] [Core] [Store] [Pods]);\n"
		   "                      see docs/serverless.md, \"nodeagentd\"\n"
		   "  -h, --help          this text\n"
		   "SIGTERM or SIGINT stop it; its pods keep running and are adopted\n"
		   "again by the next start.\n");
}

/* A node that is a network namespace of this host (a test bed, a
 * development box): entered here rather than by `ip netns exec`, which
 * remounts /sys and so hides bpffs and the cgroup hierarchies. */
static int enter_netns(const char *name)
{
	char path[128];
	int fd, rc;

	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ctl_log("network namespace %s: %s", path, strerror(errno));
		return -1;
	}
	rc = setns(fd, CLONE_NEWNET);
	if (rc)
		ctl_log("entering network namespace %s: %s", name, strerror(errno));
	close(fd);
	return rc;
}

static int start(struct daemon *dm)
{
	static const int stop_signals[] = {SIGTERM, SIGINT};
	struct lws_context_creation_info info;
	struct na_agent_events ev;
	char err[512];

	if (dm->conf.netns[0] && enter_netns(dm->conf.netns))
		return -1;
	if (fs_mkdir_parent(dm->conf.database, 0700) || fs_mkdir_p(dm->conf.run_dir, 0700)) {
		ctl_log("directories for %s, %s: %s", dm->conf.database, dm->conf.run_dir,
			strerror(errno));
		return -1;
	}
	if (na_store_open(&dm->store, dm->conf.database, err, sizeof(err))) {
		ctl_log("database: %s", err);
		return -1;
	}
	lws_set_log_level(LLL_ERR, NULL);
	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS | LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
	info.fd_limit_per_thread = 1024;
	info.connect_timeout_secs = 10;
	dm->lws = lws_create_context(&info);
	if (!dm->lws) {
		ctl_log("cannot create the event loop");
		return -1;
	}
	if (!(dm->signals = ctl_signals_new(dm->lws, stop_signals, 2, on_signal, dm))) {
		ctl_log("signalfd: %s", strerror(errno));
		return -1;
	}
	if (!(dm->exec = ctl_exec_new(dm->lws, SCRIPTS_RUNNING, KILL_GRACE_MS))) {
		ctl_log("cannot set up the command runner: %s", strerror(errno));
		return -1;
	}
	if (!(dm->link = na_link_start(&dm->conf, &dm->store, dm->lws)))
		return -1;
	ev.report = na_link_report;
	ev.ready = na_link_ready;
	ev.arg = dm->link;
	if (!(dm->agent = na_agent_start(&dm->conf, &dm->store, dm->lws, dm->exec, &ev)))
		return -1;
	na_link_set_agent(dm->link, dm->agent);
	ctl_log("node %s: core %s, database %s at revision %lld", dm->conf.name, dm->conf.url,
		dm->conf.database, (long long)na_store_revision(&dm->store));
	return 0;
}

/* In the reverse order: each module before what it lives in. */
static void stop(struct daemon *dm)
{
	na_link_stop(dm->link);
	na_agent_stop(dm->agent);
	ctl_exec_free(dm->exec);
	ctl_signals_free(dm->signals);
	if (dm->lws)
		lws_context_destroy(dm->lws);
	na_store_close(&dm->store);
}

int main(int argc, char **argv)
{
	struct daemon dm;
	const char *cfg = NULL;
	const struct darg opts[] = {{"config", 'c', &cfg}, {0}};
	char err[512];
	int o, rc = 0;

	memset(&dm, 0, sizeof(dm));
	ctl_log_to_stderr("nodeagentd", "nodeagentd");
	if ((o = dargs_parse(argc, argv, opts, usage)) >= 0)
		return o;
	if (sodium_init() < 0)
		return 1;
	if (na_conf_load(cfg, &dm.conf, err, sizeof(err))) {
		fprintf(stderr, "nodeagentd: %s\n", err);
		return 2;
	}
	ctl_log_to_stderr("nodeagentd", dm.conf.name);
	signal(SIGPIPE, SIG_IGN);
	if (start(&dm))
		rc = 1;
	while (!rc && !dm.stop && lws_service(dm.lws, 0) >= 0)
		;
	if (!rc)
		ctl_log("stopped");
	stop(&dm);
	sodium_memzero(&dm.conf, sizeof(dm.conf));
	return rc;
}
