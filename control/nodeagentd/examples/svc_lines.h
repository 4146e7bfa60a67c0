/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The pod side of the session service (proto/session-service.md), shared
 * by the example app and the wrapper: a Unix socket at
 * $FORNAX_SESSION_SOCKET that nodeagentd connects to, JSON lines both ways.
 * Header-only: each example is one program of its own.
 */
#ifndef SVC_LINES_H
#define SVC_LINES_H

#include <errno.h>
#include <stdbool.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

struct svc_conn {
	int fd;
	char buf[70000];
	size_t len;
};

static int svc_listen(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -1;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 4)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static void svc_send(struct svc_conn *c, json_t *m)
{
	char *s = json_dumps(m, JSON_COMPACT);

	json_decref(m);
	if (!s || c->fd < 0) {
		free(s);
		return;
	}
	size_t n = strlen(s);
	s[n] = '\n';
	if (write(c->fd, s, n + 1) < 0)
		fprintf(stderr, "session service: write: %s\n", strerror(errno));
	free(s);
}

/* Read what is there; each whole line to fn. -1: the daemon closed it. */
static int svc_read(struct svc_conn *c, void (*fn)(struct svc_conn *c, json_t *m, void *arg),
		    void *arg)
{
	ssize_t n = read(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len);
	char *nl;

	if (n <= 0)
		return -1;
	c->len += (size_t)n;
	while ((nl = memchr(c->buf, '\n', c->len))) {
		size_t l = (size_t)(nl - c->buf) + 1;
		json_t *m;

		*nl = 0;
		m = json_loads(c->buf, 0, NULL);
		memmove(c->buf, c->buf + l, c->len - l);
		c->len -= l;
		if (json_is_object(m))
			fn(c, m, arg);
		json_decref(m);
	}
	if (c->len == sizeof(c->buf) - 1)
		return -1; /* a line longer than any the protocol has */
	return 0;
}

/* base64 (RFC 4648) into out (NUL-ended); -1 if it is not. */
static int b64_decode(const char *in, char *out, size_t outlen, size_t *n)
{
	unsigned v = 0, bits = 0;
	size_t o = 0;

	for (; *in && *in != '='; in++) {
		const char *t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
		const char *p = strchr(t, *in);

		if (!p)
			return -1;
		v = (v << 6) | (unsigned)(p - t);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (o + 1 >= outlen)
				return -1;
			out[o++] = (char)((v >> bits) & 0xff);
		}
	}
	out[o] = 0;
	*n = o;
	return 0;
}

#endif
