/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ICMP errors about a session (RFC 5508): destination unreachable (port
 * unreachable, fragmentation needed...), time exceeded and parameter
 * problem carry the head of the datagram they are about. An error about a
 * session's datagram is translated like the datagram's direction would be:
 * the outer address, and inside the embedded header the address and port
 * the session rewrote, with the embedded IPv4 checksum, the embedded L4
 * checksum when the error carries it (a TCP one only if 18 bytes of the
 * segment are included) and the outer ICMP checksum amended (RFC 1624),
 * else the receiver would drop the error. Only errors whose embedded
 * header is IPv4 without options, TCP or UDP, not a later fragment, with
 * its 8 first L4 bytes (and a total length that has them), and whose
 * outer header has no options and is not fragmented are looked at;
 * anything else is not about a session (the host stack's business).
 */
#ifndef XG_SESS_ICMP_H
#define XG_SESS_ICMP_H

#include "sess.h"

/* linux/icmp.h drags in libc's socket headers: the little we need. */
#define XG_ICMP_DEST_UNREACH  3
#define XG_ICMP_TIME_EXCEEDED 11
#define XG_ICMP_PARAMETERPROB 12

struct xg_icmp_hdr {
	__u8 type;
	__u8 code;
	__u16 checksum;
	__u32 rest; /* unused, or next-hop MTU / pointer */
};

struct xg_icmp_err {
	struct iphdr *ip; /* outer, no options */
	struct xg_icmp_hdr *icmp;
	struct iphdr *eip; /* embedded, no options */
	__u16 *eports;	   /* embedded source and destination ports */
	__u16 *el4sum;	   /* embedded L4 checksum, or NULL if not included */
};

/* The ICMP error in the frame (IPv4 right after Ethernet, tot_len bytes,
 * inside the frame): 0 with *e filled, or -1 if it is not one we translate. */
XG_INLINE int xg_icmp_err_parse(void *data, void *data_end, __u32 tot_len, struct xg_icmp_err *e)
{
	struct iphdr *ip = data + sizeof(struct ethhdr);
	struct xg_icmp_hdr *icmp = (void *)(ip + 1);
	struct iphdr *eip = (void *)(icmp + 1);
	__u16 *eports = (void *)(eip + 1), *sum;
	__u32 need = sizeof(*ip) + sizeof(*icmp) + sizeof(*eip) + 8, off;

	if ((void *)(eports + 4) > data_end || tot_len < need)
		return -1;
	if (ip->ihl != 5 || (ip->frag_off & bpf_htons(XG_IP_MF | XG_IP_OFFSET)))
		return -1;
	if (icmp->type != XG_ICMP_DEST_UNREACH && icmp->type != XG_ICMP_TIME_EXCEEDED &&
	    icmp->type != XG_ICMP_PARAMETERPROB)
		return -1;
	if (eip->version != 4 || eip->ihl != 5 ||
	    (eip->protocol != IPPROTO_TCP && eip->protocol != IPPROTO_UDP))
		return -1;
	/* A quoted later fragment has payload where the ports would be, and
	 * a quoted datagram shorter than its IPv4 header and 8 bytes has none:
	 * neither is a session's (sessions send no fragments). */
	if ((eip->frag_off & bpf_htons(XG_IP_OFFSET)) || bpf_ntohs(eip->tot_len) < sizeof(*eip) + 8)
		return -1;
	e->ip = ip;
	e->icmp = icmp;
	e->eip = eip;
	e->eports = eports;
	e->el4sum = 0;
	/* UDP's checksum is in its first 8 bytes; TCP's at 16, if included */
	off = eip->protocol == IPPROTO_TCP ? 16 : 6;
	sum = (void *)eports + (off & 0x1f);
	if ((void *)(sum + 1) <= data_end && tot_len >= need - 8 + off + 2)
		e->el4sum = sum;
	return 0;
}

/*
 * Translate a parsed error. dnat (toward the pod): outer destination and
 * the embedded source address and port become addr:port; otherwise (from
 * the pod): outer source and the embedded destination. TTL decremented.
 */
XG_INLINE void xg_icmp_err_rewrite(struct xg_icmp_err *e, int dnat, __u32 addr_be, __u16 port_be)
{
	struct iphdr *ip = e->ip, *eip = e->eip;
	__u32 *oap = dnat ? &ip->daddr : &ip->saddr;
	void *eap = dnat ? (void *)&eip->saddr : (void *)&eip->daddr;
	__u16 *epp = dnat ? &e->eports[0] : &e->eports[1];
	__u32 oold = *oap, eold = xg_load32(eap), c, ic;
	__u16 ttl_old, ttl_new, echeck_old = eip->check, eport_old = *epp;

	__builtin_memcpy(&ttl_old, &ip->ttl, 2);
	ttl_new = ttl_old - bpf_htons(0x0100);
	c = xg_csum_chg2((__u16)~ip->check, ttl_old, ttl_new);
	c = xg_csum_chg4(c, oold, addr_be);
	ip->check = ~xg_csum_fold(c);
	__builtin_memcpy(&ip->ttl, &ttl_new, 2);
	*oap = addr_be;

	eip->check = ~xg_csum_fold(xg_csum_chg4((__u16)~echeck_old, eold, addr_be));
	xg_store32(eap, addr_be);
	*epp = port_be;
	ic = xg_csum_chg4((__u16)~e->icmp->checksum, eold, addr_be);
	ic = xg_csum_chg2(ic, echeck_old, eip->check);
	ic = xg_csum_chg2(ic, eport_old, port_be);

	if (e->el4sum && (eip->protocol == IPPROTO_TCP || *e->el4sum)) {
		__u16 old = *e->el4sum, new;

		c = xg_csum_chg4((__u16)~old, eold, addr_be);
		new = ~xg_csum_fold(xg_csum_chg2(c, eport_old, port_be));
		if (eip->protocol == IPPROTO_UDP && !new)
			new = 0xffff;
		*e->el4sum = new;
		ic = xg_csum_chg2(ic, old, new);
	}
	e->icmp->checksum = ~xg_csum_fold(ic);
}

/*
 * Send out the ICMP error at the start of the frame (Ethernet, IPv4,
 * tot_len bytes; a pod's error about a datagram its session delivered)
 * translated to the public endpoint: from the public address, quoting the
 * datagram as the client sent it, next hop from the FIB as for the
 * session's replies. Counted in ctr and under reason. The verdict.
 */
XG_INLINE int xg_sess_icmp_out(struct xg_pkt *p, __u32 pub_ip_be, __u16 pub_port_be,
			       struct xg_sess_ctr *ctr, __u32 tot_len, __u32 reason, int tunnelled)
{
	struct xdp_md *ctx = p->ctx;
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	struct xg_nh_slot *nh;
	struct xg_icmp_err e;
	int rc, excess;

	if (xg_icmp_err_parse(data, data_end, tot_len, &e))
		return XDP_DROP; /* for the verifier: the callers parsed it */
	if (e.ip->ttl <= 1)
		return XG_DROP(p, DROP_TTL);
	rc = xg_sess_route(p, &nh, IPPROTO_ICMP, pub_ip_be, e.ip->daddr, 0, 0, tot_len, tunnelled);
	if (rc)
		return xg_count(p, rc), XDP_DROP;
	excess = xg_ip_excess(ctx, sizeof(struct ethhdr), tot_len);
	if (excess < 0 || xg_ip_trim(ctx, excess))
		return XG_DROP(p, DROP_IP_LEN);
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	if (xg_icmp_err_parse(data, data_end, tot_len, &e))
		return XDP_DROP; /* for the verifier: parsed above */
	xg_icmp_err_rewrite(&e, 0, pub_ip_be, pub_port_be);
	return xg_sess_send(p, data, nh, ctr, tot_len, reason);
}

/*
 * The agent's half: an ICMP error the pod sends about a datagram its
 * session delivered (embedded destination = the pod's session endpoint).
 * On-node form: it leaves translated to the public endpoint. Dedicated-
 * gateway form, on the pod's host: *to_host is set to the ingress host,
 * which the agent encapsulates the error to, untranslated, as it does the
 * session's replies (the ingress host's transit translates it). -1 when
 * the frame is not translated here, else the verdict.
 */
XG_INLINE int xg_sess_icmp_snat(struct xg_pkt *p, __u32 tot_len, __u32 *to_host)
{
	struct xdp_md *ctx = p->ctx;
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	struct xg_sess_rev_key k = {};
	struct xg_icmp_err e;
	struct xg_sess_rev *r;

	if (xg_icmp_err_parse(data, data_end, tot_len, &e))
		return -1;
	k.vni = p->vni;
	k.pod_ip_be = xg_load32(&e.eip->daddr);
	k.pod_port_be = e.eports[1];
	k.proto = e.eip->protocol;
	if (k.pod_ip_be != e.ip->saddr)
		return -1;
	r = bpf_map_lookup_elem(&xg_sess_rev, &k);
	if (!r || (r->flags & XG_SESS_FORM_GATEWAY))
		return -1; /* an ingress host's entry: its pod is elsewhere */
	if (r->flags & XG_SESS_POD_SIDE) {
		*to_host = r->host_be;
		return -1;
	}
	return xg_sess_icmp_out(p, r->pub_ip_be, r->pub_port_be, &r->out, tot_len,
				XG_R_INGRESS_ICMP_SNAT, 0);
}

#endif
