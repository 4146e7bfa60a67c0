// SPDX-License-Identifier: BSD-2-Clause
/* The control base's signals in a real lws loop: a blocked signal raised at
 * the process reaches the handler from the loop, with its number, and a
 * signal not asked for does not. */
#include <libwebsockets.h>
#include <signal.h>
#include <string.h>

#include "ctl_signal.h"
#include "unit.h"

static int got[2], calls;

static void on_signal(void *arg, int signo)
{
	(void)arg;
	if (calls < 2)
		got[calls] = signo;
	calls++;
}

int main(void)
{
	struct lws_context_creation_info info;
	struct lws_context *ctx;
	struct ctl_signals *s;
	const int signos[] = {SIGUSR1, SIGUSR2};

	lws_set_log_level(LLL_ERR, NULL);
	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS;
	ctx = lws_create_context(&info);
	if (!ctx)
		return 1;
	s = ctl_signals_new(ctx, signos, 2, on_signal, NULL);
	CHECK(s != NULL, "a signalfd in the loop");
	if (!s)
		return unit_summary();
	signal(SIGHUP, SIG_IGN); /* not asked for: ignored by the process, never reported */
	raise(SIGHUP);
	raise(SIGUSR2); /* blocked now: it waits in the signalfd */
	CHECK(calls == 0, "nothing is called outside the loop");
	for (int i = 0; i < 50 && !calls; i++)
		lws_service(ctx, 20);
	CHECK(calls == 1 && got[0] == SIGUSR2, "SIGUSR2 reaches the handler from the loop (%d)",
	      got[0]);
	raise(SIGUSR1);
	for (int i = 0; i < 50 && calls < 2; i++)
		lws_service(ctx, 20);
	CHECK(calls == 2 && got[1] == SIGUSR1, "then SIGUSR1 (%d)", got[1]);
	ctl_signals_free(s);
	lws_context_destroy(ctx);
	return unit_summary();
}
