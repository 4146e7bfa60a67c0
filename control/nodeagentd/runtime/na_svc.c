// SPDX-License-Identifier: BSD-2-Clause
/* The session service's connections; see na_svc.h. */
#include <errno.h>
#include <fcntl.h>
#include <libwebsockets.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "na_svc.h"

#define VHOST	       "na-svc"
#define PROTO	       "na-svc"
#define LINE_MAX_BYTES 65536

struct na_svcs {
	struct lws_vhost *vh;
};

struct na_svc {
	struct lws *wsi;
	int fd;
	na_svc_msg_fn msg;
	na_svc_closed_fn closed;
	void *arg;
	char *in;
	size_t in_len;
	json_int_t ping_seq; /* the last ping's */
	unsigned unanswered; /* pings since the last pong */
	bool busy;	     /* handing lines over: a free waits for the end */
	bool freed;	     /* freed by the owner while busy */
};

/* Any pong shows the pod reads its socket and answers: the count starts
 * again (its seq, optional in the contract, is not needed for that). */
static bool pong(struct na_svc *c, json_t *m)
{
	const char *op = json_string_value(json_object_get(m, "op"));

	if (!op || strcmp(op, "pong"))
		return false;
	c->unanswered = 0;
	return true;
}

static void deliver(struct na_svc *c)
{
	char *nl;

	while (!c->freed && c->in_len && (nl = memchr(c->in, '\n', c->in_len))) {
		size_t n = (size_t)(nl - c->in) + 1;
		json_t *m;

		*nl = 0;
		m = json_loads(c->in, 0, NULL);
		memmove(c->in, c->in + n, c->in_len - n);
		c->in_len -= n;
		if (json_is_object(m) && !pong(c, m))
			c->msg(c->arg, m);
		json_decref(m);
	}
}

static int on_rx(struct na_svc *c)
{
	char buf[4096];
	ssize_t n;

	while ((n = read(c->fd, buf, sizeof(buf))) > 0) {
		char *p;

		if (c->in_len + (size_t)n > LINE_MAX_BYTES)
			return -1;
		p = realloc(c->in, c->in_len + (size_t)n + 1);
		if (!p)
			return -1;
		c->in = p;
		memcpy(c->in + c->in_len, buf, (size_t)n);
		c->in_len += (size_t)n;
	}
	/* the lines before an end are delivered first: "closed" then EOF */
	bool end = n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);

	c->busy = true;
	deliver(c); /* the owner may free c from a line's callback */
	c->busy = false;
	if (c->freed) {
		free(c->in);
		free(c);
		return 0;
	}
	return end ? -1 : 0;
}

static int cb_svc(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		  size_t len)
{
	struct na_svc *c = lws_get_opaque_user_data(wsi);

	if (reason == LWS_CALLBACK_RAW_RX_FILE && c)
		return on_rx(c);
	if (reason == LWS_CALLBACK_RAW_CLOSE_FILE && c) {
		c->wsi = NULL;
		c->fd = -1;
		if (c->closed)
			c->closed(c->arg);
		free(c->in);
		free(c); /* the owner was told: it drops its pointer */
		return 0;
	}
	return lws_callback_http_dummy(wsi, reason, user, in, len);
}

static const struct lws_protocols protocols[] = {
    {PROTO, cb_svc, 0, 0, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

struct na_svcs *na_svcs_new(struct lws_context *ctx)
{
	struct lws_context_creation_info info;
	struct na_svcs *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN_SERVER;
	info.protocols = protocols;
	info.vhost_name = VHOST;
	v->vh = lws_create_vhost(ctx, &info);
	if (!v->vh) {
		free(v);
		return NULL;
	}
	return v;
}

void na_svcs_free(struct na_svcs *v)
{
	free(v); /* the vhost goes with the context */
}

struct na_svc *na_svc_connect(struct na_svcs *v, const char *path, na_svc_msg_fn msg,
			      na_svc_closed_fn closed, void *arg, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct na_svc *c;
	lws_adopt_desc_t ad;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "socket path too long: %s", path);
		return NULL;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	/* connected while blocking (a local socket: at once); then non-blocking
	 * for the loop */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->fd = fd;
	c->msg = msg;
	c->closed = closed;
	c->arg = arg;
	memset(&ad, 0, sizeof(ad));
	ad.vh = v->vh;
	ad.type = LWS_ADOPT_RAW_FILE_DESC;
	ad.fd.filefd = fd;
	ad.vh_prot_name = PROTO;
	ad.opaque = c;
	c->wsi = lws_adopt_descriptor_vhost_via_info(&ad);
	if (!c->wsi) {
		snprintf(err, errlen, "cannot adopt the connection to %s", path);
		free(c);
		return NULL; /* lws closed the fd */
	}
	return c;
}

int na_svc_send(struct na_svc *c, json_t *msg)
{
	char *s = c && c->wsi ? json_dumps(msg, JSON_COMPACT) : NULL;
	size_t n, off = 0;
	int rc = 0;

	json_decref(msg);
	if (!s)
		return -1;
	n = strlen(s);
	s[n] = '\n'; /* json_dumps' NUL becomes the line's end */
	/* a line is small and the pod reads them: a full socket means it
	 * stopped reading, and the session is failed rather than the loop blocked */
	while (off < n + 1) {
		ssize_t w = write(c->fd, s + off, n + 1 - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			rc = -1;
			break;
		}
		off += (size_t)w;
	}
	free(s);
	return rc;
}

unsigned na_svc_ping(struct na_svc *c)
{
	c->ping_seq++;
	c->unanswered++;
	na_svc_send(c, json_pack("{s:s,s:I}", "op", "ping", "seq", c->ping_seq));
	return c->unanswered;
}

void na_svc_ping_reset(struct na_svc *c)
{
	if (!c)
		return;
	c->unanswered = 0;
}

void na_svc_free(struct na_svc *c)
{
	if (!c)
		return;
	if (c->wsi) {
		lws_set_opaque_user_data(c->wsi, NULL);
		lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
		c->wsi = NULL;
	}
	if (c->busy) {
		c->freed = true;
		return;
	}
	free(c->in);
	free(c);
}
