// SPDX-License-Identifier: BSD-2-Clause
/*
 * gatewayd: one per cluster gateway. Keeps an authenticated, encrypted
 * session with every peer gateway, announces this cluster's VPC subnets,
 * learns the others', and keeps them (SQLite) across restarts.
 *   gatewayd -c FILE [--control PATH]
 * This build is the control plane; programming the gateway XDP maps comes
 * with the gateway program (issue 3, data-plane part).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dargs.h"
#include "dlog.h"
#include "gwd.h"
#include "xg.h"

static struct gwd G;
static const char *log_name = "gatewayd";

uint64_t gwd_now_ms(void)
{
	return dlog_now_ms();
}

void gwd_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	dlog_v("gatewayd", log_name, 512, fmt, ap);
	va_end(ap);
}

static void on_signal(int sig)
{
	(void)sig;
	G.stop = 1;
}

static struct own_subnet *own_find(struct gwd *g, const struct rt_key *k)
{
	for (int i = 0; i < g->n_own; i++)
		if (g->own[i].key.vni == k->vni && g->own[i].key.ip_be == k->ip_be &&
		    g->own[i].key.plen == k->plen)
			return &g->own[i];
	return NULL;
}

/* Add or withdraw one of our subnets (lock held): persist, then tell peers. */
static int own_change(struct gwd *g, const struct rt_key *k, bool add, bool from_config,
		      char *err, size_t errlen)
{
	struct own_subnet *o = own_find(g, k);
	bool fc;

	if (add && o && !o->withdrawn) {
		snprintf(err, errlen, "subnet already announced");
		return -1;
	}
	if (!add && (!o || o->withdrawn)) {
		snprintf(err, errlen, "no such local subnet");
		return -1;
	}
	if (add) {
		for (int i = 0; i < g->routes.n; i++)
			if (rt_forwarding(&g->routes.r[i]) && rt_overlap(&g->routes.r[i].key, k)) {
				snprintf(err, errlen, "overlaps a subnet of peer %s",
					 g->routes.r[i].origin);
				return -1;
			}
		if (!o && g->n_own >= GW_MAX_SUBNETS) {
			snprintf(err, errlen, "too many local subnets");
			return -1;
		}
	}
	fc = add ? from_config : o->from_config;
	/* Durable (fsync) before any peer hears the new version: peers keep
	 * it, and a version that went back after a power loss would make our
	 * next change look older than what they hold. Memory changes only
	 * once it is stored. */
	if (gw_store_begin_durable(&g->store) ||
	    gw_store_put_u64(&g->store, "own_version", g->own_version + 1) ||
	    gw_store_put_own(&g->store, k, g->own_version + 1, !add, fc)) {
		gw_store_rollback(&g->store);
		snprintf(err, errlen, "database write failed");
		return -1;
	}
	if (gw_store_commit(&g->store)) {
		snprintf(err, errlen, "database write failed");
		return -1;
	}
	if (!o) {
		o = &g->own[g->n_own++];
		o->key = *k;
	}
	o->from_config = fc;
	o->withdrawn = !add;
	o->version = ++g->own_version;
	gwd_broadcast(g, add ? 3 : 4, o);
	return 0;
}

int gwd_own_set(struct gwd *g, const struct rt_key *k, bool add, char *err, size_t errlen)
{
	uint32_t mask = k->plen ? htonl(~0u << (32 - k->plen)) : 0;

	if (k->ip_be & ~mask) {
		snprintf(err, errlen, "host bits set");
		return -1;
	}
	if (own_change(g, k, add, false, err, errlen))
		return -1;
	gwd_log("local subnet %s: VNI %u (v%llu)", add ? "added" : "withdrawn", k->vni,
		(unsigned long long)g->own_version);
	return 0;
}

static void load_own(void *arg, const struct rt_key *k, uint64_t version, int withdrawn,
		     int from_config)
{
	struct gwd *g = arg;
	struct own_subnet *o;

	if (g->n_own >= GW_MAX_SUBNETS)
		return;
	o = &g->own[g->n_own++];
	o->key = *k;
	o->version = version;
	o->withdrawn = withdrawn;
	o->from_config = from_config;
}

static int start(struct gwd *g)
{
	char err[256];
	uint64_t now = gwd_now_ms();
	int one = 1;

	if (xg_mkdir_parent(g->conf.database) || gw_store_open(&g->store, g->conf.database, err, sizeof(err))) {
		gwd_log("database: %s", err);
		return -1;
	}
	gw_store_get_u64(&g->store, "own_version", &g->own_version);
	gw_store_load_own(&g->store, load_own, g);
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
	/* Config subnets: announce new ones, withdraw ones no longer configured. */
	for (int i = 0; i < g->conf.n_subnets; i++) {
		struct rt_key k = { g->conf.subnets[i].vni, g->conf.subnets[i].ip_be,
				    g->conf.subnets[i].plen };
		struct own_subnet *o = own_find(g, &k);

		if ((!o || o->withdrawn) && own_change(g, &k, true, true, err, sizeof(err)))
			gwd_log("config subnet VNI %u refused: %s", k.vni, err);
	}
	for (int i = 0; i < g->n_own; i++) {
		bool still = false;

		for (int j = 0; j < g->conf.n_subnets; j++)
			still |= g->conf.subnets[j].vni == g->own[i].key.vni &&
				 g->conf.subnets[j].ip_be == g->own[i].key.ip_be &&
				 g->conf.subnets[j].plen == g->own[i].key.plen;
		if (g->own[i].from_config && !g->own[i].withdrawn && !still)
			own_change(g, &g->own[i].key, false, true, err, sizeof(err));
	}
	for (int i = 0; i < g->conf.n_peers; i++) {
		g->peers[i].conf = &g->conf.peers[i];
		g->peers[i].dial_lower = strcmp(g->conf.name, g->conf.peers[i].name) < 0;
		gwd_dial_first(&g->peers[i]);
		g->n_peers++;
	}
	/* Before any session: learned routes go back into the maps as they
	 * were (stale), so forwarding across a restart does not stop. */
	if (gwd_dp_open(g, err, sizeof(err))) {
		gwd_log("data plane: %s", err);
		return -1;
	}
	if (g->dp.on)
		gwd_log("data plane: instance %s, public %s:%u via %s, %d dividers", g->conf.instance,
			inet_ntoa(g->conf.public_addr.sin_addr), ntohs(g->conf.public_addr.sin_port),
			g->conf.public_if[0] ? g->conf.public_if : "(routing)", g->dp.n_div);
	g->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(g->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (g->listen_fd < 0 ||
	    bind(g->listen_fd, (struct sockaddr *)&g->conf.listen, sizeof(g->conf.listen)) ||
	    listen(g->listen_fd, 128)) {
		gwd_log("listen on %s:%u: %s", inet_ntoa(g->conf.listen.sin_addr),
			ntohs(g->conf.listen.sin_port), strerror(errno));
		return -1;
	}
	if (xg_mkdir_parent(g->ctl_path) || gwd_ctl_open(g))
		return -1;
	gwd_log("listening on %s:%u, %d peers, %d local subnets, %d routes from the database",
		inet_ntoa(g->conf.listen.sin_addr), ntohs(g->conf.listen.sin_port), g->n_peers,
		g->n_own, g->routes.n);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: gatewayd -c FILE [--control PATH]\n"
		   "  -c, --config FILE    wg-quick style configuration (docs/gatewayd.md)\n"
		   "  -s, --control PATH   control socket (default /run/xgate/gatewayd-NAME.sock)\n");
}

int main(int argc, char **argv)
{
	const char *cfg = NULL, *ctl = NULL;
	const struct darg opts[] = {{"config", 'c', &cfg}, {"control", 's', &ctl}, {0}};
	struct sigaction sa = { .sa_handler = on_signal };
	static int due[GW_MAX_PEERS];
	pthread_t acc, ka;
	char err[512];
	int o;

	if ((o = dargs_parse(argc, argv, opts, usage)) >= 0)
		return o;
	if (sodium_init() < 0)
		return 1;
	if (gw_conf_load(cfg, &G.conf, err, sizeof(err))) {
		fprintf(stderr, "gatewayd: %s\n", err);
		return 2;
	}
	log_name = G.conf.name;
	snprintf(G.ctl_path, sizeof(G.ctl_path), "%s",
		 ctl ? ctl : "/run/xgate/gatewayd-default.sock");
	if (!ctl)
		snprintf(G.ctl_path, sizeof(G.ctl_path), "/run/xgate/gatewayd-%s.sock", G.conf.name);
	pthread_mutex_init(&G.lock, NULL);
	pthread_mutex_init(&G.conn_lock, NULL);
	G.listen_fd = G.ctl_fd = -1;
	rt_init(&G.routes);
	signal(SIGPIPE, SIG_IGN);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (start(&G))
		return 1;
	pthread_create(&acc, NULL, gwd_acceptor, &G);
	pthread_create(&ka, NULL, gwd_keepalive_thread, &G);
	while (!G.stop) {
		int gone, n_due;

		pthread_mutex_lock(&G.lock);
		gone = rt_expire(&G.routes, gwd_now_ms());

		if (gone) {
			gwd_log("grace time over: %d stale routes removed", gone);
			gwd_dp_sync_routes(&G);
			gw_store_begin(&G.store);
			for (int i = 0; i < G.n_peers; i++)
				gw_store_replace_origin(&G.store, &G.routes, G.peers[i].conf->name);
			gw_store_commit(&G.store);
		}
		n_due = gwd_dial_due(&G, due);
		gwd_rekeys(&G);
		pthread_mutex_unlock(&G.lock);
		gwd_dial(&G, due, n_due);
		gwd_ctl_serve(&G); /* waits up to 200 ms: the loop's tick */
	}
	gwd_log("stopping");
	pthread_join(acc, NULL);
	pthread_join(ka, NULL);
	close(G.listen_fd);
	close(G.ctl_fd);
	unlink(G.ctl_path);
	pthread_mutex_lock(&G.lock);
	gw_store_close(&G.store);
	gwd_dp_close(&G);
	return 0;
}
