// SPDX-License-Identifier: BSD-2-Clause
/* gatewayd's log line and clock, at the bottom of its modules: every
 * module logs, so this calls nothing of theirs. */
#include <stdarg.h>

#include "dlog.h"
#include "gwd.h"

uint64_t gwd_now_ms(void)
{
	return dlog_now_ms();
}

void gwd_log(const struct gwd *g, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	dlog_v("gatewayd", g->conf.name[0] ? g->conf.name : "gatewayd", 512, fmt, ap);
	va_end(ap);
}
