/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * edgeclusterd's child processes and cluster drivers (slice 3).
 *
 * ec_exec runs commands without ever blocking the lws loop: posix_spawnp
 * (no shell: argv as given), each child the leader of its own process
 * group, stdin fed from a pipe, stdout and stderr read from non-blocking
 * pipes adopted into the loop as raw files, exits collected with
 * waitpid(WNOHANG) when a SIGCHLD arrives on a signalfd (plus a 1 s
 * backstop timer), timeouts as lws_sul timers that send SIGTERM to the
 * group and SIGKILL after a grace. At most max_running children run at
 * once; the rest wait in a FIFO queue.
 *
 * Completion callbacks always come from the loop (a timer or an lws
 * callback), never from inside ec_exec_run or ec_job_cancel, so callers
 * may start or cancel jobs from within a callback.
 *
 * ec_drv: what differs between the `local` and `kubectl` drivers (the
 * kubectl argv, the per-mission work directory); mission.c sequences them.
 */
#ifndef ECD_DRIVER_H
#define ECD_DRIVER_H

#include <spawn.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "config.h"

struct lws_context;
struct ec_exec;
struct ec_job;

#define EC_OUT_MAX_DEFAULT (64u << 10) /* bytes kept per stream */

enum ec_job_end {
	EC_JOB_EXITED,	     /* code: exit status */
	EC_JOB_SIGNALED,     /* code: the signal */
	EC_JOB_TIMEOUT,	     /* killed at its timeout; code: the timeout in ms */
	EC_JOB_CANCELLED,    /* ec_job_cancel, or the exec is going away */
	EC_JOB_SPAWN_FAILED, /* code: errno (no such file, permission, ...) */
};

struct ec_job_result {
	enum ec_job_end end;
	int code;
	const char *out, *err; /* NUL-terminated; valid during the callback */
	size_t out_len, err_len;
	bool out_truncated, err_truncated;
	unsigned ms; /* run time (0 if it never ran) */
};

typedef void (*ec_job_done_fn)(void *arg, const struct ec_job_result *r);
/* A job's child was spawned: its pid (= process group) and its start time
 * in clock ticks since boot (/proc/PID/stat), which tells it apart from a
 * later process with a reused pid. */
typedef void (*ec_job_start_fn)(void *arg, pid_t pid, unsigned long long starttime);

struct ec_job_spec {
	char *const *argv; /* argv[0] is looked up in PATH; copied */
	char *const *env;  /* "K=V" added to (or replacing in) environ; may be NULL; copied */
	const char *cwd;   /* NULL: the daemon's */
	const void *in;	   /* stdin bytes (copied); NULL: /dev/null */
	size_t in_len;
	unsigned timeout_ms;	 /* 0: none */
	size_t out_max;		 /* per stream; 0: EC_OUT_MAX_DEFAULT */
	ec_job_done_fn done;	 /* required */
	ec_job_start_fn started; /* may be NULL */
	void *arg;
};

/* Blocks SIGCHLD (it is read from a signalfd), creates a listen-less vhost
 * for the pipes. grace_ms: SIGTERM -> SIGKILL delay. NULL on failure. */
struct ec_exec *ec_exec_new(struct lws_context *ctx, unsigned max_running, unsigned grace_ms);
/* Stops every child (SIGTERM to the group, SIGKILL after the grace; this
 * blocks for at most the grace), drops queued jobs; no callbacks. */
void ec_exec_free(struct ec_exec *x);
/* Queue a job; NULL only when out of memory. */
struct ec_job *ec_exec_run(struct ec_exec *x, const struct ec_job_spec *s);
/* Stop a queued or running job; its callback still comes (EC_JOB_CANCELLED)
 * once the child is gone, so the caller knows when it is safe to go on. */
void ec_job_cancel(struct ec_job *j);
unsigned ec_exec_running(const struct ec_exec *x);
/* Spawn attributes every child of the daemon gets: no blocked signals,
 * default dispositions, its own process group (see exec.c). */
void ec_spawnattr_child(posix_spawnattr_t *at);
unsigned ec_exec_queued(const struct ec_exec *x);

/* "exited 3: <last line of stderr, else stdout>", "timed out after 5s",
 * "killed by signal 9", "cannot run: No such file or directory". */
void ec_job_describe(const struct ec_job_result *r, char *buf, size_t len);
/* Command output made a state value: valid UTF-8 (anything else, NUL
 * included, becomes '?': jansson refuses invalid strings), surrounding
 * whitespace trimmed, at most max bytes, cut between characters. */
void ec_state_text(const char *in, size_t len, char *out, size_t outlen, size_t max);
/* /proc/PID/stat field 22; 0 if the process is gone. */
unsigned long long ec_proc_starttime(pid_t pid);

/* argv helpers: a NULL-terminated malloc'd copy; free with ec_argv_free. */
char **ec_argv_dup(char *const *argv);
void ec_argv_free(char **argv);

/* ---- the drivers ---- */
struct ec_drv {
	enum ec_driver kind;
	const char *kubectl[3]; /* argv prefix, NULL-ended: {Kubectl} or {"k3s", "kubectl"} */
	char kubectl_bin[EC_PATH_MAX];
	char kubeconfig[EC_PATH_MAX];
	char workroot[EC_PATH_MAX]; /* <Database minus .db>.missions */
	int rootfd;		    /* workroot, opened on the first content write; -1 */
};

void ec_drv_init(struct ec_drv *dv, const struct ec_conf *c);
void ec_drv_close(struct ec_drv *dv);
/* kubectl [--kubeconfig K] apply -f -  |  ... delete --ignore-not-found -f - */
char **ec_drv_kubectl_argv(const struct ec_drv *dv, bool apply);
/* kubectl [--kubeconfig K] get nodes [-l LABEL] -o name (nodes.c) */
char **ec_drv_kubectl_get_nodes(const struct ec_drv *dv, const char *label);
/* WORKROOT/MISSION; with create, mkdir -p (mode 0700: manifests hold secrets). */
int ec_drv_workdir(const struct ec_drv *dv, const char *mission, bool create, char *out,
		   size_t len);
/* The local driver's content file, WORKDIR/content (0600), written whole
 * (a temporary file renamed into place); its path into path. */
int ec_drv_write_content(struct ec_drv *dv, const char *mission, const char *content, char *path,
			 size_t len);
/* Remove WORKDIR here if that is quick: it is missing, or a directory with
 * nothing but the content file. 0 done; -1: anything else, for the command
 * below (the content file may be gone by then). */
int ec_drv_remove_small(const struct ec_drv *dv, const char *mission);
/* rm -rf -- WORKDIR, run as a command like the others: a big tree left by
 * a mission must not stall the loop (rm removes symlinks, never follows). */
char **ec_drv_remove_argv(const struct ec_drv *dv, const char *mission);

#endif
