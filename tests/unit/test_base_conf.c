// SPDX-License-Identifier: BSD-2-Clause
/* The control base's [API] configuration (ctl_conf): tokens checked and
 * kept as digests, token files, and the section's rules, each error naming
 * the file, the line and what is wrong. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl_conf.h"
#include "unit.h"

static char err[512];

static struct ini *reader(struct ini *r)
{
	ini_init(r, "t.conf", "", "[API]", err, sizeof(err));
	r->line = 4;
	err[0] = 0;
	return r;
}

int main(void)
{
	unsigned char digests[2][CTL_TOKEN_HASH_LEN], want[CTL_TOKEN_HASH_LEN];
	int n = 0;
	const struct ctl_conf_tokens set = {digests, &n, 2};
	struct sockaddr_in lo = {.sin_family = AF_INET}, wide = lo;
	char path[] = "/tmp/xgt-conf-XXXXXX";
	struct ini r;
	FILE *f;
	int fd;

	CHECK(!ctl_conf_token(reader(&r), &set, "0123456789abcdef", "Token") && n == 1,
	      "a 16-character token is taken");
	ctl_token_digest("0123456789abcdef", 16, want);
	CHECK(!memcmp(digests[0], want, sizeof(want)), "and kept as its digest");
	CHECK(ctl_conf_token(reader(&r), &set, "short", "Token") &&
		  !strcmp(err, "t.conf:4: Token must be 16-256 characters (make one with `openssl "
			       "rand -hex 32`)"),
	      "a short one is refused, naming the key and the line");
	CHECK(ctl_conf_token(reader(&r), &set, "0123456789 abcdef", "JoinToken") &&
		  !strcmp(err, "t.conf:4: JoinToken: only printable characters without spaces"),
	      "a space is refused");
	CHECK(!ctl_conf_token(reader(&r), &set, "0123456789abcdefX", "Token") && n == 2 &&
		  ctl_conf_token(reader(&r), &set, "0123456789abcdefY", "Token") &&
		  !strcmp(err, "t.conf:4: Token: too many (at most 2)") && n == 2,
	      "the set's room is kept");

	n = 0;
	fd = mkstemp(path);
	f = fd < 0 ? NULL : fdopen(fd, "w");
	CHECK(f != NULL, "a token file");
	if (!f)
		return unit_summary();
	fputs("# the API's tokens\n\n  0123456789abcdef  # ops\n", f);
	fclose(f);
	CHECK(!ctl_conf_token_file(reader(&r), &set, path) && n == 1 &&
		  !memcmp(digests[0], want, sizeof(want)),
	      "a token file: comments and blank lines skipped, the token taken");
	f = fopen(path, "w");
	fputs("# nothing\n", f);
	fclose(f);
	CHECK(ctl_conf_token_file(reader(&r), &set, path) && strstr(err, "holds no token"),
	      "a file without a token is refused");
	f = fopen(path, "w");
	fputs("0123456789abcdef\nbad token here!!\n", f);
	fclose(f);
	CHECK(ctl_conf_token_file(reader(&r), &set, path) && strstr(err, " line 2: token: only"),
	      "a bad token names the file's line");
	unlink(path);
	CHECK(ctl_conf_token_file(reader(&r), &set, path) && strstr(err, "No such file"),
	      "a missing file says why");

	lo.sin_addr.s_addr = htonl(0x7f000001);
	wide.sin_addr.s_addr = htonl(0x0a000001);
	CHECK(!ctl_conf_api_check(reader(&r), &(struct ctl_conf_api){&lo, 2, 0, 0, 1, 1}),
	      "loopback with a token, no TLS: fine");
	CHECK(ctl_conf_api_check(reader(&r), &(struct ctl_conf_api){&lo, 2, 3, 0, 1, 1}) &&
		  !strcmp(err, "t.conf:3: TLSCert without TLSKey"),
	      "TLSCert without TLSKey, at the TLSCert line");
	CHECK(ctl_conf_api_check(reader(&r), &(struct ctl_conf_api){&lo, 2, 0, 0, 1, 0}) &&
		  !strcmp(err, "t.conf:1: [API] needs a Token or TokenFile: every request must "
			       "carry one"),
	      "no token at all, at the section's line");
	CHECK(ctl_conf_api_check(reader(&r), &(struct ctl_conf_api){&wide, 2, 0, 0, 1, 1}) &&
		  strstr(err, "t.conf:2: Listen 10.0.0.1 is not a loopback address"),
	      "off loopback without TLS, at the Listen line");
	CHECK(!ctl_conf_api_check(reader(&r), &(struct ctl_conf_api){&wide, 2, 3, 4, 1, 1}),
	      "off loopback with TLS: fine");
	return unit_summary();
}
