/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Bob Jenkins' lookup3 final mix over three words: cheap, good avalanche,
 * and the same hash the kernel uses, so flow spreading behaves as expected. */
#ifndef XG_JHASH_H
#define XG_JHASH_H

#include "common.h"

#define XG_JHASH_INIT 0xdeadbeef

XG_INLINE __u32 xg_rol32(__u32 w, unsigned int s)
{
	return (w << s) | (w >> (32 - s));
}

XG_INLINE __u32 xg_jhash_3words(__u32 a, __u32 b, __u32 c, __u32 initval)
{
	a += XG_JHASH_INIT + (3 << 2) + initval;
	b += XG_JHASH_INIT + (3 << 2) + initval;
	c += XG_JHASH_INIT + (3 << 2) + initval;
	c ^= b; c -= xg_rol32(b, 14);
	a ^= c; a -= xg_rol32(c, 11);
	b ^= a; b -= xg_rol32(a, 25);
	c ^= b; c -= xg_rol32(b, 16);
	a ^= c; a -= xg_rol32(c, 4);
	b ^= a; b -= xg_rol32(a, 14);
	c ^= b; c -= xg_rol32(b, 24);
	return c;
}

#endif
