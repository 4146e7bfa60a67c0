/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Write the outer headers of an xgate Geneve frame (XG_ENCAP_LEN bytes) in
 * front of an inner Ethernet frame: what an agent sends, and what a gateway
 * hands to its cluster. */
#ifndef XG_ENCAP_H
#define XG_ENCAP_H

#include "csum.h"
#include "proto.h"
#include "inner.h"

/* eth: the start of XG_ENCAP_LEN writable bytes. tot_len: outer IPv4 length.
 * Returns 0, or -1 if the bytes are not there (the caller counts it). */
XG_INLINE int xg_geneve_write(struct xg_pkt *p, struct ethhdr *eth, void *data_end, __u8 tos,
			      __u16 tot_len, __u32 dst_be, __u8 opt_flags)
{
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);
	struct xg_geneve *gnv = (void *)(udp + 1);

	if ((void *)gnv + sizeof(*gnv) + sizeof(struct xg_opt_host) > data_end)
		return -1;
	eth->h_proto = bpf_htons(ETH_P_IP);
	/* DF always: receivers drop outer fragments, so never let the underlay
	 * fragment; with DF the IPv4 ID carries no meaning (RFC 6864). */
	xg_ipv4_build(ip, tos, tot_len, p->host->ttl ? p->host->ttl : 64, IPPROTO_UDP,
		      p->host->ip_be, dst_be);

	udp->source = xg_sport(xg_flow_hash(p));
	udp->dest = bpf_htons(XG_GENEVE_PORT);
	udp->len = bpf_htons(tot_len - sizeof(*ip));
	udp->check = 0;

	gnv->ver_optlen = sizeof(struct xg_opt_host) / 4;
	gnv->flags = 0;
	gnv->proto = bpf_htons(XG_ETH_P_TEB);
	xg_geneve_set_vni(gnv, p->vni);
	gnv->rsvd = 0;
	xg_opt_host_init((void *)(gnv + 1), p->host->ip_be, opt_flags);
	return 0;
}

/* DSCP and ECN of an inner IPv4 frame, copied out (RFC 6040 normal mode). */
XG_INLINE __u8 xg_inner_tos(struct ethhdr *ieth, void *data_end)
{
	struct iphdr *iip = (void *)(ieth + 1);

	if ((void *)(iip + 1) > data_end || ieth->h_proto != bpf_htons(ETH_P_IP))
		return 0;
	return iip->tos;
}

#endif
