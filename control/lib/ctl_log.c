// SPDX-License-Identifier: BSD-2-Clause
/* The control daemons' log sink and clock; see log.h. The daemons run one
 * thread (the lws loop), so the sink is set before anything logs and not
 * locked. */
#include <stdbool.h>
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

/* Log lines quote what clients sent (paths, names, messages), also before
 * any token was checked: a control byte is written as \xNN, so that no
 * request can end a line and forge the next one, or drive a terminal. */
static void escape_controls(const char *raw, char *out, size_t len)
{
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)raw; *p; p++) {
		bool control = *p < 0x20 || *p == 0x7f;

		if (o + (control ? 4 : 1) >= len)
			break;
		if (control)
			o += (size_t)snprintf(out + o, len - o, "\\x%02x", *p);
		else
			out[o++] = (char)*p;
	}
	out[o] = 0;
}

void ctl_logv(const char *fmt, va_list ap)
{
	char raw[CTL_LOG_LINE_MAX], out[CTL_LOG_LINE_MAX];

	vsnprintf(raw, sizeof(raw), fmt, ap);
	escape_controls(raw, out, sizeof(out));
	if (sink.fn)
		sink.fn(sink.arg, out);
	else
		fprintf(stderr, "%s[%s]: %s\n", sink.prog, sink.name, out);
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
