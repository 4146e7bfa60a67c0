// SPDX-License-Identifier: BSD-2-Clause
/* The daemons' [API] configuration: tokens and the section's rules, and
 * [Store]'s etcd keys; see ctl_conf.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ctl_conf.h"

int ctl_conf_token(struct ini *r, const struct ctl_conf_tokens *set, const char *t,
		   const char *what)
{
	size_t n = strlen(t);

	for (size_t i = 0; i < n; i++)
		if (t[i] <= ' ' || t[i] > '~')
			return ini_err(r, "%s: only printable characters without spaces", what);
	if (n < CTL_CONF_TOKEN_MIN || n > CTL_CONF_TOKEN_MAX)
		return ini_err(r,
			       "%s must be %d-%d characters (make one with `openssl rand -hex 32`)",
			       what, CTL_CONF_TOKEN_MIN, CTL_CONF_TOKEN_MAX);
	if (*set->n >= set->max)
		return ini_err(r, "%s: too many (at most %d)", what, set->max);
	ctl_token_digest(t, n, set->digests[(*set->n)++]);
	return 0;
}

int ctl_conf_token_file(struct ini *r, const struct ctl_conf_tokens *set, const char *path)
{
	char line[CTL_CONF_TOKEN_MAX + 64], what[600];
	FILE *f = fopen(path, "r");
	int ln = 0, before = *set->n, rc = 0;

	if (!f)
		return ini_err(r, "TokenFile %s: %s", path, strerror(errno));
	while (!rc && fgets(line, sizeof(line), f)) {
		char *t;

		ln++;
		snprintf(what, sizeof(what), "TokenFile %s line %d: token", path, ln);
		if (!strchr(line, '\n') && !feof(f)) {
			rc = ini_err(r, "TokenFile %s line %d: line too long", path, ln);
			break;
		}
		if ((t = strchr(line, '#')))
			*t = 0;
		line[strcspn(line, "\r\n")] = 0;
		t = ini_trim(line);
		if (*t)
			rc = ctl_conf_token(r, set, t, what);
	}
	sodium_memzero(line, sizeof(line));
	fclose(f);
	if (!rc && *set->n == before)
		return ini_err(r, "TokenFile %s holds no token", path);
	return rc;
}

int ctl_conf_api_check(struct ini *r, const struct ctl_conf_api *a)
{
	bool loopback = (ntohl(a->listen->sin_addr.s_addr) >> 24) == 127;
	char ip[INET_ADDRSTRLEN];

	if (a->cert_line && !a->key_line)
		return ini_err_at(r, a->cert_line, "TLSCert without TLSKey");
	if (a->key_line && !a->cert_line)
		return ini_err_at(r, a->key_line, "TLSKey without TLSCert");
	if (!a->n_tokens)
		return ini_err_at(r, a->section_line ? a->section_line : 1,
				  "[API] needs a Token or TokenFile: every request must carry one");
	if (!loopback && !a->cert_line)
		return ini_err_at(
		    r, a->listen_line,
		    "Listen %s is not a loopback address: it needs TLSCert and TLSKey "
		    "(tokens must not cross a network in clear)",
		    inet_ntop(AF_INET, &a->listen->sin_addr, ip, sizeof(ip)));
	return 0;
}

static const char *const etcd_key_names[CTL_CONF_ETCD_N_KEYS] = {
    "Endpoints", "Prefix", "TLSCA", "TLSCert", "TLSKey", "Timeout", "ElectionTTL"};

int ctl_conf_etcd_backend(struct ini *r, const char *v, bool *etcd)
{
	if (strcasecmp(v, "sqlite") && strcasecmp(v, "etcd"))
		return ini_err(r, "Backend '%s': expected sqlite or etcd", v);
	*etcd = !strcasecmp(v, "etcd");
	return 0;
}

void ctl_conf_etcd_init(struct ctl_conf_etcd *e)
{
	memset(e, 0, sizeof(*e));
	e->timeout_ms = 2000;
	e->election_ttl_s = 10;
}

/* http(s)://HOST:PORT[,...]: each quoted when it is not that */
static int etcd_endpoints(struct ini *r, struct ctl_conf_etcd *e, const char *v)
{
	char copy[sizeof(e->endpoints)], *save = NULL, *ep;
	int n = 0;

	if (ini_str(r, "Endpoints", v, e->endpoints, sizeof(e->endpoints)))
		return -1;
	strcpy(copy, v);
	for (ep = strtok_r(copy, ", ", &save); ep; ep = strtok_r(NULL, ", ", &save), n++) {
		const char *hp = !strncmp(ep, "http://", 7)    ? ep + 7
				 : !strncmp(ep, "https://", 8) ? ep + 8
							       : NULL;

		if (!hp || !*hp || !strchr(hp, ':'))
			return ini_err(r,
				       "Endpoints '%s': expected http://HOST:PORT or "
				       "https://HOST:PORT",
				       ep);
		if (strncmp(ep, "https://", 8))
			e->plain_endpoint = true;
	}
	if (n > 16)
		return ini_err(r, "Endpoints: %d of them, at most 16", n);
	return 0;
}

/* Timeout: seconds ("2", "2s") or milliseconds ("400ms"), 100 ms to 60 s.
 * Below a second for a lease short enough to fail over within one
 * (ElectionTTL >= 3 x Timeout): etcd answers on a LAN in milliseconds. */
static int etcd_timeout(struct ini *r, const char *v, unsigned *out)
{
	unsigned long n;
	char *end;

	errno = 0;
	n = strtoul(v, &end, 10);
	if (!errno && end != v && *v != '-' && (!*end || !strcmp(end, "s")) && n <= 60)
		n *= 1000;
	else if (errno || end == v || *v == '-' || strcmp(end, "ms"))
		n = 0;
	if (n < 100 || n > 60000)
		return ini_err(r, "Timeout '%s': expected 100ms to 60s (e.g. 2s or 500ms)", v);
	*out = (unsigned)n;
	return 0;
}

int ctl_conf_etcd_key(struct ini *r, struct ctl_conf_etcd *e, enum ctl_conf_etcd_key k, char *v)
{
	switch (k) {
	case CTL_CONF_ETCD_ENDPOINTS:
		return etcd_endpoints(r, e, v);
	case CTL_CONF_ETCD_PREFIX:
		return ini_str(r, "Prefix", v, e->prefix, sizeof(e->prefix));
	case CTL_CONF_ETCD_CA:
		return ini_readable(r, "TLSCA", v, e->ca, sizeof(e->ca));
	case CTL_CONF_ETCD_CERT:
		return ini_readable(r, "TLSCert", v, e->cert, sizeof(e->cert));
	case CTL_CONF_ETCD_KEY:
		return ini_readable(r, "TLSKey", v, e->key, sizeof(e->key));
	case CTL_CONF_ETCD_TIMEOUT:
		return etcd_timeout(r, v, &e->timeout_ms);
	case CTL_CONF_ETCD_TTL:
		return ini_seconds(r, "ElectionTTL", v, 1, 300, &e->election_ttl_s);
	case CTL_CONF_ETCD_N_KEYS:
		break;
	}
	return ini_err(r, "etcd key %d is not handled", (int)k);
}

int ctl_conf_etcd_unused(struct ini *r, const int line[CTL_CONF_ETCD_N_KEYS])
{
	for (int k = 0; k < CTL_CONF_ETCD_N_KEYS; k++)
		if (line[k])
			return ini_err_at(r, line[k],
					  "%s is for Backend = etcd (the store is sqlite)",
					  etcd_key_names[k]);
	return 0;
}

int ctl_conf_etcd_pair(struct ini *r, const int line[CTL_CONF_ETCD_N_KEYS])
{
	if (!line[CTL_CONF_ETCD_CERT] != !line[CTL_CONF_ETCD_KEY])
		return ini_err_at(r,
				  line[CTL_CONF_ETCD_CERT] ? line[CTL_CONF_ETCD_CERT]
							   : line[CTL_CONF_ETCD_KEY],
				  "TLSCert and TLSKey go together");
	return 0;
}

int ctl_conf_etcd_plain(struct ini *r, const struct ctl_conf_etcd *e,
			const int line[CTL_CONF_ETCD_N_KEYS])
{
	for (int k = CTL_CONF_ETCD_CA; k <= CTL_CONF_ETCD_KEY; k++)
		if (line[k] && e->plain_endpoint)
			return ini_err_at(r, line[k],
					  "%s is given but an endpoint is http:// (TLS needs "
					  "https:// endpoints)",
					  etcd_key_names[k]);
	return 0;
}

/* a leader must renew its lease while a request may take Timeout */
int ctl_conf_etcd_ttl(struct ini *r, const struct ctl_conf_etcd *e, int line)
{
	char t[24];

	if (e->election_ttl_s * 1000 >= 3 * e->timeout_ms)
		return 0;
	if (e->timeout_ms % 1000)
		snprintf(t, sizeof(t), "%ums", e->timeout_ms);
	else
		snprintf(t, sizeof(t), "%us", e->timeout_ms / 1000);
	return ini_err_at(r, line, "ElectionTTL %us must be at least 3 x Timeout (%s)",
			  e->election_ttl_s, t);
}
