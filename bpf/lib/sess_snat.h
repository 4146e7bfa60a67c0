/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The agent's side of session NAT: the pod's replies, and its ICMP errors
 * about session datagrams, leave translated to the public endpoint. */
#ifndef XG_SESS_SNAT_H
#define XG_SESS_SNAT_H

#include "sess.h"
#include "sess_icmp.h"

/*
 * Translate the session reply at the start of the frame (Ethernet, IPv4;
 * r is its reverse entry): its source becomes the session's public
 * endpoint and it leaves toward the next hop the kernel's FIB gives for
 * the client, as if the host had routed it in from p->ifindex. Counted
 * under reason. tunnelled: it came out of the overlay (xg_sess_route).
 * Returns the verdict.
 */
XG_INLINE int xg_sess_snat_rev(struct xg_pkt *p, __u32 pub_ip_be, __u16 pub_port_be,
			       struct xg_sess_ctr *ctr, struct xg_sess_rslot *slot, __u32 reason,
			       int tunnelled)
{
	struct xdp_md *ctx = p->ctx;
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct xg_nh_slot *nh;
	__u32 tot_len, hlen;
	__u16 *ports;
	int rc, excess;
	void *l4;

	if ((void *)(ip + 1) > data_end)
		return XG_DROP(p, DROP_TRUNC_INNER);
	hlen = ip->ihl * 4;
	tot_len = bpf_ntohs(ip->tot_len);
	ports = (void *)ip + hlen;
	if (hlen + 4 > tot_len || (void *)(ports + 2) > data_end)
		return XG_DROP(p, DROP_TRUNC_INNER);
	if (ip->frag_off & bpf_htons(XG_IP_MF | XG_IP_OFFSET))
		return XG_DROP(p, DROP_SESS_FRAGMENT);
	if (hlen != sizeof(*ip))
		return XG_DROP(p, DROP_SESS_IP_OPTIONS);
	l4 = ip + 1;
	rc = xg_sess_l4_check(l4, data_end, ip->protocol, tot_len);
	if (rc)
		return xg_count(p, rc), XDP_DROP;
	if (ip->ttl <= 1)
		return XG_DROP(p, DROP_TTL);

	rc = xg_sess_route(p, &nh, ip->protocol, pub_ip_be, ip->daddr, pub_port_be, ports[1],
			   tot_len, tunnelled);
	if (rc)
		return xg_count(p, rc), XDP_DROP;

	excess = xg_ip_excess(ctx, sizeof(*eth), tot_len);
	if (excess < 0)
		return XG_DROP(p, DROP_IP_LEN);
	rc = xg_sess_trim_rewrite(ctx, excess, 0, pub_ip_be, pub_port_be, &eth, &ip, &l4);
	if (rc)
		return rc < 0 ? XDP_DROP : (xg_count(p, rc), XDP_DROP);
	rc = xg_sess_send(p, eth, nh, ctr, tot_len, reason);
	if (slot && rc != XDP_DROP)
		xg_sess_rslot_account(p, slot, tot_len);
	return rc;
}

/*
 * The agent's half: a datagram the pod (VNI p->vni) sends from a session's
 * pod endpoint. On-node form: SNATed and routed out (xg_sess_snat_rev).
 * Dedicated-gateway form, on the pod's host: *to_host is set to the
 * ingress host, which the agent encapsulates the reply (or the pod's ICMP
 * error about a session) to, untranslated, counted under *reason (the
 * ingress host's transit translates it). Returns -1 when the frame is not
 * translated here (the agent goes on as usual), else the verdict.
 */
XG_INLINE int xg_sess_snat(struct xg_pkt *p, __u32 *to_host, __u32 *reason)
{
	struct xdp_md *ctx = p->ctx;
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct xg_sess_rev_key k = {};
	struct xg_sess_rslot *r;
	__u32 tot_len, hlen;
	__u16 *ports;

	if ((void *)(ip + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP))
		return -1;
	if (ip->protocol == IPPROTO_ICMP) {
		*reason = XG_R_INGRESS_ICMP_REPLY_GW;
		return xg_sess_icmp_snat(p, bpf_ntohs(ip->tot_len), to_host);
	}
	if (ip->protocol != IPPROTO_TCP && ip->protocol != IPPROTO_UDP)
		return -1;
	if (ip->frag_off & bpf_htons(XG_IP_OFFSET))
		return -1; /* no ports: cannot be told apart from other traffic */
	hlen = ip->ihl * 4;
	tot_len = bpf_ntohs(ip->tot_len);
	ports = (void *)ip + hlen;
	if (hlen + 4 > tot_len || (void *)(ports + 2) > data_end)
		return -1; /* xg_parse_inner checked version, ihl and tot_len */
	k.vni = p->vni;
	k.pod_ip_be = ip->saddr;
	k.pod_port_be = ports[0];
	k.proto = ip->protocol;
	r = xg_sess_rev_of(p, &k);
	if (!r || (r->flags & XG_SESS_FORM_GATEWAY))
		return -1; /* an ingress host's entry: its pod is elsewhere */
	if (r->flags & XG_SESS_POD_SIDE) {
		*to_host = r->host_be;
		*reason = XG_R_INGRESS_REPLY_GW;
		return -1;
	}
	return xg_sess_snat_rev(p, r->pub_ip_be, r->pub_port_be, 0, r, XG_R_INGRESS_SNAT, 0);
}

#endif
