/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Per-reason, per-device, per-CPU counters: every exit goes through here. */
#ifndef XG_STATS_H
#define XG_STATS_H

#include "maps.h"

XG_INLINE void xg_count(struct xg_pkt *p, __u32 reason)
{
	__u32 key = p->slot * XG_R_MAX + reason;
	struct xg_stat *s = bpf_map_lookup_elem(&xg_stats, &key);

	if (s) {
		s->packets++;
		s->bytes += p->ctx->data_end - p->ctx->data;
	}
}

/* Count and return an XDP verdict in one expression. */
#define XG_DROP(p, r) ({ xg_count((p), XG_R_##r); XDP_DROP; })
#define XG_PASS(p, r) ({ xg_count((p), XG_R_##r); XDP_PASS; })

#endif
