/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * SipHash-2-4 with a 128-bit output (Aumasson & Bernstein; libsodium's
 * crypto_shorthash_siphashx24, which the tests check us against): the keyed
 * MAC of the gateway tunnel. Words are read little-endian, as the reference
 * does. BPF has no rotate instruction; clang emits shift/or pairs.
 */
#ifndef XG_SIPHASH_H
#define XG_SIPHASH_H

#include "common.h"

struct xg_sip {
	__u64 v0, v1, v2, v3;
};

#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define xg_le64(x) __builtin_bswap64(x)
#else
#define xg_le64(x) (x)
#endif

XG_INLINE __u64 xg_rotl64(__u64 x, int b)
{
	return (x << b) | (x >> (64 - b));
}

XG_INLINE void xg_sipround(struct xg_sip *s)
{
	s->v0 += s->v1;
	s->v1 = xg_rotl64(s->v1, 13);
	s->v1 ^= s->v0;
	s->v0 = xg_rotl64(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = xg_rotl64(s->v3, 16);
	s->v3 ^= s->v2;
	s->v0 += s->v3;
	s->v3 = xg_rotl64(s->v3, 21);
	s->v3 ^= s->v0;
	s->v2 += s->v1;
	s->v1 = xg_rotl64(s->v1, 17);
	s->v1 ^= s->v2;
	s->v2 = xg_rotl64(s->v2, 32);
}

/*
 * key, out: 8-byte words read and written whole. Through a byte pointer,
 * clang assumes nothing of the alignment and splits a memcpy into 8 byte
 * loads or stores and the shifts to join them (a third of the instructions
 * of a 64-byte frame's tag). Unaligned packet and map-value access is
 * allowed where it is cheap (x86, arm64; tun.h reads the frame the same
 * way); a stack buffer must be 8-byte aligned (the verifier insists).
 */
XG_INLINE void xg_sip_init(struct xg_sip *s, const __u8 key[16])
{
	__u64 k0 = xg_le64(*(const __u64 *)key), k1 = xg_le64(*(const __u64 *)(key + 8));

	s->v0 = k0 ^ 0x736f6d6570736575ULL;
	s->v1 = k1 ^ 0x646f72616e646f6dULL ^ 0xee; /* 0xee: 128-bit output */
	s->v2 = k0 ^ 0x6c7967656e657261ULL;
	s->v3 = k1 ^ 0x7465646279746573ULL;
}

XG_INLINE void xg_sip_word(struct xg_sip *s, __u64 m)
{
	s->v3 ^= m;
	xg_sipround(s);
	xg_sipround(s);
	s->v0 ^= m;
}

/* last: the final 0..7 message bytes (little-endian), len: message length */
XG_INLINE void xg_sip_final(struct xg_sip *s, __u64 last, __u64 len, __u8 out[16])
{
	__u64 b = (len << 56) | last, o;

	xg_sip_word(s, b);
	s->v2 ^= 0xee;
	xg_sipround(s);
	xg_sipround(s);
	xg_sipround(s);
	xg_sipround(s);
	o = xg_le64(s->v0 ^ s->v1 ^ s->v2 ^ s->v3);
	*(__u64 *)out = o;
	s->v1 ^= 0xdd;
	xg_sipround(s);
	xg_sipround(s);
	xg_sipround(s);
	xg_sipround(s);
	o = xg_le64(s->v0 ^ s->v1 ^ s->v2 ^ s->v3);
	*(__u64 *)(out + 8) = o;
}

#endif
