/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Signals read in the lws loop: the given signals are blocked and read from
 * a signalfd adopted into the loop, so their handler runs on the loop's
 * thread like everything else (it may touch any module's state). A daemon's
 * main makes one for SIGTERM and SIGINT. (SIGCHLD is the runner's:
 * ctl_exec.h.)
 */
#ifndef CTL_SIGNAL_H
#define CTL_SIGNAL_H

struct lws_context;
struct ctl_signals;

typedef void (*ctl_signal_fn)(void *arg, int signo);

/* signos: n signals. NULL on failure (errno). */
struct ctl_signals *ctl_signals_new(struct lws_context *ctx, const int *signos, int n,
				    ctl_signal_fn fn, void *arg);
/* Before the context goes; the signals stay blocked. */
void ctl_signals_free(struct ctl_signals *s);

#endif
