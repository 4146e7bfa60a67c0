/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The etcd cluster tests/etcd.sh started for a unit test: its members
 * (XGATE_ETCD_MEMBERS, "pid=url pid=url ..."), a client on it, and waiting
 * until a member has taken a signal.
 */
#ifndef ETCD_TEST_H
#define ETCD_TEST_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "ctl_etcd.h"

#define ETCD_TEST_MAX 3

struct etcd_test_members {
	int n;
	pid_t pid[ETCD_TEST_MAX];
	char url[ETCD_TEST_MAX][128];
};

/* the members in XGATE_ETCD_MEMBERS' order (that of XGATE_ETCD_ENDPOINTS);
 * their number, or -1 when unset or malformed */
static inline int etcd_test_members(struct etcd_test_members *m)
{
	const char *s = getenv("XGATE_ETCD_MEMBERS");
	int pid;

	m->n = 0;
	while (s && *s && m->n < ETCD_TEST_MAX) {
		if (sscanf(s, "%d=%127s", &pid, m->url[m->n]) != 2)
			return -1;
		m->pid[m->n++] = pid;
		s = strchr(s, ' ');
		s = s ? s + 1 : NULL;
	}
	return m->n ? m->n : -1;
}

/* a client on endpoints (comma-separated), or NULL with the reason printed */
static inline struct ctl_etcd *etcd_test_client(const char *endpoints, unsigned timeout_ms)
{
	struct ctl_etcd_conf c = {.endpoints = endpoints, .timeout_ms = timeout_ms};
	char err[256];
	struct ctl_etcd *e = ctl_etcd_new(&c, err, sizeof(err));

	if (!e)
		printf("# etcd client on %s: %s\n", endpoints, err);
	return e;
}

/* Signal pid and wait (at most 10 s) until /proc says state (") Z ": gone,
 * ") T ": stopped): a signal takes effect later than kill() returns, and a
 * member in an fsync keeps its sockets a while after a SIGKILL. */
static inline void etcd_test_signal(pid_t pid, int sig, const char *state)
{
	char path[64], st[256];
	FILE *f;

	if (sig)
		kill(pid, sig);
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (int t = 0; t < 200; t++) {
		if (!(f = fopen(path, "r")))
			return;
		st[0] = 0;
		if (!fgets(st, sizeof(st), f))
			st[0] = 0;
		fclose(f);
		if (strstr(st, state))
			return;
		usleep(50000);
	}
}

#endif
