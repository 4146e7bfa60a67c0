/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Where an IPv4 datagram ends. A frame may run on past its datagram:
 * Ethernet pads short frames to 60 bytes, and some links append trailers.
 * Those bytes are not the datagram's; parsing them as options or an inner
 * frame would read what the sender never sent, and forwarding them would
 * carry them on under a total length that disowns them. So every parser
 * stops at the IPv4 total length (as the kernel's ip_rcv does): bytes past
 * it are trimmed, and a total length that runs past the frame (the datagram
 * was cut, or the length lies) is refused. docs/architecture.md, "Malformed
 * input and policies".
 */
#ifndef XG_IPLEN_H
#define XG_IPLEN_H

#include "common.h"

/* The datagram at offset ip_off, tot_len bytes long (host order), against
 * the frame: how many bytes the frame runs on past it (0: none), or -1 if
 * the datagram runs past the frame. */
XG_INLINE int xg_ip_excess(struct xdp_md *ctx, __u32 ip_off, __u32 tot_len)
{
	__u32 frame = ctx->data_end - ctx->data;
	__u32 end = ip_off + tot_len;

	if (unlikely(end > frame))
		return -1;
	return frame - end;
}

/* Cut the excess xg_ip_excess found: 0, or -1 if the kernel refused. After
 * a cut every packet pointer is invalid: reload them from ctx. */
XG_INLINE int xg_ip_trim(struct xdp_md *ctx, int excess)
{
	if (likely(!excess))
		return 0;
	return bpf_xdp_adjust_tail(ctx, -excess) ? -1 : 0;
}

#endif
