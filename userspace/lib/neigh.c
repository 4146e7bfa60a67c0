// SPDX-License-Identifier: BSD-2-Clause
/*
 * Underlay neighbours the data plane needs. The XDP programs take next-hop
 * MACs from the kernel (bpf_fib_lookup), but a lookup neither resolves a
 * missing neighbour nor counts as a use of one, so the kernel's GC reaps an
 * entry only XDP traffic goes to (docs/architecture.md, "Underlay
 * neighbours"). For every next hop xgate forwards to, we make the kernel's
 * entry managed (NTF_EXT_MANAGED, Linux 5.16+): the kernel resolves it,
 * keeps re-probing it, and never collects it. Entries carry protocol
 * XG_NEIGH_PROTO so that xgate lists and removes only its own.
 *
 * Kernels without managed entries ignore the attribute; then the entry is
 * asked to resolve once (NTF_USE), which the GC may undo.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>

#include "xg.h"

struct xg_neigh {
	struct mnl_socket *nl;
	unsigned int portid;
	__u32 seq;
};

struct xg_neigh *xg_neigh_open(void)
{
	struct xg_neigh *n = calloc(1, sizeof(*n));
	int err;

	if (!n)
		return NULL;
	n->nl = mnl_socket_open(NETLINK_ROUTE);
	if (!n->nl)
		goto fail;
	if (mnl_socket_bind(n->nl, 0, MNL_SOCKET_AUTOPID) < 0)
		goto fail;
	n->portid = mnl_socket_get_portid(n->nl);
	n->seq = (__u32)time(NULL);
	return n;
fail:
	err = errno;
	if (n->nl)
		mnl_socket_close(n->nl);
	free(n);
	errno = err;
	return NULL;
}

void xg_neigh_close(struct xg_neigh *n)
{
	if (!n)
		return;
	mnl_socket_close(n->nl);
	free(n);
}

/* Send one request and run cb on every reply until the ACK or the end of
 * a dump: 0 or -errno (the kernel's error for the request). */
static int request(struct xg_neigh *n, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	int r;

	nlh->nlmsg_seq = ++n->seq;
	if (mnl_socket_sendto(n->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {
		r = (int)mnl_socket_recvfrom(n->nl, buf, sizeof(buf));
		if (r < 0)
			return -errno;
		r = mnl_cb_run(buf, (size_t)r, nlh->nlmsg_seq, n->portid, cb, data);
	} while (r > MNL_CB_STOP);
	return r < 0 ? -errno : 0;
}

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
	return MNL_CB_STOP;
}

/* The neighbour the kernel would send to for ip: device and address
 * (the route's gateway, or ip itself on link). */
static int next_hop(struct xg_neigh *n, __u32 ip_be, __u32 *oif, __u32 *nh_be)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct route_res r = {};
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct rtmsg *rtm;
	int err;

	nlh->nlmsg_type = RTM_GETROUTE;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = AF_INET;
	rtm->rtm_dst_len = 32;
	mnl_attr_put_u32(nlh, RTA_DST, ip_be);
	err = request(n, nlh, route_cb, &r);
	if (err)
		return err;
	if (r.type != RTN_UNICAST || !r.oif) /* local, unreachable...: no neighbour */
		return -ENETUNREACH;
	*oif = r.oif;
	*nh_be = r.gw ? r.gw : ip_be;
	return 0;
}

static struct nlmsghdr *neigh_msg(char *buf, __u16 type, __u16 flags, __u32 oif, __u32 nh_be)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ndmsg *ndm;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	ndm->ndm_family = AF_INET;
	ndm->ndm_ifindex = (int)oif;
	mnl_attr_put_u32(nlh, NDA_DST, nh_be);
	return nlh;
}

static int entry_attr_cb(const struct nlattr *a, void *data)
{
	struct xg_neigh_entry *e = data;

	switch (mnl_attr_get_type(a)) {
	case NDA_DST:
		if (!mnl_attr_validate(a, MNL_TYPE_U32))
			e->ip_be = mnl_attr_get_u32(a);
		break;
	case NDA_LLADDR:
		if (mnl_attr_get_payload_len(a) == 6) {
			memcpy(e->mac, mnl_attr_get_payload(a), 6);
			e->has_mac = true;
		}
		break;
	case NDA_PROTOCOL:
		if (!mnl_attr_validate(a, MNL_TYPE_U8))
			e->proto = mnl_attr_get_u8(a);
		break;
	case NDA_FLAGS_EXT:
		if (!mnl_attr_validate(a, MNL_TYPE_U32))
			e->managed = !!(mnl_attr_get_u32(a) & NTF_EXT_MANAGED);
		break;
	}
	return MNL_CB_OK;
}

static void entry_parse(const struct nlmsghdr *nlh, struct xg_neigh_entry *e)
{
	struct ndmsg *ndm = mnl_nlmsg_get_payload(nlh);

	memset(e, 0, sizeof(*e));
	e->ifindex = (__u32)ndm->ndm_ifindex;
	e->state = ndm->ndm_state;
	mnl_attr_parse(nlh, sizeof(*ndm), entry_attr_cb, e);
}

static int get_cb(const struct nlmsghdr *nlh, void *data)
{
	if (nlh->nlmsg_type == RTM_NEWNEIGH)
		entry_parse(nlh, data);
	return MNL_CB_STOP;
}

int xg_neigh_get(struct xg_neigh *n, __u32 ip_be, struct xg_neigh_entry *e)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	__u32 oif, nh_be;
	int err = next_hop(n, ip_be, &oif, &nh_be);

	if (err)
		return err;
	memset(e, 0, sizeof(*e));
	return request(n, neigh_msg(buf, RTM_GETNEIGH, 0, oif, nh_be), get_cb, e);
}

int xg_neigh_keep(struct xg_neigh *n, __u32 ip_be)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct xg_neigh_entry e = {};
	struct nlmsghdr *nlh;
	__u32 oif, nh_be;
	int err = next_hop(n, ip_be, &oif, &nh_be);

	if (err)
		return err;
	if (!request(n, neigh_msg(buf, RTM_GETNEIGH, 0, oif, nh_be), get_cb, &e) &&
	    (e.managed || (e.state & (NUD_PERMANENT | NUD_NOARP))))
		return 0; /* kept already; an update would turn a permanent entry into NUD_NONE */
	/* Create, or turn the entry the stack may already hold into a
	 * managed one: REPLACE with no address keeps a resolved MAC. */
	nlh = neigh_msg(buf, RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_REPLACE | NLM_F_ACK, oif, nh_be);
	mnl_attr_put_u8(nlh, NDA_PROTOCOL, XG_NEIGH_PROTO);
	mnl_attr_put_u32(nlh, NDA_FLAGS_EXT, NTF_EXT_MANAGED);
	err = request(n, nlh, NULL, NULL);
	if (err && err != -EINVAL)
		return err;
	if (!err && !request(n, neigh_msg(buf, RTM_GETNEIGH, 0, oif, nh_be), get_cb, &e) &&
	    e.managed)
		return 0;
	/* No managed entries here (before 5.16): resolve once, as the stack
	 * would for a packet of its own. */
	nlh = neigh_msg(buf, RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_ACK, oif, nh_be);
	((struct ndmsg *)mnl_nlmsg_get_payload(nlh))->ndm_flags = NTF_USE;
	err = request(n, nlh, NULL, NULL);
	return err ? err : 1;
}

int xg_neigh_release(struct xg_neigh *n, __u32 ip_be)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct xg_neigh_entry e = {};
	__u32 oif, nh_be;
	int err = next_hop(n, ip_be, &oif, &nh_be);

	if (err)
		return err;
	err = request(n, neigh_msg(buf, RTM_GETNEIGH, 0, oif, nh_be), get_cb, &e);
	if (err)
		return err;
	if (e.proto != XG_NEIGH_PROTO) /* the stack's or someone else's */
		return -ENOENT;
	return request(n, neigh_msg(buf, RTM_DELNEIGH, NLM_F_ACK, oif, nh_be), NULL, NULL);
}

struct list_ctx {
	struct xg_neigh_entry *out;
	int max, n;
};

static int list_cb(const struct nlmsghdr *nlh, void *data)
{
	struct list_ctx *c = data;
	struct xg_neigh_entry e;

	if (nlh->nlmsg_type != RTM_NEWNEIGH)
		return MNL_CB_OK;
	entry_parse(nlh, &e);
	if (e.proto == XG_NEIGH_PROTO && c->n < c->max)
		c->out[c->n++] = e;
	return MNL_CB_OK;
}

int xg_neigh_list(struct xg_neigh *n, struct xg_neigh_entry *out, int max)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct list_ctx c = {.out = out, .max = max};
	struct ndmsg *ndm;
	int err;

	nlh->nlmsg_type = RTM_GETNEIGH;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	ndm->ndm_family = AF_INET;
	err = request(n, nlh, list_cb, &c);
	return err ? err : c.n;
}

void xg_maps_neigh_keep(struct xg_maps *m, __u32 ip_be)
{
	/* Best effort: the map write stands either way, and a next hop
	 * still unresolved shows as drop_no_neigh and in `xgate neigh ls`. */
	if (!m->neigh)
		m->neigh = xg_neigh_open();
	if (m->neigh && ip_be)
		xg_neigh_keep(m->neigh, ip_be);
}
