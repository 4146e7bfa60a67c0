// SPDX-License-Identifier: BSD-2-Clause
/*
 * Our own subnets: from the config and from the control socket, each with
 * the version it was last announced or withdrawn with. Stored durably
 * before any peer hears of a change (see own_change).
 */
#include <errno.h>
#include <arpa/inet.h>
#include <stdio.h>

#include "gwd.h"
#include "msg.h"

static struct own_subnet *own_find(struct gwd *g, const struct rt_key *k)
{
	for (int i = 0; i < g->n_own; i++)
		if (g->own[i].key.vni == k->vni && g->own[i].key.ip_be == k->ip_be &&
		    g->own[i].key.plen == k->plen)
			return &g->own[i];
	return NULL;
}

/* Add or withdraw one of our subnets: persist, then tell peers. 0, or a
 * negative errno saying what kind of refusal it is (the control socket
 * turns it into a code the CLI maps to its exit status). */
static int own_change(struct gwd *g, const struct rt_key *k, bool add, bool from_config, char *err,
		      size_t errlen)
{
	struct own_subnet *o = own_find(g, k);
	bool fc;

	if (add && o && !o->withdrawn) {
		snprintf(err, errlen, "subnet already announced");
		return -EEXIST;
	}
	if (!add && (!o || o->withdrawn)) {
		snprintf(err, errlen, "no such local subnet");
		return -ENOENT;
	}
	if (add) {
		for (int i = 0; i < g->routes.n; i++)
			if (rt_forwarding(&g->routes.r[i]) && rt_overlap(&g->routes.r[i].key, k)) {
				snprintf(err, errlen, "overlaps a subnet of peer %s",
					 g->routes.r[i].origin);
				return -EINVAL;
			}
		if (!o && g->n_own >= GW_MAX_SUBNETS) {
			snprintf(err, errlen, "too many local subnets");
			return -ENOSPC;
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
		return -EIO;
	}
	if (gw_store_commit(&g->store)) {
		snprintf(err, errlen, "database write failed");
		return -EIO;
	}
	if (!o) {
		o = &g->own[g->n_own++];
		o->key = *k;
	}
	o->from_config = fc;
	o->withdrawn = !add;
	o->version = ++g->own_version;
	gwd_broadcast(g, add ? GW_T_ANNOUNCE : GW_T_WITHDRAW, o);
	return 0;
}

int gwd_own_set(struct gwd *g, const struct rt_key *k, bool add, char *err, size_t errlen)
{
	uint32_t mask = k->plen ? htonl(~0u << (32 - k->plen)) : 0;
	int rc;

	if (k->ip_be & ~mask) {
		snprintf(err, errlen, "host bits set");
		return -EINVAL;
	}
	rc = own_change(g, k, add, false, err, errlen);
	if (rc)
		return rc;
	gwd_log(g, "local subnet %s: VNI %u (v%llu)", add ? "added" : "withdrawn", k->vni,
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

void gwd_own_start(struct gwd *g)
{
	char err[256];

	gw_store_get_u64(&g->store, "own_version", &g->own_version);
	gw_store_load_own(&g->store, load_own, g);
	/* Config subnets: announce new ones, withdraw ones no longer configured. */
	for (int i = 0; i < g->conf.n_subnets; i++) {
		struct rt_key k = {g->conf.subnets[i].vni, g->conf.subnets[i].ip_be,
				   g->conf.subnets[i].plen};
		struct own_subnet *o = own_find(g, &k);

		if ((!o || o->withdrawn) && own_change(g, &k, true, true, err, sizeof(err)))
			gwd_log(g, "config subnet VNI %u refused: %s", k.vni, err);
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
}
