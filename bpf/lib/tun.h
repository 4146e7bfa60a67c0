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

/* Tags compared without an early exit. */
XG_INLINE int xg_tag_eq(const __u8 *a, const __u8 *b)
{
	__u64 a0, a1, b0, b1;

	__builtin_memcpy(&a0, a, 8);
	__builtin_memcpy(&a1, a + 8, 8);
	__builtin_memcpy(&b0, b, 8);
	__builtin_memcpy(&b1, b + 8, 8);
	return ((a0 ^ b0) | (a1 ^ b1)) == 0;
}

/*
 * Accept counter c into window r (caller holds r->lock): 0, or
 * DROP_GW_REPLAY / DROP_GW_TOO_OLD. The bitmap is a ring of
 * XG_GW_WINDOW_WORDS words (RFC 6479): word (c / 64) % WORDS holds c's bit;
 * moving top forward clears the words it enters.
 */
XG_INLINE int xg_replay_accept(struct xg_gw_replay *r, __u64 c)
{
	__u64 top = r->top, bit = 1ULL << (c & 63), d;
	__u32 w = (c >> 6) & (XG_GW_WINDOW_WORDS - 1);

	if (c > top) {
		d = (c >> 6) - (top >> 6);
#pragma unroll
		for (int i = 1; i <= XG_GW_WINDOW_WORDS; i++)
			if (i <= d)
				r->bits[((top >> 6) + i) & (XG_GW_WINDOW_WORDS - 1)] = 0;
		r->top = c;
		r->bits[w] |= bit;
		return 0;
	}
	if (top - c >= XG_GW_WINDOW)
		return XG_R_DROP_GW_TOO_OLD;
	if (r->bits[w] & bit)
		return XG_R_DROP_GW_REPLAY;
	r->bits[w] |= bit;
	return 0;
}

#endif
