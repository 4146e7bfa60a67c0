// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp_cost: the cluster gateway (bpf/gateway.bpf.c, proto/xgtun.md).
 *
 * This host (10.98.0.1 on bx0) is also its cluster's gateway: public NIC bg0,
 * 10.97.0.1, tunnel port 6082, one peer gateway gw-b at 10.97.0.2:6082 that
 * owns (VNI 100, 10.2.0.0/16). Maps as tests/fixtures/cases_gateway.c sets
 * them up; tunnel frames built from proto/xgtun.md, tags by libsodium's
 * crypto_shorthash_siphashx24 (an implementation independent of ours).
 *
 * Paths, each with a 60-byte (64 with FCS) and a 1400-byte inner frame:
 *  - encap -> peer: a divider's Geneve frame for 10.2.0.40 arrives on bx0 and
 *    leaves by bg0 (devmap redirect) as a tunnel packet. Timed on the real
 *    program; the check run verifies its tag with libsodium.
 *  - decap+verify -> bouncer: a tunnel packet from gw-b for 10.1.2.30 arrives
 *    on bg0 and leaves by bx0 (devmap redirect) as Geneve to the subnet's
 *    bouncer .4. The real program accepts a counter once: a million copies
 *    of one frame would time the replay drop. So decap is timed on the
 *    [bench ctr] variant: tag verified on the frame, replay window run as
 *    is, on a counter the variant takes +1 per packet (what
 *    a flow in order does to the window). After each timed run the window's
 *    top must have moved by exactly `repeat`.
 *  - [no tag] twins: the tag compiled out. path - twin = the MAC's cost.
 *    (Both twins are gateway_seq_notag: the window's counter is not on the
 *    encap's path.)
 *  - decap [no replay]: the window compiled out. [bench ctr]
 *    - [no replay] = the window's cost.
 * bench/gwvariant.h builds the variants; gw_check_variants() shows each
 * does what its label says before anything is timed. The rows are paired
 * with their own instance of the devmap REDIRECT floor, timed just before
 * them.
 *
 * The gateway moves the frame's start: encap adds 12 bytes in front (74-byte
 * tunnel header for a 62-byte Geneve one), decap removes 12. The sink
 * restores at an offset accordingly (shift).
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sodium.h>

#include "xdp_cost.h"
#include "gateway.skel.h"
#include "gateway_seq.skel.h"
#include "gateway_seq_notag.skel.h"

#define TUN_PORT 6082
#define PEER_ID 1
#define RX_SLOT 0
#define ID_TX 7 /* key id of our key to gw-b */
#define ID_RX 3 /* key id of gw-b's key to us */
/* The counter of the timed decap frames: far above any window top the
 * bench reaches, so the early "too old" check never fires. */
#define CTR_TIMED (1ULL << 62)

static const uint8_t K_TX[16] = "bench-key-a2b-1", K_RX[16] = "bench-key-b2a-1";
static const uint8_t mac_peer_pub[6] = { 0x02, 0x97, 0x00, 0x00, 0x00, 0x02 };
static const uint8_t mac_rpod[6] = { 0x02, 0x0a, 0x02, 0x00, 0x00, 0x05 };
static uint32_t pub_self, pub_peer, ov_rpod;

/* the rows, for the summary: [0] 60-byte inner frame, [1] 1400 */
static struct path *enc[2], *enc_notag[2], *dec[2], *dec_notag[2], *dec_noreplay;
static struct path *gw_floor; /* the rows are paired with it */
static uint64_t seq_top0; /* the window's top before the last run */

/* ---- map state ------------------------------------------------------------------ */

static void set_key(struct xg_gw_key *k, uint8_t id, const uint8_t *key)
{
	k->id = id;
	k->valid = 1;
	memcpy(k->k, key, 16);
}

int gw_program_maps(void)
{
	struct xg_iface pub = { .slot = SLOT_PUB, .role = XG_ROLE_GATEWAY };
	struct xg_gw_conf conf = { .port_be = htons(TUN_PORT) };
	struct xg_gw_peer peer = { .port_be = htons(TUN_PORT), .flags = XG_GW_PEER_VALID };
	struct xg_gw_paddr_key pa = {};
	struct xg_subnet_key rk = { .prefixlen = 32 + 16, .vni_be = htonl(VNI) };
	struct xg_gw_route route = { .peer = PEER_ID };
	uint32_t zero = 0, id = PEER_ID, pub_if = G.ifx_pub;

	if (sodium_init() < 0) {
		die_msg("sodium_init failed");
		return -1;
	}
	pub_self = inet_addr("10.97.0.1");
	pub_peer = inet_addr("10.97.0.2");
	ov_rpod = inet_addr("10.2.0.5");
	conf.pub_ip_be = pub_self;
	conf.pub_ifindex = G.ifx_pub;
	peer.ip_be = pub_peer;
	set_key(&peer.tx[0], ID_TX, K_TX);
	set_key(&peer.rx[RX_SLOT], ID_RX, K_RX);
	pa.ip_be = pub_peer;
	rk.ip_be = inet_addr("10.2.0.0");
	if (upd(G.gateway->maps.xg_ifaces, &pub_if, &pub, "public nic") ||
	    upd(G.gateway->maps.xg_txports, &pub_if, &pub_if, "txport public nic") ||
	    upd(G.gateway->maps.xg_gw, &zero, &conf, "gateway") ||
	    upd(G.gateway->maps.xg_gw_peers, &id, &peer, "peer") ||
	    upd(G.gateway->maps.xg_gw_paddr, &pa, &id, "peer address") ||
	    upd(G.gateway->maps.xg_gw_route, &rk, &route, "peer route"))
		return -1;
	return 0;
}

/* ---- frames ---------------------------------------------------------------- */

/* What a divider hands the gateway: Geneve, inner UDP from a pod of ours to
 * 10.2.0.40 in gw-b's cluster (inner_len bytes). */
static void encap_frame(struct frame *f, size_t inner_len)
{
	uint8_t in[MAX_FRAME];
	size_t il = inner_udp(in, mac_sender_pod, mac_gw, ov_sender, ov_remote, inner_len);

	geneve_frame(f, ip_divider, ip_self, ip_sender, 0, in, il);
}

/* SipHash-2-4-128 over the header's first 16 bytes, then the inner frame. */
static void tun_tag(uint8_t tag[16], const uint8_t *t, const uint8_t *inner, size_t il,
		    const uint8_t *key)
{
	static uint8_t m[XG_TUN_AUTH_LEN + MAX_FRAME];

	memcpy(m, t, XG_TUN_AUTH_LEN);
	memcpy(m + XG_TUN_AUTH_LEN, inner, il);
	crypto_shorthash_siphashx24(tag, m, XG_TUN_AUTH_LEN + il, key);
}

static void tun_set_ctr(struct frame *f, uint64_t ctr, bool bad_tag)
{
	uint8_t *t = f->b + XG_TUN_LEN - sizeof(struct xg_tun_hdr);

	for (int i = 0; i < 8; i++)
		t[8 + i] = ctr >> (56 - 8 * i);
	tun_tag(t + 16, t, f->b + XG_TUN_LEN, f->len - XG_TUN_LEN, K_RX);
	if (bad_tag)
		t[16 + 5] ^= 0x40;
}

/* What gw-b sends us: inner UDP from its pod 10.2.0.5 to 10.1.2.30. */
static void decap_frame(struct frame *f, size_t inner_len, uint64_t ctr)
{
	uint8_t *p = f->b, *t = p + 42;
	size_t il = inner_udp(p + XG_TUN_LEN, mac_rpod, mac_gw, ov_rpod, ov_s2, inner_len);

	put_eth(p, mac_pub, mac_peer_pub, 0x0800);
	put_ipv4(p + 14, 0, 20 + 8 + sizeof(struct xg_tun_hdr) + il, 0, 0x4000, 64, 17, pub_peer,
		 pub_self);
	put_udp(p + 34, TUN_PORT, TUN_PORT, 8 + sizeof(struct xg_tun_hdr) + il);
	t[0] = XG_TUN_VERSION;
	t[1] = XG_TUN_TYPE_AUTH;
	t[2] = ID_RX;
	t[3] = 0;
	put32be(t + 4, htonl(VNI << 8));
	f->len = XG_TUN_LEN + il;
	tun_set_ctr(f, ctr, false);
}

/* ---- hooks ------------------------------------------------------------------------ */

static int window_top(uint64_t *top)
{
	struct xg_gw_replay v;
	uint32_t idx = PEER_ID * 2 + RX_SLOT;

	if (bpf_map_lookup_elem(G.gw_replay_fd, &idx, &v)) {
		die_msg("xg_gw_replay: lookup failed");
		return -1;
	}
	*top = v.top;
	return 0;
}

static __u64 *seq_ctr_of(const struct path *p)
{
	if (p->prog == PR_GW_SEQ)
		return &G.gw_seq->bss->bench_seq_ctr;
	if (p->prog == PR_GW_SEQ_NOTAG)
		return &G.gw_seq_notag->bss->bench_seq_ctr;
	return NULL;
}

/* [bench ctr]: the variant's counter continues from the window's top. */
static int seq_prepare(struct path *p)
{
	__u64 *c = seq_ctr_of(p);

	if (!c || window_top(&seq_top0))
		return -1;
	*c = seq_top0;
	return 0;
}

static int seq_after(struct path *p, unsigned long repeat)
{
	uint64_t top;

	if (window_top(&top))
		return -1;
	if (top != seq_top0 + repeat) {
		die_msg("%s: the replay window's top moved by %llu in %lu packets", p->name,
			(unsigned long long)(top - seq_top0), repeat);
		return -1;
	}
	return 0;
}

static int bad(const struct path *p, const char *what)
{
	die_msg("%s: output %s: refusing to time it", p->name, what);
	return -1;
}

/* The tunnel packet: header fields, the inner frame untouched, the tag
 * libsodium computes (or the variant's fixed one). */
static int check_encap(const struct path *p, const uint8_t *out, uint32_t len)
{
	const uint8_t *t = out + XG_TUN_LEN - sizeof(struct xg_tun_hdr);
	size_t il = len - XG_TUN_LEN;
	uint8_t want[16];
	uint64_t ctr = 0;

	for (int i = 0; i < 8; i++)
		ctr = ctr << 8 | t[8 + i];
	if (get16(out + 36) != TUN_PORT || t[0] != XG_TUN_VERSION || t[1] != XG_TUN_TYPE_AUTH ||
	    t[2] != ID_TX || t[3] || get16(t + 4) != VNI >> 8 || t[6] != (VNI & 0xff) || t[7] ||
	    !ctr)
		return bad(p, "tunnel header is not as proto/xgtun.md says");
	if (memcmp(out + XG_TUN_LEN, p->f.b + XG_ENCAP_LEN, il))
		return bad(p, "inner frame differs from the input's");
	if (p->prog == PR_GATEWAY)
		tun_tag(want, t, out + XG_TUN_LEN, il, K_TX);
	else
		memset(want, BENCH_FIXED_TAG_BYTE, sizeof(want));
	if (memcmp(t + 16, want, 16))
		return bad(p, p->prog == PR_GATEWAY ? "tag is not libsodium's SipHash-2-4-128"
						    : "tag is not the [no tag] variant's");
	return 0;
}

/* Geneve to the bouncer, the HOST option naming us, the inner frame
 * untouched; for [bench ctr], the window moved by one. */
static int check_decap(const struct path *p, const uint8_t *out, uint32_t len)
{
	const uint8_t *g = out + 42;
	uint32_t host;
	uint64_t top;

	memcpy(&host, g + 8 + 4, 4);
	if (get16(out + 36) != XG_GENEVE_PORT || get16(g + 2) != XG_ETH_P_TEB ||
	    get16(g + 4) != VNI >> 8 || g[6] != (VNI & 0xff) || get16(g + 8) != XG_OPT_CLASS ||
	    g[10] != XG_OPT_TYPE_HOST || host != ip_self)
		return bad(p, "Geneve header is not what the gateway must send");
	if (memcmp(out + XG_ENCAP_LEN, p->f.b + XG_TUN_LEN, len - XG_ENCAP_LEN))
		return bad(p, "inner frame differs from the input's");
	if (seq_ctr_of(p)) {
		if (window_top(&top))
			return -1;
		if (top != seq_top0 + 1)
			return bad(p, "left the replay window where it was");
	}
	return 0;
}

/* ---- the paths ---------------------------------------------------------------------- */

static struct path *gw_encap(const char *name, enum prog_id prog, size_t inner_len)
{
	struct path *p = add_path(name, K_GW, prog, G.ifx_nic, XDP_REDIRECT, XG_R_GW_ENCAP);

	encap_frame(&p->f, inner_len);
	p->out_dst = pub_peer;
	p->out_len = p->f.len + XG_TUN_LEN - XG_ENCAP_LEN;
	p->restore = true;
	p->shift = XG_ENCAP_LEN - XG_TUN_LEN;
	p->check_out = check_encap;
	p->floor = gw_floor;
	return p;
}

static struct path *gw_decap(const char *name, enum prog_id prog, size_t inner_len)
{
	struct path *p = add_path(name, K_GW, prog, G.ifx_pub, XDP_REDIRECT, XG_R_GW_DECAP);

	decap_frame(&p->f, inner_len, CTR_TIMED);
	p->out_dst = ip_bouncer;
	p->out_len = p->f.len - XG_TUN_LEN + XG_ENCAP_LEN;
	p->restore = true;
	p->shift = XG_TUN_LEN - XG_ENCAP_LEN;
	p->check_out = check_decap;
	p->floor = gw_floor;
	if (seq_ctr_of(p)) {
		p->prepare = seq_prepare;
		p->after = seq_after;
	}
	return p;
}

void gw_build_paths(void)
{
	struct path *fl = NULL;

	/* Its own instance of the devmap REDIRECT floor, timed right before its
	 * rows: a round lasts ~10 s here, and the floor at its start drifts
	 * away from rows timed at its end. Same program, frame and sink work. */
	for (int i = 0; i < np && !fl; i++)
		if (P[i].kind == K_FLOOR && P[i].prog == PR_REDIRECT)
			fl = &P[i];
	gw_floor = add_path("floor: devmap REDIRECT (gateway rows)", K_FLOOR, PR_REDIRECT,
			    fl->ingress, XDP_REDIRECT, -1);
	gw_floor->f = fl->f;
	gw_floor->restore = fl->restore;

	/* each row next to its twin; the 1400-byte rows (the long ones) last */
	enc[0] = gw_encap("gw encap -> peer", PR_GATEWAY, 60);
	enc_notag[0] = gw_encap("gw encap -> peer [no tag]", PR_GW_SEQ_NOTAG, 60);
	dec[0] = gw_decap("gw decap+verify -> bouncer [bench ctr]", PR_GW_SEQ, 60);
	dec_notag[0] = gw_decap("gw decap -> bouncer [bench ctr, no tag]", PR_GW_SEQ_NOTAG, 60);
	dec_noreplay = gw_decap("gw decap+verify -> bouncer [no replay]", PR_GW_NOREPLAY, 60);
	enc[1] = gw_encap("gw encap -> peer, 1400 B", PR_GATEWAY, 1400);
	enc_notag[1] = gw_encap("gw encap -> peer, 1400 B [no tag]", PR_GW_SEQ_NOTAG, 1400);
	dec[1] = gw_decap("gw decap+verify -> bouncer, 1400 B [bench ctr]", PR_GW_SEQ, 1400);
	dec_notag[1] = gw_decap("gw decap -> bouncer, 1400 B [bench ctr, no tag]",
				PR_GW_SEQ_NOTAG, 1400);
	/* issue's targets: encap <= 60 ns + MAC, decap+verify <= 60 ns + MAC */
	for (int i = 0; i < 2; i++) {
		enc[i]->target = dec[i]->target = 60;
		enc[i]->target_of = enc_notag[i];
		dec[i]->target_of = dec_notag[i];
	}
}

/* ---- the variants are what they say ------------------------------------------------ */

static int expect(const char *what, enum prog_id prog, uint64_t ctr, bool bad_tag, int reason)
{
	static struct path t;

	memset(&t, 0, sizeof(t));
	t.name = what;
	t.kind = K_GW;
	t.prog = prog;
	t.ingress = G.ifx_pub;
	t.slot = SLOT_PUB;
	t.verdict = reason == XG_R_GW_DECAP ? XDP_REDIRECT : XDP_DROP;
	t.reason = reason;
	t.out_len = -1;
	decap_frame(&t.f, 60, ctr);
	if (bad_tag)
		tun_set_ctr(&t.f, ctr, true);
	if (seq_ctr_of(&t))
		t.prepare = seq_prepare;
	return check_path(&t);
}

/* Normal-mode runs, one packet each. */
int gw_check_variants(void)
{
	uint64_t top;

	if (window_top(&top))
		return -1;
	/* the real program: one copy accepted, the next a replay, a bad tag refused */
	if (expect("gateway: decap, fresh counter", PR_GATEWAY, top + 1, false, XG_R_GW_DECAP) ||
	    expect("gateway: the same frame again", PR_GATEWAY, top + 1, false,
		   XG_R_DROP_GW_REPLAY) ||
	    expect("gateway: a bad tag", PR_GATEWAY, top + 2, true, XG_R_DROP_GW_BAD_MAC) ||
	    /* [bench ctr]: the tag verified, the window on the variant's counter */
	    expect("[bench ctr]: a bad tag", PR_GW_SEQ, CTR_TIMED, true, XG_R_DROP_GW_BAD_MAC) ||
	    expect("[bench ctr]: a frame", PR_GW_SEQ, CTR_TIMED, false, XG_R_GW_DECAP) ||
	    expect("[bench ctr]: the same frame", PR_GW_SEQ, CTR_TIMED, false, XG_R_GW_DECAP) ||
	    /* [no tag]: any tag passes */
	    expect("[bench ctr, no tag]: a bad tag", PR_GW_SEQ_NOTAG, CTR_TIMED, true,
		   XG_R_GW_DECAP) ||
	    /* [no replay]: the tag verified, no window */
	    expect("[no replay]: a bad tag", PR_GW_NOREPLAY, CTR_TIMED, true,
		   XG_R_DROP_GW_BAD_MAC) ||
	    expect("[no replay]: a frame", PR_GW_NOREPLAY, top + 1, false, XG_R_GW_DECAP) ||
	    expect("[no replay]: the same frame", PR_GW_NOREPLAY, top + 1, false, XG_R_GW_DECAP))
		return -1;
	printf("          checked: the gateway's tags (against libsodium), and that the real "
	       "program and each\n"
	       "          variant verify the tag and refuse replays as labelled\n");
	return 0;
}

/* ---- summary ---------------------------------------------------------------------- */

static void cell(char *buf, size_t n, const struct path *a, const struct path *b)
{
	if (a && b && a->n && b->n)
		snprintf(buf, n, "%.0f", paired_median(a, b));
	else
		snprintf(buf, n, "-");
}

static void line(const char *what, const struct path *a0, const struct path *b0,
		 const struct path *a1, const struct path *b1, const char *target)
{
	char c0[16], c1[16];

	cell(c0, sizeof(c0), a0, b0);
	cell(c1, sizeof(c1), a1, b1);
	printf("%-62s %6s %7s  %s\n", what, c0, c1, target);
}

void gw_print_summary(void)
{
	const struct path *fl = gw_floor;

	if (!fl || !fl->n || (!enc[0]->n && !dec[0]->n))
		return;
	printf("\ngateway, ns/pkt: paired medians over the rounds (inner frame 60 B = 64 B "
	       "with FCS, and 1400 B)\n");
	printf("%-62s %6s %7s  %s\n", "", "64 B", "1400 B", "target");
	line("encap -> peer, net of the devmap REDIRECT floor (gateway rows)", enc[0], fl, enc[1],
	     fl, "");
	line("  MAC: encap - encap [no tag]", enc[0], enc_notag[0], enc[1], enc_notag[1], "");
	line("  without the MAC: encap [no tag] - floor", enc_notag[0], fl, enc_notag[1], fl,
	     "<= 60");
	line("decap+verify -> bouncer [bench ctr], net of the floor", dec[0], fl, dec[1], fl,
	     "");
	line("  MAC: decap [bench ctr] - decap [bench ctr, no tag]", dec[0], dec_notag[0], dec[1],
	     dec_notag[1], "");
	line("  without the MAC: decap [bench ctr, no tag] - floor", dec_notag[0], fl,
	     dec_notag[1], fl, "<= 60");
	line("  replay window: decap [bench ctr] - decap [no replay]", dec[0], dec_noreplay, NULL,
	     NULL, "");
	printf("[bench ctr]: the replay window runs on a counter of the variant, +1 per packet "
	       "(the frame's own\n"
	       "  would be a replay after its first copy); +1 global load/add/store over the real "
	       "program.\n");
}
