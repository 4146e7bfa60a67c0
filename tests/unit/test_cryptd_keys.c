// SPDX-License-Identifier: BSD-2-Clause
/* The crypto workers' key limits (userspace/cryptd/keys.c, work.c): with
 * real BPF maps laid out as the gateway program's (xg_gw_paddr,
 * xg_gw_peers, xg_gen), a worker seals and opens with a key within its
 * limits, and refuses one past RejectAfterTime (expires_ns) or
 * RejectAfterMessages (ctr_max) with drop_gw_key_expired, leaving the frame
 * untouched: the workers check on their own copy of the entry and their
 * own clock, whatever the program checked before. Needs root (maps). */
#include <arpa/inet.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "cryptd.h"
#include "unit.h"

#define PEER_IP	  0x0261000a /* 10.0.97.2, as it sits in memory (big-endian) */
#define SELF_IP	  0x0161000a
#define OUTER	  42
#define INNER_LEN 64
#define ID_TX	  7
#define ID_RX	  3

static struct keys K;
static uint8_t F[OUTER + 32 + INNER_LEN];

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void key(struct xg_gw_key *k, uint8_t id, uint8_t fill)
{
	memset(k, 0, sizeof(*k));
	k->id = id;
	k->valid = 1;
	k->cipher = XG_GW_CIPHER_CHACHA20_POLY1305;
	memset(k->salt, fill, sizeof(k->salt));
	memset(k->k, fill, sizeof(k->k));
}

/* Peer 1 at PEER_IP in type 1, its keys with these limits; the workers see
 * it from their next refresh (gatewayd bumps xg_gen after every write). */
static void peer(uint64_t tx_max, uint64_t tx_exp_ns, uint64_t rx_max, uint64_t rx_exp_ns)
{
	struct xg_gw_peer v = {.ip_be = PEER_IP, .flags = XG_GW_PEER_VALID | XG_GW_PEER_AEAD};
	struct xg_gw_paddr_key a = {.ip_be = PEER_IP};
	struct xg_gen g = {0};
	__u32 id = 1, zero = 0;

	key(&v.tx[0], ID_TX, 0x11);
	key(&v.rx[0], ID_RX, 0x22);
	v.tx[0].ctr_max = tx_max;
	v.tx[0].expires_ns = tx_exp_ns;
	v.rx[0].ctr_max = rx_max;
	v.rx[0].expires_ns = rx_exp_ns;
	bpf_map_update_elem(K.peers, &id, &v, BPF_ANY);
	bpf_map_update_elem(K.paddr, &a, &id, BPF_ANY);
	bpf_map_lookup_elem(K.gen, &zero, &g);
	g.gen++;
	bpf_map_update_elem(K.gen, &zero, &g, BPF_ANY);
	keys_refresh(&K, now_ms());
}

/* A frame as the program hands it over: outer IPv4 src -> dst, a type 1
 * header with key id and counter, the inner frame. */
static void frame(uint32_t src, uint32_t dst, uint8_t id, uint64_t ctr)
{
	memset(F, 0, sizeof(F));
	memcpy(F + 14 + 12, &src, 4);
	memcpy(F + 14 + 16, &dst, 4);
	xgt_hdr_build(F + OUTER, id, 100, ctr);
	for (int i = 0; i < INNER_LEN; i++)
		F[OUTER + 32 + i] = (uint8_t)i;
}

static bool inner_clear(void)
{
	for (int i = 0; i < INNER_LEN; i++)
		if (F[OUTER + 32 + i] != (uint8_t)i)
			return false;
	return true;
}

/* A frame from the peer, sealed with its key (our receive key). */
static void sealed_from_peer(uint64_t ctr)
{
	struct xgt_key k = {.id = ID_RX, .cipher = XGT_CHACHA20_POLY1305, .valid = true};

	memset(k.salt, 0x22, sizeof(k.salt));
	memset(k.k, 0x22, sizeof(k.k));
	frame(PEER_IP, SELF_IP, ID_RX, ctr);
	CHECK(xgt_seal(&k, F + OUTER, sizeof(F) - OUTER) == 0, "the peer seals counter %llu",
	      (unsigned long long)ctr);
}

static uint64_t ns(uint64_t ms)
{
	return ms * 1000000u;
}

int main(void)
{
	int rc;

	if (geteuid()) {
		printf("1..0 # SKIP needs root (BPF maps)\n");
		return 0;
	}
	CHECK(xgt_init() == 0, "libsodium");
	K.paddr = bpf_map_create(BPF_MAP_TYPE_HASH, "tk_paddr", sizeof(struct xg_gw_paddr_key),
				 sizeof(__u32), 16, NULL);
	K.peers = bpf_map_create(BPF_MAP_TYPE_ARRAY, "tk_peers", sizeof(__u32),
				 sizeof(struct xg_gw_peer), 4, NULL);
	K.gen = bpf_map_create(BPF_MAP_TYPE_ARRAY, "tk_gen", sizeof(__u32), sizeof(struct xg_gen),
			       1, NULL);
	CHECK(K.paddr >= 0 && K.peers >= 0 && K.gen >= 0, "maps");

	/* within limits: sealed, and opened */
	peer(10, ns(now_ms()) + ns(60000), 10, ns(now_ms()) + ns(60000));
	frame(SELF_IP, PEER_IP, ID_TX, 10);
	CHECK(work_seal(&K, F, sizeof(F)) == 0 && !inner_clear(),
	      "counter 10 = ctr_max, 60 s before expires_ns: sealed");
	sealed_from_peer(10);
	CHECK(work_open(&K, F, sizeof(F)) == 0 && inner_clear() &&
		  F[OUTER + 1] == XG_TUN_TYPE_OPENED,
	      "and a frame from the peer with counter 10 opened");

	/* past RejectAfterMessages */
	frame(SELF_IP, PEER_IP, ID_TX, 11);
	rc = work_seal(&K, F, sizeof(F));
	CHECK(rc == XG_R_DROP_GW_KEY_EXPIRED && inner_clear(),
	      "counter 11 > ctr_max: not sealed, drop_gw_key_expired (%d)", rc);
	sealed_from_peer(11);
	rc = work_open(&K, F, sizeof(F));
	CHECK(rc == XG_R_DROP_GW_KEY_EXPIRED && F[OUTER + 1] == XG_TUN_TYPE_AEAD,
	      "a frame from the peer with counter 11: not opened, drop_gw_key_expired (%d)", rc);

	/* past RejectAfterTime: the workers' own clock decides */
	peer(0, ns(now_ms()) - 1, 0, ns(now_ms()) - 1);
	frame(SELF_IP, PEER_IP, ID_TX, 12);
	rc = work_seal(&K, F, sizeof(F));
	CHECK(rc == XG_R_DROP_GW_KEY_EXPIRED && inner_clear(),
	      "sending key past expires_ns: not sealed, drop_gw_key_expired (%d)", rc);
	sealed_from_peer(12);
	rc = work_open(&K, F, sizeof(F));
	CHECK(rc == XG_R_DROP_GW_KEY_EXPIRED, "receive key past expires_ns: not opened (%d)", rc);

	/* no limits (0): as before limits existed */
	peer(0, 0, 0, 0);
	frame(SELF_IP, PEER_IP, ID_TX, 1ull << 40);
	CHECK(work_seal(&K, F, sizeof(F)) == 0, "limits 0: no limit");
	/* a key id the peer does not hold stays what it was */
	frame(SELF_IP, PEER_IP, ID_TX + 1, 1);
	CHECK(work_seal(&K, F, sizeof(F)) == XG_R_DROP_GW_NO_KEY, "unknown sending key: no_key");
	frame(PEER_IP, SELF_IP, ID_RX + 1, 1);
	F[OUTER + 1] = XG_TUN_TYPE_AEAD;
	CHECK(work_open(&K, F, sizeof(F)) == XG_R_DROP_GW_BAD_KEY, "unknown receive key: bad_key");

	keys_close(&K);
	return unit_summary();
}
