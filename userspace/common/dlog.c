// SPDX-License-Identifier: BSD-2-Clause
/* The daemons' log line and clock; see dlog.h. */
#include <stdio.h>
#include <time.h>

#include "dlog.h"

void dlog_v(const char *prog, const char *name, size_t max, const char *fmt, va_list ap)
{
	char buf[1024];

	vsnprintf(buf, max < sizeof(buf) ? max : sizeof(buf), fmt, ap);
	fprintf(stderr, "%s[%s]: %s\n", prog, name, buf);
}

uint64_t dlog_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}
