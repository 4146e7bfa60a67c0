// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Reference programs for bench/xdp_cost (not part of the data plane):
 *  - floors: what the harness costs with a program that does nothing but
 *    return XDP_DROP, XDP_TX, or a devmap XDP_REDIRECT, and a fib floor
 *    (bpf_fib_lookup + MAC rewrite + XDP_TX) to price the FIB lookup alone;
 *  - xdp_sink: attached to the veth peers that receive what the measured
 *    programs transmit. It disposes of frames cheaply (XDP_DROP) and, for
 *    paths that rewrite their frame in place, writes the original frame back
 *    over it: BPF_PROG_RUN live-frames mode recycles pages WITHOUT restoring
 *    their content, so a forwarded frame would otherwise come back to the
 *    program already forwarded (new outer dst: "not for us", TTL - 1, ...).
 *    A path that moved the frame's start (the gateway adds or removes 12
 *    bytes in front) is restored at an offset, or from an offset of the
 *    original (xdp_cost decides), so the bytes land where the page's frame
 *    starts. The sink does the same amount of copying whether it restores
 *    or not (into a scratch buffer then), so the floors and the paths pay
 *    the same.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>

#include "bench_abi.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* ---- floors ------------------------------------------------------------ */

SEC("xdp")
int xdp_floor_drop(struct xdp_md *ctx)
{
	return XDP_DROP;
}

SEC("xdp")
int xdp_floor_tx(struct xdp_md *ctx)
{
	return XDP_TX;
}

/* Same kind of map and flags as xgate's xg_txports. */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u32);
} floor_ports SEC(".maps");

const volatile __u32 redirect_ifindex;

SEC("xdp")
int xdp_floor_redirect(struct xdp_md *ctx)
{
	return bpf_redirect_map(&floor_ports, redirect_ifindex, 0);
}

/* bpf_fib_lookup exactly as lib/tx.h calls it, then XDP_TX. */
const volatile __u32 fib_src_be;
const volatile __u32 fib_dst_be;
const volatile __u32 fib_ifindex;
__u32 fib_flags = BPF_FIB_LOOKUP_OUTPUT; /* .data: xdp_cost varies it */
int fib_last_rc; /* diagnostics: the last bpf_fib_lookup() result */

SEC("xdp")
int xdp_floor_fib(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct bpf_fib_lookup fib = {};

	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	fib.family = 2; /* AF_INET */
	fib.ipv4_src = fib_src_be;
	fib.ipv4_dst = fib_dst_be;
	fib.tot_len = (__u16)(data_end - data) - sizeof(*eth);
	fib.ifindex = fib_ifindex;
	fib_last_rc = bpf_fib_lookup(ctx, &fib, sizeof(fib), fib_flags);
	if (fib_last_rc != BPF_FIB_LKUP_RET_SUCCESS)
		return XDP_DROP;
	__builtin_memcpy(eth->h_dest, fib.dmac, 6);
	__builtin_memcpy(eth->h_source, fib.smac, 6);
	if (fib.ifindex != ctx->ingress_ifindex) {
		fib_last_rc = -1000 - (int)fib.ifindex;
		return XDP_DROP;
	}
	return XDP_TX;
}

/* ---- single-lookup probes (components table) ---------------------------- */

#include "xgate_abi.h"

/* like xg_ifaces: HASH keyed by the ingress ifindex */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XG_MAX_IFACES);
	__type(key, __u32);
	__type(value, struct xg_iface);
} probe_hash SEC(".maps");

SEC("xdp")
int xdp_probe_hash(struct xdp_md *ctx)
{
	__u32 k = ctx->ingress_ifindex;

	return bpf_map_lookup_elem(&probe_hash, &k) ? XDP_DROP : XDP_PASS;
}

/* like xg_subnet: LPM_TRIE keyed by (prefixlen, vni, ip) */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, XG_MAX_SUBNETS);
	__type(key, struct xg_subnet_key);
	__type(value, struct xg_subnet);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} probe_lpm SEC(".maps");

const volatile __u32 probe_vni_be;
const volatile __u32 probe_ip_be;

SEC("xdp")
int xdp_probe_lpm(struct xdp_md *ctx)
{
	struct xg_subnet_key k = {
		.prefixlen = 64, .vni_be = probe_vni_be, .ip_be = probe_ip_be,
	};

	return bpf_map_lookup_elem(&probe_lpm, &k) ? XDP_DROP : XDP_PASS;
}

/* what a per-packet time check or a per-CPU cache costs */
SEC("xdp")
int xdp_probe_jiffies(struct xdp_md *ctx)
{
	return bpf_jiffies64() ? XDP_DROP : XDP_PASS;
}

SEC("xdp")
int xdp_probe_coarse_ns(struct xdp_md *ctx)
{
	return bpf_ktime_get_coarse_ns() ? XDP_DROP : XDP_PASS;
}

/* like lib/cache.h's next-hop cache: PERCPU_ARRAY, 256 slots of 64 bytes */
struct probe_slot {
	__u64 w[8];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, struct probe_slot);
} probe_pcpu SEC(".maps");

SEC("xdp")
int xdp_probe_pcpu(struct xdp_md *ctx)
{
	__u32 k = ctx->ingress_ifindex & 255;
	struct probe_slot *s = bpf_map_lookup_elem(&probe_pcpu, &k);

	return s && s->w[0] == 0 ? XDP_DROP : XDP_PASS;
}

/* ---- sink ---------------------------------------------------------------- */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bench_sink_cfg);
} sink_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} sink_count SEC(".maps");

struct bench_scratch {
	__u64 w[BENCH_RESTORE_WORDS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bench_scratch);
} sink_scratch SEC(".maps");

SEC("xdp")
int xdp_sink(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct bench_sink_cfg *cfg;
	struct bench_scratch *scr;
	__u32 zero = 0;
	__u64 *n, *dst;

	cfg = bpf_map_lookup_elem(&sink_cfg, &zero);
	n = bpf_map_lookup_elem(&sink_count, &zero);
	if (!cfg || !n)
		return XDP_DROP;
	*n += 1;
	dst = data + (cfg->off & BENCH_OFF_MASK);
	if (cfg->restore && (void *)(dst + BENCH_RESTORE_WORDS) <= data_end) {
#pragma unroll
		for (int i = 0; i < BENCH_RESTORE_WORDS; i++)
			dst[i] = cfg->tmpl[i];
		return XDP_DROP;
	}
	scr = bpf_map_lookup_elem(&sink_scratch, &zero);
	if (!scr)
		return XDP_DROP;
#pragma unroll
	for (int i = 0; i < BENCH_RESTORE_WORDS; i++)
		scr->w[i] = cfg->tmpl[i] ^ i;
	return XDP_DROP;
}
