/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One URL parser for the daemons, the CLI and the benchmarks:
 * SCHEME://HOST[:PORT][/PATH]. The caller says which schemes it accepts,
 * so that a WebSocket parent cannot be given as http:// and an API server
 * cannot be given as wss://. IPv6 literals ([::1]:port) and user@ are
 * refused: the daemons speak IPv4 and DNS names.
 */
#ifndef CTL_URL_H
#define CTL_URL_H

#include <stdbool.h>
#include <stddef.h>

enum ctl_scheme {
	CTL_HTTP = 1u << 0,
	CTL_HTTPS = 1u << 1,
	CTL_WS = 1u << 2,
	CTL_WSS = 1u << 3,
};
#define CTL_SCHEMES_HTTP (CTL_HTTP | CTL_HTTPS)
#define CTL_SCHEMES_WS	 (CTL_WS | CTL_WSS)
#define CTL_SCHEMES_ANY	 (CTL_SCHEMES_HTTP | CTL_SCHEMES_WS)

#define CTL_URL_HOST_MAX 255
#define CTL_URL_PATH_MAX 255

struct ctl_url {
	enum ctl_scheme scheme;
	bool tls; /* https or wss */
	char host[CTL_URL_HOST_MAX + 1];
	unsigned short port;		 /* 443 or 80 when absent */
	char path[CTL_URL_PATH_MAX + 1]; /* "/" when absent */
	bool has_path;			 /* the URL had one (even "/") */
};

/* 0, or -1 with err saying what is wrong and quoting s. schemes: the
 * CTL_* bits accepted (the message lists them). */
int ctl_url_parse(const char *s, unsigned schemes, struct ctl_url *u, char *err, size_t errlen);
const char *ctl_scheme_name(enum ctl_scheme s);

#endif
