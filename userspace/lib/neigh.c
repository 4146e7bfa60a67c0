// SPDX-License-Identifier: BSD-2-Clause
/*
 * Underlay neighbour priming. The data plane takes next-hop MACs from the
 * kernel (bpf_fib_lookup), but XDP-forwarded traffic never makes the kernel
 * resolve them, so xgate asks for resolution whenever it learns of a host:
 * route lookup (RTM_GETROUTE) for the next hop, then RTM_NEWNEIGH with
 * NTF_USE, which triggers ARP as if the stack had a packet to send.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>

#include "xg.h"

struct route_res {
	__u32 oif;
	__u32 gw;
	__u8 type;
};

static int route_attr_cb(const struct nlattr *a, void *data)
{
	struct route_res *r = data;

	if (mnl_attr_get_type(a) == RTA_OIF && !mnl_attr_validate(a, MNL_TYPE_U32))
		r->oif = mnl_attr_get_u32(a);
	else if (mnl_attr_get_type(a) == RTA_GATEWAY && !mnl_attr_validate(a, MNL_TYPE_U32))
		r->gw = mnl_attr_get_u32(a);
	return MNL_CB_OK;
}

static int route_cb(const struct nlmsghdr *nlh, void *data)
{
	struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	struct route_res *r = data;

	r->type = rtm->rtm_type;
	mnl_attr_parse(nlh, sizeof(*rtm), route_attr_cb, data);
	return MNL_CB_OK;
}

static int request(struct mnl_socket *nl, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	unsigned int portid = mnl_socket_get_portid(nl);
	int n;

	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
	if (n < 0)
		return -errno;
	n = mnl_cb_run(buf, n, nlh->nlmsg_seq, portid, cb, data);
	return n < 0 ? -errno : 0;
}

int xg_neigh_prime(__u32 ip_be)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct route_res r = {};
	struct mnl_socket *nl;
	struct nlmsghdr *nlh;
	struct rtmsg *rtm;
	struct ndmsg *ndm;
	__u32 seq = (__u32)time(NULL);
	int err;

	nl = mnl_socket_open(NETLINK_ROUTE);
	if (!nl)
		return -errno;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		err = -errno;
		goto out;
	}

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETROUTE;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = ++seq;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = AF_INET;
	rtm->rtm_dst_len = 32;
	mnl_attr_put_u32(nlh, RTA_DST, ip_be);
	err = request(nl, nlh, route_cb, &r);
	if (err)
		goto out;
	if (r.type != RTN_UNICAST || !r.oif) { /* local, unreachable...: nothing to do */
		err = -ENETUNREACH;
		goto out;
	}

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_NEWNEIGH;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_ACK;
	nlh->nlmsg_seq = ++seq;
	ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	ndm->ndm_family = AF_INET;
	ndm->ndm_ifindex = (int)r.oif;
	ndm->ndm_flags = NTF_USE;
	ndm->ndm_state = NUD_NONE;
	mnl_attr_put_u32(nlh, NDA_DST, r.gw ? r.gw : ip_be);
	err = request(nl, nlh, NULL, NULL);
out:
	mnl_socket_close(nl);
	return err;
}
