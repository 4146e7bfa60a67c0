/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Force-included (clang -include) when bench/CMakeLists.txt builds the
 * "nocache" variants of bpf/transit.bpf.c and bpf/agent.bpf.c: the per-CPU
 * caches of bpf/lib/cache.h are compiled out, so every packet pays the
 * xg_ifaces, xg_endpoint and xg_cache hash lookups, the xg_subnet LPM lookup and
 * bpf_fib_lookup, as before the caches existed. The sources are unchanged; comparing a path with its
 * variant in the same run prices the caches. Benchmark-only, never loaded
 * on a real device.
 */
#ifndef XG_BENCH_NOCACHE_H
#define XG_BENCH_NOCACHE_H

#define XG_CACHE_H /* bpf/lib/cache.h is replaced by what follows */
#include "lib/maps.h"

XG_INLINE void xg_cache_begin(struct xg_pkt *p)
{
	p->gen = 0;
	p->now = 0;
}

/* never fresh: xg_nexthop (lib/tx.h) asks bpf_fib_lookup every time */
XG_INLINE int xg_slot_fresh(const struct xg_pkt *p, __u32 gen, __u64 expires)
{
	return 0;
}

/* what xg_nexthop writes stays stale for the real programs sharing the map */
XG_INLINE void xg_slot_stamp(const struct xg_pkt *p, __u32 *gen, __u64 *expires)
{
	*gen = 0;
	*expires = 0;
}

XG_INLINE __u32 xg_slot_of(__u32 x, unsigned int slots)
{
	return (x * 0x9e3779b1u) >> (32 - __builtin_ctz(slots));
}

XG_INLINE __u32 xg_slot_of_vni_ip(__u32 vni, __u32 ip_be, unsigned int slots)
{
	return xg_slot_of(ip_be + vni * 0x85ebca6bu, slots);
}

XG_INLINE struct xg_iface *xg_iface_of(struct xg_pkt *p, __u32 ifindex)
{
	return bpf_map_lookup_elem(&xg_ifaces, &ifindex);
}

XG_INLINE struct xg_endpoint *xg_endpoint_of(struct xg_pkt *p)
{
	struct xg_ep_key k = { .vni = p->vni, .ip_be = p->inner_dst };

	return bpf_map_lookup_elem(&xg_endpoint, &k);
}

XG_INLINE struct xg_subnet *xg_subnet_of(struct xg_pkt *p)
{
	struct xg_subnet_key k = {
		.prefixlen = 64, .vni_be = bpf_htonl(p->vni), .ip_be = p->inner_dst,
	};

	return bpf_map_lookup_elem(&xg_subnet, &k);
}

XG_INLINE __u32 xg_direct_of(struct xg_pkt *p, __u32 vni, __u32 ip_be)
{
	struct xg_ep_key k = { .vni = vni, .ip_be = ip_be };
	struct xg_cache_entry *e = bpf_map_lookup_elem(&xg_cache, &k);

	return e ? e->host_be : 0;
}

XG_INLINE void xg_direct_changed(void)
{
}

#endif
