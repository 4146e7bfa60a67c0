/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Internet checksum helpers. Rewrites use RFC 1624 incremental updates, so a
 * checksum we did not compute (or one left partial by veth offload) is kept
 * consistent instead of being recomputed from possibly incomplete data.
 * All words are raw memory words: the one's complement sum does not care
 * about byte order as long as it is consistent.
 */
#ifndef XG_CSUM_H
#define XG_CSUM_H

#include "common.h"

XG_INLINE __u16 xg_csum_fold(__u32 c)
{
	c = (c & 0xffff) + (c >> 16);
	c = (c & 0xffff) + (c >> 16);
	return (__u16)c;
}

/* RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m') */
XG_INLINE void xg_csum_replace2(__u16 *sum, __u16 from, __u16 to)
{
	__u32 c = (__u16)~*sum;

	c += (__u16)~from;
	c += to;
	*sum = ~xg_csum_fold(c);
}

XG_INLINE void xg_csum_replace4(__u16 *sum, __u32 from, __u32 to)
{
	__u32 c = (__u16)~*sum;

	c += (__u16)~(from & 0xffff);
	c += (__u16)~(from >> 16);
	c += to & 0xffff;
	c += to >> 16;
	*sum = ~xg_csum_fold(c);
}

/*
 * The same for several fields at once: start from (__u16)~HC, add each
 * change, fold once: HC' = ~fold(~HC + ~m1 + m1' + ~m2 + m2' ...). The
 * result equals applying xg_csum_replace* field by field (both are the
 * one's complement sum, and fold yields 0 only for an all-zero sum).
 */
XG_INLINE __u32 xg_csum_chg2(__u32 c, __u16 from, __u16 to)
{
	return c + (__u16)~from + to;
}

XG_INLINE __u32 xg_csum_chg4(__u32 c, __u32 from, __u32 to)
{
	return c + (__u16)~(from & 0xffff) + (__u16)~(from >> 16) + (to & 0xffff) + (to >> 16);
}

/* Checksum of a freshly built 20-byte IPv4 header (check field zero). */
XG_INLINE __u16 xg_ipv4_csum(const struct iphdr *ip)
{
	const __u16 *w = (const __u16 *)ip;
	__u32 c = 0;

#pragma unroll
	for (int i = 0; i < 10; i++)
		c += w[i];
	return ~xg_csum_fold(c);
}

/* Write a 20-byte IPv4 header (ID 0, DF) and its checksum, summed from the
 * values in registers: summing the header back from memory right after
 * writing it byte by byte stalls on store-to-load forwarding. */
XG_INLINE void xg_ipv4_build(struct iphdr *ip, __u8 tos, __u16 tot_len, __u8 ttl, __u8 protocol,
			     __u32 saddr, __u32 daddr)
{
	__u16 w0 = bpf_htons(0x4500 | tos), w4 = bpf_htons((__u16)(ttl << 8 | protocol));
	__u16 len = bpf_htons(tot_len), frag = bpf_htons(XG_IP_DF);
	__u32 c = w0 + len + frag + w4;

	c += (saddr & 0xffff) + (saddr >> 16) + (daddr & 0xffff) + (daddr >> 16);
	__builtin_memcpy(ip, &w0, 2); /* version, ihl, tos */
	ip->tot_len = len;
	ip->id = 0;
	ip->frag_off = frag;
	__builtin_memcpy(&ip->ttl, &w4, 2); /* ttl, protocol */
	ip->check = ~xg_csum_fold(c);
	ip->saddr = saddr;
	ip->daddr = daddr;
}

/* One's complement sum over an ICMP message of bounded length. */
XG_INLINE __u32 xg_csum_add(__u32 c, const __u16 *w, int words)
{
	for (int i = 0; i < words; i++)
		c += w[i];
	return c;
}

#endif
