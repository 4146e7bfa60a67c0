// SPDX-License-Identifier: BSD-2-Clause
/*
 * edgeclusterd: one per cluster. Serves the edge.xgate.io/v1 API (missions,
 * edge clusters) over HTTP(S) from SQLite, applies the missions placed
 * here, and is a node of the edge tree: the hub its children attach to,
 * the uplink to its parent (docs/edgecluster.md).
 *   edgeclusterd -c FILE
 *
 * main owns the lws context (through the HTTP server), the signalfd, the
 * command runner and the modules' handles, and wires the context's events to them: the
 * layers call down, and the one event that goes up (a mission's state,
 * reported to the parent) is a callback set here. See docs/architecture.md
 * "Control-plane layout".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <libwebsockets.h>
#include <signal.h>
#include <sodium.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "ctl_exec.h"
#include "fs.h"
#include "ctl_signal.h"
#include "dargs.h"
#include "ecd.h"
#include "links.h"
#include "missions.h"
#include "store_etcd.h"

/* The one command runner (missions and attach scripts share its signalfd
 * for SIGCHLD): at most this many children at once, the rest queue. */
#define COMMANDS_RUNNING 4
#define KILL_GRACE_MS	 5000 /* SIGTERM -> SIGKILL */

/* The daemon: the context the modules share and the handles main wires. */
struct daemon {
	struct ecd ctx;
	volatile sig_atomic_t stop; /* set from the loop (ctl_signal), read by it */
	struct ctl_signals *signals;
	struct http_server *http;
	struct ctl_exec *exec;
	struct ec_run *run;
	struct hub *hub;
	struct uplink *up;
	struct ec_etcd *etcd;		  /* [Store] Backend = etcd: the view and the election */
	lws_sorted_usec_list_t etcd_tick; /* its step */
	int exit_code;
};

static struct daemon *daemon_of(struct ecd *d)
{
	return (struct daemon *)((char *)d - offsetof(struct daemon, ctx));
}

/* ---- the events, wired to the modules ---- */

static void on_mission(struct ecd *d, const char *name, bool deleted)
{
	struct daemon *dm = daemon_of(d);

	if (dm->run)
		mission_changed(dm->run, name, deleted);
}

static void on_state(struct ecd *d, const char *mission)
{
	struct daemon *dm = daemon_of(d);

	if (dm->up)
		uplink_state_changed(dm->up, mission);
}

static void on_attach(struct ecd *d)
{
	struct daemon *dm = daemon_of(d);

	if (dm->up)
		uplink_kick(dm->up);
}

static void on_owed(struct ecd *d)
{
	struct daemon *dm = daemon_of(d);

	if (dm->up)
		uplink_owe(dm->up);
}

static void on_signal(void *arg, int signo)
{
	struct daemon *dm = arg;

	if (signo == SIGTERM || signo == SIGINT) {
		ctl_log("signal %d: stopping", signo);
		dm->stop = 1;
	}
}

/* ---- the root on etcd ---- */

#define ETCD_TICK_MS 100

static const char *leader_of(struct ecd *d)
{
	return ec_etcd_leader(daemon_of(d)->etcd);
}

/* Election id: the URL clients are sent to, and which process it is. */
static int etcd_open(struct daemon *dm)
{
	const struct ec_conf *c = &dm->ctx.conf;
	char host[128] = "localhost", id[300], err[512];
	struct ec_etcd_conf ec = {c->etcd_conf.endpoints,
				  c->etcd_conf.prefix,
				  c->etcd_conf.ca[0] ? c->etcd_conf.ca : NULL,
				  c->etcd_conf.cert[0] ? c->etcd_conf.cert : NULL,
				  c->etcd_conf.key[0] ? c->etcd_conf.key : NULL,
				  id,
				  c->etcd_conf.timeout_ms,
				  c->etcd_conf.election_ttl_s,
				  0};

	gethostname(host, sizeof(host) - 1);
	snprintf(id, sizeof(id), "%s://%s:%u (pid %d)", c->tls_cert[0] ? "https" : "http",
		 c->listen.sin_addr.s_addr ? inet_ntoa(c->listen.sin_addr) : host,
		 ntohs(c->listen.sin_port), (int)getpid());
	if (!(dm->etcd = ec_etcd_open(&dm->ctx.store, &ec, err, sizeof(err)))) {
		ctl_log("store on etcd (%s): %s", c->etcd_conf.endpoints, err);
		return -1;
	}
	dm->ctx.standby = !ec_etcd_leading(dm->etcd);
	dm->ctx.leader = leader_of;
	return 0;
}

/* what only the leader runs: this cluster's own row, the missions */
static int lead_start(struct daemon *dm)
{
	struct ecd *d = &dm->ctx;

	if (tree_self_sync(d)) {
		ctl_log("database %s: %s", d->conf.database, ec_store_errmsg(&d->store));
		return -1;
	}
	if (!(dm->run = mission_start(d, http_context(dm->http), dm->exec)))
		return -1;
	d->nodes = mission_nodes(dm->run);
	return 0;
}

static void on_etcd_tick(lws_sorted_usec_list_t *sul)
{
	struct daemon *dm = lws_container_of(sul, struct daemon, etcd_tick);

	switch (ec_etcd_step(dm->etcd)) {
	case EC_ETCD_WON:
		dm->ctx.standby = false;
		if (lead_start(dm) || hub_lead(dm->hub)) {
			dm->exit_code = 1;
			dm->stop = 1;
			return;
		}
		ctl_log("serving writes and children");
		break;
	case EC_ETCD_LOST:
		/* etcd already refuses our writes: stop; restarted, this root is
		 * the next standby */
		ctl_log("election: this root no longer leads: stopping");
		dm->ctx.standby = true;
		dm->exit_code = 3;
		dm->stop = 1;
		return;
	default:
		break;
	}
	lws_sul_schedule(http_context(dm->http), 0, &dm->etcd_tick, on_etcd_tick,
			 ETCD_TICK_MS * LWS_US_PER_MS);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: edgeclusterd -c FILE\n"
		   "  -c, --config FILE   configuration ([Cluster] [API] [Store] [Intervals]);\n"
		   "                      see docs/user-guide.md, \"Edge cluster tree\"\n"
		   "  -h, --help          this text\n"
		   "SIGTERM or SIGINT stop it cleanly.\n");
}

static int start(struct daemon *dm)
{
	static const int stop_signals[] = {SIGTERM, SIGINT};
	struct ecd *d = &dm->ctx;
	struct lws_context *lws;
	uint64_t rev = 0;
	char err[512];

	d->self_labels = json_object();
	for (int i = 0; i < d->conf.n_labels; i++)
		json_object_set_new(d->self_labels, d->conf.labels[i].key,
				    json_string(d->conf.labels[i].value));
	if (fs_mkdir_parent(d->conf.database, 0755)) {
		ctl_log("database directory for %s: %s", d->conf.database, strerror(errno));
		return -1;
	}
	if (ec_store_open(&d->store, d->conf.database, err, sizeof(err))) {
		ctl_log("database: %s", err);
		return -1;
	}
	if (d->conf.etcd && etcd_open(dm))
		return -1;
	/* the attach record decides the live parent before this cluster's row is
	 * synced (by the leader only: a standby's rows are etcd's) */
	if (tree_prepare(d) || (!d->standby && tree_self_sync(d)) ||
	    ec_store_revision(&d->store, &rev)) {
		ctl_log("database %s: %s", d->conf.database, ec_store_errmsg(&d->store));
		return -1;
	}
	d->on_mission = on_mission;
	d->on_state = on_state;
	d->on_attach = on_attach;
	d->on_owed = on_owed;
	if (!(dm->http = http_start(d)))
		return -1;
	lws = http_context(dm->http);
	d->watch = http_watch(dm->http);
	if (!(dm->signals = ctl_signals_new(lws, stop_signals, 2, on_signal, dm))) {
		ctl_log("signalfd: %s", strerror(errno));
		return -1;
	}
	/* after http_start, which made the lws context the commands run in */
	dm->exec = ctl_exec_new(lws, COMMANDS_RUNNING, KILL_GRACE_MS);
	if (!dm->exec) {
		ctl_log("cannot set up the command runner: %s", strerror(errno));
		return -1;
	}
	/* a standby applies nothing: the missions start when it leads */
	if (!d->standby && !(dm->run = mission_start(d, lws, dm->exec)))
		return -1;
	if (dm->run)
		d->nodes = mission_nodes(dm->run);
	/* the hub children attach to, the link to the parent */
	if (!(dm->hub = hub_start(d, lws, http_vhost(dm->http))) ||
	    !(dm->up = uplink_start(d, lws, dm->exec)))
		return -1;
	d->link = uplink_link_state(dm->up);
	if (dm->etcd)
		lws_sul_schedule(lws, 0, &dm->etcd_tick, on_etcd_tick,
				 ETCD_TICK_MS * LWS_US_PER_MS);
	ctl_log("cluster %s: distro %s, driver %s, %s%s; database %s%s at revision %" PRIu64,
		d->conf.name, ec_distro_name(d->conf.distro), ec_driver_name(d->conf.driver),
		d->parent.url[0] ? "parent " : "root of its tree", d->parent.url, d->conf.database,
		!dm->etcd    ? ""
		: d->standby ? " (a view of etcd; standby)"
			     : " (a view of etcd; leader)",
		rev);
	return 0;
}

/* In the reverse order: each module before what it lives in. */
static void stop(struct daemon *dm)
{
	struct ecd *d = &dm->ctx;

	d->link = NULL;
	uplink_stop(dm->up); /* before the runner its scripts run on */
	dm->up = NULL;
	hub_stop(dm->hub);
	dm->hub = NULL;
	d->nodes = NULL;
	mission_stop(dm->run);
	dm->run = NULL;
	ctl_exec_free(dm->exec); /* stops what still runs; before the context its pipes live in */
	if (dm->etcd && dm->http)
		lws_sul_cancel(&dm->etcd_tick);
	ctl_signals_free(dm->signals);
	d->watch = NULL;
	http_stop(dm->http);
	/* a leader that stops cleanly hands over now, not after its lease */
	ec_etcd_close(dm->etcd, true);
	dm->etcd = NULL;
	ec_store_close(&d->store);
	json_decref(d->self_labels);
}

int main(int argc, char **argv)
{
	struct daemon dm = {0}; /* the modules see only dm.ctx and their own handles */
	const char *cfg = NULL;
	const struct darg opts[] = {{"config", 'c', &cfg}, {0}};
	char err[512];
	int o, rc = 0;

	ctl_log_to_stderr("edgeclusterd", "edgeclusterd"); /* until the config names it */
	if ((o = dargs_parse(argc, argv, opts, usage)) >= 0)
		return o;
	if (sodium_init() < 0)
		return 1;
	if (ec_conf_load(cfg, &dm.ctx.conf, err, sizeof(err))) {
		fprintf(stderr, "edgeclusterd: %s\n", err);
		return 2;
	}
	ctl_log_to_stderr("edgeclusterd", dm.ctx.conf.name);
	signal(SIGPIPE, SIG_IGN);
	dm.ctx.started_ms = ctl_now_ms();
	if (start(&dm))
		rc = 1;
	while (!rc && !dm.stop && lws_service(http_context(dm.http), 0) >= 0)
		;
	if (!rc)
		ctl_log("stopped");
	stop(&dm);
	if (!rc)
		rc = dm.exit_code;
	sodium_memzero(&dm.ctx.conf, sizeof(dm.ctx.conf));
	return rc;
}
