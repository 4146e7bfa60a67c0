/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Shared by bench/floor.bpf.c and bench/xdp_cost.c. */
#ifndef XG_BENCH_ABI_H
#define XG_BENCH_ABI_H

#include <linux/types.h>

/* The smallest Geneve frame xgate carries: outer Ethernet/IPv4/UDP, Geneve
 * with one XG_OPT_HOST option (62 bytes), inner Ethernet + IPv4 + UDP (42)
 * or inner Ethernet + ARP (42). The sink restores exactly this much. */
#define BENCH_RESTORE_LEN 104
#define BENCH_RESTORE_WORDS (BENCH_RESTORE_LEN / 8)

struct bench_sink_cfg {
	__u32 restore; /* 1: write tmpl back over each received frame */
	__u32 pad;
	__u64 tmpl[BENCH_RESTORE_WORDS];
};

#endif
