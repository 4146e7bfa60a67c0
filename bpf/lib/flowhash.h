/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The inner flow's hash: three words multiplied by odd constants, then a
 * murmur3-style finalizer (xor-shift, multiply, xor-shift), so every input
 * bit reaches the high bits xg_pick uses and the low bits the source port
 * carries. About a third of the instructions of lookup3's final mix (BPF
 * has no rotate: each of its 14 rotations is two shifts and an or). The
 * hash only spreads flows; nothing depends on it being hard to predict. */
#ifndef XG_FLOWHASH_H
#define XG_FLOWHASH_H

#include "common.h"

XG_INLINE __u32 xg_mix3(__u32 a, __u32 b, __u32 c)
{
	__u32 h = a * 0x9e3779b1u ^ b * 0x85ebca6bu ^ c * 0xc2b2ae35u;

	h ^= h >> 16;
	h *= 0x7feb352du;
	h ^= h >> 15;
	return h;
}

#endif
