// SPDX-License-Identifier: BSD-2-Clause
/* gatewayd storage in a real SQLite file: what is committed survives a
 * reopen (a restart), including after the process is killed mid-way. */
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"
#include "store.h"

static void count_mark(void *arg, const struct rt_key *k)
{
	(void)k;
	++*(int *)arg;
}

int main(void)
{
	char dir[] = "/tmp/xgt-store-XXXXXX", path[64], err[256];
	struct gw_store s;
	struct rt_table t;
	struct route r = {.key = {100, 0, 16},
			  .origin = "gw-b",
			  .version = 7,
			  .state = RT_ACTIVE,
			  .since_ms = 1234};
	uint64_t v = 0;
	pid_t pid;
	int st;

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/gw.db", dir);
	r.key.ip_be = inet_addr("10.2.0.0");

	CHECK(gw_store_open(&s, path, err, sizeof(err)) == 0, "open creates the database");
	CHECK(gw_store_get_u64(&s, "own_version", &v) == 1, "no own version yet");
	gw_store_begin(&s);
	CHECK(gw_store_put_route(&s, &r) == 0, "put route");
	r.key.ip_be = inet_addr("10.3.0.0");
	r.origin[3] = 'c';
	CHECK(gw_store_put_route(&s, &r) == 0, "put second route");
	CHECK(gw_store_put_u64(&s, "own_version", 42) == 0, "put own version");
	CHECK(gw_store_commit(&s) == 0, "commit");
	gw_store_close(&s);

	/* a child writes a committed change then an uncommitted one, and dies */
	pid = fork();
	if (pid == 0) {
		struct gw_store c;

		if (gw_store_open(&c, path, err, sizeof(err)))
			_exit(2);
		gw_store_begin(&c);
		gw_store_put_u64(&c, "own_version", 43);
		gw_store_commit(&c);
		gw_store_begin(&c);
		gw_store_put_u64(&c, "own_version", 99);
		kill(getpid(), SIGKILL);
		_exit(3);
	}
	waitpid(pid, &st, 0);
	CHECK(WIFSIGNALED(st), "writer killed mid-transaction");

	CHECK(gw_store_open(&s, path, err, sizeof(err)) == 0, "reopen after the crash");
	CHECK(gw_store_get_u64(&s, "own_version", &v) == 0 && v == 43,
	      "committed value kept, uncommitted one lost");
	rt_init(&t);
	CHECK(gw_store_load(&s, &t) == 0 && t.n == 2, "both routes loaded");
	CHECK(t.r[0].version == 7 && t.r[0].key.vni == 100 && t.r[0].key.plen == 16 &&
		  t.r[0].since_ms == 1234,
	      "route fields round-trip");
	CHECK(gw_store_del_route(&s, "gw-b", &t.r[0].key) == 0 ||
		  gw_store_del_route(&s, "gw-c", &t.r[0].key) == 0,
	      "delete route");
	rt_free(&t);
	rt_init(&t);
	gw_store_load(&s, &t);
	CHECK(t.n == 1, "one route left");
	rt_free(&t);
	{ /* what gatewayd wrote into divider instances, by instance */
		struct rt_key m1 = {100, 0x0000020a, 16}, m2 = {100, 0x0000030a, 16};
		int n = 0;

		CHECK(gw_store_put_mark(&s, "div", &m1) == 0 &&
			  gw_store_put_mark(&s, "div", &m2) == 0 &&
			  gw_store_put_mark(&s, "div", &m1) == 0,
		      "marks recorded (twice is once)");
		CHECK(gw_store_has_mark(&s, "div", &m1) == 1 &&
			  gw_store_has_mark(&s, "other", &m1) == 0,
		      "a mark is per divider instance");
		CHECK(gw_store_del_mark(&s, "div", &m1) == 0 &&
			  gw_store_has_mark(&s, "div", &m1) == 0 &&
			  gw_store_has_mark(&s, "div", &m2) == 1,
		      "one mark removed, the other kept");
		CHECK(gw_store_each_mark(&s, "div", count_mark, &n) == 0 && n == 1,
		      "one left to list");
	}
	gw_store_close(&s);
	CHECK(gw_store_open(&s, "/proc/nonexistent/x.db", err, sizeof(err)) != 0 &&
		  strstr(err, "/proc/nonexistent/x.db"),
	      "unopenable path reported with the path");

	snprintf(path, sizeof(path), "rm -rf %s", dir);
	if (system(path))
		return 1;
	return unit_summary();
}
