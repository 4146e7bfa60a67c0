// SPDX-License-Identifier: BSD-2-Clause
/* The control base's HTTP transport over a real socket on 127.0.0.1: the
 * bearer token (missing, wrong, right; a public path without one), the body
 * limit (413 with the handler's reason), the request and body reaching the
 * handler, a streamed answer in chunks, Status bodies. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libwebsockets.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctl_http.h"
#include "unit.h"

#define TOKEN "token-0123456789abcdef"

static char seen[256];
static enum ctl_method seen_method;
static int streamed;

static bool is_public(void *arg, const char *path)
{
	(void)arg;
	return !strcmp(path, "/healthz");
}

static size_t body_limit(void *arg, enum ctl_method m, const char *path, const char **why)
{
	(void)arg;
	(void)m;
	if (!strcmp(path, "/big")) {
		*why = "a larger limit here";
		return 64;
	}
	return 16;
}

static void handle(void *arg, const struct ctl_http_req *rq, struct ctl_http_resp *rs)
{
	(void)arg;
	snprintf(seen, sizeof(seen), "%s %s ?%s [%s]%s", rq->method_name, rq->path, rq->query,
		 rq->body ? rq->body : "", rq->content_type);
	seen_method = rq->method;
	if (!strcmp(rq->path, "/stream")) {
		rs->code = 200;
		rs->stream = &streamed;
		return;
	}
	rs->code = 200;
	rs->body = strdup("{\"ok\":true}");
}

static int stream_next(void *stream, struct xg_buf *b, size_t min)
{
	int *n = stream;

	(void)min;
	if (xg_buf_put(b, "part;", 5, 0))
		return -1;
	return ++*n < 3 ? 1 : 0;
}

static void stream_free(void *stream)
{
	*(int *)stream += 100; /* freed once, after the last part */
}

static const struct ctl_http_ops ops = {is_public,   body_limit,  handle,
					stream_next, stream_free, NULL};

/* Send req, service the loop until the server closes or answers; the answer. */
static char *ask(struct lws_context *ctx, int port, const char *req)
{
	static char buf[8192];
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	size_t got = 0;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    write(fd, req, strlen(req)) != (ssize_t)strlen(req))
		return NULL;
	fcntl(fd, F_SETFL, O_NONBLOCK);
	for (int i = 0; i < 200; i++) {
		ssize_t n;

		lws_service(ctx, 10);
		n = read(fd, buf + got, sizeof(buf) - 1 - got);
		if (n > 0)
			got += (size_t)n;
		else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
			break;
		buf[got] = 0;
		/* a whole answer: a length'd body in, or the last chunk */
		if (strstr(buf, "\r\n\r\n") &&
		    (strstr(buf, "0\r\n\r\n") ||
		     (strstr(buf, "content-length: ") &&
		      strlen(strstr(buf, "\r\n\r\n") + 4) >=
			  strtoul(strstr(buf, "content-length: ") + 16, NULL, 10))))
			break;
	}
	close(fd);
	buf[got] = 0;
	return buf;
}

static int free_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t l = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(fd, (struct sockaddr *)&a, &l))
		return -1;
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

int main(void)
{
	unsigned char tokens[1][CTL_TOKEN_HASH_LEN];
	struct ctl_http_conf conf = {.name = "unitd", .tokens = tokens, .n_tokens = 1};
	struct ctl_http *hs;
	char *r;
	int port = free_port();

	ctl_token_digest(TOKEN, strlen(TOKEN), tokens[0]);
	conf.listen.sin_family = AF_INET;
	conf.listen.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	conf.listen.sin_port = htons((uint16_t)port);
	hs = ctl_http_start(&conf, &ops, NULL);
	CHECK(hs != NULL, "serving on 127.0.0.1:%d", port);
	if (!hs)
		return unit_summary();

	r = ask(ctl_http_context(hs), port, "GET /x HTTP/1.1\r\nHost: h\r\n\r\n");
	CHECK(r && strstr(r, "HTTP/1.1 401") && strstr(r, "Bearer realm=\"unitd\"") &&
		  strstr(r, "\"reason\":\"Unauthorized\"") && strstr(r, "missing bearer token"),
	      "no token: 401, Status body, the realm named");
	r = ask(
	    ctl_http_context(hs), port,
	    "GET /x HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer token-0123456789abcdeX\r\n\r\n");
	CHECK(r && strstr(r, "HTTP/1.1 401") && strstr(r, "invalid bearer token"),
	      "a wrong token: 401");
	seen[0] = 0;
	r = ask(ctl_http_context(hs), port, "GET /healthz?a=1 HTTP/1.1\r\nHost: h\r\n\r\n");
	CHECK(r && strstr(r, "HTTP/1.1 200") && !strcmp(seen, "GET /healthz ?a=1 []"),
	      "a public path without a token reaches the handler: %s", seen);
	r = ask(ctl_http_context(hs), port,
		"POST /x HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer " TOKEN
		"\r\nContent-Length: 5\r\n\r\nhello");
	CHECK(r && strstr(r, "HTTP/1.1 200") && strstr(r, "{\"ok\":true}") &&
		  !strcmp(seen, "POST /x ? [hello]"),
	      "the right token: the request and its body reach the handler: %s", seen);
	r = ask(ctl_http_context(hs), port,
		"PATCH /x HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer " TOKEN
		"\r\nContent-Type: application/merge-patch+json\r\nContent-Length: 7\r\n\r\n"
		"{\"a\":1}");
	CHECK(r && strstr(r, "HTTP/1.1 200") && seen_method == CTL_PATCH &&
		  !strcmp(seen, "PATCH /x ? [{\"a\":1}]application/merge-patch+json"),
	      "PATCH: its method, body and media type reach the handler: %s", seen);
	r = ask(ctl_http_context(hs), port,
		"POST /x HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer " TOKEN
		"\r\nContent-Length: 17\r\n\r\n01234567890123456");
	CHECK(r && strstr(r, "HTTP/1.1 413") && strstr(r, "limit of 16 bytes\""),
	      "over the body limit: 413");
	r = ask(ctl_http_context(hs), port,
		"POST /big HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer " TOKEN
		"\r\nContent-Length: 65\r\n\r\n"
		"01234567890123456789012345678901234567890123456789012345678901234");
	CHECK(r && strstr(r, "HTTP/1.1 413") &&
		  strstr(r, "limit of 64 bytes (a larger limit here)"),
	      "the handler's larger limit, named in the 413");
	r = ask(ctl_http_context(hs), port,
		"GET /stream HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer " TOKEN "\r\n\r\n");
	CHECK(r && strstr(r, "HTTP/1.1 200") && strstr(r, "chunked") && strstr(r, "part;") &&
		  strstr(r, "0\r\n\r\n") && streamed == 103,
	      "a streamed answer: three parts in chunks, the last chunk, freed once (%d)",
	      streamed);
	ctl_http_stop(hs);
	return unit_summary();
}
