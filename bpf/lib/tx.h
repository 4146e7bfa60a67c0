/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Underlay transmit: next-hop MACs from the kernel FIB (bpf_fib_lookup in
 * output mode from the host address via the host NIC), MTU checked by the
 * same lookup, then XDP_TX when leaving by the ingress device or a devmap
 * redirect otherwise.
 */
#ifndef XG_TX_H
#define XG_TX_H

#include "csum.h"
#include "stats.h"

/* Next hop for dst via the host NIC; 0 or a drop reason. */
XG_INLINE int xg_fib(struct xg_pkt *p, __u32 dst_be, __u16 tot_len, struct bpf_fib_lookup *fib)
{
	int rc;

	__builtin_memset(fib, 0, sizeof(*fib));
	fib->family = AF_INET;
	fib->ipv4_src = p->host->ip_be;
	fib->ipv4_dst = dst_be;
	fib->tot_len = tot_len;
	fib->ifindex = p->host->nic_ifindex;
	rc = bpf_fib_lookup(p->ctx, fib, sizeof(*fib), BPF_FIB_LOOKUP_OUTPUT);
	switch (rc) {
	case BPF_FIB_LKUP_RET_SUCCESS:
		return 0;
	case BPF_FIB_LKUP_RET_NO_NEIGH:
		return XG_R_DROP_NO_NEIGH;
	case BPF_FIB_LKUP_RET_FRAG_NEEDED:
		return XG_R_DROP_TOO_BIG;
	case BPF_FIB_LKUP_RET_FWD_DISABLED:
		return XG_R_DROP_FWD_DISABLED;
	default:
		return XG_R_DROP_FIB;
	}
}

/* Send a frame whose outer header is complete toward fib's next hop. */
XG_INLINE int xg_send(struct xg_pkt *p, struct ethhdr *eth, const struct bpf_fib_lookup *fib,
		      __u32 reason)
{
	int rc;

	xg_memcpy6(eth->h_dest, fib->dmac);
	xg_memcpy6(eth->h_source, fib->smac);
	if (fib->ifindex == p->ctx->ingress_ifindex) {
		xg_count(p, reason);
		return XDP_TX;
	}
	rc = bpf_redirect_map(&xg_txports, fib->ifindex, 0);
	if (unlikely(rc != XDP_REDIRECT))
		return XG_DROP(p, DROP_TX_PORT);
	xg_count(p, reason);
	return rc;
}

XG_INLINE int xg_tx(struct xg_pkt *p, struct ethhdr *eth, __u32 dst_be, __u16 tot_len,
		    __u32 reason)
{
	struct bpf_fib_lookup fib;
	int rc = xg_fib(p, dst_be, tot_len, &fib);

	if (unlikely(rc))
		return xg_count(p, rc), XDP_DROP;
	return xg_send(p, eth, &fib, reason);
}

/*
 * Re-address an outer header we received and send it on: source becomes this
 * host, destination the next hop, TTL decremented. The IP checksum is
 * updated incrementally; the UDP checksum is zeroed (legal for IPv4 tunnels,
 * RFC 8926 sec. 3.3) since the pseudo-header changed.
 */
XG_INLINE int xg_forward(struct xg_pkt *p, struct ethhdr *eth, struct iphdr *ip,
			 struct udphdr *udp, __u32 dst_be, __u32 reason)
{
	__u16 old_ttl_word, new_ttl_word;

	if (unlikely(dst_be == p->host->ip_be))
		return XG_DROP(p, DROP_LOOP);
	if (unlikely(ip->ttl <= 1))
		return XG_DROP(p, DROP_TTL);

	__builtin_memcpy(&old_ttl_word, &ip->ttl, 2);
	ip->ttl--;
	__builtin_memcpy(&new_ttl_word, &ip->ttl, 2);
	xg_csum_replace2(&ip->check, old_ttl_word, new_ttl_word);
	xg_csum_replace4(&ip->check, ip->saddr, p->host->ip_be);
	xg_csum_replace4(&ip->check, ip->daddr, dst_be);
	ip->saddr = p->host->ip_be;
	ip->daddr = dst_be;
	udp->check = 0;
	return xg_tx(p, eth, dst_be, bpf_ntohs(ip->tot_len), reason);
}

#endif
