// SPDX-License-Identifier: BSD-2-Clause
/* A pod's network made in-process (na_net) on the real kernel, checked with
 * `ip`, `ethtool` and a ping as nodeagent-net.sh's `up` left it: in a
 * namespace of the test's own standing in for the host (xgt<pid>-h), the
 * pod's namespace (xgt<pid>-p) with lo up, IPv6 off, eth0 with its MAC,
 * MTU, address, default route, checksum offload off and the `pass` program
 * in native mode; the host end up with the MTU. Made twice (a restart
 * repeats it), a failing step takes down what was made, down removes
 * both. Everything is removed at exit, also after a failed check. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>

#include "na_net.h"
#include "unit.h"

static char host_ns[32], pod_ns[32], veth[16];

/* the command's output (at most len), "" when it fails */
static const char *run(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static const char *run(char *buf, size_t len, const char *fmt, ...)
{
	char cmd[512];
	va_list ap;
	FILE *f;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	buf[0] = 0;
	f = popen(cmd, "r");
	if (!f)
		return buf;
	n = fread(buf, 1, len - 1, f);
	buf[n] = 0;
	if (pclose(f))
		buf[0] = 0;
	return buf;
}

/* the veth goes with the pod's namespace, when the kernel cleans it up */
static bool veth_gone(void)
{
	char out[512];

	for (int i = 0; i < 500; i++) { /* 10 s: the cleanup is queued behind others */
		if (!strcmp(run(out, sizeof(out), "ip -n %s -o link show %s 2>/dev/null", host_ns,
				veth),
			    ""))
			return true;
		usleep(20000);
	}
	return false;
}

static void cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "ip netns del %s 2>/dev/null; ip netns del %s 2>/dev/null",
		 pod_ns, host_ns);
	if (system(cmd)) {
		/* gone already */
	}
}

/* The test's own "host" namespace, bound like `ip netns add` binds it. */
static int enter_host_ns(void)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/run/netns/%s", host_ns);
	if (system("mkdir -p /run/netns"))
		return -1;
	fd = open(path, O_RDONLY | O_CREAT | O_EXCL, 0);
	if (fd < 0)
		return -1;
	close(fd);
	if (unshare(CLONE_NEWNET) || mount("/proc/thread-self/ns/net", path, "none", MS_BIND, NULL))
		return -1;
	return 0;
}

static void check_up(const char *when)
{
	char out[4096];

	run(out, sizeof(out), "ip -n %s link show lo", pod_ns);
	CHECK(strstr(out, "<LOOPBACK,UP"), "%s: lo up (%s)", when, out);
	run(out, sizeof(out), "ip -n %s -d link show eth0", pod_ns);
	CHECK(strstr(out, "link/ether 02:00:0a:4d:00:05"), "%s: eth0's MAC", when);
	CHECK(strstr(out, "mtu 1400"), "%s: eth0's MTU", when);
	CHECK(strstr(out, ",UP,"), "%s: eth0 up", when);
	/* native mode: `xdp`, not `xdpgeneric` */
	CHECK(strstr(out, "mtu 1400 xdp ") && strstr(out, "prog/xdp id"),
	      "%s: a native XDP program on eth0 (%s)", when, out);
	run(out, sizeof(out), "ip -n %s -4 -o addr show dev eth0", pod_ns);
	CHECK(strstr(out, "inet 10.77.0.5/24 ") != NULL, "%s: eth0's address (%s)", when, out);
	run(out, sizeof(out), "ip -n %s -4 route show default", pod_ns);
	CHECK(!strncmp(out, "default via 10.77.0.1 dev eth0", 30), "%s: default route (%s)", when,
	      out);
	run(out, sizeof(out),
	    "ip netns exec %s cat /proc/sys/net/ipv6/conf/all/disable_ipv6 "
	    "/proc/sys/net/ipv6/conf/default/disable_ipv6 "
	    "/proc/sys/net/ipv6/conf/eth0/disable_ipv6",
	    pod_ns);
	CHECK(!strcmp(out, "1\n1\n1\n"), "%s: IPv6 off (all, default, eth0: %s)", when, out);
	run(out, sizeof(out), "ip netns exec %s ethtool -k eth0", pod_ns);
	CHECK(strstr(out, "tx-checksumming: off"), "%s: eth0's checksum offload off", when);
	run(out, sizeof(out), "ip -n %s link show %s", host_ns, veth);
	CHECK(strstr(out, "mtu 1400") && strstr(out, "LOWER_UP"), "%s: %s up, MTU 1400 (%s)", when,
	      veth, out);
	CHECK(!strstr(out, " xdp"), "%s: nothing on %s (the agent program is the caller's)", when,
	      veth);
}

int main(void)
{
	struct na_net_pod p = {.plen = 24, .mac = {0x02, 0, 0x0a, 0x4d, 0, 5}, .mtu = 1400};
	char err[256], out[1024];
	uint32_t ifindex = 0, again = 0;
	struct na_net *n;

	snprintf(host_ns, sizeof(host_ns), "xgt%d-h", (int)getpid());
	snprintf(pod_ns, sizeof(pod_ns), "xgt%d-p", (int)getpid());
	snprintf(veth, sizeof(veth), "xgt%dv", (int)getpid());
	p.netns = pod_ns;
	p.veth = veth;
	inet_pton(AF_INET, "10.77.0.5", &p.ip_be);
	inet_pton(AF_INET, "10.77.0.1", &p.gw_be);
	if (getuid()) {
		printf("1..0 # SKIP needs root\n");
		return 0;
	}
	atexit(cleanup);
	if (enter_host_ns()) {
		CHECK(0, "a namespace of the test's own: %m");
		return unit_summary();
	}
	n = na_net_new(err, sizeof(err));
	CHECK(n, "na_net_new (%s)", n ? "" : err);
	if (!n)
		return unit_summary();

	CHECK(!na_net_up(n, &p, &ifindex, err, sizeof(err)) && ifindex, "up (%s)", err);
	check_up("made");
	/* the host end reaches the pod: the veth carries frames both ways */
	run(out, sizeof(out),
	    "ip -n %s addr add 10.77.0.1/24 dev %s && ip netns exec %s ping -c1 -W2 10.77.0.5",
	    host_ns, veth, host_ns);
	CHECK(strstr(out, "1 received"), "the pod answers a ping from the host end");

	/* a restart makes it again: the old one goes first */
	{
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		CHECK(!na_net_up(n, &p, &again, err, sizeof(err)) && again, "up again (%s)", err);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		/* told, not checked: the figure docs/bench.md quotes */
		printf("# up (the old one taken down first) in %.1f ms\n",
		       (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
	}
	CHECK(again != ifindex, "the veth made anew (ifindex %u, was %u)", again, ifindex);
	check_up("made again");

	CHECK(!na_net_down(n, pod_ns, veth, err, sizeof(err)), "down (%s)", err);
	run(out, sizeof(out), "ip netns list | grep -c '^%s\\b'", pod_ns);
	CHECK(!strcmp(out, "0\n") || !out[0], "the pod's namespace gone (%s)", out);
	CHECK(veth_gone(), "the veth gone with it");
	CHECK(!na_net_down(n, pod_ns, veth, err, sizeof(err)), "down again: nothing to do (%s)",
	      err);

	/* a gateway off the pod's subnet: the route is refused, and what was
	 * made before it goes */
	inet_pton(AF_INET, "10.99.0.1", &p.gw_be);
	err[0] = 0;
	CHECK(na_net_up(n, &p, &ifindex, err, sizeof(err)) && strstr(err, "10.99.0.1"),
	      "a gateway off the subnet refused, quoted (%s)", err);
	CHECK(!strcmp(run(out, sizeof(out), "ip netns list | grep '^%s\\b'", pod_ns), "") &&
		  veth_gone(),
	      "after the failure no namespace and no veth");
	p.veth = "a-name-too-long-for-a-device";
	CHECK(na_net_up(n, &p, &ifindex, err, sizeof(err)) && strstr(err, p.veth),
	      "a device name too long refused, quoted (%s)", err);
	na_net_free(n);
	return unit_summary();
}
