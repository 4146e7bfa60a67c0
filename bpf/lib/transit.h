/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What `transit` does with a frame, as one always-inline function, so that
 * a program holding a device alone can also be the transit of that device:
 * transit.bpf.c is this and nothing else; ingress.bpf.c calls it for the
 * Geneve frames to this host's underlay address when the public NIC is
 * also the underlay NIC (docs/architecture.md, "Session ingress", "One
 * NIC"). Roles come from map contents:
 *  - bouncer: holds the endpoints of a subnet, forwards to their hosts and
 *    answers ARP for them inside the tunnel;
 *  - divider: holds a VPC's subnets (LPM), forwards to a subnet's bouncer,
 *    or to the cluster gateway for subnets of other clusters;
 *  - delivery: decapsulates frames for pods on this host into their veth and
 *    learns where the sender lives (direct path);
 *  - session ingress, dedicated-gateway form: delivers a session's DNATed
 *    frames (and ICMP errors about the session) from the ingress host, and
 *    on the ingress host SNATs the pod's replies and errors and routes them
 *    out (xg_transit_sess).
 * Everything that is not Geneve to this host goes to the stack untouched.
 */
#ifndef XG_TRANSIT_H
#define XG_TRANSIT_H

#include "common.h"
#include "csum.h"
#include "proto.h"
#include "outer.h"
#include "inner.h"
#include "stats.h"
#include "route.h"
#include "arp.h"
#include "tx.h"
#include "pkt.h"
#include "icmp.h"
#include "encap.h"
#include "sess_snat.h"

/* Remember where the inner source lives; refreshes only on change so the
 * steady state is a read. */
XG_INLINE void xg_learn(struct xg_pkt *p, const struct xg_opt_host *opt)
{
	struct xg_ep_key k = {.vni = p->vni, .ip_be = p->inner_src};
	struct xg_cache_entry nc = {};

	if (!opt || !opt->host_be || opt->host_be == p->host->ip_be)
		return;
	if (xg_direct_of(p, p->vni, p->inner_src) == opt->host_be)
		return;
	nc.host_be = opt->host_be;
	nc.learned_ns = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&xg_cache, &k, &nc, BPF_ANY) == 0) {
		xg_direct_changed();
		xg_count(p, XG_R_CACHE_LEARN);
	}
}

/*
 * A session's DNATed datagram (SESS_IN from the ingress host sess_from)
 * too big for the pod's veth. The client is outside the VPC and its path
 * has the pod's veth as its narrowest link, so with DF set it is answered
 * as a router before that link would: a fragmentation needed with the
 * veth's MTU, from the pod's address and quoting the DNATed datagram, i.e.
 * the pod's own error about the session, which leaves as those do (SESS_OUT
 * back to the ingress host, whose transit translates it and its quote to
 * the public endpoint, xg_transit_sess_icmp). Else drop_pod_mtu.
 */
XG_INLINE int xg_sess_too_big(struct xg_pkt *p, struct ethhdr *ieth, int hdr, __u32 sess_from,
			      __u32 mtu)
{
	struct xdp_md *ctx = p->ctx;
	void *data_end = (void *)(long)ctx->data_end;
	struct iphdr *iip = (void *)(ieth + 1);
	struct ethhdr *eth;
	__u32 vni = p->vni;
	__u16 tot_len;
	int rc;

	if ((void *)(iip + 1) > data_end || !xg_icmp_may_answer(iip, data_end) || mtu < 68 ||
	    mtu > 0xffff)
		return XG_DROP(p, DROP_POD_MTU);
	if (bpf_xdp_adjust_head(ctx, hdr))
		return XG_DROP(p, DROP_HEADROOM);
	/* xg_icmp_frag_needed answers from the VPC's gateway address when
	 * (vni, inner_src) names a subnet: VNI 0 names none, so the error
	 * comes from inner_dst, the pod, as the ingress host checks it does */
	p->vni = 0;
	rc = xg_icmp_frag_needed(p, (__u16)mtu);
	p->vni = vni;
	if (rc)
		return xg_count(p, rc), XDP_DROP;
	tot_len = ctx->data_end - ctx->data + XG_ENCAP_LEN - sizeof(struct ethhdr);
	if (bpf_xdp_adjust_head(ctx, -XG_ENCAP_LEN))
		return XG_DROP(p, DROP_HEADROOM);
	eth = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	if (xg_geneve_write(p, eth, data_end, xg_inner_tos((void *)eth + XG_ENCAP_LEN, data_end),
			    tot_len, sess_from, XG_OPT_HOST_SESS_OUT))
		return XG_DROP(p, DROP_HEADROOM);
	return xg_tx(p, eth, sess_from, tot_len, XG_R_ICMP_FRAG_NEEDED);
}

/* Strip the outer headers and hand the inner frame to the pod's veth.
 * sess_from: the ingress host a session's datagram came from, 0 for
 * anything else. */
XG_INLINE int xg_deliver(struct xg_pkt *p, struct ethhdr *inner_eth, const struct xg_endpoint *ep,
			 const struct xg_opt_host *opt, __u32 sess_from, __u32 reason)
{
	int hdr = (void *)inner_eth - (void *)(long)p->ctx->data;
	__u32 ifindex = ep->ifindex, mtu;

	/* The pod's veth would drop it unseen: count it here. No ICMP inside
	 * the VPC: its sender is behind a tunnel, and the pods of a VPC share
	 * one MTU. A session's client is outside and may be told. */
	if (unlikely(!xg_fits_dev(p, ifindex, -hdr, &mtu))) {
		if (sess_from)
			return xg_sess_too_big(p, inner_eth, hdr, sess_from, mtu);
		return XG_DROP(p, DROP_POD_MTU);
	}
	xg_learn(p, opt);
	/* Routed (cross-subnet) frames still carry the gateway MAC. */
	xg_memcpy6(inner_eth->h_dest, ep->mac);
	if (bpf_xdp_adjust_head(p->ctx, hdr))
		return XG_DROP(p, DROP_HEADROOM);
	if (bpf_redirect_map(&xg_txports, ifindex, 0) != XDP_REDIRECT)
		return XG_DROP(p, DROP_TX_PORT);
	xg_count(p, reason);
	return XDP_REDIRECT;
}

/*
 * A session's frame in the dedicated-gateway form (xgate_abi.h,
 * XG_SESS_POD_SIDE): SESS_IN, a DNATed datagram the ingress host sends to a
 * pod of this host; SESS_OUT, a pod's reply its host sends back to this
 * ingress host, SNATed here and routed out to the client. Either must
 * match a session entry of this host, in the frame's VNI, and come from
 * the host that entry names: anything else is drop_sess_spoof, so no host
 * can push a frame into another tenant's pod, or out from another's public
 * endpoint, by naming a session with another VNI.
 */
/*
 * An ICMP error about a session in the dedicated-gateway form (RFC 5508):
 * SESS_IN, an error from outside the ingress host translated toward the
 * pod (its quoted source is the pod's endpoint); SESS_OUT, the pod's own
 * error about a datagram its session delivered (quoted destination),
 * translated here to the public endpoint and routed out. Checked as the
 * datagrams are (xg_transit_sess), on the quoted endpoint; the quote must
 * parse as one we translate and name the outer pod-side address, else
 * drop_sess_icmp_quote: only hosts of the cluster send these frames, and
 * ours never send such a quote.
 */
XG_INLINE int xg_transit_sess_icmp(struct xg_pkt *p, __u32 outer_src, int out, struct ethhdr *ieth,
				   void *data_end)
{
	struct iphdr *iip = (void *)(ieth + 1);
	struct xg_sess_rev_key k = {};
	struct xg_endpoint *ep;
	struct xg_icmp_err e;
	struct xg_sess_rev *r;
	__u32 tot_len;
	int hdr;

	if ((void *)(iip + 1) > data_end)
		return XDP_DROP; /* for the verifier: checked by the caller */
	tot_len = bpf_ntohs(iip->tot_len);
	if (xg_icmp_err_parse(ieth, data_end, tot_len, &e))
		return XG_DROP(p, DROP_SESS_ICMP_QUOTE);
	k.vni = p->vni;
	k.pod_ip_be = xg_load32(out ? (void *)&e.eip->daddr : (void *)&e.eip->saddr);
	k.pod_port_be = out ? e.eports[1] : e.eports[0];
	k.proto = e.eip->protocol;
	if (k.pod_ip_be != (out ? e.ip->saddr : e.ip->daddr))
		return XG_DROP(p, DROP_SESS_ICMP_QUOTE);
	r = bpf_map_lookup_elem(&xg_sess_rev, &k);
	if (!r || r->host_be != outer_src ||
	    !(r->flags & (out ? XG_SESS_FORM_GATEWAY : XG_SESS_POD_SIDE)))
		return XG_DROP(p, DROP_SESS_SPOOF);
	if (!out) {
		ep = xg_endpoint_of(p);
		if (!ep || !(ep->flags & XG_EP_LOCAL))
			return XG_DROP(p, DROP_SESS_NO_POD);
		return xg_deliver(p, ieth, ep, 0, 0, XG_R_SESS_ICMP_DELIVER_GW);
	}
	hdr = (void *)ieth - (void *)(long)p->ctx->data;
	if (bpf_xdp_adjust_head(p->ctx, hdr))
		return XG_DROP(p, DROP_HEADROOM);
	return xg_sess_icmp_out(p, r->pub_ip_be, r->pub_port_be, &r->out, tot_len,
				XG_R_INGRESS_ICMP_SNAT_GW, 1);
}

XG_INLINE int xg_transit_sess(struct xg_pkt *p, __u32 outer_src, const struct xg_opt_host *opt,
			      struct ethhdr *ieth, void *data_end)
{
	struct iphdr *iip = (void *)(ieth + 1);
	int out = opt->flags & XG_OPT_HOST_SESS_OUT;
	struct xg_sess_rev_key k = {};
	struct xg_endpoint *ep;
	struct xg_sess_rev *r;
	__u16 *ports;
	int hdr;

	if ((void *)(iip + 1) <= data_end && ieth->h_proto == bpf_htons(ETH_P_IP) &&
	    iip->protocol == IPPROTO_ICMP)
		return xg_transit_sess_icmp(p, outer_src, out, ieth, data_end);
	if ((void *)(iip + 1) > data_end || ieth->h_proto != bpf_htons(ETH_P_IP) ||
	    (iip->protocol != IPPROTO_TCP && iip->protocol != IPPROTO_UDP) ||
	    (iip->frag_off & bpf_htons(XG_IP_OFFSET)))
		return XG_DROP(p, DROP_SESS_SPOOF); /* no session datagram */
	ports = (void *)iip + iip->ihl * 4;
	if (iip->ihl * 4 + 4 > bpf_ntohs(iip->tot_len) || (void *)(ports + 2) > data_end)
		return XG_DROP(p, DROP_TRUNC_INNER);
	k.vni = p->vni;
	k.pod_ip_be = out ? iip->saddr : iip->daddr;
	k.pod_port_be = out ? ports[0] : ports[1];
	k.proto = iip->protocol;
	r = bpf_map_lookup_elem(&xg_sess_rev, &k);
	if (!r || r->host_be != outer_src ||
	    !(r->flags & (out ? XG_SESS_FORM_GATEWAY : XG_SESS_POD_SIDE)))
		return XG_DROP(p, DROP_SESS_SPOOF);
	if (!out) {
		ep = xg_endpoint_of(p);
		if (!ep || !(ep->flags & XG_EP_LOCAL))
			return XG_DROP(p, DROP_SESS_NO_POD);
		return xg_deliver(p, ieth, ep, 0, outer_src, XG_R_SESS_DELIVER_GW);
	}
	hdr = (void *)ieth - (void *)(long)p->ctx->data;
	if (bpf_xdp_adjust_head(p->ctx, hdr))
		return XG_DROP(p, DROP_HEADROOM);
	return xg_sess_snat_rev(p, r->pub_ip_be, r->pub_port_be, &r->out, 0, XG_R_INGRESS_SNAT_GW,
				1);
}

/* One frame, p filled by xg_pkt_begin() with a host entry. */
XG_INLINE int xg_transit_frame(struct xg_pkt *p)
{
	struct xdp_md *ctx = p->ctx;
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data, *ieth;
	struct xg_opt_host *opt;
	struct xg_endpoint *ep;
	struct xg_outer o;
	struct xg_route rt;
	struct xg_arp *arp;
	struct udphdr *udp;
	struct iphdr *ip;
	__u32 answered_host, dst_be, reason;
	int rc, rerouted = 0;

	/* ---- outer Ethernet / IPv4 / UDP ---- */
	rc = xg_outer_udp(data, data_end, &o);
	if (rc)
		return xg_count(p, rc), xg_reason_is_pass(rc) ? XDP_PASS : XDP_DROP;
	ip = o.ip;
	udp = o.udp;
	if (udp->dest != bpf_htons(XG_GENEVE_PORT))
		return XG_PASS(p, PASS_NOT_GENEVE);
	if (ip->daddr != p->host->ip_be || !p->host->ip_be)
		return XG_PASS(p, PASS_NOT_FOR_US);
	rc = xg_outer_check(ctx, &o);
	if (rc)
		return xg_count(p, rc), XDP_DROP;
	/* the frame now ends with the outer datagram */
	data_end = (void *)(long)ctx->data_end;
	eth = o.eth;
	ip = o.ip;
	udp = o.udp;

	/* ---- Geneve ---- */
	rc = xg_parse_geneve(p, udp, data_end, &opt, &ieth);
	if (rc)
		return xg_count(p, rc), XDP_DROP;
	xg_flow_hash_from_sport(p, udp->source);

	/* A VNI without a VPC is dropped (DROP_VNI_UNKNOWN) before anything
	 * about the inner frame is judged or done; the VPC itself is looked up
	 * only on the paths that do not already prove it exists (xg_vpc_of). */
	rc = xg_parse_inner(p, ieth, data_end, &arp);
	if (rc) {
		if (!xg_vpc_of(p))
			rc = XG_R_DROP_VNI_UNKNOWN;
		return xg_count(p, rc), XDP_DROP;
	}
	if ((void *)(ieth + 1) > data_end) /* for the verifier; checked above */
		return XDP_DROP;
	if (opt && (opt->flags & (XG_OPT_HOST_SESS_IN | XG_OPT_HOST_SESS_OUT)))
		return xg_transit_sess(p, ip->saddr, opt, ieth, data_end);

	/* ---- ARP inside the tunnel: answer if we know the target ---- */
	if (arp && xg_arp_answer(p, ieth, arp, &answered_host)) {
		dst_be = ip->saddr; /* the origin host */
		if (opt) {
			dst_be = opt->host_be ? opt->host_be : dst_be;
			opt->host_be = answered_host;
			opt->flags = 0;
		}
		reason = XG_R_ARP_REPLY;
		goto forward;
	}

	/* ---- a stale direct-path entry of ours came back: forget it ---- */
	if (opt && (opt->flags & XG_OPT_HOST_STALE) && opt->host_be == p->host->ip_be) {
		struct xg_ep_key k = {.vni = p->vni, .ip_be = p->inner_dst};

		if (!xg_vpc_of(p))
			return XG_DROP(p, DROP_VNI_UNKNOWN);
		if (bpf_map_delete_elem(&xg_cache, &k) == 0)
			xg_direct_changed();
		opt->flags = 0;
		rerouted = 1;
	}

	ep = xg_endpoint_of(p);
	if (ep) {
		if (ep->flags & XG_EP_LOCAL)
			return xg_deliver(p, ieth, ep, opt, 0, XG_R_DECAP_LOCAL);
		if (opt)
			opt->flags &= ~XG_OPT_HOST_DIRECT;
		dst_be = ep->host_be;
		reason = rerouted ? XG_R_STALE_REROUTE : XG_R_BOUNCER_FWD;
		goto forward;
	}

	/* The sender believed the destination lives here and it does not:
	 * send the frame back so its host drops the entry and reroutes. */
	if (opt && (opt->flags & XG_OPT_HOST_DIRECT) && opt->host_be) {
		if (!xg_vpc_of(p))
			return XG_DROP(p, DROP_VNI_UNKNOWN);
		opt->flags = XG_OPT_HOST_STALE;
		dst_be = opt->host_be;
		reason = XG_R_STALE_BOUNCE;
		goto forward;
	}

	rc = xg_route_miss(p, &rt, 0);
	if (rc) {
		/* ARP for an address of a subnet whose endpoints we all hold */
		if (arp && rc == XG_R_DROP_NO_ENDPOINT)
			rc = XG_R_DROP_ARP_UNKNOWN;
		return xg_count(p, rc), XDP_DROP;
	}
	dst_be = rt.dst_be;
	reason = rerouted ? XG_R_STALE_REROUTE : rt.reason;
forward:
	/* one call site: the forward path is inlined once, not once per case */
	return xg_forward(p, eth, ip, udp, dst_be, reason);
}

#endif
