// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * transit: XDP on a host's underlay NIC. What it does with a frame is
 * lib/transit.h (shared with `ingress` on a NIC that is both the public
 * and the underlay NIC).
 */
#include "lib/transit.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("xdp")
int xg_transit(struct xdp_md *ctx)
{
	struct xg_pkt p = {.ctx = ctx};

	xg_pkt_begin(&p, ctx);
	if (!p.host)
		return XDP_PASS;
	return xg_transit_frame(&p);
}
