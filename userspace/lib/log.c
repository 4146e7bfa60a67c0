// SPDX-License-Identifier: BSD-2-Clause
/* Error reporting, and libbpf's log kept so a verifier rejection can show
 * its tail instead of pages of output. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "xg.h"

#define LOG_CAP (256 * 1024)
static char logbuf[LOG_CAP];
static size_t loglen;
static bool log_verbose;

void xg_err(const char *fmt, ...)
{
	va_list ap;

	fputs("xgate: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int xg_fail(int code, const char *fmt, ...)
{
	va_list ap;

	fputs("xgate: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

int xg_errno_code(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case EPERM:
	case EACCES:
		return XG_EPERM;
	case ENOENT:
	case ENODEV:
	case ENXIO:
		return XG_ENOTFOUND;
	case EEXIST:
	case EBUSY:
		return XG_EEXIST;
	default:
		return XG_EFAIL;
	}
}

static int print_cb(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	if (log_verbose) {
		va_copy(cp, ap);
		vfprintf(stderr, fmt, cp);
		va_end(cp);
	}
	if (level == LIBBPF_DEBUG)
		return 0;
	if (loglen > LOG_CAP / 2) { /* keep the newest half */
		memmove(logbuf, logbuf + loglen - LOG_CAP / 4, LOG_CAP / 4);
		loglen = LOG_CAP / 4;
	}
	n = vsnprintf(logbuf + loglen, LOG_CAP - loglen, fmt, ap);
	if (n > 0)
		loglen += (size_t)n < LOG_CAP - loglen ? (size_t)n : LOG_CAP - loglen - 1;
	return 0;
}

void xg_libbpf_capture(bool verbose)
{
	log_verbose = verbose;
	libbpf_set_print(print_cb);
}

void xg_libbpf_log_tail(int lines)
{
	size_t i = loglen;
	int seen = 0;

	while (i > 0 && seen <= lines) {
		i--;
		if (logbuf[i] == '\n')
			seen++;
	}
	if (i > 0)
		i++;
	fprintf(stderr, "--- verifier/libbpf log (last %d lines) ---\n%.*s", lines,
		(int)(loglen - i), logbuf + i);
}

bool xg_libbpf_log_has(const char *needle)
{
	return memmem(logbuf, loglen, needle, strlen(needle)) != NULL;
}
