// SPDX-License-Identifier: BSD-2-Clause
/* The seal and receive sides of userspace/tun/aead.c on the command line,
 * for the independent decoder (tests/gw/aead_decoder.py):
 *   xgt_aead_tool ciphers
 *   xgt_aead_tool seal CIPHER KEY SALT KEYID VNI COUNTER INNER   -> frame (hex)
 *   xgt_aead_tool rx CIPHER KEY SALT KEYID [KEY SALT KEYID]      frames (hex) on stdin:
 *     one line each, "ok INNER" or "drop REASON"; then "accepted N" and
 *     "count REASON N" for every reason counted.
 * Keys, salts, inner frames and frames in hex; numbers in decimal. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aead.h"

#define XG_NAME_ENTRY(name, desc) [XG_R_##name] = #name,
static const char *const reason_names[XG_R__COUNT] = {XG_REASONS(XG_NAME_ENTRY)};

static int unhex(const char *h, uint8_t *out, size_t cap, size_t *n)
{
	size_t len = strlen(h);

	if (len % 2 || len / 2 > cap)
		return -1;
	for (size_t i = 0; i < len / 2; i++) {
		unsigned v;

		if (sscanf(h + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (uint8_t)v;
	}
	*n = len / 2;
	return 0;
}

static void puthex(const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		printf("%02x", b[i]);
}

static int key_of(const char *cipher, const char *key, const char *salt, const char *id,
		  struct xgt_key *k)
{
	size_t n, m;

	memset(k, 0, sizeof(*k));
	k->cipher = (uint8_t)xgt_cipher_by_name(cipher);
	if (!k->cipher || unhex(key, k->k, sizeof(k->k), &n) || n != XGT_KEY_LEN ||
	    unhex(salt, k->salt, sizeof(k->salt), &m) || m != XGT_SALT_LEN) {
		fprintf(stderr, "bad cipher '%s', key '%s' or salt '%s'\n", cipher, key, salt);
		return -1;
	}
	k->id = (uint8_t)atoi(id);
	k->valid = true;
	return 0;
}

static int rx_loop(struct xgt_rx *rx)
{
	static uint8_t f[4096];
	char line[10000];
	size_t n;

	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\r\n")] = 0;
		if (unhex(line, f, sizeof(f), &n)) {
			fprintf(stderr, "bad frame line '%.40s'\n", line);
			return 2;
		}
		int rc = xgt_rx_frame(rx, f, n);
		if (rc) {
			printf("drop %s\n", reason_names[rc]);
		} else {
			printf("ok ");
			puthex(f + XGT_HDR_LEN, n - XGT_HDR_LEN);
			printf("\n");
		}
		fflush(stdout);
	}
	printf("accepted %llu\n", (unsigned long long)rx->accepted);
	for (int i = 0; i < XG_R__COUNT; i++)
		if (rx->drops[i])
			printf("count %s %llu\n", reason_names[i],
			       (unsigned long long)rx->drops[i]);
	return 0;
}

int main(int argc, char **argv)
{
	if (xgt_init())
		return 1;
	if (argc == 2 && !strcmp(argv[1], "ciphers")) {
		unsigned c = xgt_ciphers_local();

		printf("%s%s\n", xgt_cipher_name(c & XGT_CHACHA20_POLY1305),
		       c & XGT_AES256_GCM ? " aes-256-gcm" : "");
		return 0;
	}
	if (argc == 9 && !strcmp(argv[1], "seal")) {
		static uint8_t f[4096];
		struct xgt_key k;
		size_t n;
		int rc;

		if (key_of(argv[2], argv[3], argv[4], argv[5], &k) ||
		    unhex(argv[8], f + XGT_HDR_LEN, sizeof(f) - XGT_HDR_LEN, &n))
			return 2;
		xgt_hdr_build(f, k.id, (uint32_t)strtoul(argv[6], NULL, 10),
			      strtoull(argv[7], NULL, 10));
		if ((rc = xgt_seal(&k, f, XGT_HDR_LEN + n))) {
			printf("refused %s\n", reason_names[rc]);
			return 3;
		}
		puthex(f, XGT_HDR_LEN + n);
		printf("\n");
		return 0;
	}
	if ((argc == 6 || argc == 9) && !strcmp(argv[1], "rx")) {
		static struct xgt_rx rx;
		struct xgt_key k;

		for (int s = 0; 5 + 3 * s < argc; s++) {
			if (key_of(argv[2], argv[3 + 3 * s], argv[4 + 3 * s], argv[5 + 3 * s], &k))
				return 2;
			xgt_rx_install(&rx, s, &k);
		}
		return rx_loop(&rx);
	}
	fprintf(stderr, "usage: see the comment at the top of xgt_aead_tool.c\n");
	return 2;
}
