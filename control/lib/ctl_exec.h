/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The control daemons' one child-process runner, in the lws loop.
 *
 * ctl_exec runs commands without ever blocking the loop: posix_spawnp
 * (no shell: argv as given), each child the leader of its own process
 * group, stdin fed from a pipe, stdout and stderr read from non-blocking
 * pipes adopted into the loop as raw files, exits collected with
 * waitpid(WNOHANG) when a SIGCHLD arrives on a signalfd (plus a 1 s
 * backstop timer), timeouts as lws_sul timers that send SIGTERM to the
 * group and SIGKILL after a grace. At most max_running children run at
 * once; the rest wait in a FIFO queue. A daemon makes one (main owns it)
 * and hands it to every module that runs commands: SIGCHLD is read from
 * one signalfd, so a second runner would miss its children's exits.
 *
 * Completion callbacks always come from the loop (a timer or an lws
 * callback), never from inside ctl_exec_run or ctl_job_cancel, so callers
 * may start or cancel jobs from within a callback.
 */
#ifndef CTL_EXEC_H
#define CTL_EXEC_H

#include <spawn.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct lws_context;
struct ctl_exec;
struct ctl_job;

#define EC_OUT_MAX_DEFAULT (64u << 10) /* bytes kept per stream */

enum ctl_job_end {
	CTL_JOB_EXITED,	      /* code: exit status */
	CTL_JOB_SIGNALED,     /* code: the signal */
	CTL_JOB_TIMEOUT,      /* killed at its timeout; code: the timeout in ms */
	CTL_JOB_CANCELLED,    /* ctl_job_cancel, or the exec is going away */
	CTL_JOB_SPAWN_FAILED, /* code: errno (no such file, permission, ...) */
};

struct ctl_job_result {
	enum ctl_job_end end;
	int code;
	const char *out, *err; /* NUL-terminated; valid during the callback */
	size_t out_len, err_len;
	bool out_truncated, err_truncated;
	unsigned ms; /* run time (0 if it never ran) */
};

typedef void (*ctl_job_done_fn)(void *arg, const struct ctl_job_result *r);
/* A job's child was spawned: its pid (= process group) and its start time
 * in clock ticks since boot (/proc/PID/stat), which tells it apart from a
 * later process with a reused pid. */
typedef void (*ctl_job_start_fn)(void *arg, pid_t pid, unsigned long long starttime);

struct ctl_job_spec {
	char *const *argv; /* argv[0] is looked up in PATH; copied */
	char *const *env;  /* "K=V" added to (or replacing in) environ; may be NULL; copied */
	const char *cwd;   /* NULL: the daemon's */
	const void *in;	   /* stdin bytes (copied); NULL: /dev/null */
	size_t in_len;
	unsigned timeout_ms;	  /* 0: none */
	size_t out_max;		  /* per stream; 0: EC_OUT_MAX_DEFAULT */
	ctl_job_done_fn done;	  /* required */
	ctl_job_start_fn started; /* may be NULL */
	void *arg;
};

/* Blocks SIGCHLD (it is read from a signalfd), creates a listen-less vhost
 * for the pipes. grace_ms: SIGTERM -> SIGKILL delay. NULL on failure. */
struct ctl_exec *ctl_exec_new(struct lws_context *ctx, unsigned max_running, unsigned grace_ms);
/* Stops every child (SIGTERM to the group, SIGKILL after the grace; this
 * blocks for at most the grace), drops queued jobs; no callbacks. */
void ctl_exec_free(struct ctl_exec *x);
/* Queue a job; NULL only when out of memory. */
struct ctl_job *ctl_exec_run(struct ctl_exec *x, const struct ctl_job_spec *s);
/* Stop a queued or running job; its callback still comes (CTL_JOB_CANCELLED)
 * once the child is gone, so the caller knows when it is safe to go on. */
void ctl_job_cancel(struct ctl_job *j);
unsigned ctl_exec_running(const struct ctl_exec *x);
/* Spawn attributes every child of the daemon gets: no blocked signals,
 * default dispositions, its own process group (see exec.c). */
void ec_spawnattr_child(posix_spawnattr_t *at);
unsigned ctl_exec_queued(const struct ctl_exec *x);

/* /proc/PID/stat field 22; 0 if the process is gone. */
unsigned long long ec_proc_starttime(pid_t pid);

/* argv: a NULL-terminated malloc'd copy; free with ec_argv_free. */
char **ec_argv_dup(char *const *argv);
void ec_argv_free(char **argv);

#endif
