/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What every program does first, before it looks at the frame. */
#ifndef XG_PKT_H
#define XG_PKT_H

#include "cache.h"

/*
 * Fill p for this run: the ingress device, the cache generation and time,
 * the device's stats slot (0 if unknown) and this host's xg_host entry.
 * Returns the device's xg_ifaces entry, or NULL; p->host may be NULL (no
 * instance state yet) and the caller passes the frame then.
 */
XG_INLINE struct xg_iface *xg_pkt_begin(struct xg_pkt *p, struct xdp_md *ctx)
{
	__u32 zero = 0;
	struct xg_iface *ifc;

	p->ctx = ctx;
	p->ifindex = ctx->ingress_ifindex;
	xg_cache_begin(p);
	ifc = xg_iface_of(p, p->ifindex);
	if (ifc && ifc->slot < XG_MAX_IFACES)
		p->slot = ifc->slot;
	p->host = bpf_map_lookup_elem(&xg_host, &zero);
	return ifc;
}

#endif
