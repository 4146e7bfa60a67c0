// SPDX-License-Identifier: BSD-2-Clause
/*
 * fornaxd: the serverless control plane of one cluster. Serves the
 * core.fornax-serverless.centaurusinfra.io/v1 API and the node link over
 * HTTP(S), keeps the applications in its store, and the nodes, pods and
 * sessions in memory (docs/serverless.md).
 *   fornaxd -c FILE
 *
 * main owns the lws context (through the HTTP server), the signalfd, the
 * core's tick and the modules' handles, and wires the core's hooks to them:
 * messages to a node's link (nodes.c), changed objects to the watches
 * (api.c), "run the tick now" to a zero-delay timer; on etcd it also puts
 * the view's watch in the loop (ctl_fdpoll), so a change is applied as it
 * arrives.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <libwebsockets.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "api.h"
#include "config.h"
#include "core.h"
#include "ctl_fdpoll.h"
#include "ctl_log.h"
#include "ctl_signal.h"
#include "dargs.h"
#include "fs.h"
#include "lead.h"
#include "nodes.h"
#include "store.h"

#define TICK_MS 100 /* timeouts and rounds; a kick runs it sooner */

struct daemon {
	struct fx_conf conf;
	volatile sig_atomic_t stop;
	struct fx_store *store;
	struct fx_lead *lead;	   /* the store on etcd: its view, and the election */
	struct ctl_fdpoll *watch;  /* the view's etcd watch in the loop */
	struct ctl_fdpoll *elect;  /* the election key's watch: campaign when it goes */
	struct ctl_fdpoll *writes; /* the store's application writes to etcd in flight */
	struct fx_core *core;
	struct fx_api *api;
	struct fx_http *http;
	struct fx_nodes *nodes;
	struct ctl_signals *signals;
	struct lws_context *lws;
	lws_sorted_usec_list_t tick, kick;
	bool kicked;
};

/* ---- the core's hooks ---- */

static uint64_t hook_now(void *arg)
{
	(void)arg;
	return ctl_now_ms();
}

static void hook_send(void *arg, void *link, json_t *msg)
{
	struct daemon *dm = arg;

	if (dm->nodes)
		fx_nodes_send(dm->nodes, link, msg);
	else
		json_decref(msg);
}

static void hook_event(void *arg, enum fx_kind k, const char *type, json_t *obj, uint64_t rv)
{
	struct daemon *dm = arg;

	if (dm->api)
		fx_api_event(dm->api, k, type, obj, rv);
}

static void on_kick(lws_sorted_usec_list_t *sul)
{
	struct daemon *dm = lws_container_of(sul, struct daemon, kick);

	dm->kicked = false;
	fx_core_tick(dm->core);
}

static void hook_kick(void *arg)
{
	struct daemon *dm = arg;

	/* after the callback that asked: its changes are all made by then */
	if (dm->lws && !dm->kicked) {
		dm->kicked = true;
		lws_sul_schedule(dm->lws, 0, &dm->kick, on_kick, 0);
	}
}

/* the lead changed hands: a standby serves reads only and commands no node */
static void lead_standby(void *arg, bool standby, const char *leader)
{
	struct daemon *dm = arg;

	fx_api_set_standby(dm->api, standby, leader);
	fx_nodes_set_standby(dm->nodes, standby);
	fx_core_set_lead(dm->core, !standby, standby ? 0 : fx_lead_term(dm->lead));
}

/* the view's watch has input, or wants a step (a reconnect, curl's timer):
 * a change is applied as it arrives, not on the next tick */
static void on_watch(void *arg)
{
	struct daemon *dm = arg;

	ctl_fdpoll_at(dm->watch, fx_lead_watch_step(dm->lead));
}

/* an application write to etcd has news (an answer, curl's timer): the
 * core changes and the client is answered as soon as etcd has answered */
static void on_writes(void *arg)
{
	struct daemon *dm = arg;

	ctl_fdpoll_at(dm->writes, fx_store_async_poll(dm->store));
}

/* the election key's watch has input: a standby campaigns at once when
 * the leader's key is deleted */
static void on_elect(void *arg)
{
	struct daemon *dm = arg;
	int ms = -1;

	if (fx_lead_elect_step(dm->lead, &ms))
		dm->stop = 1;
	ctl_fdpoll_at(dm->elect, ms);
}

static void on_tick(lws_sorted_usec_list_t *sul)
{
	struct daemon *dm = lws_container_of(sul, struct daemon, tick);

	if (!dm->stop && dm->lead && fx_lead_step(dm->lead))
		dm->stop = 1;
	fx_core_tick(dm->core);
	lws_sul_schedule(dm->lws, 0, sul, on_tick, TICK_MS * LWS_US_PER_MS);
}

static void api_close_link(void *arg, void *link)
{
	struct daemon *dm = arg;

	if (dm->nodes)
		fx_nodes_close(dm->nodes, link, "the node was deleted");
}

static void on_signal(void *arg, int signo)
{
	struct daemon *dm = arg;

	ctl_log("signal %d: stopping", signo);
	dm->stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: fornaxd -c FILE\n"
		   "  -c, --config FILE   configuration ([API] [Store] [Nodes]);\n"
		   "                      see docs/serverless.md\n"
		   "  -h, --help          this text\n"
		   "SIGTERM or SIGINT stop it cleanly. Exit 3: with [Store] Election = on,\n"
		   "it lost the lead (a standby has taken over).\n");
}

static const char *store_name(const struct fx_conf *c)
{
	return c->store == FX_STORE_ETCD ? c->etcd_conf.endpoints : c->database;
}

/* [Store] Backend: SQLite at Database, or etcd at Endpoints under Prefix */
static int open_store(struct daemon *dm)
{
	const struct fx_conf *c = &dm->conf;
	const struct fx_store_etcd_conf ec = {c->etcd_conf.endpoints,
					      c->etcd_conf.prefix,
					      c->etcd_conf.ca[0] ? c->etcd_conf.ca : NULL,
					      c->etcd_conf.cert[0] ? c->etcd_conf.cert : NULL,
					      c->etcd_conf.key[0] ? c->etcd_conf.key : NULL,
					      c->etcd_conf.timeout_ms};
	char err[512];

	if (c->store == FX_STORE_ETCD) {
		if (!(dm->store = fx_store_etcd_open(&ec, err, sizeof(err))))
			ctl_log("store: %s", err);
		return dm->store ? 0 : -1;
	}
	if (fs_mkdir_parent(c->database, 0755)) {
		ctl_log("database directory for %s: %s", c->database, strerror(errno));
		return -1;
	}
	if (!(dm->store = fx_store_sqlite_open(c->database, err, sizeof(err))))
		ctl_log("database: %s", err);
	return dm->store ? 0 : -1;
}

/* The store on etcd: its view of the applications, and with [Store]
 * Election = on a campaign, as the URL clients are sent to. */
static int lead_new(struct daemon *dm)
{
	const struct fx_conf *c = &dm->conf;
	char host[128] = "localhost", id[300];

	if (c->store != FX_STORE_ETCD)
		return 0;
	gethostname(host, sizeof(host) - 1);
	snprintf(id, sizeof(id), "%s://%s:%u (pid %d)", c->tls_cert[0] ? "https" : "http",
		 c->listen.sin_addr.s_addr ? inet_ntoa(c->listen.sin_addr) : host,
		 ntohs(c->listen.sin_port), (int)getpid());
	dm->lead = fx_lead_new(dm->store, c->etcd_conf.prefix, id,
			       c->election ? c->etcd_conf.election_ttl_s : 0);
	return dm->lead ? 0 : -1;
}

static int start(struct daemon *dm)
{
	static const int stop_signals[] = {SIGTERM, SIGINT};
	struct fx_conf *c = &dm->conf;
	struct fx_core_conf cc = {.pod_net = c->pod_net,
				  .pod_net_bits = c->pod_net_bits,
				  .node_bits = c->node_bits,
				  .vni = c->vni,
				  .port_lo = c->port_lo,
				  .port_hi = c->port_hi,
				  .state_s = c->state_s,
				  .form = c->endpoint_form,
				  .max_sess_client = c->max_sess_client};
	struct fx_core_hooks h = {dm, hook_now, hook_send, hook_event, hook_kick};
	struct fx_api_hooks ah = {dm, api_close_link};
	struct fx_http_conf hc = {
	    .http = {.listen = c->listen,
		     .tls_cert = c->tls_cert,
		     .tls_key = c->tls_key,
		     .tokens = (const unsigned char(*)[CTL_TOKEN_HASH_LEN])c->tokens,
		     .n_tokens = c->n_tokens},
	    .max_body = c->max_body};
	struct fx_nodes_conf nc = {(const unsigned char(*)[CTL_TOKEN_HASH_LEN])c->join_tokens,
				   c->n_join_tokens, c->queue_max,
				   1 << (c->node_bits - c->pod_net_bits)};
	struct timeval tv;
	char err[512];

	const struct fx_lead_hooks lh = {dm, lead_standby};

	if (open_store(dm) || lead_new(dm))
		return -1;
	gettimeofday(&tv, NULL);
	/* revisions continue above the wall clock's microseconds: a restarted core never
	 * hands out one a watcher already saw */
	if (!(dm->core = fx_core_new(dm->store, &cc, &h,
				     (uint64_t)tv.tv_sec * 1000000 + (uint64_t)tv.tv_usec, err,
				     sizeof(err)))) {
		ctl_log("store %s: %s", store_name(c), err);
		return -1;
	}
	if (!(dm->api = fx_api_new(dm->core, dm->store, &ah)))
		return -1;
	if (!(dm->http = fx_http_start(dm->api, &hc)))
		return -1;
	dm->lws = fx_http_context(dm->http);
	if (!(dm->nodes = fx_nodes_start(dm->core, dm->store, &nc, fx_http_vhost(dm->http))))
		return -1;
	if (dm->lead && fx_lead_start(dm->lead, dm->core, &lh))
		return -1;
	if (dm->lead && fx_lead_term(dm->lead) > 0) /* it won at start: the nodes learn its term */
		fx_core_set_lead(dm->core, true, fx_lead_term(dm->lead));
	if (dm->lead) {
		if (!(dm->watch =
			  ctl_fdpoll_new(dm->lws, fx_lead_watch_fd(dm->lead), on_watch, dm))) {
			ctl_log("the etcd watch in the loop: %s", strerror(errno));
			return -1;
		}
		ctl_fdpoll_at(dm->watch, 0);
	}
	if (fx_store_async_fd(dm->store) >= 0) {
		if (!(dm->writes =
			  ctl_fdpoll_new(dm->lws, fx_store_async_fd(dm->store), on_writes, dm))) {
			ctl_log("the etcd writes in the loop: %s", strerror(errno));
			return -1;
		}
		ctl_fdpoll_at(dm->writes, -1);
	}
	if (dm->lead && fx_lead_elect_fd(dm->lead) >= 0) {
		if (!(dm->elect =
			  ctl_fdpoll_new(dm->lws, fx_lead_elect_fd(dm->lead), on_elect, dm))) {
			ctl_log("the election's etcd watch in the loop: %s", strerror(errno));
			return -1;
		}
		ctl_fdpoll_at(dm->elect, 0);
	}
	if (!(dm->signals = ctl_signals_new(dm->lws, stop_signals, 2, on_signal, dm))) {
		ctl_log("signalfd: %s", strerror(errno));
		return -1;
	}
	lws_sul_schedule(dm->lws, 0, &dm->tick, on_tick, TICK_MS * LWS_US_PER_MS);
	ctl_log("serving on %s:%u%s; store %s", inet_ntoa(c->listen.sin_addr),
		ntohs(c->listen.sin_port), c->tls_cert[0] ? " (TLS)" : "", store_name(c));
	return 0;
}

/* In the reverse order: each module before what it lives in. */
static void stop(struct daemon *dm)
{
	if (dm->lws) {
		lws_sul_cancel(&dm->tick);
		lws_sul_cancel(&dm->kick);
	}
	fx_nodes_stop(dm->nodes);
	dm->nodes = NULL;
	ctl_signals_free(dm->signals);
	ctl_fdpoll_free(dm->watch);
	ctl_fdpoll_free(dm->writes);
	ctl_fdpoll_free(dm->elect);
	fx_api_free(dm->api); /* the open watches end; their streams go with the context */
	dm->api = NULL;
	fx_http_stop(dm->http);
	dm->lws = NULL;
	fx_lead_free(dm->lead); /* it feeds the core; a leader that stops hands over now */
	fx_core_free(dm->core);
	if (dm->store)
		dm->store->ops->close(dm->store);
}

int main(int argc, char **argv)
{
	struct daemon dm = {0};
	const char *cfg = NULL;
	const struct darg opts[] = {{"config", 'c', &cfg}, {0}};
	char err[512];
	int o, rc = 0;

	ctl_log_to_stderr("fornaxd", "fornaxd");
	if ((o = dargs_parse(argc, argv, opts, usage)) >= 0)
		return o;
	if (sodium_init() < 0)
		return 1;
	if (fx_conf_load(cfg, &dm.conf, err, sizeof(err))) {
		fprintf(stderr, "fornaxd: %s\n", err);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	if (start(&dm))
		rc = 1;
	while (!rc && !dm.stop && lws_service(dm.lws, 0) >= 0)
		;
	if (!rc) {
		/* writes waiting for etcd are answered, and the answers written
		 * (a few turns of the loop: the tick bounds each) before it goes */
		fx_core_writes_stop(dm.core);
		for (int i = 0; i < 4; i++)
			lws_service(dm.lws, 0);
	}
	if (!rc)
		ctl_log("stopped");
	if (fx_lead_deposed(dm.lead))
		rc = 3;
	stop(&dm);
	sodium_memzero(&dm.conf, sizeof(dm.conf));
	return rc;
}
