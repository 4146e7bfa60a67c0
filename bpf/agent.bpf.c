// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * agent: XDP on the host side of a pod's veth, i.e. on what the pod sends.
 *  - checks the pod sends as itself (IP and MAC), nothing else leaves;
 *  - answers the pod's ARP when this host knows the answer;
 *  - delivers straight into another local pod's veth;
 *  - otherwise encapsulates in Geneve (VNI = VPC) toward the destination's
 *    host when known (endpoint map or direct-path cache), else the subnet's
 *    bouncer, the VPC's divider or the cluster gateway, and sends it out of
 *    the underlay NIC.
 *  - a session's reply (xg_sess_rev hit) is SNATed back to the session's
 *    public endpoint and routed out by the FIB, as are the pod's ICMP
 *    errors about session datagrams (lib/sess_snat.h); in the dedicated
 *    gateway form it is encapsulated, untranslated, to the ingress host.
 * Ingress toward the pod is done by transit on the NIC (decap + redirect),
 * and for sessions by ingress on the public NIC (DNAT + redirect).
 */
#include "lib/common.h"
#include "lib/csum.h"
#include "lib/proto.h"
#include "lib/inner.h"
#include "lib/stats.h"
#include "lib/route.h"
#include "lib/arp.h"
#include "lib/tx.h"
#include "lib/icmp.h"
#include "lib/encap.h"
#include "lib/pkt.h"
#include "lib/sess_snat.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

XG_INLINE int xg_encap(struct xg_pkt *p, __u32 dst_be, __u8 opt_flags, __u32 reason)
{
	struct xdp_md *ctx = p->ctx;
	struct ethhdr *eth, *ieth;
	struct iphdr *iip;
	struct xg_nh_slot *nh;
	__u32 mtu, inner_len = ctx->data_end - ctx->data;
	__u16 tot_len = inner_len + XG_ENCAP_LEN - sizeof(struct ethhdr);
	__u8 tos = 0;
	int rc;

	if (unlikely(dst_be == p->host->ip_be))
		return XG_DROP(p, DROP_LOOP);

	ieth = (void *)(long)ctx->data;
	iip = (void *)(ieth + 1);
	if ((void *)(iip + 1) > (void *)(long)ctx->data_end)
		iip = 0;
	else if (ieth->h_proto == bpf_htons(ETH_P_IP))
		tos = iip->tos; /* DSCP and ECN copied out (RFC 6040 normal mode) */
	else
		iip = 0;

	/* Route (and check the MTU) before touching the frame: a too-big DF
	 * datagram becomes an ICMP error to the pod instead of a silent drop. */
	rc = xg_nexthop(p, dst_be, tot_len, &nh, &mtu);
	/* A direct path the data plane learned leads to a host userspace was
	 * never told of, so nothing keeps the kernel's entry for it and the GC
	 * may have taken it (docs/architecture.md, "Underlay neighbours").
	 * Such a frame takes the path the direct one shortcuts instead: the
	 * subnet's bouncer or the divider, whose entries xgate keeps. */
	if (unlikely(rc == XG_R_DROP_NO_NEIGH && (opt_flags & XG_OPT_HOST_DIRECT))) {
		struct xg_route rt = {};

		if (!xg_route_miss(p, &rt, 1) && rt.dst_be != p->host->ip_be) {
			dst_be = rt.dst_be;
			opt_flags = 0;
			reason = rt.reason;
			rc = xg_nexthop(p, dst_be, tot_len, &nh, &mtu);
		}
	}
	if (unlikely(rc))
		return xg_nexthop_refused(p, rc, iip, (void *)(long)ctx->data_end, mtu);

	if (bpf_xdp_adjust_head(ctx, -XG_ENCAP_LEN))
		return XG_DROP(p, DROP_HEADROOM);
	eth = (void *)(long)ctx->data;
	if (xg_geneve_write(p, eth, (void *)(long)ctx->data_end, tos, tot_len, dst_be, opt_flags))
		return XG_DROP(p, DROP_HEADROOM);

	return xg_send(p, eth, nh, reason);
}

/* A frame for a pod on this host that exceeds that pod's MTU: an ICMP
 * error back to the sender where it may have one (DF set), as for the
 * underlay MTU in xg_encap, else dropped and counted. */
XG_INLINE int xg_local_too_big(struct xg_pkt *p, const struct xg_arp *arp, __u32 mtu)
{
	void *data_end = (void *)(long)p->ctx->data_end;
	struct iphdr *iip = (void *)(long)p->ctx->data + sizeof(struct ethhdr);
	int rc;

	if (arp || (void *)(iip + 1) > data_end || !xg_icmp_may_answer(iip, data_end))
		return XG_DROP(p, DROP_POD_MTU);
	rc = xg_icmp_frag_needed(p, mtu);
	if (rc)
		return xg_count(p, rc), XDP_DROP;
	xg_count(p, XG_R_ICMP_FRAG_NEEDED);
	return XDP_TX;
}

/* Where a frame for (p->vni, p->inner_dst) goes, decided from the maps (the
 * slow path of xg_agent_decide): 0 with *d filled, or a drop reason. */
XG_INLINE int xg_agent_lookup(struct xg_pkt *p, struct xg_agc_slot *d, int *per_flow)
{
	struct xg_endpoint *ep = xg_endpoint_of(p);
	struct xg_route rt = {};
	int rc;

	*per_flow = 0;
	d->opt_flags = 0;
	if (ep) {
		if (ep->flags & XG_EP_LOCAL) {
			d->kind = XG_AGC_LOCAL;
			d->ifindex = ep->ifindex;
			xg_memcpy6(d->mac, ep->mac);
			return 0;
		}
		/* We hold the subnet's endpoints (bouncer host): authoritative. */
		d->kind = XG_AGC_ENCAP;
		d->dst_be = ep->host_be;
		d->reason = XG_R_ENCAP_DIRECT;
		return 0;
	}
	d->dst_be = xg_direct_of(p, p->vni, p->inner_dst);
	if (d->dst_be) {
		d->kind = XG_AGC_ENCAP;
		d->opt_flags = XG_OPT_HOST_DIRECT;
		d->reason = XG_R_ENCAP_DIRECT;
		return 0;
	}
	rc = xg_route_miss(p, &rt, 1); /* DROP_VNI_UNKNOWN if no VPC */
	if (rc)
		return rc;
	d->kind = XG_AGC_ENCAP;
	d->dst_be = rt.dst_be;
	d->reason = (__u16)rt.reason;
	*per_flow = rt.per_flow;
	return 0;
}

/* The decision for p's destination through the per-CPU decision cache
 * (xg_agcache): one slot instead of the endpoint, direct-path and subnet
 * slots in turn. Valid under the configuration generation and the direct
 * path's (dgen), like the slots it replaces; a flow-dependent pick is
 * decided again for every packet. */
XG_INLINE int xg_agent_decide(struct xg_pkt *p, struct xg_agc_slot *d)
{
	__u32 i = xg_slot_of_vni_ip(p->vni, p->inner_dst, XG_AGCACHE_SLOTS);
	struct xg_agc_slot *c = bpf_map_lookup_elem(&xg_agcache, &i);
	int rc, per_flow;

	if (likely(c && c->key.ip_be == p->inner_dst && c->key.vni == p->vni &&
		   c->dgen == p->dgen && c->kind != XG_AGC_NONE &&
		   xg_slot_fresh(p, c->gen, c->expires))) {
		*d = *c;
		return 0;
	}
	rc = xg_agent_lookup(p, d, &per_flow);
	if (c) {
		if (rc || per_flow) {
			c->kind = XG_AGC_NONE;
		} else {
			*c = *d;
			c->key.vni = p->vni;
			c->key.ip_be = p->inner_dst;
			c->dgen = p->dgen;
			xg_slot_stamp(p, &c->gen, &c->expires);
		}
	}
	return rc;
}

SEC("xdp")
int xg_agent(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct xg_pkt p = {.ctx = ctx};
	struct xg_agc_slot d = {};
	struct ethhdr *eth = data;
	struct xg_iface *ifc;
	struct xg_arp *arp;
	__u32 host_be, mtu;
	int rc;

	ifc = xg_pkt_begin(&p, ctx);
	if (!p.host)
		return XDP_PASS;
	if (!ifc || !(ifc->flags & XG_IFACE_HAS_POD))
		return XG_PASS(&p, PASS_NO_CONFIG);
	if (!p.host->ip_be)
		return XG_DROP(&p, DROP_NO_HOST);
	p.vni = ifc->vni;

	rc = xg_parse_inner(&p, eth, data_end, &arp);
	if (rc)
		return xg_count(&p, rc), XDP_DROP;
	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	/* A pod speaks only as itself: no spoofed IP (or ARP sender) or MAC. */
	if (p.inner_src != ifc->pod_ip_be || !xg_mac_eq(eth->h_source, ifc->pod_mac))
		return XG_DROP(&p, DROP_SPOOF);

	if (arp && xg_arp_answer(&p, eth, arp, &host_be)) {
		xg_count(&p, XG_R_ARP_REPLY);
		return XDP_TX;
	}

	rc = xg_agent_decide(&p, &d);
	/* A session's reply (or the pod's ICMP error about a session) leaves
	 * SNATed to its public endpoint (sess_snat.h). It goes to a client
	 * outside the VPC, so only what the VPC routes to no endpoint (divider,
	 * gateway, nowhere) is looked up: the pod-to-pod paths pay nothing. */
	if (!arp && (rc || (d.kind == XG_AGC_ENCAP &&
			    (d.reason == XG_R_ENCAP_DIVIDER || d.reason == XG_R_ENCAP_GATEWAY)))) {
		__u32 to_host = 0, reason = 0;
		int v = xg_sess_snat(&p, &to_host, &reason);

		if (v >= 0)
			return v;
		if (to_host) { /* dedicated-gateway form: back to the ingress host */
			d.kind = XG_AGC_ENCAP;
			d.dst_be = to_host;
			d.opt_flags = XG_OPT_HOST_SESS_OUT;
			d.reason = reason;
			rc = 0;
		}
	}
	if (rc) {
		/* ARP for an address of a subnet whose endpoints we all hold */
		if (arp && rc == XG_R_DROP_NO_ENDPOINT)
			rc = XG_R_DROP_ARP_UNKNOWN;
		return xg_count(&p, rc), XDP_DROP;
	}
	if (d.kind == XG_AGC_LOCAL) {
		if (d.ifindex == p.ifindex)
			return XG_DROP(&p, DROP_LOOP);
		if (unlikely(!xg_fits_dev(&p, d.ifindex, 0, &mtu)))
			return xg_local_too_big(&p, arp, mtu);
		xg_memcpy6(eth->h_dest, d.mac);
		if (bpf_redirect_map(&xg_txports, d.ifindex, 0) != XDP_REDIRECT)
			return XG_DROP(&p, DROP_TX_PORT);
		xg_count(&p, XG_R_AGENT_LOCAL);
		return XDP_REDIRECT;
	}
	/* one call site: the encap path is inlined once, not once per case */
	return xg_encap(&p, d.dst_be, d.opt_flags, d.reason);
}
