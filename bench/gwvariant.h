/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Force-included (clang -include) when bench/CMakeLists.txt builds the
 * benchmark-only variants of bpf/gateway.bpf.c. The source is unchanged;
 * what bpf/lib/tun.h provides is replaced here (its guard XG_TUN_H is set by
 * including it under other names first), so comparing a path with its
 * variant in the same run prices what was taken out:
 *
 *   BENCH_NO_TAG     xg_tun_tag() stores a fixed tag (16 x BENCH_FIXED_TAG_BYTE)
 *                    inline, xg_tag_eq() says "equal": no SipHash, no call,
 *                    no compare. path - path [no tag] = what the MAC costs.
 *   BENCH_SEQ_CTR    the replay window runs as is, but is fed
 *                    bench_seq_ctr + 1 (a global: one more per packet, where
 *                    xdp_cost starts it at the window's top) instead of the
 *                    frame's counter. BPF_PROG_RUN's live mode sends the same
 *                    bytes again and again; this way the window sees what a
 *                    flow in order makes it do (a new top, a bit set, a word
 *                    started every 16 packets) and accepts every packet. The
 *                    tag is still verified on the frame (counter included).
 *   BENCH_NO_REPLAY  the replay window is compiled out: xg_replay_accept()
 *                    accepts. The early "too old" check stays (a load and a
 *                    compare).
 *
 * Never loaded on a real device: a variant without the tag accepts forged
 * packets, one without the window (or with the bench's counter) replays.
 */
#ifndef XG_BENCH_GWVARIANT_H
#define XG_BENCH_GWVARIANT_H

#include "bench_abi.h"

/* The real definitions, under other names (and XG_TUN_H set). */
#define xg_tun_tag xg_real_tun_tag
#define xg_tag_eq xg_real_tag_eq
#define xg_replay_accept xg_real_replay_accept
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wunused-function"
#include "lib/tun.h"
#pragma clang diagnostic pop
#undef xg_tun_tag
#undef xg_tag_eq
#undef xg_replay_accept

#ifdef BENCH_NO_TAG
/* two word stores, as the real one writes its output (lib/siphash.h) */
XG_INLINE int xg_tun_tag(struct xdp_md *ctx, const __u8 *key, __u8 out[16])
{
	__u64 v = 0x0101010101010101ULL * BENCH_FIXED_TAG_BYTE;

	*(__u64 *)out = v;
	*(__u64 *)(out + 8) = v;
	return 0;
}

XG_INLINE int xg_tag_eq(const __u8 *a, const __u8 *b)
{
	return 1;
}
#else
#define xg_tun_tag xg_real_tun_tag
#define xg_tag_eq xg_real_tag_eq
#endif

#if defined(BENCH_SEQ_CTR)
__u64 bench_seq_ctr; /* .bss: xdp_cost sets it through the skeleton */

/* xdp_cost runs it on one CPU: a plain increment */
XG_INLINE int xg_replay_accept(struct xg_gw_replay *r, __u64 c)
{
	return xg_real_replay_accept(r, ++bench_seq_ctr);
}
#elif defined(BENCH_NO_REPLAY)
XG_INLINE int xg_replay_accept(struct xg_gw_replay *r, __u64 c)
{
	return 0;
}
#else
#define xg_replay_accept xg_real_replay_accept
#endif

#endif
