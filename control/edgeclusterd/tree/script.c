// SPDX-License-Identifier: BSD-2-Clause
/*
 * The attach state machine's install and uninstall scripts, one at a time,
 * on the daemon's command runner (ctl_exec.h): no shell, its own process
 * group (a timeout stops what it started too), stdin /dev/null, the exit
 * read from the runner's signalfd. What the script printed goes to the
 * daemon's log when it ends.
 */
#include <stdio.h>
#include <string.h>

#include "driver.h"
#include "links.h"

bool script_running(const struct attach_script *s)
{
	return s->job != NULL;
}

/* Its output into the log, a line at a time (a script says what it did). */
static void log_output(const char *what, const char *text, size_t len)
{
	while (len) {
		const char *nl = memchr(text, '\n', len);
		size_t n = nl ? (size_t)(nl - text) : len;

		if (n)
			ctl_log("attach: %s: %.*s", what, (int)n, text);
		n += nl ? 1 : 0;
		text += n;
		len -= n;
	}
}

static void on_end(void *arg, const struct ctl_job_result *r)
{
	struct attach_script *s = arg;
	char what[300];
	int status;

	s->job = NULL;
	log_output("script", r->out, r->out_len);
	log_output("script", r->err, r->err_len);
	if (r->end == CTL_JOB_CANCELLED || !s->done)
		return; /* the daemon is stopping: the phase stays, the next start runs it again */
	if (r->end == CTL_JOB_EXITED) {
		status = r->code;
		snprintf(what, sizeof(what), "script exit %d", r->code);
	} else {
		char why[256];

		status = r->end == CTL_JOB_SIGNALED ? 128 + r->code : 1;
		ctl_job_describe(r, why, sizeof(why));
		snprintf(what, sizeof(what), "script %s", why);
	}
	s->done(s->arg, status, what);
}

static void on_spawned(void *arg, pid_t pid, unsigned long long starttime)
{
	struct attach_script *s = arg;

	(void)starttime;
	ctl_log("attach: running %s (pid %d)", s->what, (int)pid);
}

int script_run(struct attach_script *s, char *const argv[], script_done_fn done, void *arg)
{
	struct ctl_job_spec js = {
	    .argv = argv,
	    .timeout_ms = s->timeout_ms,
	    .done = on_end,
	    .started = on_spawned,
	    .arg = s,
	};

	if (s->job)
		return -1;
	s->done = done;
	s->arg = arg;
	snprintf(s->what, sizeof(s->what), "%s %s", argv[0], argv[1] ? argv[1] : "");
	s->job = ctl_exec_run(s->x, &js);
	if (!s->job) {
		char what[300];

		snprintf(what, sizeof(what), "%s: out of memory", argv[0]);
		done(arg, 1, what);
		return -1;
	}
	return 0;
}

void script_stop(struct attach_script *s)
{
	s->done = NULL;
	if (s->job)
		ctl_job_cancel(s->job); /* the runner reaps it, at the latest when it is freed */
}
