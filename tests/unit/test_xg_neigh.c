// SPDX-License-Identifier: BSD-2-Clause
/* libxgate's underlay neighbours (userspace/lib/neigh.c) on the real
 * kernel: in a namespace of the test's own (xgt<pid>-a) with a veth to a
 * second one (xgt<pid>-b, 10.66.0.2, and a router for 10.67.0.0/24), the
 * entries xg_neigh_keep makes are managed, carry xgate's protocol, resolve
 * to b's MAC, are the route's gateway for a routed address, turn a learned
 * entry into a managed one without losing its MAC, leave a permanent one
 * as it is; local and unroutable addresses have no neighbour; the list
 * holds only xgate's entries and release removes only those. Everything is
 * removed at exit, also after a failed check. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/neighbour.h>

#include "unit.h"
#include "xg.h"

static char ns_a[32], ns_b[32];

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static void cleanup(void)
{
	sh("ip netns del %s 2>/dev/null; ip netns del %s 2>/dev/null", ns_a, ns_b);
}

static __u32 ip(const char *s)
{
	struct in_addr a;

	inet_pton(AF_INET, s, &a);
	return a.s_addr;
}

/* b's MAC as the kernel has it */
static void mac_of_b(__u8 mac[6])
{
	char cmd[128];
	unsigned int m[6] = {0};
	FILE *f;

	snprintf(cmd, sizeof(cmd), "ip netns exec %s cat /sys/class/net/nb/address", ns_b);
	f = popen(cmd, "r");
	if (f) {
		if (fscanf(f, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) != 6)
			memset(m, 0, sizeof(m));
		pclose(f);
	}
	for (int i = 0; i < 6; i++)
		mac[i] = (__u8)m[i];
}

/* the entry for ip's next hop once it is resolved (2 s at most) */
static int resolved(struct xg_neigh *n, const char *addr, struct xg_neigh_entry *e)
{
	int rc = -1;

	for (int i = 0; i < 100; i++) {
		rc = xg_neigh_get(n, ip(addr), e);
		if (!rc && (e->state & (NUD_REACHABLE | NUD_STALE | NUD_PERMANENT)))
			return 0;
		usleep(20000);
	}
	return rc ? rc : -EAGAIN;
}

int main(void)
{
	struct xg_neigh_entry e, list[8];
	struct xg_neigh *n;
	__u8 bmac[6];
	char path[64];
	int fd, rc, cnt;

	if (getuid()) {
		printf("1..0 # SKIP needs root\n");
		return 0;
	}
	snprintf(ns_a, sizeof(ns_a), "xgt%d-a", (int)getpid());
	snprintf(ns_b, sizeof(ns_b), "xgt%d-b", (int)getpid());
	atexit(cleanup);
	if (sh("ip netns add %s && ip netns add %s && "
	       "ip -n %s link add na type veth peer name nb netns %s && "
	       "ip -n %s link set na up && ip -n %s link set nb up && "
	       "ip -n %s addr add 10.66.0.1/24 dev na && ip -n %s addr add 10.66.0.2/24 dev nb && "
	       "ip -n %s addr add 10.66.0.3/24 dev nb && ip -n %s addr add 10.66.0.4/24 dev nb && "
	       "ip -n %s route add 10.67.0.0/24 via 10.66.0.2",
	       ns_a, ns_b, ns_a, ns_b, ns_a, ns_b, ns_a, ns_b, ns_b, ns_b, ns_a)) {
		CHECK(0, "the test's namespaces");
		return unit_summary();
	}
	snprintf(path, sizeof(path), "/run/netns/%s", ns_a);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0 && !setns(fd, CLONE_NEWNET), "enter %s", ns_a);
	if (fd >= 0)
		close(fd);
	mac_of_b(bmac);
	n = xg_neigh_open();
	CHECK(n != NULL, "xg_neigh_open");
	if (!n)
		return unit_summary();

	/* on link: the address itself, managed, resolved by the kernel */
	rc = xg_neigh_keep(n, ip("10.66.0.2"));
	CHECK(rc == 0, "keep 10.66.0.2: managed (rc %d)", rc);
	rc = resolved(n, "10.66.0.2", &e);
	CHECK(rc == 0 && e.managed && e.proto == XG_NEIGH_PROTO,
	      "10.66.0.2: managed, protocol %u, state %#x (rc %d)", e.proto, e.state, rc);
	CHECK(e.ip_be == ip("10.66.0.2") && e.has_mac && !memcmp(e.mac, bmac, 6),
	      "10.66.0.2: b's MAC");
	CHECK(xg_neigh_keep(n, ip("10.66.0.2")) == 0, "keep again: nothing to change");

	/* routed: the route's gateway is the neighbour */
	rc = xg_neigh_keep(n, ip("10.67.0.9"));
	CHECK(rc == 0, "keep 10.67.0.9 (routed via 10.66.0.2): rc %d", rc);
	CHECK(!xg_neigh_get(n, ip("10.67.0.9"), &e) && e.ip_be == ip("10.66.0.2"),
	      "10.67.0.9: the neighbour is the gateway 10.66.0.2");

	/* learned by the stack: becomes managed, keeps its MAC */
	sh("ip netns exec %s ping -c1 -W1 10.66.0.3 >/dev/null", ns_a);
	CHECK(!xg_neigh_get(n, ip("10.66.0.3"), &e) && !e.managed && e.has_mac,
	      "10.66.0.3: learned by a ping, not managed");
	CHECK(xg_neigh_keep(n, ip("10.66.0.3")) == 0 && !xg_neigh_get(n, ip("10.66.0.3"), &e) &&
		  e.managed && e.has_mac && !memcmp(e.mac, bmac, 6) &&
		  (e.state & (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE)),
	      "10.66.0.3: managed now, MAC kept (state %#x)", e.state);

	/* permanent: left as it is */
	sh("ip -n %s neigh replace 10.66.0.4 lladdr 02:00:00:00:00:44 dev na nud permanent", ns_a);
	CHECK(xg_neigh_keep(n, ip("10.66.0.4")) == 0 && !xg_neigh_get(n, ip("10.66.0.4"), &e) &&
		  e.state == NUD_PERMANENT && !e.managed && e.mac[5] == 0x44,
	      "10.66.0.4: still permanent with its MAC (state %#x)", e.state);

	/* nothing to resolve */
	CHECK(xg_neigh_keep(n, ip("10.66.0.1")) == -ENETUNREACH, "own address: -ENETUNREACH");
	CHECK(xg_neigh_keep(n, ip("192.0.2.1")) == -ENETUNREACH, "no route: -ENETUNREACH");

	/* the list: xgate's entries only (10.66.0.2 and 10.66.0.3) */
	cnt = xg_neigh_list(n, list, 8);
	CHECK(cnt == 2, "list: 2 entries of xgate (got %d)", cnt);
	for (int i = 0; i < cnt && i < 8; i++)
		CHECK(list[i].proto == XG_NEIGH_PROTO && list[i].managed &&
			  (list[i].ip_be == ip("10.66.0.2") || list[i].ip_be == ip("10.66.0.3")),
		      "list[%d]: one of ours", i);

	/* release: ours go, others stay */
	CHECK(xg_neigh_release(n, ip("10.66.0.3")) == 0 &&
		  xg_neigh_get(n, ip("10.66.0.3"), &e) == -ENOENT,
	      "release 10.66.0.3: gone");
	CHECK(xg_neigh_release(n, ip("10.66.0.4")) == -ENOENT &&
		  !xg_neigh_get(n, ip("10.66.0.4"), &e) && e.state == NUD_PERMANENT,
	      "release 10.66.0.4 (not ours): -ENOENT, entry kept");
	CHECK(xg_neigh_list(n, list, 8) == 1, "list: 1 entry left");
	xg_neigh_close(n);
	return unit_summary();
}
