// SPDX-License-Identifier: BSD-2-Clause
/*
 * A pod's network: its namespace and veth (runtime/na_net), then what the
 * node's xgate instance holds for it: the endpoint entry (a local one, on
 * the veth) and the `agent` program on the veth's host end. In-process, as
 * `xgate endpoint add` and `xgate attach` do it, with the agent's own maps.
 * Both directions may be repeated: up replaces what a pod of the same slot
 * left, down ignores what is gone already.
 */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include "na_agent_int.h"

/* xg_ifaces and xg_txports of a device no pod holds any more */
static void iface_forget(struct na_agent *a, __u32 ifindex)
{
	if (!ifindex)
		return;
	bpf_map_delete_elem(a->maps.ifaces, &ifindex);
	bpf_map_delete_elem(a->maps.txports, &ifindex);
}

static int endpoint_put(struct na_agent *a, struct pod_rt *r, __u32 ifindex, char *err,
			size_t errlen)
{
	struct xg_ep_key k = {.vni = a->vni, .ip_be = r->p.ip_be};
	struct xg_endpoint v = {.ifindex = ifindex, .flags = XG_EP_LOCAL};
	struct xg_iface ifc;
	struct xg_vpc vpc;
	struct xg_host h;
	char ip[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &r->p.ip_be, ip, sizeof(ip));
	if (bpf_map_lookup_elem(a->maps.vpc, &a->vni, &vpc))
		return snprintf(err, errlen, "endpoint %s: VPC %u does not exist", ip, a->vni), -1;
	if (xg_host_get(&a->maps, &h) || !h.ip_be)
		return snprintf(err, errlen, "endpoint %s: the host's address is not set", ip), -1;
	v.host_be = h.ip_be;
	na_pod_mac(r->p.ip_be, v.mac);
	if (bpf_map_lookup_elem(a->maps.ifaces, &ifindex, &ifc)) {
		memset(&ifc, 0, sizeof(ifc));
		if (xg_slot_alloc(&a->maps, &ifc.slot))
			return snprintf(err, errlen, "endpoint %s: no stats slot for %s", ip,
					r->veth),
			       -1;
	}
	ifc.vni = a->vni;
	ifc.pod_ip_be = r->p.ip_be;
	memcpy(ifc.pod_mac, v.mac, 6);
	ifc.flags |= XG_IFACE_HAS_POD;
	if (bpf_map_update_elem(a->maps.ifaces, &ifindex, &ifc, BPF_ANY) ||
	    bpf_map_update_elem(a->maps.txports, &ifindex, &ifindex, BPF_ANY) ||
	    bpf_map_update_elem(a->maps.endpoint, &k, &v, BPF_ANY)) {
		snprintf(err, errlen, "endpoint %s in VPC %u: %s", ip, a->vni, strerror(errno));
		xg_gen_bump(&a->maps);
		return -1;
	}
	xg_gen_bump(&a->maps);
	/* this host's own idea of where the endpoint lives is now exact */
	xg_cache_forget(&a->maps, a->vni, r->p.ip_be);
	return 0;
}

static void endpoint_del(struct na_agent *a, struct pod_rt *r, __u32 veth_ifindex)
{
	struct xg_ep_key k = {.vni = a->vni, .ip_be = r->p.ip_be};
	struct xg_endpoint v;

	if (!bpf_map_lookup_elem(a->maps.endpoint, &k, &v) &&
	    !bpf_map_delete_elem(a->maps.endpoint, &k) && (v.flags & XG_EP_LOCAL) &&
	    v.ifindex != veth_ifindex)
		iface_forget(a, v.ifindex);
	iface_forget(a, veth_ifindex);
	xg_gen_bump(&a->maps);
	xg_cache_forget(&a->maps, a->vni, r->p.ip_be);
}

int podnet_up(struct na_agent *a, struct pod_rt *r, char *err, size_t errlen)
{
	struct na_net_pod p = {.netns = r->netns,
			       .veth = r->veth,
			       .ip_be = r->p.ip_be,
			       .plen = a->plen,
			       .gw_be = a->gw_be,
			       .mtu = a->conf->mtu};
	__u32 ifindex = 0;
	int rc;

	if (!a->maps_open)
		return snprintf(err, errlen, "xgate instance '%s' not open", a->conf->instance), -1;
	na_pod_mac(r->p.ip_be, p.mac);
	/* the entry of a pod of this slot that ended unseen names its veth */
	endpoint_del(a, r, if_nametoindex(r->veth));
	if (na_net_up(a->net, &p, &ifindex, err, errlen))
		return -1;
	if (endpoint_put(a, r, ifindex, err, errlen))
		goto fail;
	rc = xg_attach(&a->maps, r->veth, XG_ROLE_AGENT, XG_MODE_NATIVE, false);
	if (rc) {
		snprintf(err, errlen, "the agent program on %s: xgate error %d (logged above)",
			 r->veth, rc);
		goto fail;
	}
	return 0;
fail:
	podnet_down(a, r);
	return -1;
}

void podnet_down(struct na_agent *a, struct pod_rt *r)
{
	char err[256];

	if (a->maps_open)
		endpoint_del(a, r, if_nametoindex(r->veth));
	if (na_net_down(a->net, r->netns, r->veth, err, sizeof(err)))
		ctl_log("pod %s: taking its network down: %s", r->p.id, err);
}
