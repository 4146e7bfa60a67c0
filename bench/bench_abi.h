/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Shared by bench/floor.bpf.c, bench/gwvariant.h and bench/xdp_cost*.c. */
#ifndef XG_BENCH_ABI_H
#define XG_BENCH_ABI_H

#include <linux/types.h>

/* The smallest Geneve frame xgate carries: outer Ethernet/IPv4/UDP, Geneve
 * with one XG_OPT_HOST option (62 bytes), inner Ethernet + IPv4 + UDP (42)
 * or inner Ethernet + ARP (42). The sink restores exactly this much. */
#define BENCH_RESTORE_LEN 104
#define BENCH_RESTORE_WORDS (BENCH_RESTORE_LEN / 8)
/* Largest offset the sink restores at (a mask, for the verifier). */
#define BENCH_OFF_MASK 63

struct bench_sink_cfg {
	__u32 restore; /* 1: write tmpl back over each received frame */
	__u32 off;     /* ... at this offset from the frame's start: a path that
			* grew the frame in front (gateway encap: 12) hands the
			* sink a frame starting that much before the page's */
	__u64 tmpl[BENCH_RESTORE_WORDS];
};

/* What xg_tun_tag writes in the "[no tag]" gateway variants (bench/gwvariant.h):
 * 16 bytes of this value, so a check can tell the variant by its output. */
#define BENCH_FIXED_TAG_BYTE 0xb5

#endif
