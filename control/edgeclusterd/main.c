// SPDX-License-Identifier: BSD-2-Clause
/*
 * edgeclusterd: one per cluster. Serves the edge.xgate.io/v1 API (missions,
 * edge clusters) over HTTP(S) from SQLite; the tree links (hub downward,
 * uplink to the parent) come with slice 2 (docs/edgecluster.md).
 *   edgeclusterd -c FILE
 */
#include <errno.h>
#include <inttypes.h>
#include <libwebsockets.h>
#include <signal.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "dargs.h"
#include "ctl_exec.h"
#include "ctl_fs.h"
#include "ecd.h"
#include "links.h"

static struct ecd D;
static void usage(FILE *f)
{
	fprintf(f, "usage: edgeclusterd -c FILE\n"
		   "  -c, --config FILE   configuration ([Cluster] [API] [Store] [Intervals]);\n"
		   "                      see docs/user-guide.md, \"Edge cluster tree\"\n"
		   "  -h, --help          this text\n"
		   "SIGTERM or SIGINT stop it cleanly.\n");
}

/* Housekeeping tick; slice 2 hangs heartbeats and timeouts here. */
static lws_sorted_usec_list_t tick;
static void on_tick(lws_sorted_usec_list_t *sul)
{
	lws_sul_schedule(D.lws, 0, sul, on_tick, LWS_US_PER_SEC);
}

/* The one command runner (missions and attach scripts share its signalfd
 * for SIGCHLD): at most this many children at once, the rest queue. */
#define COMMANDS_RUNNING 4
#define KILL_GRACE_MS	 5000 /* SIGTERM -> SIGKILL */

static int start(struct ecd *d, struct ec_exec **x)
{
	uint64_t rev = 0;
	char err[512];

	d->self_labels = json_object();
	for (int i = 0; i < d->conf.n_labels; i++)
		json_object_set_new(d->self_labels, d->conf.labels[i].key,
				    json_string(d->conf.labels[i].value));
	if (ctl_mkdir_parent(d->conf.database, 0755)) {
		ctl_log("database directory for %s: %s", d->conf.database, strerror(errno));
		return -1;
	}
	if (ec_store_open(&d->store, d->conf.database, err, sizeof(err))) {
		ctl_log("database: %s", err);
		return -1;
	}
	/* slice 2: the attach record decides conf.parent before this cluster's row is synced */
	if (tree_prepare(d) || api_self_sync(d) || ec_store_revision(&d->store, &rev)) {
		ctl_log("database %s: %s", d->conf.database, ec_store_errmsg(&d->store));
		return -1;
	}
	if (http_start(d))
		return -1;
	/* after http_start, which made the lws context the commands run in */
	*x = ec_exec_new(d->lws, COMMANDS_RUNNING, KILL_GRACE_MS);
	if (!*x) {
		ctl_log("cannot set up the command runner: %s", strerror(errno));
		return -1;
	}
	if (mission_start(d, *x))
		return -1;
	/* the hub children attach to, the link to the parent */
	if (links_start(d, *x))
		return -1;
	lws_sul_schedule(d->lws, 0, &tick, on_tick, LWS_US_PER_SEC);
	ctl_log("cluster %s: distro %s, driver %s, %s%s; database %s at revision %" PRIu64,
		d->conf.name, ec_distro_name(d->conf.distro), ec_driver_name(d->conf.driver),
		d->conf.parent[0] ? "parent " : "root of its tree", d->conf.parent,
		d->conf.database, rev);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cfg = NULL;
	const struct darg opts[] = {{"config", 'c', &cfg}, {0}};
	char err[512];
	struct ec_exec *x = NULL;
	int o, rc = 0;

	ctl_log_to_stderr("edgeclusterd", "edgeclusterd"); /* until the config names it */
	if ((o = dargs_parse(argc, argv, opts, usage)) >= 0)
		return o;
	if (sodium_init() < 0)
		return 1;
	if (ec_conf_load(cfg, &D.conf, err, sizeof(err))) {
		fprintf(stderr, "edgeclusterd: %s\n", err);
		return 2;
	}
	ctl_log_to_stderr("edgeclusterd", D.conf.name);
	signal(SIGPIPE, SIG_IGN);
	D.started_ms = ctl_now_ms();
	if (start(&D, &x))
		rc = 1;
	while (!rc && !D.stop && lws_service(D.lws, 0) >= 0)
		;
	if (!rc)
		ctl_log("stopped");
	lws_sul_cancel(&tick);
	links_stop(&D); /* before the context its links live in goes */
	mission_stop(&D);
	ec_exec_free(x); /* stops what still runs; before the context its pipes live in goes */
	http_stop(&D);
	ec_store_close(&D.store);
	json_decref(D.self_labels);
	sodium_memzero(&D.conf, sizeof(D.conf));
	return rc;
}
