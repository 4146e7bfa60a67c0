/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the daemons' configuration files share about their HTTP API:
 * bearer tokens (each checked, kept only as its digest), token files, and
 * the rules of an [API] section (TLSCert with TLSKey, a token at all, TLS
 * off loopback). Over common/ini.c, so that every error names the file
 * and the line, and both daemons refuse the same things in the same words.
 */
#ifndef CTL_CONF_H
#define CTL_CONF_H

#include <netinet/in.h>

#include "ctl_token.h"
#include "ini.h"

#define CTL_CONF_TOKEN_MIN 16
#define CTL_CONF_TOKEN_MAX 256

/* A set of token digests with room for max. */
struct ctl_conf_tokens {
	unsigned char (*digests)[CTL_TOKEN_HASH_LEN];
	int *n;
	int max;
};

/* Add token t (printable, no spaces, CTL_CONF_TOKEN_MIN..MAX characters) to
 * set as its digest; what names it in errors ("Token", "JoinToken"). */
int ctl_conf_token(struct ini *r, const struct ctl_conf_tokens *set, const char *t,
		   const char *what);
/* Every token of the file at path (one a line; '#' comments and blank lines
 * skipped); an error when it holds none. The lines are wiped after use. */
int ctl_conf_token_file(struct ini *r, const struct ctl_conf_tokens *set, const char *path);

/* The [API] rules, once the file is read (each line 0 when the key is
 * absent): TLSCert and TLSKey together; at least one token; a Listen off
 * loopback only with TLS (tokens must not cross a network in clear). */
struct ctl_conf_api {
	const struct sockaddr_in *listen;
	int listen_line, cert_line, key_line, section_line;
	int n_tokens;
};
int ctl_conf_api_check(struct ini *r, const struct ctl_conf_api *a);

#endif
