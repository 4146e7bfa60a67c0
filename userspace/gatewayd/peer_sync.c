// SPDX-License-Identifier: BSD-2-Clause
/*
 * Route sync with the peers: their ANNOUNCE / WITHDRAW / full syncs applied
 * to the route table, the store and the data plane in batches; our own
 * subnets sent to them. Each gateway speaks for itself (full mesh): the
 * origin of a route is the authenticated peer of its session.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "gwd.h"
#include "msg.h"

/* A withdrawn route's tombstone is kept this long (older announcements
 * arriving late cannot bring it back). */
#define TOMBSTONE_MS 600000

/* Open a store transaction for this batch if there is none yet. */
static bool batch_txn(struct gwd *g, struct batch *b)
{
	if (!b->txn)
		b->txn = !gw_store_begin(&g->store);
	return b->txn;
}

/* Its changes are committed before the data plane is programmed and before
 * the lock is released, i.e. before anyone (data path, control socket, the
 * next frame) can act on them. A failed write rolls the whole batch back
 * and marks the origin for a rewrite. */
void gwd_sync_batch_end(struct gwd *g, struct peer *p, struct batch *b)
{
	bool rewrite = p->store_dirty && !p->syncing;

	if (rewrite && batch_txn(g, b) &&
	    gw_store_replace_origin(&g->store, &g->routes, p->conf->name))
		b->failed = true;
	if (b->txn) {
		if (b->failed)
			gw_store_rollback(&g->store);
		if (b->failed || gw_store_commit(&g->store)) {
			gwd_log(g, "peer %s: database write failed; its routes are rewritten later",
				p->conf->name);
			p->store_dirty = true;
		} else if (rewrite) {
			p->store_dirty = false;
		}
	}
	if (b->routes && !p->syncing)
		gwd_dp_sync_routes(g);
}

/* The origin's stored routes made those of the table, in a transaction of
 * its own. */
static void store_origin(struct gwd *g, struct peer *p)
{
	if (gw_store_begin(&g->store)) {
		p->store_dirty = true;
	} else if (gw_store_replace_origin(&g->store, &g->routes, p->conf->name)) {
		gw_store_rollback(&g->store);
		p->store_dirty = true;
	} else {
		p->store_dirty = gw_store_commit(&g->store) != 0;
	}
}

int gwd_sync_peer_down(struct gwd *g, struct peer *p)
{
	int stale = rt_origin_down(&g->routes, p->conf->name, gwd_now_ms(),
				   (uint64_t)g->conf.grace_s * 1000);

	p->syncing = false; /* a sync cut short: the table keeps what came */
	store_origin(g, p);
	return stale;
}

static int send_own(struct conn *c, uint8_t type, const struct own_subnet *o)
{
	struct gw_route_msg m = {.version = o->version, .key = o->key};
	uint8_t buf[GW_ROUTE_MSG_LEN];

	gw_route_encode(buf, &m);
	return gwd_conn_send(c, type, buf, sizeof(buf));
}

void gwd_broadcast(struct gwd *g, uint8_t type, const struct own_subnet *o)
{
	for (int i = 0; i < g->n_peers; i++)
		if (g->peers[i].conn)
			send_own(g->peers[i].conn, type, o);
}

void gwd_sync_send_full(struct gwd *g, struct conn *c)
{
	gwd_conn_send(c, GW_T_FULL_BEGIN, NULL, 0);
	for (int i = 0; i < g->n_own; i++)
		if (!g->own[i].withdrawn)
			send_own(c, GW_T_ANNOUNCE, &g->own[i]);
	gwd_conn_send(c, GW_T_FULL_END, NULL, 0);
}

/* Policy: within the peer's AllowedSubnets (if any), and not ours. */
static bool allowed(const char *origin, const struct rt_key *k, void *arg)
{
	struct gwd *g = arg;

	for (int i = 0; i < g->n_own; i++)
		if (!g->own[i].withdrawn && rt_overlap(&g->own[i].key, k))
			return false;
	for (int i = 0; i < g->n_peers; i++) {
		struct gw_peer_conf *pc = g->peers[i].conf;

		if (strcmp(pc->name, origin))
			continue;
		if (!pc->n_allowed)
			return true;
		for (int j = 0; j < pc->n_allowed; j++) {
			struct gw_prefix *a = &pc->allowed[j];
			uint32_t mask = a->plen ? htonl(~0u << (32 - a->plen)) : 0;

			if ((!a->vni || a->vni == k->vni) && k->plen >= a->plen &&
			    (k->ip_be & mask) == a->ip_be)
				return true;
		}
		return false;
	}
	return false;
}

static void log_route(struct gwd *g, struct peer *p, const char *what, const struct rt_key *k,
		      uint64_t v, const char *extra)
{
	char ip[16];

	inet_ntop(AF_INET, &k->ip_be, ip, sizeof(ip));
	gwd_log(g, "peer %s: %s %u %s/%u v%llu%s", p->conf->name, what, k->vni, ip, k->plen,
		(unsigned long long)v, extra);
}

static const char *on_route(struct gwd *g, struct peer *p, struct batch *bt, uint8_t type,
			    const uint8_t *b, long n)
{
	struct gw_route_msg m;
	const struct route *other = NULL, *r;
	const char *why = NULL;
	uint64_t now = gwd_now_ms();

	if (gw_route_decode(b, (size_t)n, &m, &why))
		return why;
	if (type == GW_T_ANNOUNCE) {
		enum rt_result res = rt_announce(&g->routes, p->conf->name, &m.key, m.version, now,
						 allowed, g, &other);

		if (res == RT_CONFLICT || res == RT_REFUSED) {
			char extra[80];

			p->refused++;
			snprintf(extra, sizeof(extra), " refused: %s%s",
				 res == RT_CONFLICT ? "overlaps a prefix of " : "outside policy",
				 res == RT_CONFLICT ? other->origin : "");
			log_route(g, p, "announce", &m.key, m.version, extra);
			return NULL;
		}
		if (res != RT_APPLIED)
			return NULL;
		log_route(g, p, "announce", &m.key, m.version, "");
	} else {
		if (rt_withdraw(&g->routes, p->conf->name, &m.key, m.version, now, TOMBSTONE_MS) !=
		    RT_APPLIED)
			return NULL;
		log_route(g, p, "withdraw", &m.key, m.version, "");
	}
	r = rt_find(&g->routes, p->conf->name, &m.key);
	if (r && !p->syncing) {
		if (!batch_txn(g, bt))
			p->store_dirty = true;
		else if (gw_store_put_route(&g->store, r))
			bt->failed = true;
	}
	bt->routes = true;
	return NULL;
}

/* Inside a full sync nothing is written per message, FULL_END rewrites the
 * origin's routes at once. */
const char *gwd_sync_frame(struct gwd *g, struct peer *p, struct batch *bt, uint8_t type,
			   const uint8_t *b, long n)
{
	switch (type) {
	case GW_T_FULL_BEGIN:
		rt_sync_begin(&g->routes, p->conf->name);
		p->syncing = true; /* the maps follow once, at the end */
		return n ? "sync marker with a body" : NULL;
	case GW_T_FULL_END: {
		int gone = rt_sync_end(&g->routes, p->conf->name);

		p->syncing = false;
		p->store_dirty = true; /* the batch's end rewrites the origin, then the maps */
		bt->routes = true;
		gwd_log(g, "peer %s: full sync done (%d stale routes removed)", p->conf->name,
			gone);
		return n ? "sync marker with a body" : NULL;
	}
	case GW_T_ANNOUNCE:
	case GW_T_WITHDRAW:
		return on_route(g, p, bt, type, b, n);
	default:
		return "unknown message type";
	}
}
