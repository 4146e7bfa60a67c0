/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A pod's cgroup: its CPU quota, its memory limit and its freezer, on
 * cgroup v2 where the host mounts it at /sys/fs/cgroup, else on the v1
 * controllers (cpu, memory, freezer: each its own hierarchy), else none
 * (limits not enforced, and standby is a SIGSTOP of the pod's process
 * group). Each pod's group is PARENT/NAME in every hierarchy used.
 */
#ifndef NA_CGROUP_H
#define NA_CGROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "na_config.h"

struct na_cg {
	enum na_cgroup_mode mode; /* resolved: V1, V2 or NONE */
	char root[200];		  /* /sys/fs/cgroup */
	char parent[128];
};

/* Resolve want (AUTO: v2 if mounted, else v1 if cpu, memory and freezer
 * are, else none) and make the parent groups. 0, or -1 with err. */
int na_cg_init(struct na_cg *g, enum na_cgroup_mode want, const char *root, const char *parent,
	       char *err, size_t errlen);
/* Make the group with its limits (0: no limit). */
int na_cg_create(struct na_cg *g, const char *name, int64_t cpu_milli, int64_t mem_bytes, char *err,
		 size_t errlen);
/* The cgroup.procs files a new pod's process writes "0" to (NULL-ended,
 * at most 4): filled into paths[n][PATH_MAX]. Returns n. */
int na_cg_procs_files(const struct na_cg *g, const char *name, char paths[][PATH_MAX], int max);
/* Freeze or thaw the group (pgid: the pod's process group, for NONE). */
int na_cg_freeze(struct na_cg *g, const char *name, pid_t pgid, bool frozen);
/* Whether the group is frozen now (NONE: the leader is stopped). */
bool na_cg_frozen(const struct na_cg *g, const char *name, pid_t pgid);
/* SIGKILL every process of the group (a frozen one is thawed so that the
 * kill lands) and of the process group. */
void na_cg_kill(struct na_cg *g, const char *name, pid_t pgid);
/* How many processes the group holds (-1: no such group). */
int na_cg_count(const struct na_cg *g, const char *name);
/* Every group under the parent: its processes killed, the group removed
 * (a node that lost its store and with it what it ran). How many. */
int na_cg_sweep(struct na_cg *g);
/* Remove the group (it must be empty): 0 or -1. */
int na_cg_remove(struct na_cg *g, const char *name);

#endif
