// SPDX-License-Identifier: BSD-2-Clause
/* The control base's URL parser: schemes the caller accepts (and the
 * message that lists them), default ports, paths, and the refusals that
 * quote the bad value. */
#include <string.h>

#include "ctl_url.h"
#include "unit.h"

static char err[512];

static int parse(const char *s, unsigned schemes, struct ctl_url *u)
{
	err[0] = 0;
	return ctl_url_parse(s, schemes, u, err, sizeof(err));
}

static void refused(const char *s, unsigned schemes, const char *want)
{
	struct ctl_url u;

	CHECK(parse(s, schemes, &u) == -1 && strstr(err, want) && strstr(err, s),
	      "'%s' refused: %s", s, err);
}

int main(void)
{
	struct ctl_url u;

	CHECK(!parse("wss://hub.example:8443/apis/x", CTL_SCHEMES_WS, &u) && u.tls &&
		  u.scheme == CTL_WSS && !strcmp(u.host, "hub.example") && u.port == 8443 &&
		  !strcmp(u.path, "/apis/x") && u.has_path,
	      "wss with port and path");
	CHECK(!parse("ws://10.0.0.1", CTL_SCHEMES_WS, &u) && !u.tls && u.port == 80 &&
		  !strcmp(u.path, "/") && !u.has_path,
	      "ws without port: 80, path /");
	CHECK(!parse("https://localhost", CTL_SCHEMES_HTTP, &u) && u.tls && u.port == 443,
	      "https without port: 443");
	CHECK(!parse("http://127.0.0.1:7443/", CTL_SCHEMES_HTTP, &u) && u.port == 7443 &&
		  u.has_path && !strcmp(u.path, "/"),
	      "http with an explicit /");
	CHECK(!strcmp(ctl_scheme_name(CTL_WSS), "wss"), "scheme names");

	/* the accepted schemes decide, and the message offers only those */
	refused("http://hub:1", CTL_SCHEMES_WS,
		"expected wss://HOST[:PORT][/PATH] (ws:// without TLS)");
	refused("wss://api:1", CTL_SCHEMES_HTTP,
		"expected https://HOST[:PORT][/PATH] (http:// without TLS)");
	refused("ws://x", CTL_WSS, "expected wss://HOST[:PORT][/PATH]");
	CHECK(parse("ws://x", CTL_WSS, &u) && !strstr(err, " or "), "one scheme, no 'or': %s", err);
	refused("ftp://x", CTL_SCHEMES_ANY,
		"expected https://HOST[:PORT][/PATH] (http:// without TLS) or wss://");
	refused("ftp://x", CTL_HTTP | CTL_WSS, "expected http://HOST[:PORT][/PATH] or wss://");
	refused("hub:80", CTL_SCHEMES_ANY, "expected");
	refused("wss:/hub", CTL_SCHEMES_ANY, "expected");

	refused("wss://", CTL_SCHEMES_WS, "expected a host");
	refused("wss://:80/x", CTL_SCHEMES_WS, "expected a host");
	refused("wss://user@hub", CTL_SCHEMES_WS, "expected a host");
	refused("wss://[::1]:80", CTL_SCHEMES_WS, "expected a host");
	refused("wss://hub:0", CTL_SCHEMES_WS, "port must be 1-65535");
	refused("wss://hub:65536", CTL_SCHEMES_WS, "port must be 1-65535");
	refused("wss://hub:-1", CTL_SCHEMES_WS, "port must be 1-65535");
	refused("wss://hub:+80", CTL_SCHEMES_WS, "port must be 1-65535");
	refused("wss://hub:", CTL_SCHEMES_WS, "port must be 1-65535");
	refused("wss://hub:80x/", CTL_SCHEMES_WS, "port must be 1-65535");
	{
		char longp[400] = "ws://h/";

		memset(longp + 7, 'p', 300);
		longp[307] = 0;
		refused(longp, CTL_SCHEMES_WS, "path longer than 255");
	}
	{
		char longh[300] = "ws://";

		memset(longh + 5, 'h', 256);
		longh[261] = 0;
		refused(longh, CTL_SCHEMES_WS, "expected a host");
	}
	return unit_summary();
}
