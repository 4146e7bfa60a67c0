/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ARP responder, used inside the tunnel (transit) and at the pod (agent):
 * answers for endpoints this host knows and for a subnet's gateway address,
 * rewriting the request into a reply in place.
 */
#ifndef XG_ARP_H
#define XG_ARP_H

#include "route.h"

/* Returns 1 if answered; *host_be is where the target lives (0: gateway). */
XG_INLINE int xg_arp_answer(struct xg_pkt *p, struct ethhdr *eth, struct xg_arp *a,
			    __u32 *host_be)
{
	struct xg_endpoint *ep;
	const __u8 *mac;
	__u32 target = p->inner_dst;

	if (a->op != bpf_htons(XG_ARP_REQUEST))
		return 0;
	ep = xg_endpoint_of(p);
	if (ep) {
		mac = ep->mac;
		*host_be = ep->host_be;
	} else {
		struct xg_subnet *s = xg_subnet_of(p); /* target = inner dst */

		if (!s || s->gw_ip_be != target)
			return 0;
		mac = s->gw_mac;
		*host_be = 0;
	}
	a->op = bpf_htons(XG_ARP_REPLY);
	xg_memcpy6(a->tha, a->sha);
	__builtin_memcpy(a->tpa, a->spa, 4);
	xg_memcpy6(a->sha, mac);
	xg_store32(a->spa, target);
	xg_memcpy6(eth->h_dest, eth->h_source);
	xg_memcpy6(eth->h_source, mac);
	return 1;
}

#endif
