// SPDX-License-Identifier: BSD-2-Clause
/* The operations on the overlay maps: the one code path for both the
 * commands (cmd_net.c) and `apply -f` (cmd_apply.c). */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static int put_err(const char *what)
{
	if (errno == EEXIST)
		return xg_fail(XG_EEXIST, "%s already exists (use `replace` to overwrite)", what);
	if (errno == E2BIG || errno == ENOSPC)
		return xg_fail(XG_EFAIL, "%s: map is full", what);
	return xg_fail(xg_errno_code(errno), "%s: %s", what, strerror(errno));
}

bool op_vpc_exists(struct xg_maps *m, __u32 vni)
{
	struct xg_vpc v;

	return !bpf_map_lookup_elem(m->vpc, &vni, &v);
}

static int require_vpc(struct xg_maps *m, __u32 vni)
{
	if (!op_vpc_exists(m, vni))
		return xg_fail(XG_ENOTFOUND, "VPC %u does not exist (`xgate vpc add %u` first)",
			       vni, vni);
	return XG_OK;
}

int op_host_set(struct xg_maps *m, const __u32 *ip, const __u32 *gw, const __u32 *ttl)
{
	struct xg_host h;
	int rc = xg_host_get(m, &h);

	if (rc)
		return rc;
	if (ip) {
		/* Of the devices we are attached to, the one carrying the
		 * address is the underlay NIC: a gateway has two, and attach
		 * alone cannot tell which one. */
		__u32 nic = xg_ipv4_ifindex(*ip);
		struct xg_iface ifc;

		h.ip_be = *ip;
		if (nic && !bpf_map_lookup_elem(m->ifaces, &nic, &ifc))
			h.nic_ifindex = nic;
	}
	if (gw) {
		h.gateway_be = *gw;
		if (*gw)
			xg_maps_neigh_keep(m, *gw);
	}
	if (ttl)
		h.ttl = (__u8)*ttl;
	return xg_host_put(m, &h);
}

int op_vpc_put(struct xg_maps *m, const struct vpc_spec *s, bool replace)
{
	char what[32];

	snprintf(what, sizeof(what), "VPC %u", s->vni);
	if (bpf_map_update_elem(m->vpc, &s->vni, &s->v, replace ? BPF_ANY : BPF_NOEXIST))
		return put_err(what);
	xg_gen_bump(m);
	for (__u32 i = 0; i < s->v.n_dividers; i++)
		xg_maps_neigh_keep(m, s->v.dividers_be[i]);
	return XG_OK;
}

static struct xg_subnet_key subnet_key(__u32 vni, __u32 ip_be, int plen)
{
	struct xg_subnet_key k = {.prefixlen = 32 + plen, .vni_be = htonl(vni), .ip_be = ip_be};

	return k;
}

static bool subnet_exists(struct xg_maps *m, const struct xg_subnet_key *k)
{
	struct xg_subnet_key cur, next, *prev = NULL;

	while (!bpf_map_get_next_key(m->subnet, prev, &next)) {
		if (!memcmp(&next, k, sizeof(*k)))
			return true;
		cur = next;
		prev = &cur;
	}
	return false;
}

int op_subnet_put(struct xg_maps *m, struct subnet_spec *s, bool replace)
{
	struct xg_subnet_key k = subnet_key(s->vni, s->ip_be, s->plen);
	__u32 mask = s->plen ? htonl(~0u << (32 - s->plen)) : 0;
	char what[64], ip[16];
	int rc = require_vpc(m, s->vni);

	if (rc)
		return rc;
	snprintf(what, sizeof(what), "subnet %s/%d in VPC %u", xg_ip_str(s->ip_be, ip), s->plen,
		 s->vni);
	if (!(s->v.flags & XG_SUBNET_REMOTE) && !s->v.n_bouncers)
		return xg_fail(XG_EUSAGE, "%s: a local subnet needs bouncers (or mark it remote)",
			       what);
	if (!s->has_gw && s->plen <= 30)
		s->v.gw_ip_be = htonl(ntohl(s->ip_be) + 1); /* first host address */
	if (s->v.gw_ip_be && (s->v.gw_ip_be & mask) != s->ip_be)
		return xg_fail(XG_EUSAGE, "%s: gateway %s is outside the subnet", what,
			       xg_ip_str(s->v.gw_ip_be, ip));
	if (!s->has_gwmac && s->v.gw_ip_be)
		xg_gw_mac_default(s->v.gw_ip_be, s->v.gw_mac);
	/* LPM tries have no BPF_NOEXIST, and a lookup returns the longest
	 * match, so only a walk finds an exact duplicate. */
	if (!replace && subnet_exists(m, &k)) {
		errno = EEXIST;
		return put_err(what);
	}
	if (bpf_map_update_elem(m->subnet, &k, &s->v, BPF_ANY))
		return put_err(what);
	xg_gen_bump(m);
	for (__u32 i = 0; i < s->v.n_bouncers; i++)
		xg_maps_neigh_keep(m, s->v.bouncers_be[i]);
	return XG_OK;
}

int op_endpoint_put(struct xg_maps *m, struct ep_spec *s, bool replace)
{
	struct xg_ep_key k = {.vni = s->vni, .ip_be = s->ip_be};
	struct xg_endpoint old;
	struct xg_host h;
	char what[48], ip[16];
	int rc = require_vpc(m, s->vni);

	if (rc)
		return rc;
	snprintf(what, sizeof(what), "endpoint %s in VPC %u", xg_ip_str(s->ip_be, ip), s->vni);
	rc = xg_host_get(m, &h);
	if (rc)
		return rc;
	if (!replace && !bpf_map_lookup_elem(m->endpoint, &k, &old)) {
		errno = EEXIST;
		return put_err(what);
	}
	if (s->dev) {
		struct xg_iface ifc = {};
		__u32 ifindex;

		rc = xg_dev_index(s->dev, &ifindex);
		if (rc)
			return rc;
		if (!h.ip_be)
			return xg_fail(XG_ENOTFOUND,
				       "%s: this host's address is not set "
				       "(`xgate host set ip ADDR` or attach transit)",
				       what);
		s->v.host_be = h.ip_be;
		s->v.ifindex = ifindex;
		s->v.flags |= XG_EP_LOCAL;
		if (bpf_map_lookup_elem(m->ifaces, &ifindex, &ifc)) {
			memset(&ifc, 0, sizeof(ifc));
			rc = xg_slot_alloc(m, &ifc.slot);
			if (rc)
				return rc;
		}
		ifc.vni = s->vni;
		ifc.pod_ip_be = s->ip_be;
		memcpy(ifc.pod_mac, s->v.mac, 6);
		ifc.flags |= XG_IFACE_HAS_POD;
		if (bpf_map_update_elem(m->ifaces, &ifindex, &ifc, BPF_ANY) ||
		    bpf_map_update_elem(m->txports, &ifindex, &ifindex, BPF_ANY)) {
			rc = put_err(what);
			xg_gen_bump(m);
			return rc;
		}
	} else if (!s->has_host) {
		return xg_fail(XG_EUSAGE, "%s: needs `host ADDR` (remote) or `dev DEV` (local)",
			       what);
	}
	rc = bpf_map_update_elem(m->endpoint, &k, &s->v, BPF_ANY) ? put_err(what) : XG_OK;
	xg_gen_bump(m);
	if (rc)
		return rc;
	/* This host's own idea of where the endpoint lives is now exact. */
	xg_cache_forget(m, s->vni, s->ip_be);
	if (s->v.host_be != h.ip_be)
		xg_maps_neigh_keep(m, s->v.host_be);
	return XG_OK;
}

/* The data plane relies on it (bpf/lib/route.h, xg_vpc_of): every subnet
 * and endpoint belongs to an existing VPC. Adding them requires the VPC;
 * deleting the VPC requires that none is left. */
int op_vpc_del(struct xg_maps *m, __u32 vni)
{
	struct xg_subnet_key sk, snext, *sprev = NULL;
	struct xg_ep_key ek, enext, *eprev = NULL;
	struct xg_vpc v;
	unsigned int ns = 0, ne = 0;

	if (bpf_map_lookup_elem(m->vpc, &vni, &v))
		return xg_fail(XG_ENOTFOUND, "VPC %u does not exist", vni);
	while (!bpf_map_get_next_key(m->subnet, sprev, &snext)) {
		sk = snext;
		sprev = &sk;
		ns += ntohl(sk.vni_be) == vni;
	}
	while (!bpf_map_get_next_key(m->endpoint, eprev, &enext)) {
		ek = enext;
		eprev = &ek;
		ne += ek.vni == vni;
	}
	if (ns || ne)
		return xg_fail(XG_EEXIST,
			       "VPC %u is in use: %u subnet(s) and %u endpoint(s) "
			       "still belong to it (delete them first)",
			       vni, ns, ne);
	{
		struct xg_sess_key sk, snext, *sp = NULL;
		struct xg_sess_maps sm;
		struct xg_sess sv;
		unsigned int nsess = 0;
		int rc = xg_sess_open(m, &sm);

		if (rc)
			return rc;
		while (!bpf_map_get_next_key(sm.fwd, sp, &snext)) {
			sk = snext;
			sp = &sk;
			nsess += !bpf_map_lookup_elem(sm.fwd, &sk, &sv) && sv.vni == vni;
		}
		xg_sess_close(&sm);
		if (nsess)
			return xg_fail(XG_EEXIST,
				       "VPC %u is in use: %u session(s) still lead to it "
				       "(`xgate ingress del` them first)",
				       vni, nsess);
	}
	if (bpf_map_delete_elem(m->vpc, &vni))
		return xg_fail(XG_ENOTFOUND, "VPC %u does not exist", vni);
	xg_gen_bump(m);
	return XG_OK;
}

int op_subnet_del(struct xg_maps *m, __u32 vni, __u32 ip_be, int plen)
{
	struct xg_subnet_key k = subnet_key(vni, ip_be, plen);
	char ip[16];

	if (bpf_map_delete_elem(m->subnet, &k))
		return xg_fail(XG_ENOTFOUND, "subnet %s/%d in VPC %u does not exist",
			       xg_ip_str(ip_be, ip), plen, vni);
	xg_gen_bump(m);
	return XG_OK;
}

int op_endpoint_del(struct xg_maps *m, __u32 vni, __u32 ip_be)
{
	struct xg_ep_key k = {.vni = vni, .ip_be = ip_be};
	struct xg_endpoint v;
	int rc = XG_OK;
	char ip[16];

	if (bpf_map_lookup_elem(m->endpoint, &k, &v) || bpf_map_delete_elem(m->endpoint, &k)) {
		rc = xg_fail(XG_ENOTFOUND, "endpoint %s in VPC %u does not exist",
			     xg_ip_str(ip_be, ip), vni);
	} else if (v.flags & XG_EP_LOCAL) {
		struct xg_iface ifc;

		if (!bpf_map_lookup_elem(m->ifaces, &v.ifindex, &ifc)) {
			ifc.flags &= ~XG_IFACE_HAS_POD;
			if (ifc.role == XG_ROLE_NONE) {
				bpf_map_delete_elem(m->ifaces, &v.ifindex);
				bpf_map_delete_elem(m->txports, &v.ifindex);
			} else {
				bpf_map_update_elem(m->ifaces, &v.ifindex, &ifc, BPF_ANY);
			}
		}
	}
	if (!rc)
		xg_gen_bump(m);
	xg_cache_forget(m, vni, ip_be);
	return rc;
}
