// SPDX-License-Identifier: BSD-2-Clause
/* Signals read from a signalfd in the lws loop; see ctl_signal.h. */
#include <errno.h>
#include <libwebsockets.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "ctl_signal.h"

#define VHOST "ctl-signals"
#define PROTO "ctl-signal"

struct ctl_signals {
	struct lws_vhost *vh;
	struct lws *wsi;
	ctl_signal_fn fn;
	void *arg;
};

static int cb_signal(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		     size_t len)
{
	struct ctl_signals *s = lws_get_opaque_user_data(wsi);
	struct signalfd_siginfo si;

	if (reason == LWS_CALLBACK_RAW_RX_FILE && s) {
		while (read(lws_get_socket_fd(wsi), &si, sizeof(si)) == (ssize_t)sizeof(si))
			s->fn(s->arg, (int)si.ssi_signo);
		return 0;
	}
	if (reason == LWS_CALLBACK_RAW_CLOSE_FILE && s) {
		s->wsi = NULL;
		return 0;
	}
	return lws_callback_http_dummy(wsi, reason, user, in, len);
}

static const struct lws_protocols protocols[] = {
    {PROTO, cb_signal, 0, 0, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

struct ctl_signals *ctl_signals_new(struct lws_context *ctx, const int *signos, int n,
				    ctl_signal_fn fn, void *arg)
{
	struct lws_context_creation_info info;
	struct ctl_signals *s = calloc(1, sizeof(*s));
	lws_adopt_desc_t ad;
	sigset_t set;
	int fd;

	if (!s)
		return NULL;
	s->fn = fn;
	s->arg = arg;
	/* a vhost of our own that listens nowhere: the server's protocol list
	 * needs nothing of ours */
	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN_SERVER;
	info.protocols = protocols;
	info.vhost_name = VHOST;
	s->vh = lws_create_vhost(ctx, &info);
	sigemptyset(&set);
	for (int i = 0; i < n; i++)
		sigaddset(&set, signos[i]);
	sigprocmask(SIG_BLOCK, &set, NULL);
	fd = s->vh ? signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC) : -1;
	if (fd < 0) {
		free(s);
		return NULL;
	}
	memset(&ad, 0, sizeof(ad));
	ad.vh = s->vh;
	ad.type = LWS_ADOPT_RAW_FILE_DESC;
	ad.fd.filefd = fd;
	ad.vh_prot_name = PROTO;
	ad.opaque = s;
	s->wsi = lws_adopt_descriptor_vhost_via_info(&ad);
	if (!s->wsi) {
		close(fd);
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

void ctl_signals_free(struct ctl_signals *s)
{
	if (!s)
		return;
	if (s->wsi)
		lws_set_opaque_user_data(s->wsi, NULL);
	lws_vhost_destroy(s->vh); /* closes the signalfd */
	free(s);
}
