// SPDX-License-Identifier: BSD-2-Clause
/* Pods' process trees; see na_proc.h. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "na_proc.h"

extern char **environ;

static void child_fail(int fd, const char *what)
{
	char buf[160];
	int n = snprintf(buf, sizeof(buf), "%s: %s", what, strerror(errno));

	if (write(fd, buf, (size_t)n) < 0)
		_exit(126);
	_exit(127);
}

/* After fork: only system calls (the parent's heap and locks are not ours). */
static void child(const struct na_spawn *s, int nsfd, int logfd, int errfd)
{
	sigset_t none;
	int null;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	if (setsid() < 0)
		child_fail(errfd, "setsid");
	for (int i = 0; i < s->n_cg; i++) {
		int fd = open(s->cg_procs[i], O_WRONLY | O_CLOEXEC);

		if (fd < 0 || write(fd, "0", 1) != 1)
			child_fail(errfd, s->cg_procs[i]);
		close(fd);
	}
	if (nsfd >= 0 && setns(nsfd, CLONE_NEWNET))
		child_fail(errfd, "entering the pod's network namespace");
	null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null < 0 || dup2(null, 0) < 0 || dup2(logfd, 1) < 0 || dup2(logfd, 2) < 0)
		child_fail(errfd, "stdio");
	environ = (char **)s->env;
	execvp(s->argv[0], s->argv);
	child_fail(errfd, s->argv[0]);
}

int na_proc_spawn(const struct na_spawn *s, pid_t *pid, uint64_t *start, char *err, size_t errlen)
{
	int nsfd = -1, logfd, ep[2];
	char buf[200];
	ssize_t n;
	pid_t p;

	logfd = open(s->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
	if (logfd < 0) {
		snprintf(err, errlen, "log %s: %s", s->log, strerror(errno));
		return -1;
	}
	if (s->netns && (nsfd = open(s->netns, O_RDONLY | O_CLOEXEC)) < 0) {
		snprintf(err, errlen, "network namespace %s: %s", s->netns, strerror(errno));
		close(logfd);
		return -1;
	}
	if (pipe2(ep, O_CLOEXEC)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		close(logfd);
		if (nsfd >= 0)
			close(nsfd);
		return -1;
	}
	p = fork();
	if (p == 0) {
		close(ep[0]);
		child(s, nsfd, logfd, ep[1]);
	}
	close(ep[1]);
	close(logfd);
	if (nsfd >= 0)
		close(nsfd);
	if (p < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(ep[0]);
		return -1;
	}
	/* the pipe closes at exec (CLOEXEC): EOF is success, bytes are why not */
	while ((n = read(ep[0], buf, sizeof(buf) - 1)) < 0 && errno == EINTR)
		;
	close(ep[0]);
	if (n > 0) {
		buf[n] = 0;
		snprintf(err, errlen, "%s", buf);
		waitpid(p, NULL, 0);
		return -1;
	}
	*pid = p;
	*start = na_proc_start(p);
	return 0;
}

static int stat_of(pid_t pid, char *state, uint64_t *start)
{
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	p = strrchr(buf, ')'); /* the command name may hold spaces and ')' */
	if (!p || p[1] != ' ')
		return -1;
	*state = p[2];
	for (int f = 0; p && f < 20; f++) /* starttime is field 22 */
		p = strchr(p + 1, ' ');
	*start = p ? strtoull(p + 1, NULL, 10) : 0;
	return 0;
}

uint64_t na_proc_start(pid_t pid)
{
	char st;
	uint64_t start;

	return pid > 0 && !stat_of(pid, &st, &start) ? start : 0;
}

bool na_proc_alive(pid_t pid, uint64_t start)
{
	char st;
	uint64_t s;

	return pid > 0 && !stat_of(pid, &st, &s) && st != 'Z' && st != 'X' && s == start;
}

int na_proc_reap(pid_t pid, char *why, size_t len)
{
	int status;
	pid_t r = waitpid(pid, &status, WNOHANG);

	if (r == 0 || (r < 0 && errno == ECHILD))
		return 0;
	if (r < 0)
		return -1;
	if (WIFEXITED(status))
		snprintf(why, len, "exit %d", WEXITSTATUS(status));
	else
		snprintf(why, len, "signal %d", WTERMSIG(status));
	return 1;
}

static bool listening_in(const char *path, uint16_t port, const char *state)
{
	char line[512];
	bool found = false;
	FILE *f = fopen(path, "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned lport;
		char st[8];

		/* "  sl  local_address rem_address   st ..." : ADDR:PORT in hex */
		char *c = strchr(line, ':');
		if (!c || !(c = strchr(c + 1, ':')))
			continue;
		if (sscanf(c + 1, "%x %*s %7s", &lport, st) == 2 && lport == port &&
		    !strcmp(st, state))
			found = true;
	}
	fclose(f);
	return found;
}

bool na_proc_listening(pid_t pid, uint16_t port, uint8_t proto)
{
	char p4[64], p6[64];
	bool tcp = proto == IPPROTO_TCP;

	snprintf(p4, sizeof(p4), "/proc/%d/net/%s", (int)pid, tcp ? "tcp" : "udp");
	snprintf(p6, sizeof(p6), "/proc/%d/net/%s6", (int)pid, tcp ? "tcp" : "udp");
	/* TCP_LISTEN is 0A; an unconnected UDP socket is TCP_CLOSE, 07 */
	return listening_in(p4, port, tcp ? "0A" : "07") ||
	       listening_in(p6, port, tcp ? "0A" : "07");
}
