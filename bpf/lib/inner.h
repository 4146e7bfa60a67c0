/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Inner frame: IPv4 or ARP only. Fills p->inner_src/dst and what the flow
 * hash is made of (computed only by the paths that need it: xg_flow_hash).
 * Inner IPv4 fragments and options are carried untouched (we never rewrite
 * inner L3/L4); a fragment is hashed on addresses only so all fragments of
 * a datagram take the same path.
 */
#ifndef XG_INNER_H
#define XG_INNER_H

#include "proto.h"
#include "flowhash.h"

/* Returns 0, or a drop reason. *arp is set for ARP frames. */
XG_INLINE int xg_parse_inner(struct xg_pkt *p, struct ethhdr *eth, void *data_end,
			     struct xg_arp **arp)
{
	*arp = 0;
	if ((void *)(eth + 1) > data_end)
		return XG_R_DROP_TRUNC_INNER;

	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);
		__u32 ports = 0, tot_len;

		if ((void *)(ip + 1) > data_end)
			return XG_R_DROP_TRUNC_INNER;
		if (ip->version != 4 || ip->ihl < 5)
			return XG_R_DROP_INNER_BAD_IP;
		/* The inner datagram must fit its frame (iplen.h); bytes after
		 * it are carried untouched, the receiving stack trims them. */
		tot_len = bpf_ntohs(ip->tot_len);
		if (tot_len < ip->ihl * 4)
			return XG_R_DROP_INNER_BAD_IP;
		if ((void *)ip + tot_len > data_end)
			return XG_R_DROP_TRUNC_INNER;
		p->inner_src = ip->saddr;
		p->inner_dst = ip->daddr;
		if (!(ip->frag_off & bpf_htons(XG_IP_MF | XG_IP_OFFSET)) &&
		    (ip->protocol == IPPROTO_TCP || ip->protocol == IPPROTO_UDP) &&
		    ip->ihl * 4 + 4 <= tot_len) {
			__u32 *l4 = (void *)ip + ip->ihl * 4;

			if ((void *)(l4 + 1) <= data_end)
				ports = *l4;
		}
		p->flow = ports ^ ip->protocol;
		return 0;
	}
	if (eth->h_proto == bpf_htons(XG_ETH_P_ARP)) {
		struct xg_arp *a = (void *)(eth + 1);

		if ((void *)(a + 1) > data_end)
			return XG_R_DROP_TRUNC_INNER;
		if (a->htype != bpf_htons(1) || a->ptype != bpf_htons(ETH_P_IP) ||
		    a->hlen != 6 || a->plen != 4 ||
		    (a->op != bpf_htons(XG_ARP_REQUEST) && a->op != bpf_htons(XG_ARP_REPLY)))
			return XG_R_DROP_ARP_BAD;
		p->inner_src = xg_load32(a->spa);
		p->inner_dst = xg_load32(a->tpa);
		p->flow = XG_ETH_P_ARP;
		*arp = a;
		return 0;
	}
	return XG_R_DROP_INNER_NOT_IPV4;
}

/* Flow hash of the inner frame: picks among bouncers/dividers and makes the
 * outer source port. Not needed to forward to a known endpoint. */
/* Computed once per packet, on first use: a divider's pick and the outer
 * source port of an encap want the same value. */
XG_INLINE __u32 xg_flow_hash(struct xg_pkt *p)
{
	if (!p->has_hash) {
		p->hash = xg_mix3(p->inner_src, p->inner_dst, p->flow);
		p->has_hash = 1;
	}
	return p->hash;
}

/*
 * Forwarders take the flow hash from the outer UDP source port the sender
 * derived from it (0xc000 | hash & 0x3fff, below), instead of hashing the
 * inner headers again. The low 14 bits stay
 * the sender's, so a re-encapsulation keeps the source port; the high bits,
 * which xg_pick uses, are spread by the multiply. A sender whose source
 * port carries no entropy gets all its flows the same pick.
 */
XG_INLINE void xg_flow_hash_from_sport(struct xg_pkt *p, __u16 sport_be)
{
	__u32 s = bpf_ntohs(sport_be) & 0x3fff;

	p->hash = s | ((s * 0x9e3779b1u) & ~0x3fffu);
	p->has_hash = 1;
}

/* Outer UDP source port from the flow hash, in the RFC 8926 recommended
 * ephemeral range, so underlay ECMP and receive-side RSS see entropy. */
XG_INLINE __u16 xg_sport(__u32 hash)
{
	return bpf_htons(0xc000 | (hash & 0x3fff));
}

#endif
