// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ingress: XDP on a node's public NIC (session ingress, on-node form). A
 * TCP or UDP datagram to a session's public address and port is DNATed to
 * the session's pod (address and port; the client's source is kept) and
 * redirected into the pod's veth, found through xg_endpoint as transit
 * delivers to local pods. Everything else is the host's: XDP_PASS, so ssh
 * and the daemons keep working, as do ICMP messages other than errors about
 * a session's datagrams (lib/sess_icmp.h). The pod's replies are SNATed by
 * `agent` on the pod's veth (lib/sess_snat.h). Dedicated-gateway form
 * (XG_SESS_FORM_GATEWAY): the DNATed frame is encapsulated toward the pod's
 * host instead, whose transit delivers it; the replies come back through
 * the overlay and transit here SNATs them, and ICMP errors about a session
 * take the same ways (xg_ingress_icmp_gw). One NIC: on a host whose public
 * NIC is also its underlay NIC, this program is that device's transit too:
 * a Geneve datagram to the host's underlay address goes to transit's code
 * (lib/transit.h), everything else is judged as above. Policies:
 * docs/architecture.md, "Session ingress".
 */
#include "lib/common.h"
#include "lib/csum.h"
#include "lib/stats.h"
#include "lib/route.h"
#include "lib/tx.h"
#include "lib/pkt.h"
#include "lib/icmp.h"
#include "lib/encap.h"
#include "lib/sess.h"
#include "lib/sess_icmp.h"
#include "lib/transit.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/*
 * Dedicated-gateway form of xg_ingress_icmp: the translated error takes
 * the session's way in, Geneve toward the pod's host flagged SESS_IN (that
 * host's transit checks it against its entry as it does the datagrams),
 * with the flow hash of the session's forward datagrams, so it takes their
 * underlay path and outer source port. An error never answers an error: a
 * refused next hop (a tunnel too small for it included) is only counted.
 */
XG_INLINE int xg_ingress_icmp_gw(struct xg_pkt *p, struct xg_sess *s, __u32 tot_len)
{
	struct xdp_md *ctx = p->ctx;
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	__u16 outer_len = tot_len + XG_ENCAP_LEN, fl[2];
	struct xg_nh_slot *nh;
	struct xg_icmp_err e;
	struct ethhdr *eth;
	struct iphdr *ip;
	int rc, excess;
	__u32 mtu = 0;

	if (xg_icmp_err_parse(data, data_end, tot_len, &e))
		return XDP_DROP; /* for the verifier: parsed by the caller */
	excess = xg_ip_excess(ctx, sizeof(struct ethhdr), tot_len);
	if (excess < 0)
		return XG_DROP(p, DROP_IP_LEN);
	/* the session's forward flow: client -> pod, client port, pod port */
	p->inner_src = xg_load32(&e.eip->daddr);
	p->inner_dst = s->pod_ip_be;
	fl[0] = e.eports[1];
	fl[1] = s->pod_port_be;
	__builtin_memcpy(&p->flow, fl, sizeof(fl));
	p->flow ^= e.eip->protocol;
	rc = xg_nexthop(p, s->host_be, outer_len, &nh, &mtu);
	if (unlikely(rc))
		return xg_count(p, rc), XDP_DROP;
	p->vni = s->vni;
	if (xg_ip_trim(ctx, excess))
		return XG_DROP(p, DROP_IP_LEN);
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	if (xg_icmp_err_parse(data, data_end, tot_len, &e))
		return XDP_DROP; /* for the verifier: parsed above */
	xg_icmp_err_rewrite(&e, 1, s->pod_ip_be, s->pod_port_be);

	if (bpf_xdp_adjust_head(ctx, -XG_ENCAP_LEN))
		return XG_DROP(p, DROP_HEADROOM);
	eth = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	ip = (void *)eth + XG_ENCAP_LEN + sizeof(*eth);
	if ((void *)(ip + 1) > data_end)
		return XG_DROP(p, DROP_HEADROOM);
	if (xg_geneve_write(p, eth, data_end, ip->tos, outer_len, s->host_be, XG_OPT_HOST_SESS_IN))
		return XG_DROP(p, DROP_HEADROOM);
	rc = xg_send(p, eth, nh, XG_R_INGRESS_ICMP_DNAT_GW);
	if (rc != XDP_DROP)
		xg_sess_account(p, &s->in, tot_len);
	return rc;
}

/*
 * An ICMP error about a session's datagram (one its pod sent, translated
 * on the way out), as RFC 5508 wants: translated back and delivered to the
 * pod, so its TCP or UDP socket learns of an unreachable client or a
 * smaller path MTU. Every other ICMP message is the host's business.
 */
XG_INLINE int xg_ingress_icmp(struct xg_pkt *p, __u32 tot_len)
{
	struct xdp_md *ctx = p->ctx;
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	struct xg_sess_key k = {};
	struct xg_endpoint *ep;
	struct xg_icmp_err e;
	struct ethhdr *eth;
	struct xg_sess *s;
	__u32 mtu;
	int excess;

	if (xg_icmp_err_parse(data, data_end, tot_len, &e))
		return XG_PASS(p, PASS_NOT_L4);
	k.ip_be = xg_load32(&e.eip->saddr);
	k.port_be = e.eports[0];
	k.proto = e.eip->protocol;
	if (k.ip_be != e.ip->daddr)
		return XG_PASS(p, PASS_NOT_L4); /* not about a datagram from here */
	s = bpf_map_lookup_elem(&xg_sess, &k);
	if (!s || (s->flags & XG_SESS_POD_SIDE))
		return XG_PASS(p, PASS_NOT_L4);
	if (e.ip->ttl <= 1)
		return XG_DROP(p, DROP_TTL);
	if (s->flags & XG_SESS_FORM_GATEWAY)
		return xg_ingress_icmp_gw(p, s, tot_len);
	p->vni = s->vni;
	p->inner_dst = s->pod_ip_be;
	ep = xg_endpoint_of(p);
	if (!ep || !(ep->flags & XG_EP_LOCAL))
		return XG_DROP(p, DROP_SESS_NO_POD);
	excess = xg_ip_excess(ctx, sizeof(struct ethhdr), tot_len);
	if (excess < 0)
		return XG_DROP(p, DROP_IP_LEN);
	if (unlikely(!xg_fits_dev(p, ep->ifindex, -excess, &mtu)))
		return XG_DROP(p, DROP_POD_MTU);
	if (xg_ip_trim(ctx, excess))
		return XG_DROP(p, DROP_IP_LEN);
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	if (xg_icmp_err_parse(data, data_end, tot_len, &e))
		return XDP_DROP; /* for the verifier: parsed above */
	xg_icmp_err_rewrite(&e, 1, s->pod_ip_be, s->pod_port_be);
	eth = data;
	xg_memcpy6(eth->h_source, eth->h_dest);
	xg_memcpy6(eth->h_dest, ep->mac);
	if (bpf_redirect_map(&xg_txports, ep->ifindex, 0) != XDP_REDIRECT)
		return XG_DROP(p, DROP_TX_PORT);
	xg_sess_account(p, &s->in, tot_len);
	xg_count(p, XG_R_INGRESS_ICMP_DNAT);
	return XDP_REDIRECT;
}

/*
 * On-node form: a client datagram that fits the public link but not the
 * pod's veth. With DF set it is answered as a router before a smaller link
 * would, from the public address (the address the client sent to, so its
 * socket takes the error) with the pod's MTU, back out of the NIC; the
 * client's PMTU discovery then fits what it sends. Else dropped, counted.
 */
XG_INLINE int xg_ingress_too_big(struct xg_pkt *p, const struct iphdr *ip, const void *data_end,
				 __u32 mtu)
{
	int rc;

	if (!xg_icmp_may_answer(ip, data_end) || mtu < 68 || mtu > 0xffff)
		return XG_DROP(p, DROP_POD_MTU);
	/* xg_icmp_frag_needed answers from the VPC's gateway address when
	 * (vni, inner_src) names a subnet: VNI 0 names none, so the error
	 * comes from inner_dst, the public address */
	p->vni = 0;
	p->inner_src = ip->saddr;
	p->inner_dst = ip->daddr;
	rc = xg_icmp_frag_needed(p, (__u16)mtu);
	if (rc)
		return xg_count(p, rc), XDP_DROP;
	xg_count(p, XG_R_ICMP_FRAG_NEEDED);
	return XDP_TX;
}

/*
 * Dedicated-gateway form: the DNATed frame enters the session's VPC,
 * Geneve-encapsulated toward the pod's host (s->host_be), flagged SESS_IN
 * so that host's transit checks it against its own entry. The underlay
 * route and its MTU are checked before anything changes: a datagram too
 * big for the tunnel with DF set is answered, from the public address,
 * with a fragmentation needed carrying what fits (the client's PMTU
 * discovery then fits its segments), else dropped (drop_too_big).
 */
XG_INLINE int xg_ingress_gw(struct xg_pkt *p, struct xg_sess_slot *s, __u32 tot_len, int excess)
{
	struct xdp_md *ctx = p->ctx;
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	__u16 outer_len = tot_len + XG_ENCAP_LEN;
	struct xg_nh_slot *nh;
	struct ethhdr *eth;
	struct iphdr *ip = data + sizeof(*eth);
	__u32 mtu = 0;
	void *l4;
	int rc;

	if ((void *)(ip + 1) > data_end)
		return XDP_DROP; /* for the verifier: checked by the caller */
	p->inner_src = ip->saddr;
	p->inner_dst = ip->daddr;
	rc = xg_nexthop(p, s->host_be, outer_len, &nh, &mtu);
	if (unlikely(rc)) /* p->vni is still 0: an ICMP error is from the public address */
		return xg_nexthop_refused(p, rc, ip, data_end, mtu);
	p->vni = s->vni;

	rc = xg_sess_trim_rewrite(ctx, excess, 1, s->pod_ip_be, s->pod_port_be, &eth, &ip, &l4);
	if (rc)
		return rc < 0 ? XDP_DROP : (xg_count(p, rc), XDP_DROP);
	p->inner_dst = s->pod_ip_be;
	p->flow = xg_load32(l4) ^ ip->protocol;

	if (bpf_xdp_adjust_head(ctx, -XG_ENCAP_LEN))
		return XG_DROP(p, DROP_HEADROOM);
	eth = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	ip = (void *)eth + XG_ENCAP_LEN + sizeof(*eth);
	if ((void *)(ip + 1) > data_end)
		return XG_DROP(p, DROP_HEADROOM);
	if (xg_geneve_write(p, eth, data_end, ip->tos, outer_len, s->host_be, XG_OPT_HOST_SESS_IN))
		return XG_DROP(p, DROP_HEADROOM);
	xg_sess_slot_account(p, s, tot_len);
	return xg_send(p, eth, nh, XG_R_INGRESS_DNAT_GW);
}

/*
 * Is this the underlay's: UDP to the Geneve port of this host's underlay
 * address, arriving on the underlay NIC? Told by device, address and port
 * alone, before any session lookup, so the underlay costs no lookup and no
 * session can capture it: on a host whose public address is also its
 * underlay address, UDP to port 6081 there is the underlay's (libxgate
 * refuses such a session). A later fragment has no port (its bytes there
 * are payload): not the underlay's, the host stack gets it as transit
 * would give it. The device test keeps a two-NIC host's public side out
 * of the overlay: Geneve that reaches its public NIC, whatever address it
 * names, is the host's (pass_no_session), as before.
 */
XG_INLINE int xg_is_underlay(const struct xg_pkt *p, struct iphdr *ip, void *data_end)
{
	struct udphdr *udp = (void *)ip + ip->ihl * 4;

	if (ip->protocol != IPPROTO_UDP || ip->daddr != p->host->ip_be || !p->host->ip_be ||
	    p->ifindex != p->host->nic_ifindex)
		return 0;
	if ((ip->frag_off & bpf_htons(XG_IP_OFFSET)) || ip->ihl < 5 || (void *)(udp + 1) > data_end)
		return 0;
	return udp->dest == bpf_htons(XG_GENEVE_PORT);
}

SEC("xdp")
int xg_ingress(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct xg_pkt p = {.ctx = ctx};
	struct ethhdr *eth = data;
	struct xg_sess_key k = {};
	struct xg_endpoint *ep;
	struct iphdr *ip;
	struct xg_sess_slot *s;
	__u32 tot_len, hlen, mtu;
	__u16 *ports;
	int rc, excess;
	void *l4;

	xg_pkt_begin(&p, ctx);
	if (!p.host)
		return XDP_PASS;

	if ((void *)(eth + 1) > data_end)
		return XG_DROP(&p, DROP_TRUNC_ETH);
	if (eth->h_proto != bpf_htons(ETH_P_IP))
		return XG_PASS(&p, PASS_NOT_IP);
	ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > data_end)
		return XG_DROP(&p, DROP_TRUNC_IP);
	if (xg_is_underlay(&p, ip, data_end))
		return xg_transit_frame(&p); /* the one-NIC host's underlay */
	hlen = ip->ihl * 4;
	tot_len = bpf_ntohs(ip->tot_len);
	if (ip->version != 4 || hlen < sizeof(*ip) || tot_len < hlen)
		return XG_DROP(&p, DROP_BAD_IP);
	excess = xg_ip_excess(ctx, sizeof(*eth), tot_len);
	if (excess < 0)
		return XG_DROP(&p, DROP_IP_LEN);
	if (ip->protocol == IPPROTO_ICMP)
		return xg_ingress_icmp(&p, tot_len);
	if (ip->protocol != IPPROTO_TCP && ip->protocol != IPPROTO_UDP)
		return XG_PASS(&p, PASS_NOT_L4);
	/* A non-first fragment has no ports: nothing tells a session's from
	 * the host's, so the host stack gets it (and, having no first
	 * fragment for it, drops it after its reassembly timeout). */
	if (ip->frag_off & bpf_htons(XG_IP_OFFSET))
		return XG_PASS(&p, PASS_FRAGMENT);
	ports = (void *)ip + hlen;
	if (hlen + 4 > tot_len || (void *)(ports + 2) > data_end)
		return ip->protocol == IPPROTO_TCP ? XG_DROP(&p, DROP_TRUNC_TCP)
						   : XG_DROP(&p, DROP_TRUNC_UDP);

	k.ip_be = ip->daddr;
	k.port_be = ports[1];
	k.proto = ip->protocol;
	s = xg_sess_of(&p, &k);
	if (!s || (s->flags & XG_SESS_POD_SIDE)) /* the pod's host's half of form 2 */
		return XG_PASS(&p, PASS_NO_SESSION);

	if (ip->frag_off & bpf_htons(XG_IP_MF))
		return XG_DROP(&p, DROP_SESS_FRAGMENT);
	if (hlen != sizeof(*ip))
		return XG_DROP(&p, DROP_SESS_IP_OPTIONS);
	rc = xg_sess_l4_check(ip + 1, data_end, ip->protocol, tot_len);
	if (rc)
		return xg_count(&p, rc), XDP_DROP;
	if (ip->ttl <= 1)
		return XG_DROP(&p, DROP_TTL);

	if (s->flags & XG_SESS_FORM_GATEWAY)
		return xg_ingress_gw(&p, s, tot_len, excess);
	/* On-node form: the pod is behind a veth of this host. */
	p.vni = s->vni;
	p.inner_dst = s->pod_ip_be;
	ep = xg_endpoint_of(&p);
	if (!ep || !(ep->flags & XG_EP_LOCAL))
		return XG_DROP(&p, DROP_SESS_NO_POD);
	if (unlikely(!xg_fits_dev(&p, ep->ifindex, -excess, &mtu)))
		return xg_ingress_too_big(&p, ip, data_end, mtu);

	rc = xg_sess_trim_rewrite(ctx, excess, 1, s->pod_ip_be, s->pod_port_be, &eth, &ip, &l4);
	if (rc)
		return rc < 0 ? XDP_DROP : (xg_count(&p, rc), XDP_DROP);
	/* As a router would: from the host, to the pod's MAC. */
	xg_memcpy6(eth->h_source, eth->h_dest);
	xg_memcpy6(eth->h_dest, ep->mac);
	if (bpf_redirect_map(&xg_txports, ep->ifindex, 0) != XDP_REDIRECT)
		return XG_DROP(&p, DROP_TX_PORT);
	xg_sess_slot_account(&p, s, tot_len);
	xg_count(&p, XG_R_INGRESS_DNAT);
	return XDP_REDIRECT;
}
