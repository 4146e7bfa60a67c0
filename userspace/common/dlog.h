/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the daemons' logs and timers share: one stderr line per message,
 * and a clock that wall-clock steps do not move (timeouts, backoffs). Each
 * daemon keeps its own gwd_log/ecd_log and *_now_ms in its main.c on top
 * of these, so that unit tests can stand in for them.
 */
#ifndef XG_DLOG_H
#define XG_DLOG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* "PROG[NAME]: text\n" on stderr, the text cut to max - 1 characters
 * (max at most 1024). One fprintf, so lines of threads do not interleave. */
void dlog_v(const char *prog, const char *name, size_t max, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));
/* CLOCK_MONOTONIC in milliseconds. */
uint64_t dlog_now_ms(void);

#endif
