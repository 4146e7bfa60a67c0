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

/* What a bpf_fib_lookup result means for the packet: 0 (a next hop), or
 * the drop reason it is counted under (every next-hop lookup). */
XG_INLINE int xg_fib_reason(int rc)
{
	switch (rc) {
	case BPF_FIB_LKUP_RET_SUCCESS:
		return 0;
	case BPF_FIB_LKUP_RET_NO_NEIGH:
		return XG_R_DROP_NO_NEIGH;
	case BPF_FIB_LKUP_RET_FRAG_NEEDED:
		return XG_R_DROP_TOO_BIG;
	case BPF_FIB_LKUP_RET_FWD_DISABLED:
		return XG_R_DROP_FWD_DISABLED;
	default:
		return XG_R_DROP_FIB;
	}
}

#endif
