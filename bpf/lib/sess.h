/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Session NAT: what `ingress` (DNAT on the public NIC) and `agent` (SNAT of
 * the pod's replies on its veth) share. The maps are in maps.h (every
 * object has them, so they exist as soon as the instance does); the
 * policies are in docs/architecture.md, "Session ingress":
 *  - only TCP and UDP datagrams without IPv4 options, not fragmented, are
 *    translated; a fragment or options on a session's 5-tuple is dropped
 *    and counted (a first fragment's ports would be rewritten while the
 *    rest of the datagram, which has none, could not be);
 *  - the L4 header must be whole and consistent (UDP length = datagram
 *    payload, TCP data offset inside the datagram) before we rewrite it;
 *  - TTL is decremented (the host routes the packet, as the kernel's NAT
 *    would); a packet that would leave with TTL 0 is dropped.
 * Checksums: RFC 1624 incremental updates of the IPv4 header checksum and
 * of the TCP/UDP checksum (pseudo-header address and the port); a UDP
 * checksum of 0 (none) stays 0, a result of 0 is sent as 0xffff (RFC 768).
 */
#ifndef XG_SESS_H
#define XG_SESS_H

#include <linux/tcp.h>

#include "csum.h"
#include "iplen.h"
#include "stats.h"
#include "cache.h"

/* The L4 header of a session datagram (20-byte IPv4 header, tot_len bytes
 * in all, proto TCP or UDP): 0 if it may be rewritten, or a drop reason. */
XG_INLINE int xg_sess_l4_check(void *l4, void *data_end, __u8 proto, __u32 tot_len)
{
	__u32 l4_len = tot_len - sizeof(struct iphdr);

	if (proto == IPPROTO_UDP) {
		struct udphdr *udp = l4;

		if (l4_len < sizeof(*udp) || (void *)(udp + 1) > data_end)
			return XG_R_DROP_TRUNC_UDP;
		if (bpf_ntohs(udp->len) != l4_len)
			return XG_R_DROP_BAD_UDP_LEN;
		return 0;
	}
	struct tcphdr *tcp = l4;

	if (l4_len < sizeof(*tcp) || (void *)(tcp + 1) > data_end)
		return XG_R_DROP_TRUNC_TCP;
	if (tcp->doff < 5 || tcp->doff * 4u > l4_len)
		return XG_R_DROP_TCP_BAD_DOFF;
	return 0;
}

/* Where the TCP or UDP checksum of a checked session datagram is, or NULL
 * (cannot happen after xg_sess_l4_check; the verifier wants the bound). */
XG_INLINE __u16 *xg_sess_l4sum(void *l4, void *data_end, __u8 proto)
{
	/* One pointer, one bound: per-protocol branches get merged by the
	 * compiler into a select the verifier cannot follow. */
	__u32 off = proto == IPPROTO_TCP ? __builtin_offsetof(struct tcphdr, check)
					 : __builtin_offsetof(struct udphdr, check);
	__u16 *sum = l4 + (off & 0x1f);

	return (void *)(sum + 1) > data_end ? 0 : sum;
}

/*
 * Rewrite one address and one port of a checked session datagram (ip has
 * no options, l4 follows it and holds at least a UDP header, l4sum is its
 * checksum): the destination (dnat) or the source, TTL decremented,
 * checksums updated incrementally.
 */
XG_INLINE void xg_sess_rewrite(struct iphdr *ip, struct udphdr *l4, __u16 *l4sum, int dnat,
			       __u32 addr_be, __u16 port_be)
{
	__u32 *ap = dnat ? &ip->daddr : &ip->saddr;
	__u16 *pp = dnat ? &l4->dest : &l4->source;
	__u32 old_addr = *ap;
	__u16 old_port = *pp, ttl_old, ttl_new;
	int udp = ip->protocol == IPPROTO_UDP;
	__u32 c;

	__builtin_memcpy(&ttl_old, &ip->ttl, 2); /* TTL and protocol share a word */
	ttl_new = ttl_old - bpf_htons(0x0100);
	c = xg_csum_chg2((__u16)~ip->check, ttl_old, ttl_new);
	c = xg_csum_chg4(c, old_addr, addr_be);
	ip->check = ~xg_csum_fold(c);
	__builtin_memcpy(&ip->ttl, &ttl_new, 2);
	*ap = addr_be;
	*pp = port_be;

	if (udp && !*l4sum)
		return; /* no checksum: stays none */
	c = xg_csum_chg4((__u16) ~*l4sum, old_addr, addr_be);
	c = xg_csum_chg2(c, old_port, port_be);
	*l4sum = ~xg_csum_fold(c);
	if (udp && !*l4sum)
		*l4sum = 0xffff;
}

/*
 * Trim what follows a checked session datagram (excess bytes, from
 * xg_ip_excess), then rewrite it as xg_sess_rewrite does. 0 with *ethp,
 * *ipp and *l4p pointing into the trimmed frame, XG_R_DROP_IP_LEN when the trim
 * failed, -1 when the headers no longer fit: they were checked before the
 * trim, but the verifier needs the bounds proven again (drop, uncounted).
 */
XG_INLINE int xg_sess_trim_rewrite(struct xdp_md *ctx, int excess, int dnat, __u32 addr_be,
				   __u16 port_be, struct ethhdr **ethp, struct iphdr **ipp,
				   void **l4p)
{
	void *data, *data_end;
	struct udphdr *l4;
	struct iphdr *ip;
	__u16 *l4sum;

	if (xg_ip_trim(ctx, excess))
		return XG_R_DROP_IP_LEN;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	ip = data + sizeof(struct ethhdr);
	l4 = (void *)(ip + 1);
	if ((void *)(ip + 1) > data_end || !(l4sum = xg_sess_l4sum(l4, data_end, ip->protocol)) ||
	    (void *)(l4 + 1) > data_end)
		return -1;
	xg_sess_rewrite(ip, l4, l4sum, dnat, addr_be, port_be);
	*ethp = data; /* from the bounds just checked: a new load of ctx->data has none */
	*ipp = ip;
	*l4p = l4;
	return 0;
}

/* A session's packet counted: atomic adds (xgate_abi.h says why). The
 * clock is read once per tick and session direction, not per packet (a
 * helper call costs more than the rest of the accounting): the time is
 * tick-grained anyway, and p->now (jiffies) is already at hand. */
XG_INLINE void xg_sess_account(struct xg_pkt *p, struct xg_sess_ctr *ctr, __u32 bytes)
{
	__sync_fetch_and_add(&ctr->packets, 1);
	__sync_fetch_and_add(&ctr->bytes, bytes);
	if (ctr->last_jiffies != p->now) {
		ctr->last_jiffies = p->now;
		ctr->last_ns = bpf_ktime_get_coarse_ns();
	}
}

XG_INLINE __u32 xg_sgen_now(void)
{
	__u32 zero = 0, *sg = bpf_map_lookup_elem(&xg_sgen, &zero);

	return sg ? *sg : 0;
}

/* Add what slot c counted to its session's entry (if it still has one). */
XG_INLINE void xg_sess_slot_flush(struct xg_pkt *p, struct xg_sess_slot *c, int seen)
{
	struct xg_sess *s = bpf_map_lookup_elem(&xg_sess, &c->key);

	if (s) {
		__sync_fetch_and_add(&s->in.packets, c->packets);
		__sync_fetch_and_add(&s->in.bytes, c->bytes);
		/* at a tick's first packet: "last seen" is now, to the tick; when
		 * the slot goes to another key, the entry's is already within a
		 * tick of the slot's last packet */
		if (seen && s->in.last_jiffies != p->now) {
			s->in.last_jiffies = p->now;
			s->in.last_ns = bpf_ktime_get_coarse_ns();
		}
	}
	c->packets = 0;
	c->bytes = 0;
	c->flushed = p->now;
}

/*
 * The session at key k through this CPU's slot (xgate_abi.h, xg_sesscache):
 * the slot, filled from xg_sess if it held another key or an older
 * session generation, or NULL if k has no session.
 */
XG_INLINE struct xg_sess_slot *xg_sess_of(struct xg_pkt *p, const struct xg_sess_key *k)
{
	__u32 i = XG_SESS_SLOT(k->ip_be, k->port_be, k->proto), sgen = xg_sgen_now();
	struct xg_sess_slot *c = bpf_map_lookup_elem(&xg_sesscache, &i);
	struct xg_sess *s;

	if (unlikely(!c))
		return 0;
	if (likely(c->present && c->sgen == sgen && c->key.ip_be == k->ip_be &&
		   c->key.port_be == k->port_be && c->key.proto == k->proto))
		return c;
	if (c->packets)
		xg_sess_slot_flush(p, c, 0);
	s = bpf_map_lookup_elem(&xg_sess, k);
	c->key = *k;
	c->sgen = sgen;
	c->present = s != 0;
	c->flushed = 0; /* the first packet goes to the entry at once */
	if (!s)
		return 0;
	c->vni = s->vni;
	c->pod_ip_be = s->pod_ip_be;
	c->pod_port_be = s->pod_port_be;
	c->flags = s->flags;
	c->host_be = s->host_be;
	return c;
}

/* A DNATed packet counted in its slot; into the entry once per tick. */
XG_INLINE void xg_sess_slot_account(struct xg_pkt *p, struct xg_sess_slot *c, __u32 bytes)
{
	c->packets++;
	c->bytes += bytes;
	if (c->flushed != p->now)
		xg_sess_slot_flush(p, c, 1);
}

/* Add what reverse slot c counted to its reverse entry, if still there. */
XG_INLINE void xg_sess_rslot_flush(struct xg_pkt *p, struct xg_sess_rslot *c, int seen)
{
	struct xg_sess_rev *r = bpf_map_lookup_elem(&xg_sess_rev, &c->key);

	if (r) {
		__sync_fetch_and_add(&r->out.packets, c->packets);
		__sync_fetch_and_add(&r->out.bytes, c->bytes);
		if (seen && r->out.last_jiffies != p->now) {
			r->out.last_jiffies = p->now;
			r->out.last_ns = bpf_ktime_get_coarse_ns();
		}
	}
	c->packets = 0;
	c->bytes = 0;
	c->flushed = p->now;
}

/* The reverse entry at k through this CPU's slot, as xg_sess_of. */
XG_INLINE struct xg_sess_rslot *xg_sess_rev_of(struct xg_pkt *p, const struct xg_sess_rev_key *k)
{
	__u32 i = XG_SESS_RSLOT(k->vni, k->pod_ip_be, k->pod_port_be, k->proto),
	      sgen = xg_sgen_now();
	struct xg_sess_rslot *c = bpf_map_lookup_elem(&xg_sessrcache, &i);
	struct xg_sess_rev *r;

	if (unlikely(!c))
		return 0;
	if (likely(c->present && c->sgen == sgen && c->key.vni == k->vni &&
		   c->key.pod_ip_be == k->pod_ip_be && c->key.pod_port_be == k->pod_port_be &&
		   c->key.proto == k->proto))
		return c;
	if (c->packets)
		xg_sess_rslot_flush(p, c, 0);
	r = bpf_map_lookup_elem(&xg_sess_rev, k);
	c->key = *k;
	c->sgen = sgen;
	c->present = r != 0;
	c->flushed = 0;
	if (!r)
		return 0;
	c->pub_ip_be = r->pub_ip_be;
	c->pub_port_be = r->pub_port_be;
	c->flags = r->flags;
	c->host_be = r->host_be;
	return c;
}

XG_INLINE void xg_sess_rslot_account(struct xg_pkt *p, struct xg_sess_rslot *c, __u32 bytes)
{
	c->packets++;
	c->bytes += bytes;
	if (c->flushed != p->now)
		xg_sess_rslot_flush(p, c, 1);
}

/*
 * Next hop of a translated reply from the public address src to dst, as
 * the kernel would route it coming in from the pod's veth (bpf_fib_lookup
 * in input mode): 0 with *nh set, or a drop reason. Successes are kept in
 * the per-CPU next-hop cache (xgate_abi.h), keyed (dst, src, veth): the
 * agent's encapsulation entries have the host's address as source and the
 * NIC as device, so the two never answer for each other. A next hop back
 * out of p->ifindex is a loop for a pod's frame (drop_loop), but not for
 * one that came out of the overlay (tunnelled: the ingress host's transit):
 * on a host whose public NIC is its underlay NIC, the client is behind the
 * device the tunnel arrives on.
 */
XG_INLINE int xg_sess_route(struct xg_pkt *p, struct xg_nh_slot **nh, __u8 proto, __u32 src,
			    __u32 dst, __u16 sport, __u16 dport, __u32 tot_len, int tunnelled)
{
	__u32 k = xg_slot_of(dst, XG_NHCACHE_SLOTS);
	struct xg_nh_slot *c = bpf_map_lookup_elem(&xg_nhcache, &k);
	struct bpf_fib_lookup fib;
	int rc;

	if (unlikely(!c))
		return XG_R_DROP_FIB;
	if (likely(c->dst_be == dst && c->src_be == src && c->oif == p->ifindex &&
		   xg_slot_fresh(p, c->gen, c->expires))) {
		if (unlikely(tot_len > c->mtu))
			return XG_R_DROP_TOO_BIG;
		*nh = c;
		return 0;
	}
	__builtin_memset(&fib, 0, sizeof(fib));
	fib.family = AF_INET;
	fib.l4_protocol = proto;
	fib.sport = sport;
	fib.dport = dport;
	fib.tot_len = tot_len;
	fib.ipv4_src = src;
	fib.ipv4_dst = dst;
	fib.ifindex = p->ifindex;
	rc = xg_fib_reason(bpf_fib_lookup(p->ctx, &fib, sizeof(fib), 0));
	if (rc)
		return rc;
	if (fib.ifindex == p->ifindex && !tunnelled)
		return XG_R_DROP_LOOP;
	c->dst_be = dst;
	c->src_be = src;
	c->oif = p->ifindex;
	xg_slot_stamp(p, &c->gen, &c->expires);
	c->ifindex = fib.ifindex;
	c->mtu = fib.mtu_result;
	xg_memcpy6(c->dmac, fib.dmac);
	xg_memcpy6(c->smac, fib.smac);
	*nh = c;
	return 0;
}

/* Send a translated frame out by its next hop. */
XG_INLINE int xg_sess_send(struct xg_pkt *p, struct ethhdr *eth, const struct xg_nh_slot *nh,
			   struct xg_sess_ctr *ctr, __u32 bytes, __u32 reason)
{
	int rc = XDP_TX;

	xg_memcpy6(eth->h_dest, nh->dmac);
	xg_memcpy6(eth->h_source, nh->smac);
	/* back out of the device it came in on: one NIC (xg_sess_route) */
	if (nh->ifindex != p->ifindex) {
		rc = bpf_redirect_map(&xg_txports, nh->ifindex, 0);
		if (rc != XDP_REDIRECT)
			return XG_DROP(p, DROP_TX_PORT);
	}
	if (ctr) /* else the caller counts it in its per-CPU slot */
		xg_sess_account(p, ctr, bytes);
	xg_count(p, reason);
	return rc;
}

#endif
