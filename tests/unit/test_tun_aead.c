// SPDX-License-Identifier: BSD-2-Clause
/* Type 1 tunnel frames (userspace/tun/aead.c): the ciphers against their
 * published vectors (RFC 8439 2.8.2, the one libsodium's aead_chacha20poly1305
 * test uses; the GCM spec's test case 16, in libsodium's aead_aes256gcm set),
 * a whole frame against a vector computed with OpenSSL (python3-cryptography,
 * tests/gw/aead_decoder.py --vector), and every receive check refused and
 * counted by reason. */
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "aead.h"
#include "unit.h"

static size_t unhex(const char *h, uint8_t *out)
{
	size_t n = strlen(h) / 2;

	for (size_t i = 0; i < n; i++) {
		char b[3] = {h[2 * i], h[2 * i + 1], 0};

		out[i] = (uint8_t)strtoul(b, NULL, 16);
	}
	return n;
}

static void kat_chacha(void)
{
	static const char *pt = "Ladies and Gentlemen of the class of '99: If I could offer you "
				"only one tip for the future, sunscreen would be it.";
	uint8_t key[32], nonce[12], ad[12], ct[128], tag[16], buf[128];
	size_t n = strlen(pt);

	for (int i = 0; i < 32; i++)
		key[i] = (uint8_t)(0x80 + i);
	unhex("070000004041424344454647", nonce);
	unhex("50515253c0c1c2c3c4c5c6c7", ad);
	unhex("d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca96712"
	      "82fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58"
	      "fab324e4fad675945585808b4831d7bc3ff4def08e4b7a9de576d26586cec64b6116",
	      ct);
	unhex("1ae10b594f09e26a7e902ecbd0600691", tag);
	memcpy(buf, pt, n);
	uint8_t t[16];
	CHECK(xgt_aead_encrypt(XGT_CHACHA20_POLY1305, key, nonce, ad, 12, buf, n, t) == 0 &&
		  !memcmp(buf, ct, n) && !memcmp(t, tag, 16),
	      "ChaCha20-Poly1305-IETF seals RFC 8439's vector");
	CHECK(xgt_aead_decrypt(XGT_CHACHA20_POLY1305, key, nonce, ad, 12, buf, n, tag) == 0 &&
		  !memcmp(buf, pt, n),
	      "and opens it");
	memcpy(buf, ct, n);
	tag[15] ^= 1;
	CHECK(xgt_aead_decrypt(XGT_CHACHA20_POLY1305, key, nonce, ad, 12, buf, n, tag) < 0 &&
		  buf[0] == 0 && buf[n - 1] == 0,
	      "a flipped tag bit is refused and nothing is left decrypted");
}

static void kat_gcm(void)
{
	uint8_t key[32], iv[12], ad[20], pt[60], ct[60], tag[16], buf[60], t[16];

	if (!xgt_cipher_available(XGT_AES256_GCM)) {
		printf("# no AES-NI/PCLMUL here: AES-256-GCM not tested\n");
		return;
	}
	unhex("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308", key);
	unhex("cafebabefacedbaddecaf888", iv);
	unhex("feedfacedeadbeeffeedfacedeadbeefabaddad2", ad);
	unhex("d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c9595680953"
	      "2fcf0e2449a6b525b16aedf5aa0de657ba637b39",
	      pt);
	unhex("522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3d"
	      "a7b08b1056828838c5f61e6393ba7a0abcc9f662",
	      ct);
	unhex("76fc6ece0f4e1768cddf8853bb2d551b", tag);
	memcpy(buf, pt, 60);
	CHECK(xgt_aead_encrypt(XGT_AES256_GCM, key, iv, ad, 20, buf, 60, t) == 0 &&
		  !memcmp(buf, ct, 60) && !memcmp(t, tag, 16),
	      "AES-256-GCM seals GCM test case 16");
	CHECK(xgt_aead_decrypt(XGT_AES256_GCM, key, iv, ad, 20, buf, 60, tag) == 0 &&
		  !memcmp(buf, pt, 60),
	      "and opens it");
	memcpy(buf, ct, 60);
	ad[0] ^= 1;
	CHECK(xgt_aead_decrypt(XGT_AES256_GCM, key, iv, ad, 20, buf, 60, tag) < 0,
	      "changed associated data is refused");
}

#define INNER_LEN 64
static void test_key(struct xgt_key *k, unsigned cipher, uint8_t id)
{
	memset(k, 0, sizeof(*k));
	for (int i = 0; i < 32; i++)
		k->k[i] = (uint8_t)i;
	unhex("a1b2c3d4", k->salt);
	k->id = id;
	k->cipher = (uint8_t)cipher;
	k->valid = true;
}

static size_t test_frame(uint8_t *f, uint8_t id, uint64_t ctr)
{
	xgt_hdr_build(f, id, 0x123456, ctr);
	unhex("0200000000010200000000020800", f + XGT_HDR_LEN);
	for (int i = 0; i < INNER_LEN - 14; i++)
		f[XGT_HDR_LEN + 14 + i] = (uint8_t)i;
	return XGT_HDR_LEN + INNER_LEN;
}

/* The frame vector: key 00..1f, salt a1b2c3d4, key id 3, VNI 0x123456,
 * counter 0x0102030405, the inner frame of test_frame. */
static void kat_frame(unsigned cipher, const char *tag_hex, const char *ct_hex)
{
	uint8_t f[256], clear[256], tag[16], ct[INNER_LEN];
	struct xgt_key k;
	size_t n;

	if (!xgt_cipher_available(cipher))
		return;
	test_key(&k, cipher, 3);
	n = test_frame(f, 3, 0x0102030405ull);
	memcpy(clear, f, n);
	unhex(tag_hex, tag);
	unhex(ct_hex, ct);
	CHECK(xgt_seal(&k, f, n) == 0, "%s: frame sealed", xgt_cipher_name(cipher));
	CHECK(!memcmp(f, clear, XG_TUN_AUTH_LEN), "%s: header's first 16 bytes unchanged",
	      xgt_cipher_name(cipher));
	CHECK(!memcmp(f + 16, tag, 16) && !memcmp(f + XGT_HDR_LEN, ct, INNER_LEN),
	      "%s: tag and ciphertext are the independent vector's", xgt_cipher_name(cipher));
	CHECK(xgt_open(&k, f, n) == 0 && !memcmp(f + XGT_HDR_LEN, clear + XGT_HDR_LEN, INNER_LEN),
	      "%s: opens to the inner frame", xgt_cipher_name(cipher));
}

static void seal_refusals(void)
{
	uint8_t f[XGT_HDR_LEN + XG_TUN_MAX_INNER + 8];
	struct xgt_key k;
	size_t n;

	test_key(&k, XGT_CHACHA20_POLY1305, 1);
	n = test_frame(f, 2, 7);
	CHECK(xgt_seal(&k, f, n) == XG_R_DROP_GW_BAD_KEY, "seal: header names another key");
	n = test_frame(f, 1, 0);
	CHECK(xgt_seal(&k, f, n) == XG_R_DROP_GW_BAD_HDR, "seal: counter 0");
	n = test_frame(f, 1, XG_GW_CTR_LIMIT);
	CHECK(xgt_seal(&k, f, n) == XG_R_DROP_GW_BAD_HDR, "seal: counter past 52 bits");
	n = test_frame(f, 1, 7);
	CHECK(xgt_seal(&k, f, XGT_HDR_LEN + 13) == XG_R_DROP_GW_TRUNC,
	      "seal: inner under 14 bytes");
	CHECK(xgt_seal(&k, f, XGT_HDR_LEN + XG_TUN_MAX_INNER + 1) == XG_R_DROP_GW_TOO_BIG,
	      "seal: inner over %d bytes", XG_TUN_MAX_INNER);
	CHECK(xgt_seal(&k, f, XGT_HDR_LEN + XG_TUN_MAX_INNER) == 0, "seal: inner of %d bytes",
	      XG_TUN_MAX_INNER);
	k.cipher = 7;
	n = test_frame(f, 1, 8);
	CHECK(xgt_seal(&k, f, n) == XG_R_DROP_GW_BAD_KEY, "seal: unknown cipher");
}

/* A receiver with keys 1 (slot 0) and 2 (slot 1); frames from a sender. */
static void receiver(unsigned cipher)
{
	const char *cn = xgt_cipher_name(cipher);
	struct xgt_rx *rx = calloc(1, sizeof(*rx));
	struct xgt_key k1, k2, other;
	uint8_t f[256], g[256];
	size_t n;
	uint64_t before;

	if (!xgt_cipher_available(cipher)) {
		free(rx);
		return;
	}
	test_key(&k1, cipher, 1);
	test_key(&k2, cipher, 2);
	k2.k[0] ^= 0x55;
	test_key(&other, cipher, 1); /* another peer's key with the same id */
	other.k[31] ^= 1;
	xgt_rx_install(rx, 0, &k1);
	xgt_rx_install(rx, 1, &k2);

	n = test_frame(f, 1, 100);
	memcpy(g, f, n);
	xgt_seal(&k1, f, n);
	CHECK(xgt_rx_frame(rx, f, n) == 0 && !memcmp(f + XGT_HDR_LEN, g + XGT_HDR_LEN, INNER_LEN),
	      "%s: a sealed frame is accepted and opened", cn);
	n = test_frame(f, 2, 100);
	xgt_seal(&k2, f, n);
	CHECK(xgt_rx_frame(rx, f, n) == 0, "%s: either key id verifies; windows per key", cn);

#define REFUSED(mutate, reason, what)                                                              \
	do {                                                                                       \
		n = test_frame(f, 1, ++ctr);                                                       \
		xgt_seal(&k1, f, n);                                                               \
		mutate;                                                                            \
		before = rx->drops[reason];                                                        \
		CHECK(xgt_rx_frame(rx, f, n) == (reason) && rx->drops[reason] == before + 1,       \
		      "%s: %s: refused and counted as " #reason, cn, what);                        \
	} while (0)
	uint64_t ctr = 200;
	REFUSED(f[XGT_HDR_LEN + 20] ^= 1, XG_R_DROP_GW_BAD_MAC, "ciphertext bit flipped");
	REFUSED(f[16] ^= 0x80, XG_R_DROP_GW_BAD_MAC, "tag bit flipped");
	REFUSED(f[31] ^= 1, XG_R_DROP_GW_BAD_MAC, "last tag byte flipped");
	REFUSED(f[5] ^= 1, XG_R_DROP_GW_BAD_MAC, "VNI changed (associated data)");
	REFUSED(f[15] ^= 1, XG_R_DROP_GW_BAD_MAC, "counter changed (associated data)");
	REFUSED(f[2] = 2, XG_R_DROP_GW_BAD_MAC, "key id moved to the other held key");
	REFUSED(f[2] = 9, XG_R_DROP_GW_BAD_KEY, "key id not held");
	REFUSED(f[1] = XG_TUN_TYPE_AUTH, XG_R_DROP_GW_BAD_HDR, "type 0 (downgrade)");
	REFUSED(f[0] = 2, XG_R_DROP_GW_BAD_HDR, "version 2");
	REFUSED(f[3] = 1, XG_R_DROP_GW_BAD_HDR, "flags set");
	REFUSED(f[7] = 1, XG_R_DROP_GW_BAD_HDR, "reserved byte set");
	REFUSED(n = 20, XG_R_DROP_GW_TRUNC, "header cut short");
	REFUSED(n = XGT_HDR_LEN + 10, XG_R_DROP_GW_TRUNC, "inner frame under 14 bytes");
	REFUSED((xgt_hdr_build(f, 1, 0x123456, ctr), xgt_seal(&other, f, n)), XG_R_DROP_GW_BAD_MAC,
		"sealed for another peer");
	REFUSED(memset(f + 8, 0, 8), XG_R_DROP_GW_BAD_HDR, "counter 0");

	/* replay: the same frame twice, in order and out of order */
	n = test_frame(f, 1, 500);
	xgt_seal(&k1, f, n);
	memcpy(g, f, n);
	CHECK(xgt_rx_frame(rx, f, n) == 0, "%s: counter 500 accepted", cn);
	before = rx->drops[XG_R_DROP_GW_REPLAY];
	CHECK(xgt_rx_frame(rx, g, n) == XG_R_DROP_GW_REPLAY &&
		  rx->drops[XG_R_DROP_GW_REPLAY] == before + 1,
	      "%s: replayed 500 refused and counted", cn);
	n = test_frame(f, 1, 400);
	xgt_seal(&k1, f, n);
	memcpy(g, f, n);
	CHECK(xgt_rx_frame(rx, f, n) == 0, "%s: 400, late but inside the window, accepted", cn);
	CHECK(xgt_rx_frame(rx, g, n) == XG_R_DROP_GW_REPLAY, "%s: and refused the second time", cn);
	n = test_frame(f, 1, 500 - XG_GW_WINDOW);
	xgt_seal(&k1, f, n);
	before = rx->drops[XG_R_DROP_GW_TOO_OLD];
	CHECK(xgt_rx_frame(rx, f, n) == XG_R_DROP_GW_TOO_OLD &&
		  rx->drops[XG_R_DROP_GW_TOO_OLD] == before + 1,
	      "%s: %d behind the top: too old, counted", cn, XG_GW_WINDOW);

	/* a removed key verifies nothing any more */
	xgt_rx_remove(rx, 0);
	n = test_frame(f, 1, 600);
	xgt_seal(&k1, f, n);
	CHECK(xgt_rx_frame(rx, f, n) == XG_R_DROP_GW_BAD_KEY, "%s: removed key: bad key id", cn);
	CHECK(rx->key[0].k[0] == 0 && rx->key[0].k[31] == 0, "%s: and its bytes are wiped", cn);
	free(rx);
}

int main(void)
{
	if (xgt_init()) {
		printf("libsodium failed to initialise\n");
		return 1;
	}
	kat_chacha();
	kat_gcm();
	kat_frame(XGT_CHACHA20_POLY1305, "c49a770500060f89622ef04f66f506c6",
		  "2704d6def4629c9f60db796b4a81b4d2610be53236f6e9350ddab0eae74968f92d6625db0db5d44"
		  "3508248a39f62e7fd019a9dce1c507761d75314e25631781a");
	kat_frame(XGT_AES256_GCM, "18e299e07bb7bdb02737c1899f6f2020",
		  "5f92282921b9cfd51069f6b0cc73541b3312ecb308590f65cab7e4fc4306ee8a9fe91ae1f043dd3"
		  "a212157c2426ed2c8fe78182991319de26fa10b3e01cc0c6b");
	seal_refusals();
	receiver(XGT_CHACHA20_POLY1305);
	receiver(XGT_AES256_GCM);
	CHECK(xgt_cipher_agree(XGT_CIPHERS_ALL, XGT_CIPHERS_ALL) == XGT_AES256_GCM,
	      "agreement: AES-GCM when both have it");
	CHECK(xgt_cipher_agree(XGT_CIPHERS_ALL, XGT_CHACHA20_POLY1305) == XGT_CHACHA20_POLY1305,
	      "agreement: ChaCha20 when one lacks AES-GCM");
	CHECK(xgt_cipher_agree(XGT_AES256_GCM, XGT_CHACHA20_POLY1305) == 0,
	      "agreement: nothing in common");
	return unit_summary();
}
