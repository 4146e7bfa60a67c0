/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Wire headers and parsers: outer IPv4/UDP, Geneve (RFC 8926), ARP. */
#ifndef XG_PROTO_H
#define XG_PROTO_H

#include <linux/udp.h>

#include "common.h"

struct xg_geneve {
	__u8 ver_optlen; /* version:2, option length in 4-byte words:6 */
	__u8 flags;      /* O:1 C:1 reserved:6 */
	__u16 proto;
	__u8 vni[3];
	__u8 rsvd;
};
#define XG_GENEVE_F_OAM 0x80
#define XG_GENEVE_F_CRIT 0x40

struct xg_geneve_opt {
	__u16 opt_class;
	__u8 type;
	__u8 len; /* reserved:3, length in 4-byte words:5 */
};

/* Ethernet/IPv4 ARP. Addresses are byte arrays: they are not aligned. */
struct xg_arp {
	__u16 htype;
	__u16 ptype;
	__u8 hlen;
	__u8 plen;
	__u16 op;
	__u8 sha[6];
	__u8 spa[4];
	__u8 tha[6];
	__u8 tpa[4];
};
#define XG_ARP_REQUEST 1
#define XG_ARP_REPLY 2

XG_INLINE __u32 xg_geneve_vni(const struct xg_geneve *g)
{
	return ((__u32)g->vni[0] << 16) | ((__u32)g->vni[1] << 8) | g->vni[2];
}

XG_INLINE void xg_geneve_set_vni(struct xg_geneve *g, __u32 vni)
{
	g->vni[0] = vni >> 16;
	g->vni[1] = vni >> 8;
	g->vni[2] = vni;
}

/*
 * Walk the Geneve options as TLVs. Returns 0 or an XG_R_DROP_* reason.
 * Our XG_OPT_HOST option is returned through *host (NULL if absent); other
 * options are skipped unless critical. Bounded: at most XG_MAX_GENEVE_OPTS.
 */
XG_INLINE int xg_geneve_walk(void *opts, __u32 optlen, void *data_end,
			     struct xg_opt_host **host)
{
	__u32 off = 0;

	*host = 0;
	for (int i = 0; i < XG_MAX_GENEVE_OPTS; i++) {
		struct xg_geneve_opt *o;
		__u32 dlen;

		if (off >= optlen)
			return 0;
		o = opts + (off & 0xff);
		if ((void *)(o + 1) > data_end)
			return XG_R_DROP_OPT_LEN;
		dlen = (o->len & 0x1f) * 4;
		if (off + sizeof(*o) + dlen > optlen)
			return XG_R_DROP_OPT_LEN;
		if (o->opt_class == bpf_htons(XG_OPT_CLASS) &&
		    o->type == XG_OPT_TYPE_HOST && dlen == 8) {
			struct xg_opt_host *h = (void *)o;

			if ((void *)(h + 1) > data_end)
				return XG_R_DROP_OPT_LEN;
			*host = h;
		} else if (o->type & XG_OPT_CRITICAL) {
			return XG_R_DROP_OPT_CRITICAL;
		}
		off += sizeof(*o) + dlen;
	}
	if (off < optlen)
		return XG_R_DROP_OPT_TOO_MANY;
	return 0;
}

/* The Geneve header after udp: 0 with p->vni, *host (XG_OPT_HOST or
 * NULL) and *inner (the inner Ethernet header, not yet bounds-checked) set,
 * or a drop reason. */
XG_INLINE int xg_parse_geneve(struct xg_pkt *p, struct udphdr *udp, void *data_end,
			      struct xg_opt_host **host, struct ethhdr **inner)
{
	struct xg_geneve *g = (void *)(udp + 1);
	__u32 optlen;
	int rc;

	if ((void *)(g + 1) > data_end)
		return XG_R_DROP_TRUNC_GENEVE;
	if (g->ver_optlen >> 6)
		return XG_R_DROP_GENEVE_VERSION;
	if (g->flags & XG_GENEVE_F_OAM)
		return XG_R_DROP_GENEVE_OAM;
	if (g->proto != bpf_htons(XG_ETH_P_TEB))
		return XG_R_DROP_GENEVE_PROTO;
	optlen = (g->ver_optlen & 0x3f) * 4;
	if ((void *)(g + 1) + optlen > data_end)
		return XG_R_DROP_OPT_LEN;
	rc = xg_geneve_walk(g + 1, optlen, data_end, host);
	if (rc)
		return rc;
	p->vni = xg_geneve_vni(g);
	*inner = (void *)(g + 1) + optlen;
	return 0;
}

XG_INLINE void xg_opt_host_init(struct xg_opt_host *o, __u32 host_be, __u8 flags)
{
	o->opt_class_be = bpf_htons(XG_OPT_CLASS);
	o->type = XG_OPT_TYPE_HOST;
	o->len = 2;
	o->host_be = host_be;
	o->flags = flags;
	o->rsvd[0] = 0;
	o->rsvd[1] = 0;
	o->rsvd[2] = 0;
}

#endif
