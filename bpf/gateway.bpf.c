// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * gateway: XDP on both NICs of a cluster gateway.
 *  - cluster side: Geneve that dividers (or agents, by direct path) send to
 *    this host for subnets of other clusters. Looked up in xg_gw_route
 *    (VNI, dst) -> peer gateway, re-encapsulated in the tunnel (proto/xgtun.md)
 *    with the peer's current key and the next counter, and sent out of the
 *    public NIC to the peer's public address.
 *  - public side: tunnel packets. Only from a configured peer's address,
 *    with a well-formed header, a key id that peer announced, an authentic
 *    tag and a counter not seen before, carrying an inner source the same
 *    peer announced. Then re-encapsulated in Geneve to the destination's
 *    bouncer (or the VPC's divider) in this cluster.
 * gatewayd programs the maps; forwarding goes on while it restarts.
 * Everything else goes to the stack (the mesh's TCP sessions among it).
 */
#include "lib/common.h"
#include "lib/csum.h"
#include "lib/proto.h"
#include "lib/outer.h"
#include "lib/inner.h"
#include "lib/stats.h"
#include "lib/route.h"
#include "lib/tx.h"
#include "lib/encap.h"
#include "lib/pkt.h"
#include "lib/gw_maps.h"
#include "lib/tun.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* xg_gw_route's longest match for (p->vni, ip_be), through the per-CPU
 * cache: an LPM lookup is a helper call, a cache slot is inline code. */
XG_INLINE struct xg_gw_route *xg_gw_route_of(struct xg_pkt *p, __u32 ip_be)
{
	struct xg_subnet_key k = {.prefixlen = 64, .vni_be = bpf_htonl(p->vni), .ip_be = ip_be};
	__u32 i = xg_slot_of_vni_ip(p->vni, ip_be, XG_GW_RTCACHE_SLOTS);
	struct xg_gw_rtc_slot *c = bpf_map_lookup_elem(&xg_gw_rtcache, &i);
	struct xg_gw_route *r;

	if (unlikely(!c))
		return bpf_map_lookup_elem(&xg_gw_route, &k);
	if (likely(c->ip_be == ip_be && c->vni == p->vni && xg_slot_fresh(p, c->gen, c->expires)))
		return c->present ? &c->r : 0;
	r = bpf_map_lookup_elem(&xg_gw_route, &k);
	c->ip_be = ip_be;
	c->vni = p->vni;
	xg_slot_stamp(p, &c->gen, &c->expires);
	c->present = r != 0;
	if (!r)
		return 0;
	c->r = *r;
	return &c->r;
}

/* The peer id of a tunnel packet's outer source, or 0: xg_gw_paddr through
 * the per-CPU cache (which also remembers strangers). */
XG_INLINE __u32 xg_gw_peer_by_addr(struct xg_pkt *p, __u32 ip_be)
{
	struct xg_gw_paddr_key ak = {.ip_be = ip_be};
	__u32 i = xg_slot_of(ip_be, XG_GW_PACACHE_SLOTS);
	struct xg_gw_pac_slot *c = bpf_map_lookup_elem(&xg_gw_pacache, &i);
	__u32 *idp;

	if (likely(c && c->ip_be == ip_be && xg_slot_fresh(p, c->gen, c->expires)))
		return c->id;
	idp = bpf_map_lookup_elem(&xg_gw_paddr, &ak);
	if (c) {
		c->ip_be = ip_be;
		c->id = idp ? *idp : 0;
		xg_slot_stamp(p, &c->gen, &c->expires);
	}
	return idp ? *idp : 0;
}

/* This CPU's slot of peer id (xg_gw_pstats), its copy of the xg_gw_peers
 * entry fresh: refilled when xg_gen moved or the copy expired. NULL only
 * for an id out of range. One per-CPU lookup instead of the peer entry and
 * the stats each, and the entry is read from this CPU's cache lines. */
XG_INLINE struct xg_gw_pcpu *xg_gw_pcpu_of(struct xg_pkt *p, __u32 id)
{
	struct xg_gw_pcpu *c = bpf_map_lookup_elem(&xg_gw_pstats, &id);
	struct xg_gw_peer *peer;

	if (unlikely(!c))
		return 0;
	if (likely(xg_slot_fresh(p, c->gen, c->expires)))
		return c;
	peer = bpf_map_lookup_elem(&xg_gw_peers, &id);
	if (unlikely(!peer))
		return 0;
	c->peer = *peer;
	xg_slot_stamp(p, &c->gen, &c->expires);
	return c;
}

/* A type 1 frame, complete but for its cipher, to the AF_XDP socket of
 * this RX queue: its worker seals it and sends it on, or opens it
 * (proto/xgtun.md, "Where type 1 is sealed and opened"). Without a worker
 * the frame is dropped, never sent unsealed (counted in rx_dropped too
 * when it came from the peer: rxd). Sockets to seal and to open are on
 * different devices, so in different halves of xg_gw_xsk. */
XG_INLINE int xg_gw_to_worker(struct xg_pkt *p, __u64 *rxd)
{
	__u32 q = p->ctx->rx_queue_index;

	if (q >= XG_GW_MAX_QUEUES)
		q = 2 * XG_GW_MAX_QUEUES; /* no such entry */
	else if (!rxd)
		q += XG_GW_XSK_SEAL;
	if (!bpf_map_lookup_elem(&xg_gw_xsk, &q)) {
		if (rxd)
			(*rxd)++;
		return XG_DROP(p, DROP_GW_NO_WORKER);
	}
	xg_count(p, XG_R_GW_TO_WORKER);
	return bpf_redirect_map(&xg_gw_xsk, q, XDP_DROP);
}

/* ---- cluster -> peer gateway ---------------------------------------------- */

/*
 * The next counter for a peer: from this CPU's block, or the first of a new
 * block of XG_GW_TX_BLOCK reserved with one atomic add, when the block is
 * used up or XG_GW_TX_LAG counters above its next one were reserved (by
 * other CPUs) since. Counters stay unique (blocks never overlap), and none
 * is sent more than XG_GW_TX_LAG - 1 below the highest reserved, which
 * bounds how far behind the receiver's window top it can arrive
 * (proto/xgtun.md, "Counters"). The block is this CPU's: no other run
 * touches it until this one ends (an XDP run is not interleaved with
 * another on the same CPU).
 */
XG_INLINE __u64 xg_gw_next_ctr(struct xg_gw_pcpu *pc, struct xg_gw_txctr *txc)
{
	__u64 c = pc->tx_next, last = *(volatile __u64 *)&txc->last;

	/* unsigned: a block above last (xg_gw_txctr re-created under it) is
	 * stale too */
	if (unlikely(c >= pc->tx_end || last - c >= XG_GW_TX_LAG)) {
		c = __sync_fetch_and_add(&txc->last, XG_GW_TX_BLOCK) + 1;
		pc->tx_end = c + XG_GW_TX_BLOCK;
	}
	pc->tx_next = c + 1;
	return c;
}

/* Whether key may no longer carry counter ctr: past RejectAfterMessages
 * (ctr_max) or RejectAfterTime (expires_ns), in either direction
 * (proto/gatewayd.md, "Key limits"). gatewayd rekeys well before either;
 * this holds when it cannot (its peer session down, gatewayd gone). The
 * coarse clock is CLOCK_MONOTONIC_COARSE: a tick late at most. */
XG_INLINE int xg_gw_key_spent(const struct xg_gw_key *k, __u64 ctr)
{
	return (k->ctr_max && ctr > k->ctr_max) ||
	       (k->expires_ns && bpf_ktime_get_coarse_ns() >= k->expires_ns);
}

XG_INLINE int xg_gw_encap(struct xg_pkt *p, const struct xg_gw_conf *gw, struct xg_outer *o)
{
	struct xdp_md *ctx = p->ctx;
	void *data_end = (void *)(long)ctx->data_end;
	struct xg_gw_route *r;
	struct xg_gw_peer *peer;
	struct xg_gw_txctr *txc;
	struct xg_gw_pcpu *pc;
	struct xg_opt_host *opt;
	struct xg_tun_hdr *t;
	struct xg_nh_slot *nh;
	struct ethhdr *ieth, *eth;
	struct iphdr *ip;
	struct udphdr *udp;
	struct xg_arp *arp;
	const struct xg_gw_key *key;
	__u32 mtu, inner_len, hdr_in, id;
	__u64 ctr;
	__u16 tot_len, sport;
	__u8 tos;
	int rc;

	rc = xg_outer_check(ctx, o);
	data_end = (void *)(long)ctx->data_end; /* trimmed to the datagram */
	if (!rc)
		rc = xg_parse_geneve(p, o->udp, data_end, &opt, &ieth);
	if (!rc)
		rc = xg_parse_inner(p, ieth, data_end, &arp);
	if (rc)
		return xg_count(p, rc), XDP_DROP;
	xg_flow_hash_from_sport(p, o->udp->source);
	if (arp) /* answered inside each cluster; none crosses */
		return XG_DROP(p, DROP_ARP_UNKNOWN);

	r = xg_gw_route_of(p, p->inner_dst);
	if (!r)
		return XG_DROP(p, DROP_GW_NO_ROUTE);
	id = r->peer;
	pc = xg_gw_pcpu_of(p, id);
	txc = bpf_map_lookup_elem(&xg_gw_txctr, &id);
	if (!pc || !txc || !(pc->peer.flags & XG_GW_PEER_VALID))
		return XG_DROP(p, DROP_GW_NO_KEY);
	peer = &pc->peer;
	key = &peer->tx[peer->tx_slot & 1];
	/* a key of the other type (the peer's mode changed) is no key */
	if (!key->valid || !key->cipher != !(peer->flags & XG_GW_PEER_AEAD))
		return XG_DROP(p, DROP_GW_NO_KEY);

	inner_len = (long)data_end - (long)ieth;
	if (inner_len > XG_TUN_MAX_INNER)
		return XG_DROP(p, DROP_GW_TOO_BIG);
	tot_len = inner_len + XG_TUN_LEN - sizeof(struct ethhdr);
	rc = xg_nexthop_via(p, gw->pub_ip_be, gw->pub_ifindex, peer->ip_be, tot_len, &nh, &mtu);
	if (rc)
		return xg_count(p, rc == XG_R_DROP_TOO_BIG ? XG_R_DROP_GW_TOO_BIG : rc), XDP_DROP;

	tos = xg_inner_tos(ieth, data_end);
	sport = xg_sport(xg_flow_hash(p));
	hdr_in = (long)ieth - (long)ctx->data;
	if (bpf_xdp_adjust_head(ctx, (int)hdr_in - XG_TUN_LEN))
		return XG_DROP(p, DROP_HEADROOM);
	eth = (void *)(long)ctx->data;
	ip = (void *)(eth + 1);
	udp = (void *)(ip + 1);
	t = (void *)(udp + 1);
	if ((void *)(t + 1) > (void *)(long)ctx->data_end)
		return XG_DROP(p, DROP_HEADROOM);

	eth->h_proto = bpf_htons(ETH_P_IP);
	xg_ipv4_build(ip, tos, tot_len, gw->ttl ? gw->ttl : 64, IPPROTO_UDP, gw->pub_ip_be,
		      peer->ip_be);
	udp->source = sport;
	udp->dest = peer->port_be;
	udp->len = bpf_htons(tot_len - sizeof(*ip));
	udp->check = 0; /* the tag covers what matters; IPv4 allows 0 */

	/* Taken only now, so a counter is spent only on a packet sent. */
	ctr = xg_gw_next_ctr(pc, txc);
	if (xg_gw_key_spent(key, ctr))
		return XG_DROP(p, DROP_GW_KEY_EXPIRED);
	t->ver = XG_TUN_VERSION;
	t->key_id = key->id;
	t->flags = 0;
	t->vni_be = bpf_htonl(p->vni << 8);
	t->counter_be = bpf_cpu_to_be64(ctr);
	if (peer->flags & XG_GW_PEER_AEAD) {
		/* addressed here (the worker knows no routes), sealed there */
		t->type = XG_TUN_TYPE_AEAD;
		__builtin_memset(t->tag, 0, sizeof(t->tag));
		xg_memcpy6(eth->h_dest, nh->dmac);
		xg_memcpy6(eth->h_source, nh->smac);
		rc = xg_gw_to_worker(p, 0);
	} else {
		t->type = XG_TUN_TYPE_AUTH;
		if (xg_tun_tag(ctx, key->k, t->tag)) /* not reached: inner_len checked above */
			return XG_DROP(p, DROP_GW_TOO_BIG);
		rc = xg_send(p, eth, nh, XG_R_GW_ENCAP);
	}
	if (rc != XDP_DROP) {
		pc->st.tx_packets++;
		pc->st.tx_bytes += tot_len;
	}
	return rc;
}

/* ---- peer gateway -> cluster ---------------------------------------------- */

/* Which of the peer's receive keys the header names: 0, 1, or -1. Only
 * keys of the peer's type count (aead: a cipher's key). */
XG_INLINE int xg_gw_rx_slot(const struct xg_gw_peer *peer, __u8 id, int aead)
{
	if (peer->rx[0].valid && peer->rx[0].id == id && !peer->rx[0].cipher == !aead)
		return 0;
	if (peer->rx[1].valid && peer->rx[1].id == id && !peer->rx[1].cipher == !aead)
		return 1;
	return -1;
}

/* Where a frame from a peer for (p->vni, p->inner_dst) goes, from the maps
 * (the slow path of xg_gw_dest): 0 with d's kind, n and dst_be set, or a
 * drop reason. An endpoint entry first, then xg_route_hops (lib/route.h),
 * with a remote subnet refused: a gateway never relays from peer to peer. */
_Static_assert(XG_MAX_DIVIDERS == XG_MAX_BOUNCERS, "one copy of either set fills dst_be");
XG_INLINE int xg_gw_dest_lookup(struct xg_pkt *p, struct xg_gw_dc_slot *d)
{
	struct xg_endpoint *ep = xg_endpoint_of(p);
	struct xg_hops h;
	int rc;

	if (ep && !(ep->flags & XG_EP_LOCAL)) {
		d->kind = XG_GW_DC_HOSTS;
		d->n = 1;
		d->dst_be[0] = ep->host_be;
		return 0;
	}
	rc = xg_route_hops(p, &h);
	if (rc)
		return rc;
	if (h.kind == XG_HOPS_GATEWAY)
		return XG_R_DROP_GW_TRANSIT;
#pragma unroll
	for (int i = 0; i < XG_MAX_BOUNCERS; i++)
		d->dst_be[i] = h.set[i];
	d->kind = h.kind == XG_HOPS_DIVIDERS ? XG_GW_DC_DIVIDERS : XG_GW_DC_HOSTS;
	d->n = h.n;
	return 0;
}

/* The next hop in this cluster for a frame from a peer: 0 with *dst set, or
 * a drop reason. Through this CPU's decision slot (xg_gw_dcache): one
 * lookup instead of the endpoint and subnet slots, the VPC hash lookup
 * and the bouncer checks; the pick by flow hash is made per packet. */
XG_INLINE int xg_gw_dest(struct xg_pkt *p, __u32 *dst)
{
	__u32 i = xg_slot_of_vni_ip(p->vni, p->inner_dst, XG_GW_DCACHE_SLOTS);
	struct xg_gw_dc_slot *c = bpf_map_lookup_elem(&xg_gw_dcache, &i);
	int rc;

	if (unlikely(!c)) /* not reached: i < XG_GW_DCACHE_SLOTS */
		return XG_R_DROP_NO_ROUTE;
	if (unlikely(c->ip_be != p->inner_dst || c->vni != p->vni || c->kind == XG_GW_DC_NONE ||
		     !xg_slot_fresh(p, c->gen, c->expires))) {
		rc = xg_gw_dest_lookup(p, c);
		if (rc) {
			c->kind = XG_GW_DC_NONE;
			return rc;
		}
		c->vni = p->vni;
		c->ip_be = p->inner_dst;
		xg_slot_stamp(p, &c->gen, &c->expires);
	}
	*dst = xg_pick(c->dst_be, c->n, p);
	if (c->kind == XG_GW_DC_DIVIDERS && *dst == p->host->ip_be)
		return XG_R_DROP_NO_ROUTE;
	return 0;
}

XG_INLINE int xg_gw_peer_drop(struct xg_pkt *p, struct xg_gw_pstat *ps, __u32 reason)
{
	ps->rx_dropped++;
	xg_count(p, reason);
	return XDP_DROP;
}

/* The type a frame from a peer must have here: on the crypt interface
 * only what a worker opened, elsewhere the type agreed with the peer. A
 * type 1 peer's frame on the wire never skips its worker, and an OPENED
 * frame from the wire is refused: a forgery, not a shortcut. */
XG_INLINE __u8 xg_gw_want_type(const struct xg_pkt *p, const struct xg_gw_conf *gw,
			       const struct xg_gw_peer *peer)
{
	if (gw->crypt_ifindex && p->ctx->ingress_ifindex == gw->crypt_ifindex)
		return peer->flags & XG_GW_PEER_AEAD ? XG_TUN_TYPE_OPENED : 0xff;
	return peer->flags & XG_GW_PEER_AEAD ? XG_TUN_TYPE_AEAD : XG_TUN_TYPE_AUTH;
}

XG_INLINE int xg_gw_decap(struct xg_pkt *p, const struct xg_gw_conf *gw, struct xg_outer *o)
{
	struct xdp_md *ctx = p->ctx;
	void *data_end = (void *)(long)ctx->data_end;
	struct xg_gw_replay *rp;
	struct xg_gw_route *owner;
	struct xg_gw_peer *peer;
	struct xg_gw_pstat *ps;
	struct xg_gw_pcpu *pc;
	struct xg_tun_hdr *t;
	struct xg_nh_slot *nh;
	struct ethhdr *ieth, *eth;
	struct xg_arp *arp;
	__u32 id, idx, mtu, inner_len, dst;
	__u8 tag[16] __attribute__((aligned(8))); /* xg_tun_tag stores words */
	__u8 tos;
	__u16 tot_len;
	__u64 ctr;
	int rc, slot;

	rc = xg_outer_check(ctx, o);
	if (rc)
		return xg_count(p, rc), XDP_DROP;
	data_end = (void *)(long)ctx->data_end; /* trimmed to the datagram */
	id = xg_gw_peer_by_addr(p, o->ip->saddr);
	if (!id)
		return XG_DROP(p, DROP_GW_UNKNOWN_PEER);
	pc = xg_gw_pcpu_of(p, id);
	if (!pc || !(pc->peer.flags & XG_GW_PEER_VALID))
		return XG_DROP(p, DROP_GW_UNKNOWN_PEER);
	peer = &pc->peer;
	ps = &pc->st;

	t = (void *)(o->udp + 1);
	if ((void *)(t + 1) > data_end)
		return xg_gw_peer_drop(p, ps, XG_R_DROP_GW_TRUNC);
	/* the type agreed with this peer, and no other: no downgrade */
	if (t->ver != XG_TUN_VERSION || t->type != xg_gw_want_type(p, gw, peer) || t->flags ||
	    (t->vni_be & bpf_htonl(0xff)) || !t->counter_be)
		return xg_gw_peer_drop(p, ps, XG_R_DROP_GW_BAD_HDR);
	slot = xg_gw_rx_slot(peer, t->key_id, peer->flags & XG_GW_PEER_AEAD);
	if (slot < 0)
		return xg_gw_peer_drop(p, ps, XG_R_DROP_GW_BAD_KEY);
	idx = id * 2 + slot;
	rp = bpf_map_lookup_elem(&xg_gw_replay, &idx);
	if (!rp)
		return xg_gw_peer_drop(p, ps, XG_R_DROP_GW_BAD_KEY);
	ctr = bpf_be64_to_cpu(t->counter_be);
	if (xg_gw_key_spent(&peer->rx[slot & 1], ctr))
		return xg_gw_peer_drop(p, ps, XG_R_DROP_GW_KEY_EXPIRED);
	/* To refuse the obviously old before paying for the tag; the window
	 * below decides. */
	if (rp->top > ctr && rp->top - ctr >= XG_GW_WINDOW)
		return xg_gw_peer_drop(p, ps, XG_R_DROP_GW_TOO_OLD);
	inner_len = (long)data_end - (long)(t + 1);
	if (inner_len < sizeof(struct ethhdr))
		return xg_gw_peer_drop(p, ps, XG_R_DROP_GW_TRUNC);
	if (inner_len > XG_TUN_MAX_INNER)
		return xg_gw_peer_drop(p, ps, XG_R_DROP_GW_TOO_BIG);
	if (t->type == XG_TUN_TYPE_AEAD) /* the tag and the rest after opening */
		return xg_gw_to_worker(p, &ps->rx_dropped);
	/* OPENED: the worker verified the tag with this slot's key */
	if (t->type == XG_TUN_TYPE_AUTH) {
		if (xg_tun_tag(ctx, peer->rx[slot & 1].k, tag))
			return xg_gw_peer_drop(p, ps, XG_R_DROP_GW_TRUNC);
		/* packet pointers are still valid: xg_tun_tag only reads */
		if (!xg_tag_eq(tag, t->tag))
			return xg_gw_peer_drop(p, ps, XG_R_DROP_GW_BAD_MAC);
	}
	rc = xg_replay_accept(rp, ctr);
	if (rc)
		return xg_gw_peer_drop(p, ps, rc);

	/* Authentic and fresh: now judge what it carries. */
	p->vni = bpf_ntohl(t->vni_be) >> 8;
	ieth = (void *)(t + 1);
	rc = xg_parse_inner(p, ieth, data_end, &arp);
	if (rc)
		return xg_gw_peer_drop(p, ps, rc);
	xg_flow_hash_from_sport(p, o->udp->source);
	if (arp)
		return xg_gw_peer_drop(p, ps, XG_R_DROP_ARP_UNKNOWN);
	owner = xg_gw_route_of(p, p->inner_src);
	if (!owner || owner->peer != id)
		return xg_gw_peer_drop(p, ps, XG_R_DROP_GW_UNOWNED);

	rc = xg_gw_dest(p, &dst);
	if (rc)
		return xg_gw_peer_drop(p, ps, rc);
	if (dst == p->host->ip_be)
		return xg_gw_peer_drop(p, ps, XG_R_DROP_LOOP);

	tot_len = inner_len + XG_ENCAP_LEN - sizeof(struct ethhdr);
	rc = xg_nexthop(p, dst, tot_len, &nh, &mtu);
	if (rc)
		return xg_gw_peer_drop(p, ps, rc);
	tos = xg_inner_tos(ieth, data_end);
	/* the flow hash (source port) is taken from p, parsed above */
	if (bpf_xdp_adjust_head(ctx, XG_TUN_LEN - XG_ENCAP_LEN))
		return xg_gw_peer_drop(p, ps, XG_R_DROP_HEADROOM);
	eth = (void *)(long)ctx->data;
	if (xg_geneve_write(p, eth, (void *)(long)ctx->data_end, tos, tot_len, dst, 0))
		return xg_gw_peer_drop(p, ps, XG_R_DROP_HEADROOM);
	ps->rx_packets++;
	ps->rx_bytes += tot_len;
	return xg_send(p, eth, nh, XG_R_GW_DECAP);
}

SEC("xdp")
int xg_gateway(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct xg_pkt p = {.ctx = ctx};
	__u32 zero = 0;
	struct xg_gw_conf *gw;
	struct xg_outer o;
	int rc;

	xg_pkt_begin(&p, ctx);
	gw = bpf_map_lookup_elem(&xg_gw, &zero);
	if (!p.host || !gw)
		return XDP_PASS;

	rc = xg_outer_udp(data, data_end, &o);
	if (rc)
		return xg_count(&p, rc), xg_reason_is_pass(rc) ? XDP_PASS : XDP_DROP;
	if (o.udp->dest == bpf_htons(XG_GENEVE_PORT)) {
		if (o.ip->daddr != p.host->ip_be || !p.host->ip_be)
			return XG_PASS(&p, PASS_NOT_FOR_US);
		return xg_gw_encap(&p, gw, &o);
	}
	if (o.udp->dest == gw->port_be && gw->port_be) {
		if (o.ip->daddr != gw->pub_ip_be || !gw->pub_ip_be)
			return XG_PASS(&p, PASS_NOT_FOR_US);
		return xg_gw_decap(&p, gw, &o);
	}
	return XG_PASS(&p, PASS_NOT_GENEVE);
}
