/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Per-CPU caches in front of xg_ifaces, xg_endpoint, xg_subnet and xg_cache (the
 * next-hop cache in front of bpf_fib_lookup is in tx.h). Layouts, invalidation rules and
 * the staleness bound are in xgate_abi.h.
 *
 * Each cache is a direct-mapped PERCPU_ARRAY: the JIT inlines its lookup, so
 * a hit costs a few loads and compares instead of a hash-map helper call. A
 * slot is used only if its key matches, it was filled under the current
 * configuration generation and it has not expired; otherwise it is refilled
 * from the real map. Absence is cached too. The pointers returned point into
 * this CPU's slot: valid for the rest of the program run, which is never
 * preempted by another XDP program on the same CPU.
 */
#ifndef XG_CACHE_H
#define XG_CACHE_H

#include "maps.h"

/* Called first by every program: the time and generation slots are checked
 * against. The generation is read before any cached map is: a writer bumps
 * it after writing, so a slot filled under generation g holds data at least
 * as new as g. */
XG_INLINE void xg_cache_begin(struct xg_pkt *p)
{
	__u32 zero = 0;
	struct xg_gen *g = bpf_map_lookup_elem(&xg_gen, &zero);

	p->gen = g ? g->gen : 0;
	p->dgen = g ? g->dgen : 0;
	p->now = bpf_jiffies64();
}

XG_INLINE int xg_slot_fresh(const struct xg_pkt *p, __u32 gen, __u64 expires)
{
	return gen == p->gen && p->now < expires;
}

XG_INLINE void xg_slot_stamp(const struct xg_pkt *p, __u32 *gen, __u64 *expires)
{
	*gen = p->gen;
	*expires = p->now + XG_CACHE_TTL_JIFFIES;
}

/* Multiplicative (Fibonacci) hashing: the top bits depend on every bit of
 * x, so addresses that differ only in their last octet spread well. */
XG_INLINE __u32 xg_slot_of(__u32 x, unsigned int slots)
{
	return (x * 0x9e3779b1u) >> (32 - __builtin_ctz(slots));
}

/* xg_ifaces[ifindex], or NULL if the device is not configured. */
XG_INLINE struct xg_iface *xg_iface_of(struct xg_pkt *p, __u32 ifindex)
{
	__u32 k = ifindex & (XG_IFCACHE_SLOTS - 1);
	struct xg_ifc_slot *c = bpf_map_lookup_elem(&xg_ifcache, &k);
	struct xg_iface *ifc;

	if (unlikely(!c))
		return bpf_map_lookup_elem(&xg_ifaces, &ifindex);
	if (likely(c->ifindex == ifindex && xg_slot_fresh(p, c->gen, c->expires)))
		return c->present ? &c->ifc : 0;
	ifc = bpf_map_lookup_elem(&xg_ifaces, &ifindex);
	c->ifindex = ifindex;
	xg_slot_stamp(p, &c->gen, &c->expires);
	c->present = ifc != 0;
	if (!ifc)
		return 0;
	c->ifc = *ifc;
	return &c->ifc;
}

XG_INLINE __u32 xg_slot_of_vni_ip(__u32 vni, __u32 ip_be, unsigned int slots)
{
	return xg_slot_of(ip_be + vni * 0x85ebca6bu, slots);
}

/* xg_endpoint[(vni, inner dst)], or NULL. */
XG_INLINE struct xg_endpoint *xg_endpoint_of(struct xg_pkt *p)
{
	struct xg_ep_key k = { .vni = p->vni, .ip_be = p->inner_dst };
	__u32 i = xg_slot_of_vni_ip(p->vni, p->inner_dst, XG_EPCACHE_SLOTS);
	struct xg_epc_slot *c = bpf_map_lookup_elem(&xg_epcache, &i);
	struct xg_endpoint *ep;

	if (unlikely(!c))
		return bpf_map_lookup_elem(&xg_endpoint, &k);
	if (likely(c->key.ip_be == k.ip_be && c->key.vni == k.vni &&
		   xg_slot_fresh(p, c->gen, c->expires)))
		return c->present ? &c->ep : 0;
	ep = bpf_map_lookup_elem(&xg_endpoint, &k);
	c->key = k;
	xg_slot_stamp(p, &c->gen, &c->expires);
	c->present = ep != 0;
	if (!ep)
		return 0;
	c->ep = *ep;
	return &c->ep;
}

/* The xg_subnet entry holding (vni, inner dst): longest prefix, or NULL. */
XG_INLINE struct xg_subnet *xg_subnet_of(struct xg_pkt *p)
{
	struct xg_subnet_key lk = {
		.prefixlen = 64,
		.vni_be = bpf_htonl(p->vni),
		.ip_be = p->inner_dst,
	};
	__u32 i = xg_slot_of_vni_ip(p->vni, p->inner_dst, XG_RTCACHE_SLOTS);
	struct xg_rt_slot *c = bpf_map_lookup_elem(&xg_rtcache, &i);
	struct xg_subnet *s;

	if (unlikely(!c))
		return bpf_map_lookup_elem(&xg_subnet, &lk);
	if (likely(c->key.ip_be == p->inner_dst && c->key.vni == p->vni &&
		   xg_slot_fresh(p, c->gen, c->expires)))
		return c->present ? &c->s : 0;
	s = bpf_map_lookup_elem(&xg_subnet, &lk);
	c->key.vni = p->vni;
	c->key.ip_be = p->inner_dst;
	xg_slot_stamp(p, &c->gen, &c->expires);
	c->present = s != 0;
	if (!s)
		return 0;
	c->s = *s;
	return &c->s;
}

/* Where xg_cache says (vni, ip) lives: its host, or 0 if unknown. */
XG_INLINE __u32 xg_direct_of(struct xg_pkt *p, __u32 vni, __u32 ip_be)
{
	struct xg_ep_key k = { .vni = vni, .ip_be = ip_be };
	__u32 i = xg_slot_of_vni_ip(vni, ip_be, XG_DPCACHE_SLOTS);
	struct xg_dpc_slot *c = bpf_map_lookup_elem(&xg_dpcache, &i);
	struct xg_cache_entry *e;

	if (unlikely(!c)) {
		e = bpf_map_lookup_elem(&xg_cache, &k);
		return e ? e->host_be : 0;
	}
	if (likely(c->key.ip_be == ip_be && c->key.vni == vni && c->dgen == p->dgen &&
		   xg_slot_fresh(p, c->gen, c->expires)))
		return c->present ? c->host_be : 0;
	e = bpf_map_lookup_elem(&xg_cache, &k);
	c->key = k;
	xg_slot_stamp(p, &c->gen, &c->expires);
	c->dgen = p->dgen;
	c->present = e != 0;
	c->host_be = e ? e->host_be : 0;
	return c->host_be;
}

/* After the data path wrote xg_cache: the next packet on any CPU refills. */
XG_INLINE void xg_direct_changed(void)
{
	__u32 zero = 0;
	struct xg_gen *g = bpf_map_lookup_elem(&xg_gen, &zero);

	if (g)
		__sync_fetch_and_add(&g->dgen, 1);
}

#endif
