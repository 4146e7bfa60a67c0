/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Force-included (clang -include) when bench/CMakeLists.txt builds the
 * "nofib" variants of bpf/transit.bpf.c and bpf/agent.bpf.c: every call of
 * bpf_fib_lookup() becomes a stub that answers "success, same egress device,
 * fixed MACs". The sources are unchanged; comparing a path with its nofib
 * variant prices the FIB lookup in context. Benchmark-only, never loaded on
 * a real device.
 */
#ifndef XG_BENCH_NOFIB_H
#define XG_BENCH_NOFIB_H

#include <linux/bpf.h>

static __attribute__((always_inline)) inline long
xg_bench_fake_fib(struct bpf_fib_lookup *p)
{
	/* egress = p->ifindex (the host NIC the caller asked for) */
	p->dmac[0] = 0x02; p->dmac[1] = 0x98; p->dmac[2] = 0;
	p->dmac[3] = 0; p->dmac[4] = 0; p->dmac[5] = 0x02;
	p->smac[0] = 0x02; p->smac[1] = 0x98; p->smac[2] = 0;
	p->smac[3] = 0; p->smac[4] = 0; p->smac[5] = 0x01;
	return BPF_FIB_LKUP_RET_SUCCESS;
}

/* Function-like: the helper's declaration "(*bpf_fib_lookup)(...)" in
 * bpf_helper_defs.h is not followed by '(' and stays untouched. */
#define bpf_fib_lookup(ctx, params, plen, flags) xg_bench_fake_fib(params)

#endif
