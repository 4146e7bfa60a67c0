// SPDX-License-Identifier: BSD-2-Clause
/* The daemons' [API] configuration: tokens and the section's rules; see ctl_conf.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>

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
