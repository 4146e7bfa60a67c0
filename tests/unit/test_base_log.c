// SPDX-License-Identifier: BSD-2-Clause
/* The control base's log sink (lines go where main said, cut at the line
 * limit) and its monotonic clock. */
#include <string.h>
#include <time.h>

#include "ctl_log.h"
#include "unit.h"

static char got[2048];
static int lines;

static void capture(void *arg, const char *msg)
{
	(void)arg;
	snprintf(got, sizeof(got), "%s", msg);
	lines++;
}

int main(void)
{
	char big[3000];
	uint64_t t0, t1;
	struct timespec ts = {0, 20 * 1000 * 1000};

	ctl_log_set_sink(capture, NULL);
	ctl_log("hello %s %d", "world", 7);
	CHECK(lines == 1 && !strcmp(got, "hello world 7"), "a line reaches the sink: '%s'", got);

	ctl_log("GET /a%sb%sc%sd", "\n", "\x1b[2J", "\x7f");
	CHECK(lines == 2 && !strcmp(got, "GET /a\\x0ab\\x1b[2Jc\\x7fd"),
	      "control bytes are escaped: '%s'", got);

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	ctl_log("%s", big);
	CHECK(lines == 3 && strlen(got) == CTL_LOG_LINE_MAX - 1, "a long line is cut to %d: %zu",
	      CTL_LOG_LINE_MAX - 1, strlen(got));

	ctl_log_set_sink(NULL, NULL);
	ctl_log_to_stderr("test_base_log", "unit");
	ctl_log("to stderr, not the sink");
	CHECK(lines == 3, "back on stderr, the sink is not called");

	t0 = ctl_now_ms();
	nanosleep(&ts, NULL);
	t1 = ctl_now_ms();
	CHECK(t1 >= t0 + 20, "the clock moves with time: %llu -> %llu", (unsigned long long)t0,
	      (unsigned long long)t1);
	return unit_summary();
}
