/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Outer Ethernet/IPv4/UDP of a tunnel packet, in two steps so a program can
 * decide between its tunnels (by port and address) in between:
 * xg_outer_udp() finds the UDP header (or says the frame is host traffic),
 * xg_outer_check() then holds a packet addressed to us to our rules.
 */
#ifndef XG_OUTER_H
#define XG_OUTER_H

#include "common.h"
#include "iplen.h"

struct xg_outer {
	struct ethhdr *eth;
	struct iphdr *ip;
	struct udphdr *udp;
};

/* 0 with o filled, or a reason: PASS_* (not ours to judge) or DROP_*. */
XG_INLINE int xg_outer_udp(void *data, void *data_end, struct xg_outer *o)
{
	struct ethhdr *eth = data;
	struct iphdr *ip;

	if ((void *)(eth + 1) > data_end)
		return XG_R_DROP_TRUNC_ETH;
	if (eth->h_proto != bpf_htons(ETH_P_IP))
		return XG_R_PASS_NOT_IP;
	ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > data_end)
		return XG_R_DROP_TRUNC_IP;
	if (ip->version != 4 || ip->ihl < 5)
		return XG_R_DROP_BAD_IP;
	if (ip->protocol != IPPROTO_UDP)
		return XG_R_PASS_NOT_GENEVE;
	/* Fragment policy: a non-first fragment carries no UDP header, so it
	 * cannot be ours to judge; the stack reassembles or drops it. A first
	 * fragment of a tunnel is dropped by xg_outer_check: we never
	 * reassemble. */
	if (ip->frag_off & bpf_htons(XG_IP_OFFSET))
		return XG_R_PASS_FRAGMENT;
	o->udp = (void *)ip + ip->ihl * 4;
	if ((void *)(o->udp + 1) > data_end)
		return XG_R_DROP_TRUNC_UDP;
	o->eth = eth;
	o->ip = ip;
	return 0;
}

XG_INLINE int xg_reason_is_pass(__u32 r)
{
	return r >= XG_R_PASS_NOT_IP && r <= XG_R_PASS_NO_CONFIG;
}

/*
 * For a packet addressed to one of our tunnels: 0 or a drop reason. On 0
 * the frame ends where the outer datagram does (trailing bytes trimmed,
 * iplen.h) and o is refilled: callers reload data_end and every packet
 * pointer they derived before.
 */
XG_INLINE int xg_outer_check(struct xdp_md *ctx, struct xg_outer *o)
{
	void *data, *data_end;
	__u32 tot_len;
	int excess;

	/* Our senders never set IP options; refusing them keeps every header
	 * offset constant from here on. */
	if (o->ip->ihl != 5)
		return XG_R_DROP_IP_OPTIONS;
	if (o->ip->frag_off & bpf_htons(XG_IP_MF))
		return XG_R_DROP_FRAGMENT;
	tot_len = bpf_ntohs(o->ip->tot_len);
	if (tot_len < sizeof(struct iphdr) + sizeof(struct udphdr))
		return XG_R_DROP_BAD_IP;
	excess = xg_ip_excess(ctx, sizeof(struct ethhdr), tot_len);
	if (excess < 0)
		return XG_R_DROP_IP_LEN;
	if (bpf_ntohs(o->udp->len) != tot_len - sizeof(struct iphdr))
		return XG_R_DROP_BAD_UDP_LEN;
	if (xg_ip_trim(ctx, excess))
		return XG_R_DROP_IP_LEN;

	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	o->eth = data;
	o->ip = (void *)(o->eth + 1);
	o->udp = (void *)(o->ip + 1);
	if ((void *)(o->udp + 1) > data_end) /* for the verifier: checked above */
		return XG_R_DROP_TRUNC_UDP;
	return 0;
}

#endif
