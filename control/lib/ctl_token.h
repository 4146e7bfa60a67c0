/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Bearer tokens and join tokens: only their digests are kept (BLAKE2b-256),
 * and a presented token is compared with every kept digest in constant
 * time, whichever matches, so neither the timing nor the position of a
 * match tells anything about the set.
 */
#ifndef CTL_TOKEN_H
#define CTL_TOKEN_H

#include <stdbool.h>
#include <stddef.h>

#define CTL_TOKEN_HASH_LEN 32

void ctl_token_digest(const void *token, size_t len, unsigned char out[CTL_TOKEN_HASH_LEN]);
/* Does the digest got equal one of the n digests in set? */
bool ctl_token_match(const unsigned char got[CTL_TOKEN_HASH_LEN],
		     const unsigned char (*set)[CTL_TOKEN_HASH_LEN], int n);
/* ctl_token_digest of token, then ctl_token_match. */
bool ctl_token_check(const char *token, size_t len, const unsigned char (*set)[CTL_TOKEN_HASH_LEN],
		     int n);

#endif
