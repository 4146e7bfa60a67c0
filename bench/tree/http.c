// SPDX-License-Identifier: BSD-2-Clause
/*
 * tree_probe's HTTP/1.1 client: blocking, one keep-alive connection per
 * cluster (so that a poll costs the daemon one request, not a handshake),
 * http or https with OpenSSL. Just what edgeclusterd answers: a status line,
 * Content-Length or chunked bodies without trailers, Connection: close.
 *
 * Why not the CLI's client (userspace/xgate/edgeapi.c): that one runs a
 * libwebsockets context per request and answers one request at a time; the
 * probe holds a connection to each of up to 100 clusters and polls them in
 * a tight loop, and what it costs is CPU taken from the daemons it measures
 * on the same host. The URL parser is shared (ctl_url).
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctl_url.h"
#include "tree_probe.h"

static SSL_CTX *ssl_ctx;

static void hc_close(struct hc *c)
{
	if (c->ssl) {
		SSL_free(c->ssl);
		c->ssl = NULL;
	}
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->in_len = 0;
}

int hc_init(struct hc *c, const char *url)
{
	struct ctl_url u;
	char err[300] = "host name too long";

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	snprintf(c->url, sizeof(c->url), "%s", url);
	if (ctl_url_parse(url, CTL_SCHEMES_HTTP, &u, err, sizeof(err)) ||
	    strlen(u.host) >= sizeof(c->host)) {
		if (verbose)
			fprintf(stderr, "tree_probe: %s\n", err);
		return -1;
	}
	memcpy(c->host, u.host, strlen(u.host) + 1); /* fits: checked above */
	c->tls = u.tls;
	c->port = u.port;
	if (c->tls && !ssl_ctx) {
		ssl_ctx = SSL_CTX_new(TLS_client_method());
		if (!ssl_ctx)
			die("SSL_CTX_new failed");
		SSL_CTX_set_verify(ssl_ctx, SSL_VERIFY_PEER, NULL);
		if (ca_file ? SSL_CTX_load_verify_locations(ssl_ctx, ca_file, NULL) != 1
			    : SSL_CTX_set_default_verify_paths(ssl_ctx) != 1)
			die("cannot load the CA %s", ca_file ? ca_file : "(system)");
	}
	return 0;
}

static int hc_connect(struct hc *c)
{
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai;
	struct timeval tv = {30, 0};
	char port[8];
	int one = 1;

	snprintf(port, sizeof(port), "%d", c->port);
	if (getaddrinfo(c->host, port, &hints, &ai))
		return -1;
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0 || connect(c->fd, ai->ai_addr, ai->ai_addrlen)) {
		freeaddrinfo(ai);
		hc_close(c);
		return -1;
	}
	freeaddrinfo(ai);
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (c->tls) {
		c->ssl = SSL_new(ssl_ctx);
		if (!c->ssl || !SSL_set_tlsext_host_name(c->ssl, c->host) ||
		    !SSL_set1_host(c->ssl, c->host) || !SSL_set_fd(c->ssl, c->fd) ||
		    SSL_connect(c->ssl) != 1) {
			if (verbose)
				ERR_print_errors_fp(stderr);
			hc_close(c);
			return -1;
		}
	}
	return 0;
}

static ssize_t hc_io(struct hc *c, bool wr, void *buf, size_t n)
{
	ssize_t r;

	if (c->ssl) {
		r = wr ? SSL_write(c->ssl, buf, (int)n) : SSL_read(c->ssl, buf, (int)n);
		return r > 0 ? r : -1;
	}
	do
		r = wr ? write(c->fd, buf, n) : read(c->fd, buf, n);
	while (r < 0 && errno == EINTR);
	return r > 0 ? r : -1;
}

/* Read more into c->in; -1 on EOF or error. */
static int fill(struct hc *c)
{
	ssize_t r;

	if (c->in_cap - c->in_len < 65536) {
		c->in_cap = c->in_cap * 2 + 65536;
		c->in = xrealloc(c->in, c->in_cap + 1);
	}
	r = hc_io(c, false, c->in + c->in_len, c->in_cap - c->in_len);
	if (r <= 0)
		return -1;
	c->in_len += (size_t)r;
	c->in[c->in_len] = 0;
	return 0;
}

static void consume(struct hc *c, size_t n)
{
	memmove(c->in, c->in + n, c->in_len - n);
	c->in_len -= n;
	c->in[c->in_len] = 0;
}

static void body_add(struct hc *c, const char *p, size_t n)
{
	if (c->body_len + n + 1 > c->body_cap) {
		c->body_cap = (c->body_len + n + 1) * 2;
		c->body = xrealloc(c->body, c->body_cap);
	}
	memcpy(c->body + c->body_len, p, n);
	c->body_len += n;
	c->body[c->body_len] = 0;
}

/* The value of header NAME in the header block HDR (ends at "\r\n\r\n"). */
static const char *header(const char *hdr, const char *name, char *out, size_t len)
{
	size_t nl = strlen(name);

	for (const char *l = strstr(hdr, "\r\n"); l && l[2] != '\r'; l = strstr(l + 2, "\r\n")) {
		if (strncasecmp(l + 2, name, nl) || l[2 + nl] != ':')
			continue;
		l += 3 + nl;
		l += strspn(l, " \t");
		snprintf(out, len, "%.*s", (int)strcspn(l, "\r"), l);
		return out;
	}
	return NULL;
}

static int read_response(struct hc *c)
{
	char *eoh, v[64];
	size_t hlen, need;
	bool chunked, close_after;
	long cl = -1;

	while (!(eoh = strstr(c->in ? c->in : "", "\r\n\r\n")))
		if (fill(c))
			return -1;
	hlen = (size_t)(eoh - c->in) + 4;
	eoh[2] = 0; /* the header block, for header() */
	if (sscanf(c->in, "HTTP/1.%*d %d", &c->status) != 1)
		return -1;
	chunked = header(c->in, "transfer-encoding", v, sizeof(v)) && strcasestr(v, "chunked");
	close_after = header(c->in, "connection", v, sizeof(v)) && strcasestr(v, "close");
	if (header(c->in, "content-length", v, sizeof(v)))
		cl = strtol(v, NULL, 10);
	consume(c, hlen);
	c->body_len = 0;
	body_add(c, "", 0);
	if (chunked) {
		for (;;) {
			char *eol;
			unsigned long n;

			while (!(eol = strstr(c->in ? c->in : "", "\r\n")))
				if (fill(c))
					return -1;
			n = strtoul(c->in, NULL, 16);
			need = (size_t)(eol - c->in) + 2 + n + 2;
			while (c->in_len < need)
				if (fill(c))
					return -1;
			body_add(c, eol + 2, n);
			consume(c, need);
			if (!n)
				break; /* (no trailers from edgeclusterd) */
		}
	} else if (cl >= 0) {
		while (c->in_len < (size_t)cl)
			if (fill(c))
				return -1;
		body_add(c, c->in, (size_t)cl);
		consume(c, (size_t)cl);
	} else {
		while (!fill(c))
			;
		body_add(c, c->in ? c->in : "", c->in_len);
		close_after = true;
	}
	if (close_after)
		hc_close(c);
	return 0;
}

/* One request; the status (body in c->body), or -1. A keep-alive connection
 * the server closed meanwhile is opened again once. */
int hc_req(struct hc *c, const char *method, const char *path, const char *body)
{
	size_t blen = body ? strlen(body) : 0;
	char *req = NULL, clen[80] = "";
	int n;

	if (body)
		snprintf(clen, sizeof(clen),
			 "Content-Type: application/json\r\nContent-Length: %zu\r\n", blen);
	n = asprintf(&req,
		     "%s %s HTTP/1.1\r\nHost: %s:%d\r\nAuthorization: Bearer %s\r\n"
		     "Accept: application/json\r\n%s\r\n",
		     method, path, c->host, c->port, token, clen);
	if (n < 0)
		die("out of memory");
	for (int attempt = 0; attempt < 2; attempt++) {
		bool fresh = c->fd < 0;

		if (fresh && hc_connect(c))
			break;
		if (hc_io(c, true, req, (size_t)n) == n &&
		    (!blen || hc_io(c, true, (void *)body, blen) == (ssize_t)blen) &&
		    !read_response(c)) {
			free(req);
			c->requests++;
			return c->status;
		}
		hc_close(c);
		if (fresh)
			break;
	}
	free(req);
	return -1;
}
