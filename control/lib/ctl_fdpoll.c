// SPDX-License-Identifier: BSD-2-Clause
/* A foreign fd and a deadline in the lws loop; see ctl_fdpoll.h. The
 * deadline is a timerfd adopted next to the fd, not an lws timer: it is
 * exact to the ms and needs nothing of the context but its poll. */
#include <errno.h>
#include <fcntl.h>
#include <libwebsockets.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "ctl_fdpoll.h"

#define VHOST "ctl-fdpoll"
#define PROTO "ctl-fdpoll"

struct ctl_fdpoll {
	struct lws_context *ctx;
	struct lws_vhost *vh;
	struct lws *wsi, *twsi; /* the dup of the fd; the timerfd */
	int tfd;
	ctl_fdpoll_fn fn;
	void *arg;
};

static int cb_fd(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		 size_t len)
{
	struct ctl_fdpoll *p = lws_get_opaque_user_data(wsi);
	uint64_t n;

	if (reason == LWS_CALLBACK_RAW_RX_FILE && p) {
		if (wsi == p->twsi && read(p->tfd, &n, sizeof(n)) != (ssize_t)sizeof(n))
			return 0; /* re-armed or cancelled meanwhile */
		p->fn(p->arg);
		return 0;
	}
	if (reason == LWS_CALLBACK_RAW_CLOSE_FILE && p) {
		if (wsi == p->twsi)
			p->twsi = NULL;
		else
			p->wsi = NULL;
		return 0;
	}
	return lws_callback_http_dummy(wsi, reason, user, in, len);
}

static const struct lws_protocols protocols[] = {
    {PROTO, cb_fd, 0, 0, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

static struct lws *adopt(struct ctl_fdpoll *p, int fd)
{
	lws_adopt_desc_t ad;

	memset(&ad, 0, sizeof(ad));
	ad.vh = p->vh;
	ad.type = LWS_ADOPT_RAW_FILE_DESC;
	ad.fd.filefd = fd;
	ad.vh_prot_name = PROTO;
	ad.opaque = p;
	return lws_adopt_descriptor_vhost_via_info(&ad);
}

struct ctl_fdpoll *ctl_fdpoll_new(struct lws_context *ctx, int fd, ctl_fdpoll_fn fn, void *arg)
{
	struct lws_context_creation_info info;
	struct ctl_fdpoll *p = calloc(1, sizeof(*p));
	int mine;

	if (!p)
		return NULL;
	p->ctx = ctx;
	p->fn = fn;
	p->arg = arg;
	/* a vhost of our own that listens nowhere: the server's protocol list
	 * needs nothing of ours */
	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN_SERVER;
	info.protocols = protocols;
	info.vhost_name = VHOST;
	p->vh = lws_create_vhost(ctx, &info);
	mine = p->vh ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
	p->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (mine < 0 || p->tfd < 0 || !(p->wsi = adopt(p, mine))) {
		if (mine >= 0 && !p->wsi)
			close(mine);
		if (p->tfd >= 0)
			close(p->tfd);
		if (p->vh)
			lws_vhost_destroy(p->vh);
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	if (!(p->twsi = adopt(p, p->tfd))) {
		close(p->tfd);
		ctl_fdpoll_free(p);
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

void ctl_fdpoll_at(struct ctl_fdpoll *p, int ms)
{
	struct itimerspec t = {{0, 0}, {0, 0}}; /* setting it also clears an expiry not read */

	if (ms == 0)
		t.it_value.tv_nsec = 1; /* 0 would disarm it */
	else if (ms > 0) {
		t.it_value.tv_sec = ms / 1000;
		t.it_value.tv_nsec = (long)(ms % 1000) * 1000000;
	}
	timerfd_settime(p->tfd, 0, &t, NULL);
}

void ctl_fdpoll_free(struct ctl_fdpoll *p)
{
	if (!p)
		return;
	if (p->wsi)
		lws_set_opaque_user_data(p->wsi, NULL);
	if (p->twsi)
		lws_set_opaque_user_data(p->twsi, NULL);
	lws_vhost_destroy(p->vh); /* closes the dup and the timerfd */
	free(p);
}
