// SPDX-License-Identifier: BSD-2-Clause
/* Token digests and their one constant-time compare; see token.h. */
#include <sodium.h>

#include "ctl_token.h"

void ctl_token_digest(const void *token, size_t len, unsigned char out[CTL_TOKEN_HASH_LEN])
{
	crypto_generichash(out, CTL_TOKEN_HASH_LEN, token, len, NULL, 0);
}

bool ctl_token_match(const unsigned char got[CTL_TOKEN_HASH_LEN],
		     const unsigned char (*set)[CTL_TOKEN_HASH_LEN], int n)
{
	int ok = 0;

	for (int i = 0; i < n; i++) /* no early exit: all of them, every time */
		ok |= !sodium_memcmp(got, set[i], CTL_TOKEN_HASH_LEN);
	return ok;
}

bool ctl_token_check(const char *token, size_t len, const unsigned char (*set)[CTL_TOKEN_HASH_LEN],
		     int n)
{
	unsigned char got[CTL_TOKEN_HASH_LEN];
	bool ok;

	ctl_token_digest(token, len, got);
	ok = ctl_token_match(got, set, n);
	sodium_memzero(got, sizeof(got));
	return ok;
}
