// SPDX-License-Identifier: BSD-2-Clause
/* SCHEME://HOST[:PORT][/PATH]; see url.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_url.h"

static const struct {
	enum ctl_scheme scheme;
	const char *name;
	bool tls;
} schemes[] = {
    /* the secure one first: the message offers it first */
    {CTL_HTTPS, "https", true},
    {CTL_HTTP, "http", false},
    {CTL_WSS, "wss", true},
    {CTL_WS, "ws", false},
};
#define N_SCHEMES (sizeof(schemes) / sizeof(schemes[0]))

const char *ctl_scheme_name(enum ctl_scheme s)
{
	for (size_t i = 0; i < N_SCHEMES; i++)
		if (schemes[i].scheme == s)
			return schemes[i].name;
	return "?";
}

/* What was expected, per family of the accepted schemes: "wss://HOST[:PORT][/PATH]
 * (ws:// without TLS)", families joined by " or ". */
static void expected(char *out, size_t len, unsigned accepted)
{
	static const struct {
		unsigned secure, plain;
		const char *sname, *pname;
	} fam[] = {{CTL_HTTPS, CTL_HTTP, "https", "http"}, {CTL_WSS, CTL_WS, "wss", "ws"}};
	size_t n = 0;

	out[0] = 0;
	for (size_t i = 0; i < sizeof(fam) / sizeof(fam[0]) && n < len; i++) {
		bool sec = accepted & fam[i].secure, pl = accepted & fam[i].plain;

		if (!sec && !pl)
			continue;
		n += (size_t)snprintf(out + n, len - n, "%s%s://HOST[:PORT][/PATH]%s%s%s",
				      n ? " or " : "", sec ? fam[i].sname : fam[i].pname,
				      sec && pl ? " (" : "", sec && pl ? fam[i].pname : "",
				      sec && pl ? ":// without TLS)" : "");
	}
}

int ctl_url_parse(const char *s, unsigned accepted, struct ctl_url *u, char *err, size_t errlen)
{
	const char *h = NULL, *end, *colon, *slash;
	char want[128];
	size_t hl;
	long port;
	char *pe;

	memset(u, 0, sizeof(*u));
	for (size_t i = 0; i < N_SCHEMES; i++) {
		size_t n = strlen(schemes[i].name);

		if ((accepted & schemes[i].scheme) && !strncmp(s, schemes[i].name, n) &&
		    !strncmp(s + n, "://", 3)) {
			u->scheme = schemes[i].scheme;
			u->tls = schemes[i].tls;
			h = s + n + 3;
			break;
		}
	}
	if (!h) {
		expected(want, sizeof(want), accepted);
		snprintf(err, errlen, "'%s': expected %s", s, want);
		return -1;
	}
	slash = strchr(h, '/');
	end = slash ? slash : h + strlen(h);
	colon = memchr(h, ':', (size_t)(end - h));
	hl = (size_t)((colon ? colon : end) - h);
	if (!hl || hl >= sizeof(u->host) || memchr(h, '@', (size_t)(end - h)) || *h == '[') {
		snprintf(err, errlen, "'%s': expected a host name or address after //", s);
		return -1;
	}
	memcpy(u->host, h, hl);
	u->port = u->tls ? 443 : 80;
	if (colon) {
		errno = 0;
		port = strtol(colon + 1, &pe, 10);
		if (errno || pe != end || pe == colon + 1 || colon[1] == '-' || colon[1] == '+' ||
		    port < 1 || port > 65535) {
			snprintf(err, errlen, "'%s': port must be 1-65535", s);
			return -1;
		}
		u->port = (unsigned short)port;
	}
	if (slash && strlen(slash) >= sizeof(u->path)) {
		snprintf(err, errlen, "'%s': path longer than %d characters", s, CTL_URL_PATH_MAX);
		return -1;
	}
	u->has_path = slash != NULL;
	snprintf(u->path, sizeof(u->path), "%s", slash ? slash : "/");
	return 0;
}
