/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The control daemons' log and clock. The log is a process-wide sink that
 * main sets once (program and instance name, or a function of its own);
 * modules call ctl_log and know nothing of the daemon they run in, so a
 * unit test links them without standing in for a daemon's main.c.
 */
#ifndef CTL_LOG_H
#define CTL_LOG_H

#include <stdarg.h>
#include <stdint.h>

#define CTL_LOG_LINE_MAX 1024 /* a message is cut to this many bytes - 1 */

/* Control bytes in a message (what clients sent, quoted) are written as
 * \xNN: no line can end early or drive the terminal that shows the log. */

/* Where finished lines go (the message only, without "PROG[NAME]: "). */
typedef void (*ctl_log_sink_fn)(void *arg, const char *msg);

/* "PROG[NAME]: message" lines on stderr (the default is "xgate[-]"). The
 * strings must outlive the logging (a daemon's config, literals). */
void ctl_log_to_stderr(const char *prog, const char *name);
/* Send lines to fn instead (NULL: back to stderr). */
void ctl_log_set_sink(ctl_log_sink_fn fn, void *arg);

void ctl_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ctl_logv(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* CLOCK_MONOTONIC in milliseconds: what timeouts and backoffs are measured
 * in (wall-clock steps do not move it). */
uint64_t ctl_now_ms(void);

#endif
