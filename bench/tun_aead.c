// SPDX-License-Identifier: BSD-2-Clause
/* Per-packet cost of sealing and opening a type 1 tunnel frame
 * (userspace/tun/aead.c) next to libsodium's bare AEAD call on the same
 * bytes, one core, in the same run: what the crypto workers add to the
 * cipher itself (proto/xgtun.md "Type 1: AEAD"). Both open columns include
 * restoring the sealed frame (a memcpy), so they stay comparable.
 * usage: tun_aead [ITERATIONS] */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aead.h"

/* The thread's CPU time, not the wall clock: on a shared machine the
 * time other work holds the CPU is not the cipher's, and the workers'
 * figure this is compared with (bench/cross_cluster.sh) is CPU time too. */
static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

struct run {
	unsigned cipher;
	size_t inner;
	long n;
	struct xgt_key k;
	uint8_t frame[XGT_HDR_LEN + 2048], sealed[XGT_HDR_LEN + 2048];
};

static double raw_seal(struct run *r)
{
	uint8_t n[12] = {0}, tag[16];
	double t = now_ns();

	for (long i = 0; i < r->n; i++) {
		memcpy(n + 4, &i, sizeof(i));
		xgt_aead_encrypt(r->cipher, r->k.k, n, r->frame, XGT_AD_LEN, r->frame + XGT_HDR_LEN,
				 r->inner, tag);
	}
	return (now_ns() - t) / (double)r->n;
}

static double lib_seal(struct run *r)
{
	double t = now_ns();

	for (long i = 0; i < r->n; i++) {
		xgt_hdr_build(r->frame, r->k.id, 100, (uint64_t)i + 1);
		xgt_seal(&r->k, r->frame, XGT_HDR_LEN + r->inner);
	}
	return (now_ns() - t) / (double)r->n;
}

static double raw_open(struct run *r)
{
	uint8_t n[12];
	double t;
	int bad = 0;

	memcpy(n, r->k.salt, 4);
	memcpy(n + 4, r->sealed + 8, 8);
	t = now_ns();
	for (long i = 0; i < r->n; i++) {
		memcpy(r->frame, r->sealed, XGT_HDR_LEN + r->inner);
		bad |= xgt_aead_decrypt(r->cipher, r->k.k, n, r->frame, XGT_AD_LEN,
					r->frame + XGT_HDR_LEN, r->inner, r->frame + 16);
	}
	t = (now_ns() - t) / (double)r->n;
	return bad ? -1 : t;
}

static double lib_open(struct run *r)
{
	double t = now_ns();
	int bad = 0;

	for (long i = 0; i < r->n; i++) {
		memcpy(r->frame, r->sealed, XGT_HDR_LEN + r->inner);
		bad |= xgt_open(&r->k, r->frame, XGT_HDR_LEN + r->inner);
	}
	t = (now_ns() - t) / (double)r->n;
	return bad ? -1 : t;
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = {64, 512, 1400};
	static const unsigned ciphers[] = {XGT_CHACHA20_POLY1305, XGT_AES256_GCM};
	long n = argc > 1 ? atol(argv[1]) : 200000;
	struct run *r = calloc(1, sizeof(*r));

	if (xgt_init() || !r || n <= 0) {
		fprintf(stderr, "tun_aead: %s\n",
			n <= 0 ? "ITERATIONS must be > 0" : "init failed");
		return 1;
	}
	printf("%-18s %6s %14s %14s %14s %14s\n", "cipher", "inner", "seal_sodium_ns",
	       "seal_xgtun_ns", "open_sodium_ns", "open_xgtun_ns");
	for (size_t c = 0; c < sizeof(ciphers) / sizeof(ciphers[0]); c++) {
		if (!xgt_cipher_available(ciphers[c])) {
			printf("%-18s (not available on this CPU)\n", xgt_cipher_name(ciphers[c]));
			continue;
		}
		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			double v[4];

			r->cipher = ciphers[c];
			r->inner = sizes[s];
			r->n = n;
			randombytes_buf(r->k.k, sizeof(r->k.k));
			randombytes_buf(r->k.salt, sizeof(r->k.salt));
			r->k.id = 1;
			r->k.cipher = (uint8_t)ciphers[c];
			r->k.valid = true;
			xgt_hdr_build(r->frame, 1, 100, 1);
			randombytes_buf(r->frame + XGT_HDR_LEN, r->inner);
			v[0] = raw_seal(r);
			v[1] = lib_seal(r);
			xgt_hdr_build(r->frame, 1, 100, 7);
			xgt_seal(&r->k, r->frame, XGT_HDR_LEN + r->inner);
			memcpy(r->sealed, r->frame, XGT_HDR_LEN + r->inner);
			v[2] = raw_open(r);
			v[3] = lib_open(r);
			printf("%-18s %6zu %14.0f %14.0f %14.0f %14.0f\n",
			       xgt_cipher_name(ciphers[c]), sizes[s], v[0], v[1], v[2], v[3]);
		}
	}
	free(r);
	return 0;
}
