/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Includes and small helpers every xgate XDP program uses. */
#ifndef XG_COMMON_H
#define XG_COMMON_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "xgate_abi.h"

#define XG_INLINE static __always_inline
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#ifndef AF_INET
#define AF_INET 2
#endif
#define XG_IP_MF 0x2000
#define XG_IP_DF 0x4000
#define XG_IP_OFFSET 0x1fff
#define XG_ETH_P_ARP 0x0806

/* Per-packet state shared by the parsing, routing and tx helpers. */
struct xg_pkt {
	struct xdp_md *ctx;
	struct xg_host *host;
	__u64 now;         /* jiffies, for the per-CPU caches */
	__u32 gen;         /* configuration generation (xg_gen) */
	__u32 dgen;        /* xg_cache generation (xg_gen) */
	__u32 ifindex;     /* the device the frame came in on (ctx->ingress_ifindex) */
	__u32 slot;        /* its stats slot */
	__u32 vni;
	__u32 flow;        /* ports ^ protocol (or the ARP type): xg_flow_hash() */
	__u32 hash;        /* xg_flow_hash(), once computed (has_hash) */
	__u32 has_hash;
	__u32 inner_src;   /* inner IPv4 source, or ARP sender address */
	__u32 inner_dst;   /* inner IPv4 destination, or ARP target address */
};

XG_INLINE void xg_memcpy6(__u8 *dst, const __u8 *src)
{
	__builtin_memcpy(dst, src, 6);
}

XG_INLINE int xg_mac_eq(const __u8 *a, const __u8 *b)
{
	__u32 a4, b4;
	__u16 a2, b2;

	__builtin_memcpy(&a4, a, 4);
	__builtin_memcpy(&b4, b, 4);
	__builtin_memcpy(&a2, a + 4, 2);
	__builtin_memcpy(&b2, b + 4, 2);
	return a4 == b4 && a2 == b2;
}

XG_INLINE __u32 xg_load32(const void *p)
{
	__u32 v;

	__builtin_memcpy(&v, p, 4);
	return v;
}

XG_INLINE void xg_store32(void *p, __u32 v)
{
	__builtin_memcpy(p, &v, 4);
}

#endif
