// SPDX-License-Identifier: BSD-2-Clause
/* A pod's cgroup and process tree on the real kernel: the group made with
 * its limits, a process started in it (and in no netns of its own here),
 * its port seen listening from /proc, frozen and thawed, killed with its
 * children, the group removed; a command that does not exist is told at
 * the spawn. Whichever hierarchy this host has (v1 here, v2 where mounted),
 * the no-cgroup mode (SIGSTOP), and v2 on a hybrid host's unified
 * hierarchy when there is one. */
#include <netinet/in.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "na_cgroup.h"
#include "na_proc.h"
#include "unit.h"

extern char **environ;

static void run(enum na_cgroup_mode mode, const char *root, const char *parent, bool limits)
{
	char procs[4][PATH_MAX], err[256], log[] = "/tmp/test_na_cgroup.log";
	/* a shell that listens (python) and has a child of its own (sleep) */
	char *argv[] = {"/bin/sh", "-c",
			"sleep 600 & exec python3 -c 'import socket,time; s=socket.socket(); "
			"s.bind((\"127.0.0.1\", 0)); s.listen(); open(\"/tmp/test_na_cgroup.port\","
			"\"w\").write(str(s.getsockname()[1])); time.sleep(600)'",
			NULL};
	struct na_cg g;
	pid_t pid;
	uint64_t start;
	int port = 0;

	unlink("/tmp/test_na_cgroup.port");
	if (na_cg_init(&g, mode, root, parent, err, sizeof(err))) {
		CHECK(mode != NA_CG_NONE, "cgroup %s not here: %s", na_cgroup_mode_name(mode), err);
		return;
	}
	printf("# mode %s\n", na_cgroup_mode_name(g.mode));
	err[0] = 0;
	CHECK(!na_cg_create(&g, "slot0", limits ? 500 : 0, limits ? 64 << 20 : 0, err, sizeof(err)),
	      "create (%s)", err);
	int n = na_cg_procs_files(&g, "slot0", procs, 4);
	struct na_spawn s = {argv, environ, NULL, log, procs, n};
	CHECK(!na_proc_spawn(&s, &pid, &start, err, sizeof(err)) && start > 0, "spawn (%s)", err);
	CHECK_EXPR(na_proc_alive(pid, start));
	CHECK_EXPR(!na_proc_alive(pid, start + 1));
	for (int i = 0; i < 100 && !port; i++) {
		FILE *f = fopen("/tmp/test_na_cgroup.port", "r");

		if (f) {
			if (fscanf(f, "%d", &port) != 1)
				port = 0;
			fclose(f);
		}
		usleep(50000);
	}
	CHECK(port > 0 && na_proc_listening(pid, (uint16_t)port, IPPROTO_TCP),
	      "its port %d is seen listening", port);
	CHECK_EXPR(!na_proc_listening(pid, (uint16_t)(port ^ 1), IPPROTO_TCP));
	if (g.mode != NA_CG_NONE)
		CHECK(na_cg_count(&g, "slot0") == 2, "two processes in the group (%d)",
		      na_cg_count(&g, "slot0"));
	CHECK(!na_cg_freeze(&g, "slot0", pid, true) && na_cg_frozen(&g, "slot0", pid), "frozen");
	CHECK(!na_cg_freeze(&g, "slot0", pid, false) && !na_cg_frozen(&g, "slot0", pid), "thawed");
	CHECK(!na_cg_freeze(&g, "slot0", pid, true), "frozen again, then killed");
	na_cg_kill(&g, "slot0", pid);
	char why[32] = "";
	for (int i = 0; i < 200 && na_proc_reap(pid, why, sizeof(why)) == 0; i++)
		usleep(10000);
	CHECK(!strcmp(why, "signal 9"), "the leader died of SIGKILL (%s)", why);
	CHECK_EXPR(!na_proc_alive(pid, start));
	if (g.mode != NA_CG_NONE) {
		for (int i = 0; i < 100 && na_cg_count(&g, "slot0") > 0; i++)
			usleep(10000);
		CHECK(na_cg_count(&g, "slot0") == 0, "the child went with it");
		CHECK(!na_cg_remove(&g, "slot0") && na_cg_count(&g, "slot0") == -1, "removed");
	}
	char *bad[] = {"/nonexistent/app", NULL};
	struct na_spawn sb = {bad, environ, NULL, log, procs, 0};
	CHECK(na_proc_spawn(&sb, &pid, &start, err, sizeof(err)) == -1 &&
		  strstr(err, "/nonexistent/app") && strstr(err, "No such file"),
	      "a missing command is told at the spawn (%s)", err);
	unlink(log);
	unlink("/tmp/test_na_cgroup.port");
}

static void rm_parent(const char *parent)
{
	static const char *const c[] = {"cpu", "memory", "freezer", ""};
	char d[PATH_MAX];

	for (int i = 0; i < 4; i++) {
		snprintf(d, sizeof(d), "/sys/fs/cgroup/%s%s%s", c[i], *c[i] ? "/" : "", parent);
		rmdir(d);
	}
}

int main(void)
{
	char parent[64];

	if (getuid() != 0) {
		printf("1..0 # SKIP needs root\n");
		return 0;
	}
	snprintf(parent, sizeof(parent), "xgt%d", (int)getpid());
	run(NA_CG_AUTO, NULL, parent, true);
	run(NA_CG_NONE, NULL, parent, true);
	rm_parent(parent);
	/* a hybrid host's v2 hierarchy (no controllers of its own here): the
	 * v2 freezer, procs and kill paths, without limits */
	if (!access("/sys/fs/cgroup/unified/cgroup.freeze", F_OK) ||
	    !access("/sys/fs/cgroup/unified/cgroup.controllers", F_OK)) {
		char d[PATH_MAX];

		run(NA_CG_V2, "/sys/fs/cgroup/unified", parent, false);
		snprintf(d, sizeof(d), "/sys/fs/cgroup/unified/%s", parent);
		rmdir(d);
	}
	return unit_summary();
}
