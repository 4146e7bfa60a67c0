// SPDX-License-Identifier: BSD-2-Clause
/* The control base's tokens: digests, and a match against any of a set
 * (first, last, none, an empty set). */
#include <string.h>

#include "ctl_token.h"
#include "unit.h"

int main(void)
{
	unsigned char set[3][CTL_TOKEN_HASH_LEN], got[CTL_TOKEN_HASH_LEN];
	const char *toks[3] = {"token-aaaaaaaaaaaaaaaa", "token-bbbbbbbbbbbbbbbb",
			       "token-cccccccccccccccc"};

	for (int i = 0; i < 3; i++)
		ctl_token_digest(toks[i], strlen(toks[i]), set[i]);
	CHECK(memcmp(set[0], set[1], CTL_TOKEN_HASH_LEN), "different tokens, different digests");
	ctl_token_digest(toks[0], strlen(toks[0]), got);
	CHECK(!memcmp(got, set[0], CTL_TOKEN_HASH_LEN), "the digest is a function of the token");
	CHECK(ctl_token_match(got, set, 3), "matches the first of three");
	CHECK(ctl_token_check(toks[2], strlen(toks[2]), set, 3), "matches the last of three");
	CHECK(!ctl_token_check(toks[2], strlen(toks[2]), set, 2), "not in the first two");
	CHECK(!ctl_token_check("token-aaaaaaaaaaaaaaab", 22, set, 3), "one byte off: refused");
	CHECK(!ctl_token_check(toks[0], strlen(toks[0]) - 1, set, 3), "a prefix: refused");
	CHECK(!ctl_token_check(toks[0], strlen(toks[0]), set, 0), "an empty set matches nothing");
	return unit_summary();
}
