// SPDX-License-Identifier: BSD-2-Clause
/* The cipher step of type 1 (proto/xgtun.md, "Where type 1 is sealed and
 * opened"). The gateway program checked everything cheap before handing a
 * frame over (outer headers without options, peer, header, key id, window
 * pre-check) and does the replay window and the rest on OPENED frames: the
 * workers know keys only, no routes, and never pick a counter. */
#include <stddef.h>
#include <string.h>
#include <arpa/inet.h>
#include <sodium.h>

#include "cryptd.h"

_Static_assert(XG_GW_CIPHER_CHACHA20_POLY1305 == XGT_CHACHA20_POLY1305 &&
		   XG_GW_CIPHER_AES256_GCM == XGT_AES256_GCM,
	       "the map's cipher numbers are xg_tun's");

#define OUTER  42 /* Ethernet, IPv4 without options, UDP: the program's layout */
#define IP_SRC (14 + 12)
#define IP_DST (14 + 16)

static uint32_t ip_at(const uint8_t *pkt, size_t off)
{
	uint32_t v;

	memcpy(&v, pkt + off, sizeof(v));
	return v;
}

/* The key the header names, of the peer at the outer address at off. */
static int key_of(struct keys *k, const uint8_t *pkt, size_t off, bool tx, struct xgt_key *key)
{
	const struct kpeer *p = keys_peer(k, ip_at(pkt, off));

	if (!p)
		return XG_R_DROP_GW_UNKNOWN_PEER;
	if (!(p->v.flags & XG_GW_PEER_AEAD))
		return XG_R_DROP_GW_BAD_HDR; /* its type changed since the program looked */
	return keys_get(k, p, tx, pkt + OUTER, key);
}

int work_open(struct keys *k, uint8_t *pkt, uint32_t len)
{
	struct xgt_key key;
	int rc;

	if (len < OUTER + XGT_HDR_LEN + 14)
		return XG_R_DROP_GW_TRUNC;
	if (pkt[OUTER + offsetof(struct xg_tun_hdr, type)] != XG_TUN_TYPE_AEAD)
		return XG_R_DROP_GW_BAD_HDR;
	rc = key_of(k, pkt, IP_SRC, false, &key);
	if (!rc)
		rc = xgt_open(&key, pkt + OUTER, len - OUTER);
	sodium_memzero(&key, sizeof(key));
	if (rc)
		return rc;
	pkt[OUTER + offsetof(struct xg_tun_hdr, type)] = XG_TUN_TYPE_OPENED;
	return 0;
}

int work_seal(struct keys *k, uint8_t *pkt, uint32_t len)
{
	struct xgt_key key;
	int rc;

	if (len < OUTER + XGT_HDR_LEN + 14)
		return XG_R_DROP_GW_TRUNC;
	rc = key_of(k, pkt, IP_DST, true, &key);
	if (!rc)
		rc = xgt_seal(&key, pkt + OUTER, len - OUTER);
	sodium_memzero(&key, sizeof(key));
	return rc;
}

/* On one NIC a socket takes both ways. The program sends a frame to seal
 * from our public address to a peer's, and one to open from a peer's to
 * ours, found in xg_gw_paddr by its source. A frame with ours on both
 * sides (a peer that claimed our address) could be either: refused. */
static int dir_of(const struct keys *k, const uint8_t *pkt, uint32_t len)
{
	uint32_t src, dst;

	if (len < OUTER)
		return -1;
	src = ip_at(pkt, IP_SRC);
	dst = ip_at(pkt, IP_DST);
	if (dst == k->self_ip_be && src != k->self_ip_be)
		return WORK_OPEN;
	if (src == k->self_ip_be && dst != k->self_ip_be)
		return WORK_SEAL;
	return -1;
}

unsigned work_batch(struct keys *k, struct xsock *in, struct xsock *out, int how,
		    struct cryptd_stats *st)
{
	uint32_t idx, fidx, n = xsk_ring_cons__peek(&in->rx, XS_BATCH, &idx);
	uint64_t addrs[XS_BATCH];

	if (!n)
		return 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&in->rx, idx + i);
		uint8_t *pkt = xsk_umem__get_data(in->buf, d->addr);
		int open = how == WORK_EITHER ? dir_of(k, pkt, d->len) : how;
		struct xsock *to = how == WORK_EITHER && open == WORK_SEAL ? in : out;
		int rc = open < 0 ? XG_R_DROP_GW_BAD_HDR
			 : open	  ? work_open(k, pkt, d->len)
				  : work_seal(k, pkt, d->len);

		addrs[i] = xsk_umem__extract_addr(d->addr);
		if (rc) {
			if (rc > 0 && rc < XG_R__COUNT)
				st->drops[rc]++;
			/* nothing half-done leaves: a failed open zeroed the inner frame */
			continue;
		}
		if (!xsock_send(to, pkt, d->len))
			continue;
		if (open)
			st->opened++;
		else
			st->sealed++;
	}
	xsk_ring_cons__release(&in->rx, n);
	/* the frames go back for the next packets (their data was copied);
	 * the fill ring holds every frame, so there is always room */
	if (xsk_ring_prod__reserve(&in->fq, n, &fidx) != n)
		return n;
	for (uint32_t i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&in->fq, fidx + i) = addrs[i];
	xsk_ring_prod__submit(&in->fq, n);
	xsock_flush(out);
	if (how == WORK_EITHER)
		xsock_flush(in);
	return n;
}
