// SPDX-License-Identifier: BSD-2-Clause
/* A deposed leader writes nothing: two processes on one etcd
 * (XGATE_ETCD_ENDPOINTS, from tests/etcd.sh) campaign for the same key
 * with 2 s leases, each with fornaxd's etcd store fenced on its election.
 * The child wins and writes applications; the parent, not the leader, is
 * refused. The child is paused (SIGSTOP) past its lease; the parent takes
 * over and writes; the child is continued (SIGCONT) and, still believing
 * it leads, tries to write: every write is refused by the fence, and etcd
 * holds none of its writes after the pause. */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl_etcd.h"
#include "etcd_test.h"
#include "store.h"
#include "unit.h"

#define KEY "/xgt-fence/leader"
#define TTL 2

static volatile sig_atomic_t continued;

static void on_cont(int sig)
{
	(void)sig;
	continued = 1;
}

static struct fx_store *open_fenced(const char *ep, const char *id, struct ctl_etcd_elect **el)
{
	const struct fx_store_etcd_conf c = {
	    .endpoints = ep, .prefix = "/xgt-fence/", .timeout_ms = 2000};
	char err[600];
	struct fx_store *s = fx_store_etcd_open(&c, err, sizeof(err));

	if (!s) {
		printf("# %s: %s\n", id, err);
		return NULL;
	}
	*el = ctl_etcd_elect_new(fx_store_etcd_client(s), KEY, id, TTL);
	fx_store_etcd_fence(s, *el);
	return s;
}

/* the child: lead, then write every 50 ms and step the election every
 * 300 ms (writes first after a SIGCONT: the stale leader's belief);
 * each write reported as "ok N", "refused N leader=B" */
static void child(const char *ep, int out)
{
	struct ctl_etcd_elect *el;
	struct fx_store *s = open_fenced(ep, "child", &el);
	bool leader = false;
	char name[32], line[64];
	uint64_t rv = 1000;

	signal(SIGCONT, on_cont);
	if (!s)
		_exit(2);
	for (int i = 0; i < 100 && !leader; i++) {
		ctl_etcd_elect_step(el, &leader);
		usleep(100000);
	}
	if (!leader)
		_exit(3);
	if (write(out, "L\n", 2) != 2)
		_exit(4);
	for (int i = 0;; i++) {
		bool believed = ctl_etcd_elect_revision(el) != 0;
		int rc;

		snprintf(name, sizeof(name), "w%d", i);
		rc = s->ops->app_put(s, "default", name, ++rv, "{}");
		snprintf(line, sizeof(line), "%s %d leader=%d%s\n", rc ? "refused" : "ok", i,
			 believed, continued ? " resumed" : "");
		if (write(out, line, strlen(line)) < 0)
			_exit(5);
		usleep(50000);
		if (i % 6 == 5 && !continued)
			ctl_etcd_elect_step(el, &leader);
	}
}

/* append to buf what the child reports within ms */
static void drain(int fd, char *buf, size_t len, int ms)
{
	struct pollfd p = {fd, POLLIN, 0};
	size_t n = strlen(buf);
	ssize_t r;

	for (int waited = 0; n + 1 < len && waited < ms; waited += 10)
		if (poll(&p, 1, 10) > 0 && (r = read(fd, buf + n, len - n - 1)) > 0) {
			n += (size_t)r;
			buf[n] = 0;
		}
}

int main(void)
{
	const char *ep = getenv("XGATE_ETCD_ENDPOINTS");
	static char before[65536], after[65536];
	struct ctl_etcd_elect *el;
	struct ctl_etcd_kvs all;
	struct fx_store *s;
	bool leader = false;
	int fds[2], refused = 0, wrote = 0, stale = 0, later = 0;
	int64_t paused_at;
	pid_t pid;
	char *l;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!ep || pipe(fds)) {
		printf("not ok - run under tests/etcd.sh (XGATE_ETCD_ENDPOINTS)\n");
		return 1;
	}
	if ((pid = fork()) == 0) {
		close(fds[0]);
		child(ep, fds[1]);
	}
	close(fds[1]);
	for (int i = 0; i < 100 && !strstr(before, "ok 1 "); i++)
		drain(fds[0], before, sizeof(before), 200);
	CHECK(!strncmp(before, "L\n", 2) && strstr(before, "ok 1 "),
	      "the child leads and writes (%.40s)", before);

	s = open_fenced(ep, "parent", &el);
	if (!s)
		return unit_summary();
	CHECK(!ctl_etcd_elect_step(el, &leader) && !leader, "the parent campaigns and loses");
	CHECK(s->ops->app_put(s, "default", "p0", 1, "{}") == -1 &&
		  strstr(s->ops->errmsg(s), "not the leader"),
	      "a write of the parent, not the leader, is refused: %s", s->ops->errmsg(s));

	etcd_test_signal(pid, SIGSTOP, ") T ");
	usleep(300000); /* a write the child had sent before the stop lands first */
	drain(fds[0], before, sizeof(before), 100);
	CHECK(!ctl_etcd_get(fx_store_etcd_client(s), "/xgt-fence/", true, false, &all),
	      "read etcd's revision at the pause");
	paused_at = all.revision;
	ctl_etcd_kvs_free(&all);
	for (int i = 0; i < 150 && !leader; i++) {
		ctl_etcd_elect_step(el, &leader);
		if (!leader)
			usleep(100000);
	}
	CHECK(leader, "the parent leads once the paused child's lease has expired");
	CHECK(!s->ops->app_put(s, "default", "p1", 2, "{}"), "and writes");
	CHECK(s->ops->app_del(s, "default", "p1", 3) == 0 &&
		  s->ops->app_del(s, "default", "p1", 4) == 1,
	      "a fenced delete counts what it deleted (then: absent)");

	kill(pid, SIGCONT);
	for (int i = 0; i < 50; i++) {
		drain(fds[0], after, sizeof(after), 200);
		for (l = after, later = 0; (l = strstr(l, "resumed")); l++)
			later++;
		if (later >= 5)
			break;
	}
	for (l = after; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		if (!strstr(l, "resumed") || strstr(l, "resumed") > strchr(l, '\n'))
			continue;
		if (!strncmp(l, "ok ", 3))
			wrote++;
		else if (!strncmp(l, "refused ", 8))
			refused++, stale += !strncmp(strchr(l + 8, ' '), " leader=1", 9);
	}
	CHECK(refused >= 5 && wrote == 0,
	      "after SIGCONT the child's writes are all refused (%d, %d ok)", refused, wrote);
	CHECK(stale >= 1,
	      "including %d made while it still believed it led (the fence, not its own view)",
	      stale);
	CHECK(
	    !ctl_etcd_get(fx_store_etcd_client(s), "/xgt-fence/apps/default/w", true, false, &all),
	    "read the child's applications");
	later = 0;
	for (size_t i = 0; i < all.n; i++)
		later += all.kv[i].mod_rev > paused_at;
	CHECK(all.n > 0 && later == 0,
	      "etcd holds %zu of the child's writes, none after the pause (%d)", all.n, later);
	ctl_etcd_kvs_free(&all);

	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(fds[0]);
	ctl_etcd_elect_free(el, true);
	s->ops->close(s);
	return unit_summary();
}
