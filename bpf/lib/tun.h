/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The gateway tunnel's tag and replay window (format: proto/xgtun.md).
 */
#ifndef XG_TUN_H
#define XG_TUN_H

#include "siphash.h"

/*
 * Tag of a packet laid out as [Eth][IPv4, no options][UDP][xg_tun_hdr][inner]:
 * SipHash-2-4-128 over the header's first 16 bytes, then the inner frame.
 * Returns 0, or -1 if the inner frame is shorter than 8 or longer than
 * XG_TUN_MAX_INNER bytes. Not inlined: encap and decap share one copy, and
 * the verifier walks its loop once per call site.
 */
static __noinline int xg_tun_tag(struct xdp_md *ctx, const __u8 *key, __u8 out[16])
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct xg_tun_hdr *t = data + XG_TUN_LEN - sizeof(*t);
	__u8 *w = data + XG_TUN_LEN;
	__u64 len = ctx->data_end - ctx->data, inner, last = 0;
	struct xg_sip s;

	if ((void *)(t + 1) > end || len > XG_TUN_LEN + XG_TUN_MAX_INNER || len < XG_TUN_LEN + 8)
		return -1;
	inner = len - XG_TUN_LEN;
	xg_sip_init(&s, key);
	/* The last 1..7 bytes: the top of the frame's final 8 bytes. Read
	 * first: the pointer arithmetic makes the verifier trace the offset's
	 * origin back, which is cheap here and costly past the loop below. */
	if (inner & 7) {
		__u64 off = len - 8;
		__u8 *q;

		/* keep data + (len - 8): reassociated to (data + len) - 8, the
		 * access would be at a negative offset the verifier refuses */
		asm volatile("" : "+r"(off));
		if (off > XG_TUN_LEN + XG_TUN_MAX_INNER) /* bounds it again, for the verifier */
			return -1;
		q = data + off;
		if ((void *)(q + 8) > end)
			return -1;
		last = xg_le64(*(__u64 *)q) >> (64 - 8 * (inner & 7));
	}
	/* Plain 8-byte loads (unaligned packet access is allowed where it is
	 * cheap, as on x86 and arm64); memcpy would be split into bytes. */
	xg_sip_word(&s, xg_le64(*(__u64 *)t));
	xg_sip_word(&s, xg_le64(*(__u64 *)((__u8 *)t + 8)));
	for (int i = 0; i < XG_TUN_MAX_INNER / 8; i++) {
		if ((void *)(w + 8) > end)
			break;
		xg_sip_word(&s, xg_le64(*(__u64 *)w));
		w += 8;
		/* keep w a pointer stepped by 8: as base + 8 * i, each step
		 * would make the verifier re-trace i through all past steps */
		asm volatile("" : "+r"(w));
	}
	xg_sip_final(&s, last, XG_TUN_AUTH_LEN + inner, out);
	return 0;
}

/* Tags compared without an early exit, a word at a time (as siphash.h
 * writes them: a stack tag 8-byte aligned). */
XG_INLINE int xg_tag_eq(const __u8 *a, const __u8 *b)
{
	__u64 a0 = *(const __u64 *)a, a1 = *(const __u64 *)(a + 8);
	__u64 b0 = *(const __u64 *)b, b1 = *(const __u64 *)(b + 8);

	return ((a0 ^ b0) | (a1 ^ b1)) == 0;
}

/*
 * Accept counter c into window r: 0, or DROP_GW_REPLAY / DROP_GW_TOO_OLD /
 * DROP_GW_BUSY. Every CPU may take packets of one peer (RSS spreads its
 * flows), so the window is shared; it takes no lock. Slot (c / 16) % 16
 * holds a block number b = c / 16 and the seen-bits of b's 16 counters in
 * one word, changed only by compare-and-swap:
 *  - the slot holds b: c's bit set means a replay, else set it;
 *  - it holds an older block: that block has left the window, start b;
 *  - it holds a newer block: c is older than anything the slot can tell
 *    apart, refuse.
 * A slot's block only grows, so a counter once accepted is never accepted
 * again, whatever the interleaving (RFC 6479's ring, with the clearing done
 * by the first counter of a block instead of by whoever moves the top).
 * top is only a hint for the cheap early refusal before the tag: a plain
 * store of an accepted counter above the one read, so it never leads. Two
 * CPUs racing may leave the lower of their counters there until the next
 * higher one: a lag only lets the early check pass a counter the ring then
 * judges, and the ring never accepts one twice. (A compare-and-swap would
 * lag the same way, and cost a second locked instruction per packet.)
 */
XG_INLINE int xg_replay_accept(struct xg_gw_replay *r, __u64 c)
{
	__u64 b = c >> XG_GW_BLOCK_SHIFT, bit = 1ULL << (c & ((1 << XG_GW_BLOCK_SHIFT) - 1));
	__u64 *slot = &r->ring[b & (XG_GW_RING - 1)], old, new, top;
	int i;

	if (c >= XG_GW_CTR_LIMIT)
		return XG_R_DROP_GW_BAD_HDR;
	for (i = 0; i < 8; i++) { /* a retry only when another CPU changed the slot */
		old = *(volatile __u64 *)slot;
		if ((old >> 16) > b)
			return XG_R_DROP_GW_TOO_OLD;
		if ((old >> 16) == b) {
			if (old & bit)
				return XG_R_DROP_GW_REPLAY;
			new = old | bit;
		} else {
			new = b << 16 | bit;
		}
		if (__sync_val_compare_and_swap(slot, old, new) != old)
			continue;
		top = *(volatile __u64 *)&r->top;
		if (c > top)
			*(volatile __u64 *)&r->top = c;
		return 0;
	}
	return XG_R_DROP_GW_BUSY;
}

#endif
