// SPDX-License-Identifier: BSD-2-Clause
/* A pod's network in-process; see na_net.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <net/if.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <linux/veth.h>
#include <bpf/bpf.h>

#include "na_net.h"

#define NETNS_DIR "/run/netns"

struct na_net {
	int self_ns;	       /* the host's namespace, to come back to */
	int pass_fd;	       /* the `pass` program, attached to every pod's eth0 */
	struct mnl_socket *nl; /* rtnetlink in the host's namespace */
	unsigned seq;
};

/* One request, its acknowledgement: 0 or -errno. */
static int nl_talk(struct mnl_socket *nl, unsigned *seq, struct nlmsghdr *nlh)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	unsigned portid = mnl_socket_get_portid(nl);
	ssize_t len;
	int rc;

	nlh->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = ++*seq;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {
		len = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (len < 0)
			return -errno;
		rc = mnl_cb_run(buf, (size_t)len, nlh->nlmsg_seq, portid, NULL, NULL);
	} while (rc == MNL_CB_OK);
	return rc < 0 ? -errno : 0;
}

static struct nlmsghdr *link_msg(char *buf, uint16_t type, uint16_t flags, int ifindex,
				 const char *name)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifm;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = flags;
	ifm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifm));
	ifm->ifi_family = AF_UNSPEC;
	ifm->ifi_index = ifindex;
	if (name)
		mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	return nlh;
}

static int link_up(struct mnl_socket *nl, unsigned *seq, int ifindex)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = link_msg(buf, RTM_NEWLINK, 0, ifindex, NULL);
	struct ifinfomsg *ifm = mnl_nlmsg_get_payload(nlh);

	ifm->ifi_flags = IFF_UP;
	ifm->ifi_change = IFF_UP;
	return nl_talk(nl, seq, nlh);
}

static int link_del(struct mnl_socket *nl, unsigned *seq, const char *name)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];

	return nl_talk(nl, seq, link_msg(buf, RTM_DELLINK, 0, 0, name));
}

/* The veth; its peer made as the pod's eth0 in ns_fd, with its MAC. */
static int veth_add(struct na_net *n, const struct na_net_pod *p, int ns_fd)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = link_msg(buf, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, 0, p->veth);
	struct nlattr *info, *data, *peer;
	struct ifinfomsg *pifm;

	mnl_attr_put_u32(nlh, IFLA_MTU, p->mtu);
	info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "veth");
	data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
	peer = mnl_attr_nest_start(nlh, VETH_INFO_PEER);
	pifm = mnl_nlmsg_put_extra_header(nlh, sizeof(*pifm));
	pifm->ifi_family = AF_UNSPEC;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, "eth0");
	mnl_attr_put_u32(nlh, IFLA_NET_NS_FD, (uint32_t)ns_fd);
	mnl_attr_put(nlh, IFLA_ADDRESS, 6, p->mac);
	mnl_attr_put_u32(nlh, IFLA_MTU, p->mtu);
	mnl_attr_nest_end(nlh, peer);
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, info);
	return nl_talk(n->nl, &n->seq, nlh);
}

static int addr_add(struct mnl_socket *nl, unsigned *seq, int ifindex, uint32_t ip_be, int plen)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifaddrmsg *ifa;

	nlh->nlmsg_type = RTM_NEWADDR;
	nlh->nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
	ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = AF_INET;
	ifa->ifa_prefixlen = (unsigned char)plen;
	ifa->ifa_scope = RT_SCOPE_UNIVERSE;
	ifa->ifa_index = (unsigned)ifindex;
	mnl_attr_put_u32(nlh, IFA_LOCAL, ip_be);
	mnl_attr_put_u32(nlh, IFA_ADDRESS, ip_be);
	return nl_talk(nl, seq, nlh);
}

/* default via gw dev ifindex, as `ip route add default via GW` makes it */
static int route_add(struct mnl_socket *nl, unsigned *seq, int ifindex, uint32_t gw_be)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct rtmsg *rtm;

	nlh->nlmsg_type = RTM_NEWROUTE;
	nlh->nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = AF_INET;
	rtm->rtm_table = RT_TABLE_MAIN;
	rtm->rtm_protocol = RTPROT_BOOT;
	rtm->rtm_scope = RT_SCOPE_UNIVERSE;
	rtm->rtm_type = RTN_UNICAST;
	mnl_attr_put_u32(nlh, RTA_GATEWAY, gw_be);
	mnl_attr_put_u32(nlh, RTA_OIF, (uint32_t)ifindex);
	return nl_talk(nl, seq, nlh);
}

static int xdp_attach(struct mnl_socket *nl, unsigned *seq, int ifindex, int prog_fd)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = link_msg(buf, RTM_SETLINK, 0, ifindex, NULL);
	struct nlattr *xdp = mnl_attr_nest_start(nlh, IFLA_XDP);

	mnl_attr_put_u32(nlh, IFLA_XDP_FD, (uint32_t)prog_fd);
	mnl_attr_put_u32(nlh, IFLA_XDP_FLAGS, XDP_FLAGS_DRV_MODE | XDP_FLAGS_UPDATE_IF_NOEXIST);
	mnl_attr_nest_end(nlh, xdp);
	return nl_talk(nl, seq, nlh);
}

static int write_str(const char *path, const char *v)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err;
	ssize_t w;

	if (fd < 0)
		return -errno;
	w = write(fd, v, strlen(v));
	err = w == (ssize_t)strlen(v) ? 0 : w < 0 ? -errno : -EIO;
	close(fd);
	return err;
}

/* The program every pod's eth0 runs so that frames redirected into the
 * veth are drained (XDP_PASS and nothing else: bpf/pass.bpf.c, under the
 * same name, which is how `xgate` tells the stub apart). Loaded once per
 * daemon, not once per pod. */
static int pass_load(void)
{
	struct bpf_insn insns[] = {
	    {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS},
	    {.code = BPF_JMP | BPF_EXIT},
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts);

	return bpf_prog_load(BPF_PROG_TYPE_XDP, "xg_pass", "Dual BSD/GPL", insns, 2, &opts);
}

struct na_net *na_net_new(char *err, size_t errlen)
{
	struct na_net *n = calloc(1, sizeof(*n));
	bool bound = false;

	if (!n)
		return snprintf(err, errlen, "out of memory"), NULL;
	n->pass_fd = -1;
	n->self_ns = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (n->self_ns < 0) {
		snprintf(err, errlen, "/proc/thread-self/ns/net: %s", strerror(errno));
		goto fail;
	}
	n->nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!n->nl || mnl_socket_bind(n->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		snprintf(err, errlen, "rtnetlink socket: %s", strerror(errno));
		goto fail;
	}
	n->seq = (unsigned)time(NULL);
	if (mkdir(NETNS_DIR, 0755) && errno != EEXIST) {
		snprintf(err, errlen, "mkdir %s: %s", NETNS_DIR, strerror(errno));
		goto fail;
	}
	/* as iproute2: namespaces mounted here propagate between mount
	 * namespaces (the directory made a mount point first if need be) */
	while (mount("", NETNS_DIR, "none", MS_SHARED | MS_REC, NULL)) {
		if (errno != EINVAL || bound ||
		    mount(NETNS_DIR, NETNS_DIR, "none", MS_BIND | MS_REC, NULL)) {
			snprintf(err, errlen, "making %s a shared mount: %s", NETNS_DIR,
				 strerror(errno));
			goto fail;
		}
		bound = true;
	}
	n->pass_fd = pass_load();
	if (n->pass_fd < 0) {
		snprintf(err, errlen, "loading the pass program: %s", strerror(errno));
		goto fail;
	}
	return n;
fail:
	na_net_free(n);
	return NULL;
}

void na_net_free(struct na_net *n)
{
	if (!n)
		return;
	if (n->nl)
		mnl_socket_close(n->nl);
	if (n->self_ns >= 0)
		close(n->self_ns);
	if (n->pass_fd >= 0)
		close(n->pass_fd);
	free(n);
}

int na_net_down(struct na_net *n, const char *netns, const char *veth, char *err, size_t errlen)
{
	char path[PATH_MAX];
	bool had_ns = false;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", NETNS_DIR, netns);
	if (!umount2(path, MNT_DETACH))
		had_ns = true;
	else if (errno != EINVAL && errno != ENOENT)
		return snprintf(err, errlen, "umount %s: %s", path, strerror(errno)), -1;
	if (unlink(path) && errno != ENOENT)
		return snprintf(err, errlen, "unlink %s: %s", path, strerror(errno)), -1;
	/* The veth goes with the namespace (its peer is the pod's eth0 there)
	 * when the kernel cleans the namespace up, off the daemon's loop: a
	 * RTM_DELLINK here waits for RCU grace periods, ~30 ms a pod. A veth
	 * without its namespace is deleted now. */
	if (had_ns || !if_nametoindex(veth))
		return 0;
	rc = link_del(n->nl, &n->seq, veth);
	if (rc && rc != -ENODEV)
		return snprintf(err, errlen, "deleting %s: %s", veth, strerror(-rc)), -1;
	return 0;
}

/* A new namespace bound at path, as `ip netns add` makes it: an fd on it,
 * or -1 with err. The thread is back in the host's namespace either way. */
static int ns_make(struct na_net *n, const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0), ns = -1;

	if (fd < 0)
		return snprintf(err, errlen, "creating %s: %s", path, strerror(errno)), -1;
	close(fd);
	if (unshare(CLONE_NEWNET)) {
		snprintf(err, errlen, "unshare(CLONE_NEWNET): %s", strerror(errno));
		unlink(path);
		return -1;
	}
	if (mount("/proc/thread-self/ns/net", path, "none", MS_BIND, NULL))
		snprintf(err, errlen, "binding the namespace on %s: %s", path, strerror(errno));
	else if ((ns = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)) < 0)
		snprintf(err, errlen, "/proc/thread-self/ns/net: %s", strerror(errno));
	if (setns(n->self_ns, CLONE_NEWNET)) {
		/* every later socket of the daemon would be the pod's */
		fprintf(stderr, "nodeagentd: cannot return to the host's network namespace: %s\n",
			strerror(errno));
		abort();
	}
	if (ns < 0) {
		umount2(path, MNT_DETACH);
		unlink(path);
	}
	return ns;
}

/* What is made from inside the pod's namespace: a netlink socket and an
 * ioctl socket of that namespace (a socket stays in the namespace it was
 * made in), and the IPv6 switches (/proc/sys/net is the opener's). */
struct pod_side {
	struct mnl_socket *nl;
	int ioc;
};

static int pod_enter(struct na_net *n, int ns, struct pod_side *s, char *err, size_t errlen)
{
	/* the overlay is IPv4 only: keep pods from chattering IPv6 into it
	 * (before eth0 exists, so that it takes the default) */
	static const char *const v6[] = {"/proc/sys/net/ipv6/conf/all/disable_ipv6",
					 "/proc/sys/net/ipv6/conf/default/disable_ipv6"};
	int rc = 0;

	s->nl = NULL;
	s->ioc = -1;
	if (setns(ns, CLONE_NEWNET))
		return snprintf(err, errlen, "entering the namespace: %s", strerror(errno)), -1;
	s->nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!s->nl || mnl_socket_bind(s->nl, 0, MNL_SOCKET_AUTOPID) < 0)
		rc = -1, snprintf(err, errlen, "rtnetlink socket: %s", strerror(errno));
	if (!rc && (s->ioc = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		rc = -1, snprintf(err, errlen, "socket: %s", strerror(errno));
	for (int i = 0; !rc && i < 2; i++) {
		int e = write_str(v6[i], "1");

		/* a kernel without IPv6 has nothing to turn off */
		if (e && e != -ENOENT)
			rc = -1, snprintf(err, errlen, "%s: %s", v6[i], strerror(-e));
	}
	if (setns(n->self_ns, CLONE_NEWNET)) {
		fprintf(stderr, "nodeagentd: cannot return to the host's network namespace: %s\n",
			strerror(errno));
		abort();
	}
	return rc;
}

static void pod_leave(struct pod_side *s)
{
	if (s->nl)
		mnl_socket_close(s->nl);
	if (s->ioc >= 0)
		close(s->ioc);
}

/* eth0's index, and its checksum offload off: XDP sees no offload state,
 * so the pod must send complete checksums (`ethtool -K eth0 tx off`) */
static int eth0_prepare(struct pod_side *s, int *ifindex, char *err, size_t errlen)
{
	struct ethtool_value ev = {.cmd = ETHTOOL_STXCSUM, .data = 0};
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "eth0");
	if (ioctl(s->ioc, SIOCGIFINDEX, &ifr))
		return snprintf(err, errlen, "eth0: %s", strerror(errno)), -1;
	*ifindex = ifr.ifr_ifindex;
	ifr.ifr_data = (void *)&ev;
	if (ioctl(s->ioc, SIOCETHTOOL, &ifr))
		return snprintf(err, errlen, "eth0: checksum offload off: %s", strerror(errno)), -1;
	return 0;
}

int na_net_up(struct na_net *n, const struct na_net_pod *p, uint32_t *host_ifindex, char *err,
	      size_t errlen)
{
	char path[PATH_MAX], e2[128];
	struct pod_side s = {NULL, -1};
	int ns, eth0 = 0, rc = -1, e;

	*host_ifindex = 0;
	if (!p->netns[0] || strchr(p->netns, '/') || strlen(p->veth) >= IFNAMSIZ)
		return snprintf(err, errlen, "invalid names '%s', '%s'", p->netns, p->veth), -1;
	/* a namespace or veth left by a pod of this slot that ended unseen, or
	 * the veth of the last one, its namespace not yet cleaned up */
	if (na_net_down(n, p->netns, p->veth, err, errlen))
		return -1;
	if (if_nametoindex(p->veth) && (e = link_del(n->nl, &n->seq, p->veth)) && e != -ENODEV)
		return snprintf(err, errlen, "deleting %s: %s", p->veth, strerror(-e)), -1;
	snprintf(path, sizeof(path), "%s/%s", NETNS_DIR, p->netns);
	ns = ns_make(n, path, err, errlen);
	if (ns < 0)
		return -1;
	if (pod_enter(n, ns, &s, err, errlen))
		goto out;
	if ((e = link_up(s.nl, &n->seq, 1))) {
		snprintf(err, errlen, "lo up: %s", strerror(-e));
		goto out;
	}
	if ((e = veth_add(n, p, ns))) {
		snprintf(err, errlen, "veth %s with eth0 in %s: %s", p->veth, p->netns,
			 strerror(-e));
		goto out;
	}
	if (eth0_prepare(&s, &eth0, err, errlen))
		goto out;
	if ((e = addr_add(s.nl, &n->seq, eth0, p->ip_be, p->plen))) {
		snprintf(err, errlen, "eth0 address: %s", strerror(-e));
		goto out;
	}
	if ((e = link_up(s.nl, &n->seq, eth0))) {
		snprintf(err, errlen, "eth0 up: %s", strerror(-e));
		goto out;
	}
	if ((e = route_add(s.nl, &n->seq, eth0, p->gw_be))) {
		inet_ntop(AF_INET, &p->gw_be, e2, sizeof(e2));
		snprintf(err, errlen, "default route via %s: %s", e2, strerror(-e));
		goto out;
	}
	/* the far end of a veth the programs redirect into runs XDP itself */
	if ((e = xdp_attach(s.nl, &n->seq, eth0, n->pass_fd))) {
		snprintf(err, errlen, "the pass program on eth0 in %s: %s", p->netns, strerror(-e));
		goto out;
	}
	*host_ifindex = if_nametoindex(p->veth);
	if (!*host_ifindex || (e = link_up(n->nl, &n->seq, (int)*host_ifindex))) {
		snprintf(err, errlen, "%s up: %s", p->veth,
			 *host_ifindex ? strerror(-e) : strerror(errno));
		goto out;
	}
	rc = 0;
out:
	pod_leave(&s);
	close(ns);
	if (rc)
		na_net_down(n, p->netns, p->veth, e2, sizeof(e2));
	return rc;
}
