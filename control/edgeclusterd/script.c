// SPDX-License-Identifier: BSD-2-Clause
/*
 * The attach state machine's install and uninstall scripts: one at a time,
 * spawned without a shell, in its own process group (a timeout stops what
 * it started too), stdin /dev/null, its output into the daemon's log; the
 * exit is polled from a timer so the loop never waits on it. The daemon's
 * fds are closed in the child and its blocked signals unblocked (a blocked
 * SIGTERM would survive into the script).
 */
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "driver.h"
#include "links.h"

extern char **environ;

static struct {
	struct ecd *d;
	pid_t pid;
	uint64_t start_ms;
	script_done_fn done;
	lws_sorted_usec_list_t poll;
} S;

bool script_running(void)
{
	return S.pid > 0;
}

static void on_poll(lws_sorted_usec_list_t *sul)
{
	char what[128];
	int st;

	if (!S.pid)
		return;
	if (waitpid(S.pid, &st, WNOHANG) == S.pid) {
		S.pid = 0;
		if (WIFEXITED(st))
			snprintf(what, sizeof(what), "script exit %d", WEXITSTATUS(st));
		else
			snprintf(what, sizeof(what), "script killed by signal %d", WTERMSIG(st));
		S.done(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), what);
		return;
	}
	if (ctl_now_ms() - S.start_ms > (uint64_t)S.d->conf.command_timeout_s * 1000)
		kill(-S.pid, SIGKILL); /* reaped on the next turn */
	lws_sul_schedule(S.d->lws, 0, sul, on_poll, 100 * LWS_US_PER_MS);
}

int script_run(struct ecd *d, char *const argv[], script_done_fn done)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	int rc;

	if (S.pid)
		return -1;
	S.d = d;
	S.done = done;
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, 2, 1); /* its output goes to our log */
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	ec_spawnattr_child(&at);
	rc = posix_spawn(&S.pid, argv[0], &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (rc) {
		char what[300];

		S.pid = 0;
		snprintf(what, sizeof(what), "%s: %s", argv[0], strerror(rc));
		done(1, what);
		return -1;
	}
	ctl_log("attach: running %s %s (pid %d)", argv[0], argv[1] ? argv[1] : "", (int)S.pid);
	S.start_ms = ctl_now_ms();
	lws_sul_schedule(d->lws, 0, &S.poll, on_poll, 100 * LWS_US_PER_MS);
	return 0;
}

void script_stop(void)
{
	lws_sul_cancel(&S.poll);
	if (S.pid) {
		kill(-S.pid, SIGTERM);
		waitpid(S.pid, NULL, 0);
		S.pid = 0;
	}
}
