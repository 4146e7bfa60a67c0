/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A pod's process tree: started in the pod's network namespace and cgroup,
 * the leader of its own session (so that nodeagentd's own process group,
 * or a kill -9 of it, never reaches it), its output appended to a log
 * file. Watched by pid and /proc start time, so that a pod adopted after a
 * restart (no longer our child) is watched the same way.
 */
#ifndef NA_PROC_H
#define NA_PROC_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct na_spawn {
	char *const *argv;	    /* argv[0] looked up in PATH */
	char *const *env;	    /* the whole environment, NULL-ended */
	const char *netns;	    /* /run/netns/NAME */
	const char *log;	    /* appended to */
	char (*cg_procs)[PATH_MAX]; /* cgroup.procs files to join */
	int n_cg;
};

/* 0 and *pid, *start; or -1 with err (the exec's own error included: a
 * command not found is told here, not by an exit later). */
int na_proc_spawn(const struct na_spawn *s, pid_t *pid, uint64_t *start, char *err, size_t errlen);
/* /proc start time of pid; 0 when it is gone. */
uint64_t na_proc_start(pid_t pid);
/* pid runs (not a zombie) and is the process started at start. */
bool na_proc_alive(pid_t pid, uint64_t start);
/* Reap pid if it is our child and has ended: 1 with a status text
 * ("exit 3", "signal 9"), 0 (still running, or not ours), -1. */
int na_proc_reap(pid_t pid, char *why, size_t len);
/* Something listens on port (proto IPPROTO_TCP or UDP) in pid's network
 * namespace (read from /proc/PID/net: no socket of ours enters it). */
bool na_proc_listening(pid_t pid, uint16_t port, uint8_t proto);

#endif
