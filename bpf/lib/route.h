/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Routing decisions shared by transit and agent: where does a frame for
 * (VNI, inner dst) go when this host holds no endpoint entry for it?
 *   subnet in LPM, remote      -> cluster gateway
 *   subnet in LPM, local       -> one of its bouncers (flow hash), unless we
 *                                 are one of them: then the endpoint does
 *                                 not exist (bouncers hold all endpoints)
 *   no subnet here             -> one of the VPC's dividers
 */
#ifndef XG_ROUTE_H
#define XG_ROUTE_H

#include "cache.h"
#include "inner.h"

struct xg_route {
	__u32 dst_be;
	__u32 reason;
	__u32 per_flow; /* dst_be was picked by flow hash among several */
};

/* One of n (1..8) next hops by flow hash: set[(hash * n) >> 32], a
 * multiply and a shift instead of a division (hash % n cost more than the
 * rest of the pick); the hash's high bits are as good as its low ones. */
XG_INLINE __u32 xg_pick(const __u32 *set, __u32 n, struct xg_pkt *p)
{
	__u32 i;

	if (n == 1) /* nothing to choose: no hash */
		return set[0];
	i = (__u32)(((__u64)xg_flow_hash(p) * n) >> 32);

	/* clang proves i < n <= 8 and drops a plain mask; the verifier cannot
	 * see that through the multiply, so keep the mask with a barrier. */
	asm volatile("" : "+r"(i));
	return set[i & (XG_MAX_BOUNCERS - 1)];
}

/*
 * The VPC of p->vni, looked up only where the answer decides something.
 * Every endpoint and subnet belongs to an existing VPC (xgate refuses to add
 * them first and to delete a VPC still in use), so a hit in xg_endpoint or
 * xg_subnet already proves the VNI is known: only paths that find neither,
 * or that stop before looking, need this lookup to report DROP_VNI_UNKNOWN.
 */
XG_INLINE struct xg_vpc *xg_vpc_of(struct xg_pkt *p)
{
	return bpf_map_lookup_elem(&xg_vpc, &p->vni);
}

/* Where a routing miss may go: the cluster gateway (n = 1), the subnet's
 * bouncers (none of them us), or the VPC's dividers (a pick of us is no
 * route). */
enum xg_hops_kind {
	XG_HOPS_GATEWAY,
	XG_HOPS_BOUNCERS,
	XG_HOPS_DIVIDERS,
};

struct xg_hops {
	const __u32 *set; /* in the map entry that decided: 1..8 addresses */
	__u32 n;
	__u32 kind; /* enum xg_hops_kind */
};

/*
 * The rules of a miss, stopped before the pick: 0 with *h filled, or a drop
 * reason. Shared by xg_route_miss (picks at once) and the gateway (keeps
 * the set in its per-CPU decision cache and picks per packet), so that the
 * two cannot come to disagree on which destinations exist.
 */
XG_INLINE int xg_route_hops(struct xg_pkt *p, struct xg_hops *h)
{
	struct xg_subnet *s = xg_subnet_of(p);
	struct xg_vpc *vpc;
	__u32 self = p->host->ip_be;
	__u32 n;

	if (s) {
		if (s->flags & XG_SUBNET_REMOTE) {
			if (!p->host->gateway_be)
				return XG_R_DROP_NO_GATEWAY;
			h->set = &p->host->gateway_be;
			h->n = 1;
			h->kind = XG_HOPS_GATEWAY;
			return 0;
		}
		n = s->n_bouncers;
		if (n == 0 || n > XG_MAX_BOUNCERS)
			return XG_R_DROP_NO_ROUTE;
#pragma unroll
		for (int i = 0; i < XG_MAX_BOUNCERS; i++)
			if (i < n && s->bouncers_be[i] == self)
				return XG_R_DROP_NO_ENDPOINT;
		h->set = s->bouncers_be;
		h->n = n;
		h->kind = XG_HOPS_BOUNCERS;
		return 0;
	}
	vpc = xg_vpc_of(p);
	if (!vpc)
		return XG_R_DROP_VNI_UNKNOWN;
	n = vpc->n_dividers;
	if (n == 0 || n > XG_MAX_DIVIDERS)
		return XG_R_DROP_NO_ROUTE;
	h->set = vpc->dividers_be;
	h->n = n;
	h->kind = XG_HOPS_DIVIDERS;
	return 0;
}

/* Returns 0 with *r filled, or a drop reason. */
XG_INLINE int xg_route_miss(struct xg_pkt *p, struct xg_route *r, int from_agent)
{
	struct xg_hops h;
	int rc = xg_route_hops(p, &h);

	if (rc)
		return rc;
	r->dst_be = xg_pick(h.set, h.n, p); /* n = 1 (the gateway): no hash */
	if (h.kind == XG_HOPS_DIVIDERS && r->dst_be == p->host->ip_be)
		return XG_R_DROP_NO_ROUTE;
	if (h.kind == XG_HOPS_GATEWAY)
		r->reason = from_agent ? XG_R_ENCAP_GATEWAY : XG_R_DIVIDER_TO_GATEWAY;
	else if (h.kind == XG_HOPS_BOUNCERS)
		r->reason = from_agent ? XG_R_ENCAP_BOUNCER : XG_R_DIVIDER_FWD;
	else
		r->reason = from_agent ? XG_R_ENCAP_DIVIDER : XG_R_BOUNCER_TO_DIVIDER;
	r->per_flow = h.n > 1;
	return 0;
}

#endif
