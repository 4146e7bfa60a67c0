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
#include <stdbool.h>

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

/* A [Store] section's etcd keys, the same in every daemon that keeps its
 * state in etcd. A daemon puts CTL_CONF_ETCD_TABLE(its [Store]) in its key
 * table as one run, so that its key_line[] from the run's first key is
 * indexed by enum ctl_conf_etcd_key. */
enum ctl_conf_etcd_key {
	CTL_CONF_ETCD_ENDPOINTS,
	CTL_CONF_ETCD_PREFIX,
	CTL_CONF_ETCD_CA,
	CTL_CONF_ETCD_CERT,
	CTL_CONF_ETCD_KEY,
	CTL_CONF_ETCD_TIMEOUT,
	CTL_CONF_ETCD_TTL,
	CTL_CONF_ETCD_N_KEYS
};
/* clang-format off */
#define CTL_CONF_ETCD_TABLE(sec)                                                                   \
	{(sec), "Endpoints", 0}, {(sec), "Prefix", 0}, {(sec), "TLSCA", 0},                       \
	{(sec), "TLSCert", 0}, {(sec), "TLSKey", 0}, {(sec), "Timeout", 0},                       \
	{(sec), "ElectionTTL", 0}
/* clang-format on */

struct ctl_conf_etcd {
	char endpoints[1024];		   /* Endpoints: http(s)://HOST:PORT,... */
	char prefix[256];		   /* Prefix; the daemon's default when empty */
	char ca[256], cert[256], key[256]; /* TLSCA, TLSCert, TLSKey */
	unsigned timeout_ms;		   /* Timeout, default 2 s */
	unsigned election_ttl_s;	   /* ElectionTTL, default 10 */
	bool plain_endpoint;		   /* an http:// one among the Endpoints */
};

/* Backend = sqlite or etcd. */
int ctl_conf_etcd_backend(struct ini *r, const char *v, bool *etcd);
/* The defaults, before the file is read. */
void ctl_conf_etcd_init(struct ctl_conf_etcd *e);
/* Key k of the run, with value v. */
int ctl_conf_etcd_key(struct ini *r, struct ctl_conf_etcd *e, enum ctl_conf_etcd_key k, char *v);
/* The rules once the file is read, each on its own so that a daemon keeps
 * the order of its checks; line[] is the run's key_line[]. An etcd key
 * with Backend = sqlite: */
int ctl_conf_etcd_unused(struct ini *r, const int line[CTL_CONF_ETCD_N_KEYS]);
/* TLSCert without TLSKey or the other way round: */
int ctl_conf_etcd_pair(struct ini *r, const int line[CTL_CONF_ETCD_N_KEYS]);
/* TLS keys with an http:// endpoint: */
int ctl_conf_etcd_plain(struct ini *r, const struct ctl_conf_etcd *e,
			const int line[CTL_CONF_ETCD_N_KEYS]);
/* ElectionTTL below 3 x Timeout, reported on line: */
int ctl_conf_etcd_ttl(struct ini *r, const struct ctl_conf_etcd *e, int line);

#endif
