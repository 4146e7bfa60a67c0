/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A pod's network, made in-process (rtnetlink through libmnl, the ethtool
 * ioctl, /proc/sys) instead of some fifteen `ip`, `ethtool` and `xgate`
 * processes: a network namespace named like `ip netns add` names it
 * (/run/netns/NAME, a bind mount of the namespace), a veth whose far end
 * is the pod's eth0 (its MAC, its MTU, its address, the default route,
 * checksum offload off, IPv6 off, the `pass` XDP program in native mode),
 * the host end up with the pod's MTU. The `agent` program and the endpoint
 * entry are the caller's (they belong to the xgate instance).
 *
 * Every step may be repeated: up first takes down what a pod of the same
 * slot left, so a restart or a retry gives the same result.
 */
#ifndef NA_NET_H
#define NA_NET_H

#include <stddef.h>
#include <stdint.h>

struct na_net;

struct na_net_pod {
	const char *netns; /* its name under /run/netns */
	const char *veth;  /* the host end */
	uint32_t ip_be;	   /* the pod's address */
	int plen;
	uint8_t mac[6]; /* of the pod's eth0 */
	uint32_t gw_be; /* its default route */
	unsigned mtu;	/* both ends */
};

/* The calling thread's network namespace is the host's; /run/netns is
 * made a shared mount point (as `ip netns add` does), the `pass` program
 * loaded. NULL with err. */
struct na_net *na_net_new(char *err, size_t errlen);
void na_net_free(struct na_net *n);
/* 0 and the host end's ifindex, or -1 with err naming the step (what was
 * made is taken down again). */
int na_net_up(struct na_net *n, const struct na_net_pod *p, uint32_t *host_ifindex, char *err,
	      size_t errlen);
/* The namespace, and with it the veth (the kernel removes the pair with
 * the namespace, soon after: a veth of that name may be seen a moment
 * longer; up deletes it if it is still there), or a veth left without its
 * namespace: 0, or -1 with err. */
int na_net_down(struct na_net *n, const char *netns, const char *veth, char *err, size_t errlen);

#endif
