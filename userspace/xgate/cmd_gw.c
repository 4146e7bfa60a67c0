// SPDX-License-Identifier: BSD-2-Clause
/*
 * `xgate gw genkey|pubkey`: gateway static keys, X25519 via libsodium,
 * base64 like WireGuard's so operators can handle them the same way:
 *   xgate gw genkey | tee gw.key | xgate gw pubkey > gw.pub
 */
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

#define KEY_B64_LEN sodium_base64_ENCODED_LEN(crypto_scalarmult_BYTES, \
					      sodium_base64_VARIANT_ORIGINAL)

static int genkey(void)
{
	unsigned char sk[crypto_scalarmult_SCALARBYTES];
	char b64[KEY_B64_LEN];

	randombytes_buf(sk, sizeof(sk));
	sodium_bin2base64(b64, sizeof(b64), sk, sizeof(sk), sodium_base64_VARIANT_ORIGINAL);
	sodium_memzero(sk, sizeof(sk));
	/* Private keys go to files: make whatever the shell creates private. */
	umask(077);
	puts(b64);
	sodium_memzero(b64, sizeof(b64));
	return XG_OK;
}

static int pubkey(void)
{
	unsigned char sk[crypto_scalarmult_SCALARBYTES], pk[crypto_scalarmult_BYTES];
	char line[256], b64[KEY_B64_LEN];
	size_t len = 0;
	int rc = XG_OK;

	if (!fgets(line, sizeof(line), stdin)) {
		return xg_fail(XG_EUSAGE, "gw pubkey: expected a base64 private key on stdin");
	}
	line[strcspn(line, "\r\n")] = 0;
	if (sodium_base642bin(sk, sizeof(sk), line, strlen(line), NULL, &len, NULL,
			      sodium_base64_VARIANT_ORIGINAL) || len != sizeof(sk)) {
		rc = xg_fail(XG_EUSAGE, "gw pubkey: not a base64 32-byte private key");
	} else if (crypto_scalarmult_base(pk, sk)) {
		rc = xg_fail(XG_EUSAGE, "gw pubkey: invalid private key");
	} else {
		sodium_bin2base64(b64, sizeof(b64), pk, sizeof(pk), sodium_base64_VARIANT_ORIGINAL);
		puts(b64);
	}
	sodium_memzero(sk, sizeof(sk));
	sodium_memzero(line, sizeof(line));
	return rc;
}

int cmd_gw(struct cli *c, struct args *a)
{
	const char *verb = arg_next(a);

	(void)c;
	if (!verb)
		return usage_error("gw", "missing command: genkey or pubkey");
	if (arg_is(verb, "help"))
		return object_help("gw");
	if (a->argc)
		return usage_error("gw", "unexpected argument '%s'", a->argv[0]);
	if (sodium_init() < 0)
		return xg_fail(XG_EFAIL, "libsodium failed to initialise");
	if (arg_is(verb, "genkey"))
		return genkey();
	if (arg_is(verb, "pubkey"))
		return pubkey();
	return usage_error("gw", "unknown command '%s': genkey or pubkey", verb);
}
