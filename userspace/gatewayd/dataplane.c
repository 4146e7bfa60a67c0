// SPDX-License-Identifier: BSD-2-Clause
/* gatewayd -> XDP maps (see dataplane.h). Called with g->lock held. */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sodium.h>

#include "gwd.h"
#include "xg.h"

static void drop_stale_marks(struct gwd *g, int d);

/* A pinned map of the instance, checked against this build's layout: a
 * value written with another size would be copied short (or long) into the
 * kernel, and the data path would read what lies beyond. */
static int open_map(const char *root, const char *name, __u32 ksz, __u32 vsz, char *err,
		    size_t errlen)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char path[PATH_MAX + 64];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", root, name);
	fd = bpf_obj_get(path);
	if (fd < 0) {
		snprintf(err, errlen,
			 "%s: %s (attach the gateway program first: "
			 "`xgate -n INSTANCE attach DEV gateway`)",
			 path, strerror(errno));
		return -1;
	}
	if (bpf_obj_get_info_by_fd(fd, &info, &len) || info.key_size != ksz ||
	    info.value_size != vsz) {
		snprintf(err, errlen,
			 "%s: key/value size %u/%u, this gatewayd expects %u/%u: the "
			 "maps are from another xgate version (`xgate -n INSTANCE reset`, attach "
			 "again)",
			 path, info.key_size, info.value_size, ksz, vsz);
		close(fd);
		return -1;
	}
	return fd;
}
#define open_pin(root, name, type_k, type_v, err, errlen)                                          \
	open_map(root, name, sizeof(type_k), sizeof(type_v), err, errlen)

/* After writing a map the data path caches per CPU (the gateway's
 * xg_gw_paddr, xg_gw_route and xg_gw_peers, a divider's xg_subnet): the
 * next packet on every CPU sees the change. */
static void gen_bump(int fd)
{
	struct xg_gen gen;
	__u32 zero = 0;

	if (fd >= 0 && !bpf_map_lookup_elem(fd, &zero, &gen)) {
		gen.gen++;
		bpf_map_update_elem(fd, &zero, &gen, BPF_ANY);
	}
}

/* Peer idx's entry into v: 1 when read, 0 without a data path (nothing to
 * do), -1 when it has none. */
static int peer_load(struct gwd *g, int idx, struct xg_gw_peer *v)
{
	__u32 id = (__u32)idx + 1;

	if (!g->dp.on)
		return 0;
	return bpf_map_lookup_elem(g->dp.peers, &id, v) ? -1 : 1;
}

/* v, changed, as peer id's entry, and wiped off the stack (it holds keys):
 * the next packet on every CPU sees it. */
static int peer_store(struct gwd *g, __u32 id, struct xg_gw_peer *v)
{
	int rc = bpf_map_update_elem(g->dp.peers, &id, v, BPF_ANY);

	sodium_memzero(v, sizeof(*v));
	if (rc)
		return -1;
	gen_bump(g->dp.gen);
	return 0;
}

static void key_ident(const struct gw_peer_conf *pc, __u8 out[8])
{
	memcpy(out, pc->public_key, 8);
}

/* A peer entry that belongs to someone else (config changed) starts over. */
static void reconcile_peer(struct gwd *g, __u32 id, const struct gw_peer_conf *pc)
{
	struct xg_gw_peer v, want = {.flags = XG_GW_PEER_VALID};

	key_ident(pc, want.ident);
	if (!bpf_map_lookup_elem(g->dp.peers, &id, &v) && (v.flags & XG_GW_PEER_VALID) &&
	    !memcmp(v.ident, want.ident, 8))
		return; /* ours: keys and address stay, traffic keeps flowing */
	if (!bpf_map_lookup_elem(g->dp.peers, &id, &v) && v.ip_be) {
		struct xg_gw_paddr_key a = {.ip_be = v.ip_be};

		bpf_map_delete_elem(g->dp.paddr, &a);
		gen_bump(g->dp.gen);
	}
	bpf_map_update_elem(g->dp.peers, &id, &want, BPF_ANY);
	gen_bump(g->dp.gen); /* the previous owner's keys are gone from every CPU's copy */
	gwd_log(g, "peer %s: data-plane entry %u initialised", pc->name, id);
}

int gwd_dp_open(struct gwd *g, char *err, size_t errlen)
{
	struct gw_dp *dp = &g->dp;
	struct xg_gw_conf c = {}, cur;
	char root[PATH_MAX];
	__u32 zero = 0;

	memset(dp, 0, sizeof(*dp));
	dp->gw = dp->peers = dp->paddr = dp->route = dp->replay = dp->pstats = dp->gen = -1;
	dp->txctr = -1;
	if (!g->conf.instance[0])
		return 0;
	if (xg_instance_root(g->conf.instance, root, sizeof(root))) {
		snprintf(err, errlen, "Instance '%s' is not a valid instance name",
			 g->conf.instance);
		return -1;
	}
	if ((dp->gw = open_pin(root, XG_MAP_GW, __u32, struct xg_gw_conf, err, errlen)) < 0 ||
	    (dp->peers = open_pin(root, XG_MAP_GW_PEERS, __u32, struct xg_gw_peer, err, errlen)) <
		0 ||
	    (dp->paddr =
		 open_pin(root, XG_MAP_GW_PADDR, struct xg_gw_paddr_key, __u32, err, errlen)) < 0 ||
	    (dp->route = open_pin(root, XG_MAP_GW_ROUTE, struct xg_subnet_key, struct xg_gw_route,
				  err, errlen)) < 0 ||
	    (dp->replay =
		 open_pin(root, XG_MAP_GW_REPLAY, __u32, struct xg_gw_replay, err, errlen)) < 0 ||
	    (dp->pstats = open_pin(root, XG_MAP_GW_PSTATS, __u32, struct xg_gw_pcpu, err, errlen)) <
		0 ||
	    (dp->txctr = open_pin(root, XG_MAP_GW_TXCTR, __u32, struct xg_gw_txctr, err, errlen)) <
		0 ||
	    (dp->gen = open_pin(root, XG_MAP_GEN, __u32, struct xg_gen, err, errlen)) < 0)
		return -1;
	c.pub_ip_be = g->conf.public_addr.sin_addr.s_addr;
	c.port_be = g->conf.public_addr.sin_port;
	if (g->conf.public_if[0]) {
		c.pub_ifindex = if_nametoindex(g->conf.public_if);
		if (!c.pub_ifindex) {
			snprintf(err, errlen, "PublicInterface %s: no such device",
				 g->conf.public_if);
			return -1;
		}
	}
	/* the crypt interface is xgate-cryptd's to name */
	if (!bpf_map_lookup_elem(dp->gw, &zero, &cur))
		c.crypt_ifindex = cur.crypt_ifindex;
	if (bpf_map_lookup_elem(dp->gw, &zero, &cur) || memcmp(&cur, &c, sizeof(c)))
		bpf_map_update_elem(dp->gw, &zero, &c, BPF_ANY);
	for (int i = 0; i < g->conf.n_dividers; i++) {
		struct xg_maps m;

		if (xg_maps_open(g->conf.dividers[i], false, &m)) {
			snprintf(err, errlen, "Divider %s: no such xgate instance",
				 g->conf.dividers[i]);
			return -1;
		}
		dp->div_subnet[dp->n_div] = dup(m.subnet);
		dp->div_vpc[dp->n_div] = dup(m.vpc);
		dp->div_gen[dp->n_div] = m.gen >= 0 ? dup(m.gen) : -1;
		dp->n_div++;
		xg_maps_close(&m);
		drop_stale_marks(g, dp->n_div - 1);
	}
	for (int i = 0; i < g->n_peers; i++)
		reconcile_peer(g, (__u32)i + 1, g->peers[i].conf);
	dp->on = true;
	gwd_dp_sync_routes(g);
	return 0;
}

void gwd_dp_close(struct gwd *g)
{
	int *fds[] = {&g->dp.gw,     &g->dp.peers,  &g->dp.paddr, &g->dp.route,
		      &g->dp.replay, &g->dp.pstats, &g->dp.gen,	  &g->dp.txctr};

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (*fds[i] >= 0)
			close(*fds[i]);
	for (int i = 0; i < g->dp.n_div; i++) {
		close(g->dp.div_subnet[i]);
		close(g->dp.div_vpc[i]);
		if (g->dp.div_gen[i] >= 0)
			close(g->dp.div_gen[i]);
	}
	xg_neigh_close(g->dp.neigh);
	g->dp.neigh = NULL;
	g->dp.on = false;
}

static int peer_index(struct gwd *g, const char *origin)
{
	for (int i = 0; i < g->n_peers; i++)
		if (!strcmp(g->peers[i].conf->name, origin))
			return i;
	return -1;
}

static struct xg_subnet_key lpm_key(const struct rt_key *k)
{
	struct xg_subnet_key lk = {
	    .prefixlen = 32 + k->plen, .vni_be = htonl(k->vni), .ip_be = k->ip_be};
	return lk;
}

/* What the maps should hold: the forwarding routes of configured peers, by
 * key. Built once per sync, so checking a map key is a binary search, not
 * a walk of the route table. */
struct want_route {
	struct xg_subnet_key k; /* first: the sort key */
	__u32 peer;
};

static int want_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct xg_subnet_key));
}

static struct want_route *desired(struct gwd *g, int *n)
{
	struct want_route *w = calloc((size_t)g->routes.n + 1, sizeof(*w));

	*n = 0;
	if (!w)
		return NULL;
	for (int i = 0; i < g->routes.n; i++) {
		const struct route *r = &g->routes.r[i];
		int idx;

		if (!rt_forwarding(r) || (idx = peer_index(g, r->origin)) < 0)
			continue;
		w[*n].k = lpm_key(&r->key);
		w[*n].peer = (__u32)idx + 1;
		(*n)++;
	}
	qsort(w, (size_t)*n, sizeof(*w), want_cmp);
	return w;
}

static const struct want_route *wanted(const struct want_route *w, int n,
				       const struct xg_subnet_key *k)
{
	return bsearch(k, w, (size_t)n, sizeof(*w), want_cmp);
}

static struct rt_key rt_of(const struct xg_subnet_key *lk)
{
	struct rt_key k = {
	    .vni = ntohl(lk->vni_be), .ip_be = lk->ip_be, .plen = (uint8_t)(lk->prefixlen - 32)};
	return k;
}

/* Keys of a divider's map to remove, collected during the walk (deleting
 * during it would restart it). */
struct keys {
	struct xg_subnet_key *k;
	int n, cap;
};

static void keys_add(struct keys *ks, const struct xg_subnet_key *k)
{
	if (ks->n == ks->cap) {
		int cap = ks->cap ? ks->cap * 2 : 16;
		struct xg_subnet_key *nk = realloc(ks->k, sizeof(*nk) * (size_t)cap);

		if (!nk)
			return; /* removed at the next sync */
		ks->k = nk;
		ks->cap = cap;
	}
	ks->k[ks->n++] = *k;
}

/* Dividers: remote subnets as XG_SUBNET_REMOTE entries. gatewayd removes
 * only the entries it wrote, as recorded in its store (divider_marks): the
 * operator's own entries there, local or `remote`, are never touched. A
 * record is written before its entry and removed after it, so a crash
 * between the two leaves a record of an entry that is not there (dropped
 * at the next start), never an entry of ours without one. */
static void sync_divider(struct gwd *g, int d, const struct want_route *w, int n)
{
	const char *name = g->conf.dividers[d];
	struct xg_subnet_key k, next, *prev = NULL;
	struct xg_subnet v, mark = {.flags = XG_SUBNET_REMOTE};
	struct keys gone = {0}, add = {0};
	bool changed = false;
	int foreign = 0;

	while (!bpf_map_get_next_key(g->dp.div_subnet[d], prev, &next)) {
		struct rt_key rk;

		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(g->dp.div_subnet[d], &k, &v) ||
		    !(v.flags & XG_SUBNET_REMOTE) || wanted(w, n, &k))
			continue;
		rk = rt_of(&k);
		if (gw_store_has_mark(&g->store, name, &rk) == 1)
			keys_add(&gone, &k);
		else
			foreign++;
	}
	for (int i = 0; i < gone.n; i++) {
		struct rt_key rk = rt_of(&gone.k[i]);

		if (!bpf_map_delete_elem(g->dp.div_subnet[d], &gone.k[i]) || errno == ENOENT) {
			changed = true;
			gw_store_del_mark(&g->store, name, &rk);
		}
	}
	if (foreign && !g->dp.told_foreign[d])
		gwd_log(g,
			"divider %s: %d remote subnet entr%s not written by this gatewayd (an "
			"operator's?) left alone",
			name, foreign, foreign > 1 ? "ies" : "y");
	g->dp.told_foreign[d] = foreign > 0;
	for (int i = 0; i < n; i++) {
		__u32 vni = ntohl(w[i].k.vni_be);
		struct xg_vpc vpc;

		if (!bpf_map_lookup_elem(g->dp.div_subnet[d], &w[i].k, &v))
			continue; /* already marked, or a subnet of the operator's */
		if (bpf_map_lookup_elem(g->dp.div_vpc[d], &vni, &vpc)) {
			gwd_log(g, "divider %s: no VPC %u there; remote subnet not marked", name,
				vni);
			continue;
		}
		keys_add(&add, &w[i].k);
	}
	if (add.n) {
		/* the records first, in one transaction */
		bool txn = !gw_store_begin(&g->store);

		for (int i = 0; i < add.n; i++) {
			struct rt_key rk = rt_of(&add.k[i]);

			gw_store_put_mark(&g->store, name, &rk);
		}
		if (txn)
			gw_store_commit(&g->store);
	}
	for (int i = 0; i < add.n; i++) {
		struct rt_key rk = rt_of(&add.k[i]);

		if (!bpf_map_update_elem(g->dp.div_subnet[d], &add.k[i], &mark, BPF_NOEXIST))
			changed = true;
		else if (errno == EEXIST) /* the operator's, written since the walk */
			gw_store_del_mark(&g->store, name, &rk);
	}
	free(gone.k);
	free(add.k);
	if (changed)
		gen_bump(g->dp.div_gen[d]);
}

/* Records of entries that are not in the divider's map (any more) as
 * remote ones: a crash between record and entry, or the operator removed
 * or replaced the entry. Dropped, so that an entry the operator writes
 * there later stays theirs. */
struct stale_marks {
	struct gwd *g;
	int d;
	struct rt_key k[64];
	int n;
};

static void stale_mark(void *arg, const struct rt_key *rk)
{
	struct stale_marks *sm = arg;
	struct xg_subnet_key k = lpm_key(rk);
	struct xg_subnet v;

	if ((bpf_map_lookup_elem(sm->g->dp.div_subnet[sm->d], &k, &v) ||
	     !(v.flags & XG_SUBNET_REMOTE)) &&
	    sm->n < (int)(sizeof(sm->k) / sizeof(sm->k[0])))
		sm->k[sm->n++] = *rk;
}

static void drop_stale_marks(struct gwd *g, int d)
{
	struct stale_marks sm = {.g = g, .d = d};

	bool more;

	do { /* 64 at a time: not while the SELECT runs */
		int dropped = 0;

		sm.n = 0;
		if (gw_store_each_mark(&g->store, g->conf.dividers[d], stale_mark, &sm))
			return;
		for (int i = 0; i < sm.n; i++)
			dropped += !gw_store_del_mark(&g->store, g->conf.dividers[d], &sm.k[i]);
		more = sm.n == (int)(sizeof(sm.k) / sizeof(sm.k[0])) && dropped == sm.n;
	} while (more);
}

void gwd_dp_sync_routes(struct gwd *g)
{
	struct xg_subnet_key k, next, *prev = NULL;
	struct want_route *w;
	struct xg_gw_route v;
	bool changed = false;
	int n;

	if (!g->dp.on)
		return;
	w = desired(g, &n);
	if (!w) {
		gwd_log(g, "data plane: out of memory; routes not synced");
		return;
	}
	while (!bpf_map_get_next_key(g->dp.route, prev, &next)) {
		k = next;
		prev = &k;
		if (!wanted(w, n, &k) && !bpf_map_delete_elem(g->dp.route, &k)) {
			prev = NULL;
			changed = true;
		}
	}
	for (int i = 0; i < n; i++) {
		struct xg_gw_route want = {.peer = w[i].peer};

		if ((bpf_map_lookup_elem(g->dp.route, &w[i].k, &v) || v.peer != want.peer) &&
		    !bpf_map_update_elem(g->dp.route, &w[i].k, &want, BPF_ANY))
			changed = true;
	}
	if (changed)
		gen_bump(g->dp.gen);
	for (int d = 0; d < g->dp.n_div; d++)
		sync_divider(g, d, w, n);
	free(w);
}

bool gwd_dp_can_encrypt(struct gwd *g)
{
	struct xg_gw_conf c;
	__u32 zero = 0;

	if (!g->dp.on)
		return true;
	return !bpf_map_lookup_elem(g->dp.gw, &zero, &c) && c.crypt_ifindex;
}

void gwd_dp_peer_addr(struct gwd *g, int idx)
{
	struct peer *p = &g->peers[idx];
	__u32 id = (__u32)idx + 1;
	struct xg_gw_peer v;
	struct xg_gw_paddr_key a = {0};
	__u8 flags;

	if (!g->dp.on || bpf_map_lookup_elem(g->dp.peers, &id, &v))
		return;
	/* The tunnel's frames leave by XDP alone: nothing else would keep the
	 * kernel's entry for the peer's next hop (docs/architecture.md). */
	if (p->public_ip_be) {
		if (!g->dp.neigh)
			g->dp.neigh = xg_neigh_open();
		if (g->dp.neigh) {
			int rc = xg_neigh_keep(g->dp.neigh, p->public_ip_be);
			char ip[16];

			if (rc < 0 && rc != -ENETUNREACH)
				gwd_log(g, "peer %s: cannot keep the neighbour toward %s: %s",
					p->conf->name, xg_ip_str(p->public_ip_be, ip),
					strerror(-rc));
		}
	}
	flags = (__u8)((v.flags & ~XG_GW_PEER_AEAD) | (p->cipher ? XG_GW_PEER_AEAD : 0));
	if (flags != v.flags) {
		/* The type changed (the mode in a config did): the keys of the
		 * other type go at once, before the flag; the session's DATAKEY
		 * brings keys of the new one. */
		sodium_memzero(v.tx, sizeof(v.tx));
		sodium_memzero(v.rx, sizeof(v.rx));
		v.flags = flags;
		bpf_map_update_elem(g->dp.peers, &id, &v, BPF_ANY);
		gen_bump(g->dp.gen);
		gwd_log(g, "peer %s: data-plane type %u (%s)", p->conf->name,
			p->cipher ? XG_TUN_TYPE_AEAD : XG_TUN_TYPE_AUTH,
			p->cipher ? "encrypted by the crypto workers" : "authenticated in XDP");
	}
	if (v.ip_be == p->public_ip_be && v.port_be == p->public_port_be) {
		sodium_memzero(&v, sizeof(v));
		return;
	}
	if (v.ip_be && v.ip_be != p->public_ip_be) {
		a.ip_be = v.ip_be;
		bpf_map_delete_elem(g->dp.paddr, &a);
	}
	v.ip_be = p->public_ip_be;
	v.port_be = p->public_port_be;
	bpf_map_update_elem(g->dp.peers, &id, &v, BPF_ANY);
	a.ip_be = v.ip_be;
	sodium_memzero(&v, sizeof(v));
	bpf_map_update_elem(g->dp.paddr, &a, &id, BPF_ANY);
	gen_bump(g->dp.gen);
}

uint8_t gwd_dp_next_id(struct gwd *g, int idx)
{
	__u32 id = (__u32)idx + 1;
	struct xg_gw_peer v;

	if (!g->dp.on || bpf_map_lookup_elem(g->dp.peers, &id, &v))
		return 1;
	return (uint8_t)(v.tx[v.tx_slot & 1].id + 1);
}

/* The receive slot to replace: an empty one, else the older key, i.e. the
 * one whose replay window saw the lower counters (counters never go back
 * across keys). */
static int rx_victim(struct gwd *g, __u32 id, const struct xg_gw_peer *v)
{
	struct xg_gw_replay r0, r1;
	__u32 k0 = id * 2, k1 = id * 2 + 1;

	if (!v->rx[0].valid)
		return 0;
	if (!v->rx[1].valid)
		return 1;
	if (bpf_map_lookup_elem(g->dp.replay, &k0, &r0) ||
	    bpf_map_lookup_elem(g->dp.replay, &k1, &r1))
		return 0;
	return r0.top <= r1.top ? 0 : 1;
}

/* CLOCK_MONOTONIC in ns: the data path's bpf_ktime_get_ns. */
static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

uint64_t gwd_dp_tx_last(struct gwd *g, int idx)
{
	__u32 id = (__u32)idx + 1;
	struct xg_gw_txctr c = {0};

	if (!g->dp.on || bpf_map_lookup_elem(g->dp.txctr, &id, &c))
		return 0;
	return c.last;
}

/* k as the map holds it: a SipHash key (16 bytes) in auth mode, the
 * cipher's key and salt with the session's cipher in encrypt mode. Anything
 * else (a key whose length is not its mode's) is refused with EINVAL. It
 * stops RejectAfterTime from now (the receiver installs it first, so its
 * copy stops a round trip before the sender's); its counter limit is the
 * caller's to set. */
static int key_fill(struct gwd *g, int idx, const struct gw_dkey *k, uint8_t kid,
		    struct xg_gw_key *out)
{
	unsigned cipher = g->peers[idx].cipher;

	if (k->len != (cipher ? 32u : 16u) || k->len > sizeof(out->k)) {
		errno = EINVAL;
		return -1;
	}
	sodium_memzero(out, sizeof(*out));
	memcpy(out->k, k->k, k->len);
	if (cipher)
		memcpy(out->salt, k->salt, sizeof(out->salt));
	out->cipher = (__u8)cipher;
	out->id = kid;
	out->valid = 1;
	out->expires_ns = mono_ns() + (uint64_t)g->conf.reject_s * 1000000000u;
	return 0;
}

int gwd_dp_rx_key(struct gwd *g, int idx, const struct gw_dkey *k, uint8_t kid)
{
	__u32 id = (__u32)idx + 1, ri;
	struct xg_gw_replay fresh = {0};
	struct xg_gw_peer v;
	struct xg_gw_key nk;
	int slot;

	if (!g->dp.on)
		return 0;
	if (key_fill(g, idx, k, kid, &nk))
		return -1;
	if (bpf_map_lookup_elem(g->dp.peers, &id, &v))
		return -1;
	for (slot = 0; slot < 2; slot++)
		if (v.rx[slot].valid && v.rx[slot].id == kid)
			break; /* a re-announce (new session, same id): replace in place */
	if (slot == 2)
		slot = rx_victim(g, id, &v);
	/* The slot emptied first (every CPU's copy too), then its window
	 * restarted, then the new key: a packet verified with the key being
	 * replaced never meets the fresh window (where a replay of it would
	 * pass), and one verified with the new key never meets the old one. */
	if (v.rx[slot].valid) {
		v.rx[slot].valid = 0;
		if (bpf_map_update_elem(g->dp.peers, &id, &v, BPF_ANY))
			return -1;
		gen_bump(g->dp.gen);
	}
	ri = id * 2 + (__u32)slot;
	bpf_map_update_elem(g->dp.replay, &ri, &fresh, BPF_ANY);
	v.rx[slot] = nk;
	sodium_memzero(&nk, sizeof(nk));
	return peer_store(g, id, &v) ? -1 : slot;
}

uint64_t gwd_dp_rx_top(struct gwd *g, int idx, int slot)
{
	__u32 ri = ((__u32)idx + 1) * 2 + (__u32)(slot & 1);
	struct xg_gw_replay r;

	if (!g->dp.on || bpf_map_lookup_elem(g->dp.replay, &ri, &r))
		return 0;
	return r.top;
}

int gwd_dp_rx_limit(struct gwd *g, int idx, int slot, uint64_t top)
{
	struct xg_gw_peer v;
	struct xg_gw_key *k;
	int rc = peer_load(g, idx, &v);

	if (rc <= 0)
		return rc;
	k = &v.rx[slot & 1];
	if (!k->valid || k->ctr_max) {
		sodium_memzero(&v, sizeof(v));
		return 0;
	}
	k->ctr_max = sat_add(top, g->conf.reject_msgs);
	return peer_store(g, (__u32)idx + 1, &v);
}

int gwd_dp_wipe_key(struct gwd *g, int idx, bool tx, int slot)
{
	struct xg_gw_peer v;
	struct xg_gw_key *k;
	int rc = peer_load(g, idx, &v);

	if (rc <= 0)
		return rc;
	k = tx ? &v.tx[(v.tx_slot & 1) ^ 1] : &v.rx[slot & 1];
	if (!k->valid && sodium_is_zero((const unsigned char *)k, sizeof(*k)))
		return 0;
	sodium_memzero(k, sizeof(*k));		  /* key, salt, cipher, id */
	return peer_store(g, (__u32)idx + 1, &v); /* the CPUs' copies of the entry go too */
}

int gwd_dp_tx_key(struct gwd *g, int idx, const struct gw_dkey *k, uint8_t kid, uint64_t *base)
{
	__u32 id = (__u32)idx + 1;
	struct xg_gw_peer v;
	int next;

	*base = 0;
	if (!g->dp.on)
		return 0;
	if (bpf_map_lookup_elem(g->dp.peers, &id, &v))
		return -1;
	/* Two writes: the unused slot gets the key, then the switch. Each
	 * write rewrites the entry, but only changed bytes change. */
	next = (v.tx_slot & 1) ^ 1;
	if (key_fill(g, idx, k, kid, &v.tx[next])) {
		sodium_memzero(&v, sizeof(v));
		return -1;
	}
	/* counters above this one are the new key's: it may carry
	 * RejectAfterMessages of them (a CPU finishing a block reserved before
	 * sends the rest of it with the new key: a block per CPU at most) */
	*base = gwd_dp_tx_last(g, idx);
	v.tx[next].ctr_max = sat_add(*base, g->conf.reject_msgs);
	if (bpf_map_update_elem(g->dp.peers, &id, &v, BPF_ANY)) {
		sodium_memzero(&v, sizeof(v));
		return -1;
	}
	v.tx_slot = (__u8)next;
	/* CPUs switch on their next packet, not at their copy's expiry */
	return peer_store(g, id, &v);
}

void gwd_dp_pstats(struct gwd *g, int idx, struct xg_gw_pstat *out)
{
	int ncpu = libbpf_num_possible_cpus();
	__u32 id = (__u32)idx + 1;
	struct xg_gw_pcpu *v;

	memset(out, 0, sizeof(*out));
	if (!g->dp.on || ncpu <= 0 || !(v = calloc((size_t)ncpu, sizeof(*v))))
		return;
	if (!bpf_map_lookup_elem(g->dp.pstats, &id, v))
		for (int c = 0; c < ncpu; c++) {
			out->tx_packets += v[c].st.tx_packets;
			out->tx_bytes += v[c].st.tx_bytes;
			out->rx_packets += v[c].st.rx_packets;
			out->rx_bytes += v[c].st.rx_bytes;
			out->rx_dropped += v[c].st.rx_dropped;
		}
	free(v);
}
