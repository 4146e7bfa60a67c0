/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ICMP "fragmentation needed" (type 3 code 4, RFC 1191) built in place from
 * a pod's too-big DF datagram and sent back to the pod, so its PMTU
 * discovery learns the overlay MTU instead of blackholing.
 */
#ifndef XG_ICMP_H
#define XG_ICMP_H

#include "csum.h"
#include "route.h"

struct xg_icmp_frag {
	__u8 type;
	__u8 code;
	__u16 check;
	__u16 unused;
	__u16 mtu;
};

#define XG_ICMP_QUOTE_MAX (60 + 8) /* IP header with options + 8 bytes */

/* Is this a datagram we may answer? Not ICMP errors (RFC 1812 4.3.2.7). */
XG_INLINE int xg_icmp_may_answer(const struct iphdr *ip, const void *data_end)
{
	const __u8 *l4 = (const void *)ip + ip->ihl * 4;

	if (!(ip->frag_off & bpf_htons(XG_IP_DF)) || (ip->frag_off & bpf_htons(XG_IP_OFFSET)))
		return 0;
	if (ip->protocol != IPPROTO_ICMP)
		return 1;
	if ((const void *)(l4 + 1) > data_end)
		return 0;
	return *l4 == 0 || *l4 == 8; /* echo reply / request */
}

/* Header pointers of the frame being rewritten; redone after each resize
 * (adjust_head/tail invalidate them). 0, or -1 if the frame is too short. */
XG_INLINE int xg_icmp_layout(struct xdp_md *ctx, struct ethhdr **eth, struct iphdr **ip,
			     struct xg_icmp_frag **icmp, struct iphdr **quoted, void **data_end)
{
	*data_end = (void *)(long)ctx->data_end;
	*eth = (void *)(long)ctx->data;
	*ip = (void *)(*eth + 1);
	*icmp = (void *)(*ip + 1);
	*quoted = (void *)(*icmp + 1);
	return (void *)(*quoted + 1) > *data_end ? -1 : 0;
}

/* Rewrite the frame into the ICMP error; returns 0 or a drop reason. */
XG_INLINE int xg_icmp_frag_needed(struct xg_pkt *p, __u16 mtu)
{
	struct xdp_md *ctx = p->ctx;
	const int room = sizeof(struct iphdr) + sizeof(struct xg_icmp_frag);
	struct ethhdr *eth, old_eth;
	struct iphdr *ip, *quoted;
	struct xg_icmp_frag *icmp;
	void *data, *data_end;
	__u32 quote_len, sum = 0, src_be;
	struct xg_subnet *s;

	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	eth = data;
	if ((void *)(eth + 1) > data_end)
		return XG_R_DROP_TRUNC_INNER;
	old_eth = *eth;

	/* The error comes from the pod's gateway address when we know it. */
	{
		struct xg_subnet_key k = {
			.prefixlen = 64, .vni_be = bpf_htonl(p->vni), .ip_be = p->inner_src,
		};

		s = bpf_map_lookup_elem(&xg_subnet, &k);
		src_be = s && s->gw_ip_be ? s->gw_ip_be : p->inner_dst;
	}

	if (bpf_xdp_adjust_head(ctx, -room))
		return XG_R_DROP_HEADROOM;
	if (xg_icmp_layout(ctx, &eth, &ip, &icmp, &quoted, &data_end))
		return XG_R_DROP_HEADROOM;
	quote_len = quoted->ihl * 4 + 8;
	if (quote_len > XG_ICMP_QUOTE_MAX)
		return XG_R_DROP_INNER_BAD_IP;
	if (bpf_xdp_adjust_tail(ctx, (int)(sizeof(*eth) + room + quote_len) -
					     (int)(ctx->data_end - ctx->data)))
		return XG_R_DROP_HEADROOM;

	if (xg_icmp_layout(ctx, &eth, &ip, &icmp, &quoted, &data_end))
		return XG_R_DROP_HEADROOM;

	xg_memcpy6(eth->h_dest, old_eth.h_source);
	xg_memcpy6(eth->h_source, old_eth.h_dest);
	eth->h_proto = bpf_htons(ETH_P_IP);

	ip->version = 4;
	ip->ihl = 5;
	ip->tos = 0xc0; /* internetwork control, as routers send errors */
	ip->tot_len = bpf_htons(room + quote_len);
	ip->id = 0;
	ip->frag_off = bpf_htons(XG_IP_DF);
	ip->ttl = 64;
	ip->protocol = IPPROTO_ICMP;
	ip->check = 0;
	ip->saddr = src_be;
	ip->daddr = quoted->saddr;
	ip->check = xg_ipv4_csum(ip);

	icmp->type = 3;
	icmp->code = 4;
	icmp->check = 0;
	icmp->unused = 0;
	icmp->mtu = bpf_htons(mtu);

	/* Checksum over the ICMP header and the quote: bounded word loop. */
	{
		__u16 *w = (void *)icmp;

		for (int i = 0; i < (sizeof(*icmp) + XG_ICMP_QUOTE_MAX) / 2; i++) {
			if (i * 2 >= sizeof(*icmp) + quote_len || (void *)(w + i + 1) > data_end)
				break;
			sum += w[i];
		}
	}
	icmp->check = ~xg_csum_fold(sum);
	return 0;
}

/*
 * A next hop refused with rc (from xg_nexthop): where it is DROP_TOO_BIG
 * and ip's sender may be told (ip is NULL when the frame carries no IPv4
 * packet), answer fragmentation-needed with the MTU left inside the
 * overlay, XDP_TX; otherwise count rc and drop.
 */
XG_INLINE int xg_nexthop_refused(struct xg_pkt *p, int rc, const struct iphdr *ip,
				 const void *data_end, __u32 mtu)
{
	if (rc == XG_R_DROP_TOO_BIG && ip && xg_icmp_may_answer(ip, data_end) &&
	    mtu > XG_POD_MTU_OVERHEAD) {
		rc = xg_icmp_frag_needed(p, mtu - XG_POD_MTU_OVERHEAD);
		if (rc)
			return xg_count(p, rc), XDP_DROP;
		xg_count(p, XG_R_ICMP_FRAG_NEEDED);
		return XDP_TX;
	}
	return xg_count(p, rc), XDP_DROP;
}

#endif
