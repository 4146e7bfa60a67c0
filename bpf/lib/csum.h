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

/* One's complement sum over an ICMP message of bounded length. */
XG_INLINE __u32 xg_csum_add(__u32 c, const __u16 *w, int words)
{
	for (int i = 0; i < words; i++)
		c += w[i];
	return c;
}

#endif
