// SPDX-License-Identifier: BSD-2-Clause
/* The control daemons' log sink and clock; see log.h. The daemons run one
 * thread (the lws loop), so the sink is set before anything logs and not
 * locked. */
#include <stdio.h>

#include "dlog.h"
#include "ctl_log.h"

static struct {
	const char *prog, *name;
	ctl_log_sink_fn fn;
	void *arg;
} sink = {"xgate", "-", NULL, NULL};

void ctl_log_to_stderr(const char *prog, const char *name)
{
	sink.prog = prog;
	sink.name = name;
	sink.fn = NULL;
}

void ctl_log_set_sink(ctl_log_sink_fn fn, void *arg)
{
	sink.fn = fn;
	sink.arg = arg;
}

void ctl_logv(const char *fmt, va_list ap)
{
	char buf[CTL_LOG_LINE_MAX];

	if (!sink.fn) {
		dlog_v(sink.prog, sink.name, sizeof(buf), fmt, ap);
		return;
	}
	vsnprintf(buf, sizeof(buf), fmt, ap);
	sink.fn(sink.arg, buf);
}

void ctl_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ctl_logv(fmt, ap);
	va_end(ap);
}

uint64_t ctl_now_ms(void)
{
	return dlog_now_ms();
}
