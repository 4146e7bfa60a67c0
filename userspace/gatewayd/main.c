// SPDX-License-Identifier: BSD-2-Clause
/*
 * gatewayd: one per cluster gateway. Keeps an authenticated, encrypted
 * session with every peer gateway, announces this cluster's VPC subnets,
 * learns the others', and keeps them (SQLite) across restarts.
 *   gatewayd -c FILE [--control PATH]
 * With an Instance it also programs the gateway program's maps (dataplane.c).
 * main.c only wires the modules (gwd.h lists them) and runs the main loop.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dargs.h"
#include "fs.h"
#include "gwd.h"
#include "xg.h"

static int start(struct gwd *g)
{
	char err[256];
	uint64_t now = gwd_now_ms();
	int one = 1;

	if (fs_mkdir_parent(g->conf.database, 0700) ||
	    gw_store_open(&g->store, g->conf.database, err, sizeof(err))) {
		gwd_log(g, "database: %s", err);
		return -1;
	}
	/* Routes learned before a restart keep forwarding, stale, until each
	 * peer resyncs or the grace time ends. */
	gw_store_load(&g->store, &g->routes);
	for (int i = 0; i < g->routes.n; i++)
		if (g->routes.r[i].state == RT_ACTIVE || g->routes.r[i].state == RT_STALE) {
			g->routes.r[i].state = RT_STALE;
			g->routes.r[i].expires_ms = now + (uint64_t)g->conf.grace_s * 1000;
		} else {
			g->routes.r[i].expires_ms = now + 600000;
		}
	gwd_own_start(g);
	for (int i = 0; i < g->conf.n_peers; i++) {
		g->peers[i].conf = &g->conf.peers[i];
		g->peers[i].rx_new_slot = -1;
		g->peers[i].dial_lower = strcmp(g->conf.name, g->conf.peers[i].name) < 0;
		gwd_dial_first(&g->peers[i]);
		g->n_peers++;
	}
	/* Before any session: learned routes go back into the maps as they
	 * were (stale), so forwarding across a restart does not stop. */
	if (gwd_dp_open(g, err, sizeof(err))) {
		gwd_log(g, "data plane: %s", err);
		return -1;
	}
	if (g->dp.on)
		gwd_log(g, "data plane: instance %s, public %s:%u via %s, %d dividers",
			g->conf.instance, inet_ntoa(g->conf.public_addr.sin_addr),
			ntohs(g->conf.public_addr.sin_port),
			g->conf.public_if[0] ? g->conf.public_if : "(routing)", g->dp.n_div);
	g->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(g->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (g->listen_fd < 0 ||
	    bind(g->listen_fd, (struct sockaddr *)&g->conf.listen, sizeof(g->conf.listen)) ||
	    listen(g->listen_fd, 128)) {
		gwd_log(g, "listen on %s:%u: %s", inet_ntoa(g->conf.listen.sin_addr),
			ntohs(g->conf.listen.sin_port), strerror(errno));
		return -1;
	}
	if (fs_mkdir_parent(g->ctl_path, 0700) || gwd_ctl_open(g))
		return -1;
	gwd_log(g, "listening on %s:%u, %d peers, %d local subnets, %d routes from the database",
		inet_ntoa(g->conf.listen.sin_addr), ntohs(g->conf.listen.sin_port), g->n_peers,
		g->n_own, g->routes.n);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gatewayd -c FILE [--control PATH]\n"
		"  -c, --config FILE    wg-quick style configuration: docs/user-guide.md,\n"
		"                       section \"Inter-cluster gateway\"\n"
		"  -s, --control PATH   control socket (default /run/xgate/gatewayd-NAME.sock)\n");
}

/* SIGINT and SIGTERM arrive on a signalfd the main loop polls with the
 * control socket (no handler, so no state outside main's frame). */
static int signals_fd(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	/* blocked before any thread starts: every thread inherits the mask */
	if (pthread_sigmask(SIG_BLOCK, &set, NULL))
		return -1;
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

static void run(struct gwd *g)
{
	int due[GW_MAX_PEERS];
	int n_due, gone;

	while (!g->stop) {
		pthread_mutex_lock(&g->lock);
		gone = rt_expire(&g->routes, gwd_now_ms());
		if (gone) {
			gwd_log(g, "grace time over: %d stale routes removed", gone);
			gwd_dp_sync_routes(g);
			gw_store_begin(&g->store);
			for (int i = 0; i < g->n_peers; i++)
				gw_store_replace_origin(&g->store, &g->routes,
							g->peers[i].conf->name);
			gw_store_commit(&g->store);
		}
		n_due = gwd_dial_due(g, due);
		gwd_rekeys(g);
		pthread_mutex_unlock(&g->lock);
		gwd_dial(g, due, n_due);
		gwd_ctl_serve(g); /* waits up to 200 ms: the loop's tick */
	}
}

int main(int argc, char **argv)
{
	const char *cfg = NULL, *ctl = NULL;
	const struct darg opts[] = {{"config", 'c', &cfg}, {"control", 's', &ctl}, {0}};
	struct gwd *g;
	pthread_t acc, ka;
	char err[512];
	int o;

	if ((o = dargs_parse(argc, argv, opts, usage)) >= 0)
		return o;
	if (sodium_init() < 0)
		return 1;
	g = calloc(1, sizeof(*g));
	if (!g)
		return 1;
	if (gw_conf_load(cfg, &g->conf, err, sizeof(err))) {
		fprintf(stderr, "gatewayd: %s\n", err);
		free(g);
		return 2;
	}
	snprintf(g->ctl_path, sizeof(g->ctl_path), "%s",
		 ctl ? ctl : "/run/xgate/gatewayd-default.sock");
	if (!ctl)
		snprintf(g->ctl_path, sizeof(g->ctl_path), "/run/xgate/gatewayd-%s.sock",
			 g->conf.name);
	pthread_mutex_init(&g->lock, NULL);
	pthread_mutex_init(&g->conn_lock, NULL);
	gw_hs_init(&g->hs, GW_HS_INBOUND_MAX);
	g->listen_fd = g->ctl_fd = -1;
	rt_init(&g->routes);
	signal(SIGPIPE, SIG_IGN);
	g->sig_fd = signals_fd();
	if (g->sig_fd < 0) {
		gwd_log(g, "signalfd: %s", strerror(errno));
		free(g);
		return 1;
	}
	if (start(g)) {
		gw_store_close(&g->store);
		free(g);
		return 1;
	}
	pthread_create(&acc, NULL, gwd_acceptor, g);
	pthread_create(&ka, NULL, gwd_keepalive_thread, g);
	run(g);
	gwd_log(g, "stopping");
	pthread_join(acc, NULL);
	pthread_join(ka, NULL);
	close(g->listen_fd);
	close(g->ctl_fd);
	unlink(g->ctl_path);
	/* Session threads still running wait for the lock until the process
	 * ends; without any, nothing uses g any more. */
	pthread_mutex_lock(&g->lock);
	gw_store_close(&g->store);
	gwd_dp_close(g);
	if (!__atomic_load_n(&g->threads, __ATOMIC_ACQUIRE)) {
		pthread_mutex_unlock(&g->lock);
		rt_free(&g->routes);
		free(g);
	}
	return 0;
}
