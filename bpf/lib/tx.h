/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Underlay transmit: next-hop MACs from the kernel FIB (bpf_fib_lookup in
 * output mode from the host address via the host NIC, through a per-CPU
 * next-hop cache), MTU checked against the route's, then XDP_TX when leaving
 * by the ingress device or a devmap redirect otherwise.
 */
#ifndef XG_TX_H
#define XG_TX_H

#include "csum.h"
#include "stats.h"
#include "cache.h"

/*
 * Next hop for dst from address src via device oif: 0 with *nh set, or a
 * drop reason (DROP_TOO_BIG: *mtu is the route's MTU). Answered from this
 * CPU's next-hop cache when it holds a fresh success for (dst, src, oif);
 * otherwise asked of bpf_fib_lookup, whose success refills the slot.
 * Errors are never cached: the next packet asks the kernel again. The MTU
 * check is the kernel's (tot_len against the route MTU), made against the
 * cached MTU on a hit.
 */
XG_INLINE int xg_nexthop_via(struct xg_pkt *p, __u32 src_be, __u32 oif, __u32 dst_be,
			     __u16 tot_len, struct xg_nh_slot **nh, __u32 *mtu)
{
	__u32 k = xg_slot_of(dst_be, XG_NHCACHE_SLOTS);
	struct xg_nh_slot *c = bpf_map_lookup_elem(&xg_nhcache, &k);
	struct bpf_fib_lookup fib;
	int rc;

	if (unlikely(!c))
		return XG_R_DROP_FIB;
	if (likely(c->dst_be == dst_be && c->src_be == src_be && c->oif == oif &&
		   xg_slot_fresh(p, c->gen, c->expires))) {
		if (unlikely(tot_len > c->mtu)) {
			*mtu = c->mtu;
			return XG_R_DROP_TOO_BIG;
		}
		*nh = c;
		return 0;
	}

	__builtin_memset(&fib, 0, sizeof(fib));
	fib.family = AF_INET;
	fib.ipv4_src = src_be;
	fib.ipv4_dst = dst_be;
	fib.tot_len = tot_len;
	fib.ifindex = oif;
	rc = xg_fib_reason(bpf_fib_lookup(p->ctx, &fib, sizeof(fib), BPF_FIB_LOOKUP_OUTPUT));
	if (rc) {
		if (rc == XG_R_DROP_TOO_BIG)
			*mtu = fib.mtu_result;
		return rc;
	}
	/* On success the kernel (5.12+) returns the route MTU in mtu_result. */
	c->dst_be = dst_be;
	c->src_be = src_be;
	c->oif = oif;
	xg_slot_stamp(p, &c->gen, &c->expires);
	c->ifindex = fib.ifindex;
	c->mtu = fib.mtu_result;
	xg_memcpy6(c->dmac, fib.dmac);
	xg_memcpy6(c->smac, fib.smac);
	*nh = c;
	return 0;
}

/* The same from this host's underlay address via its underlay NIC. */
XG_INLINE int xg_nexthop(struct xg_pkt *p, __u32 dst_be, __u16 tot_len, struct xg_nh_slot **nh,
			 __u32 *mtu)
{
	return xg_nexthop_via(p, p->host->ip_be, p->host->nic_ifindex, dst_be, tot_len, nh, mtu);
}

/*
 * Does the frame, len_diff bytes longer or shorter than it is now, fit the
 * MTU of the device we are about to redirect it into? 1 if so, else 0 with
 * *mtu set to the device's MTU. A veth drops a redirected frame larger than
 * its peer's MTU without a trace (veth_xdp_xmit), so delivering into a pod
 * checks first (docs/architecture.md, "MTU rule"). bpf_check_mtu (5.12+)
 * reads the MTU the device has now: no copy in a map to go stale. A device
 * it cannot find is left to the redirect to refuse.
 */
XG_INLINE int xg_fits_dev(struct xg_pkt *p, __u32 ifindex, __s32 len_diff, __u32 *mtu)
{
	__u32 m = 0;

	if (likely(bpf_check_mtu(p->ctx, ifindex, &m, len_diff, 0) != BPF_MTU_CHK_RET_FRAG_NEEDED))
		return 1;
	*mtu = m;
	return 0;
}

/* Send a frame whose outer header is complete toward next hop nh. */
XG_INLINE int xg_send(struct xg_pkt *p, struct ethhdr *eth, const struct xg_nh_slot *nh,
		      __u32 reason)
{
	int rc;

	xg_memcpy6(eth->h_dest, nh->dmac);
	xg_memcpy6(eth->h_source, nh->smac);
	if (nh->ifindex == p->ifindex) {
		xg_count(p, reason);
		return XDP_TX;
	}
	rc = bpf_redirect_map(&xg_txports, nh->ifindex, 0);
	if (unlikely(rc != XDP_REDIRECT))
		return XG_DROP(p, DROP_TX_PORT);
	xg_count(p, reason);
	return rc;
}

XG_INLINE int xg_tx(struct xg_pkt *p, struct ethhdr *eth, __u32 dst_be, __u16 tot_len, __u32 reason)
{
	struct xg_nh_slot *nh;
	__u32 mtu;
	int rc = xg_nexthop(p, dst_be, tot_len, &nh, &mtu);

	if (unlikely(rc))
		return xg_count(p, rc), XDP_DROP;
	return xg_send(p, eth, nh, reason);
}

/*
 * Re-address an outer header we received and send it on: source becomes this
 * host, destination the next hop, TTL decremented. The IP checksum is
 * updated incrementally; the UDP checksum is zeroed (legal for IPv4 tunnels,
 * RFC 8926 sec. 3.3) since the pseudo-header changed.
 */
XG_INLINE int xg_forward(struct xg_pkt *p, struct ethhdr *eth, struct iphdr *ip, struct udphdr *udp,
			 __u32 dst_be, __u32 reason)
{
	__u16 old_ttl_word, new_ttl_word;
	__u32 c;

	if (unlikely(dst_be == p->host->ip_be))
		return XG_DROP(p, DROP_LOOP);
	if (unlikely(ip->ttl <= 1))
		return XG_DROP(p, DROP_TTL);

	/* TTL and protocol share a 16-bit word; TTL is its first byte */
	__builtin_memcpy(&old_ttl_word, &ip->ttl, 2);
	new_ttl_word = old_ttl_word - bpf_htons(0x0100);
	c = xg_csum_chg2((__u16)~ip->check, old_ttl_word, new_ttl_word);
	c = xg_csum_chg4(c, ip->saddr, p->host->ip_be);
	c = xg_csum_chg4(c, ip->daddr, dst_be);
	ip->check = ~xg_csum_fold(c);
	__builtin_memcpy(&ip->ttl, &new_ttl_word, 2);
	ip->saddr = p->host->ip_be;
	ip->daddr = dst_be;
	udp->check = 0;
	return xg_tx(p, eth, dst_be, bpf_ntohs(ip->tot_len), reason);
}

#endif
