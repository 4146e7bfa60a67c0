// SPDX-License-Identifier: BSD-2-Clause
/* Type 1 tunnel frames: seal, open, and a receiver's checks (aead.h). */
#include <endian.h>
#include <sodium.h>
#include <string.h>

#include "aead.h"

int xgt_init(void)
{
	return sodium_init() < 0 ? -1 : 0;
}

bool xgt_cipher_available(enum xgt_cipher c)
{
	if (c == XGT_CHACHA20_POLY1305)
		return true;
	return c == XGT_AES256_GCM && crypto_aead_aes256gcm_is_available();
}

unsigned xgt_ciphers_local(void)
{
	return XGT_CHACHA20_POLY1305 | (xgt_cipher_available(XGT_AES256_GCM) ? XGT_AES256_GCM : 0);
}

const char *xgt_cipher_name(unsigned c)
{
	switch (c) {
	case XGT_CHACHA20_POLY1305:
		return "chacha20-poly1305";
	case XGT_AES256_GCM:
		return "aes-256-gcm";
	default:
		return "none";
	}
}

unsigned xgt_cipher_by_name(const char *name)
{
	if (!strcmp(name, "chacha20-poly1305"))
		return XGT_CHACHA20_POLY1305;
	if (!strcmp(name, "aes-256-gcm"))
		return XGT_AES256_GCM;
	return 0;
}

unsigned xgt_cipher_agree(unsigned ours, unsigned theirs)
{
	unsigned both = ours & theirs;

	if (both & XGT_AES256_GCM)
		return XGT_AES256_GCM;
	return both & XGT_CHACHA20_POLY1305;
}

void xgt_hdr_build(uint8_t *frame, uint8_t key_id, uint32_t vni, uint64_t counter)
{
	struct xg_tun_hdr h = {
	    .ver = XG_TUN_VERSION,
	    .type = XG_TUN_TYPE_AEAD,
	    .key_id = key_id,
	    .vni_be = htobe32(vni << 8),
	    .counter_be = htobe64(counter),
	};

	memcpy(frame, &h, sizeof(h));
}

/* The checks that need no key: a well-formed type 1 header (the same rules
 * as the XDP program's for type 0) and an inner frame the tunnel carries. */
static int check(const uint8_t *frame, size_t len, uint64_t *ctr)
{
	struct xg_tun_hdr h;

	if (len < XGT_HDR_LEN)
		return XG_R_DROP_GW_TRUNC;
	memcpy(&h, frame, sizeof(h));
	*ctr = be64toh(h.counter_be);
	if (h.ver != XG_TUN_VERSION || h.type != XG_TUN_TYPE_AEAD || h.flags ||
	    (be32toh(h.vni_be) & 0xff) || !*ctr || *ctr >= XG_GW_CTR_LIMIT)
		return XG_R_DROP_GW_BAD_HDR;
	return 0;
}

static int check_inner(size_t len)
{
	if (len < XGT_HDR_LEN + 14)
		return XG_R_DROP_GW_TRUNC;
	if (len - XGT_HDR_LEN > XG_TUN_MAX_INNER)
		return XG_R_DROP_GW_TOO_BIG;
	return 0;
}

/* salt | counter as sent (big-endian), 12 bytes for either cipher */
static void nonce_of(const struct xgt_key *k, const uint8_t *frame, uint8_t n[12])
{
	memcpy(n, k->salt, XGT_SALT_LEN);
	memcpy(n + XGT_SALT_LEN, frame + offsetof(struct xg_tun_hdr, counter_be), 8);
}

int xgt_aead_encrypt(unsigned cipher, const uint8_t key[XGT_KEY_LEN], const uint8_t nonce[12],
		     const uint8_t *ad, size_t adlen, uint8_t *buf, size_t len, uint8_t tag[16])
{
	if (cipher == XGT_AES256_GCM && crypto_aead_aes256gcm_is_available())
		return crypto_aead_aes256gcm_encrypt_detached(buf, tag, NULL, buf, len, ad, adlen,
							      NULL, nonce, key);
	if (cipher == XGT_CHACHA20_POLY1305)
		return crypto_aead_chacha20poly1305_ietf_encrypt_detached(
		    buf, tag, NULL, buf, len, ad, adlen, NULL, nonce, key);
	return -1;
}

int xgt_aead_decrypt(unsigned cipher, const uint8_t key[XGT_KEY_LEN], const uint8_t nonce[12],
		     const uint8_t *ad, size_t adlen, uint8_t *buf, size_t len,
		     const uint8_t tag[16])
{
	int bad = -1;

	/* libsodium checks the tag before it decrypts; the buffer is zeroed
	 * on failure as well, so a forged frame is never seen in clear */
	if (cipher == XGT_AES256_GCM && crypto_aead_aes256gcm_is_available())
		bad = crypto_aead_aes256gcm_decrypt_detached(buf, NULL, buf, len, tag, ad, adlen,
							     nonce, key);
	else if (cipher == XGT_CHACHA20_POLY1305)
		bad = crypto_aead_chacha20poly1305_ietf_decrypt_detached(buf, NULL, buf, len, tag,
									 ad, adlen, nonce, key);
	if (bad)
		sodium_memzero(buf, len);
	return bad ? -1 : 0;
}

int xgt_seal(const struct xgt_key *k, uint8_t *frame, size_t len)
{
	uint8_t n[12];
	uint64_t ctr;
	int rc;

	if ((rc = check(frame, len, &ctr)) || (rc = check_inner(len)))
		return rc;
	if (!k->valid || frame[offsetof(struct xg_tun_hdr, key_id)] != k->id)
		return XG_R_DROP_GW_BAD_KEY;
	nonce_of(k, frame, n);
	if (xgt_aead_encrypt(k->cipher, k->k, n, frame, XGT_AD_LEN, frame + XGT_HDR_LEN,
			     len - XGT_HDR_LEN, frame + offsetof(struct xg_tun_hdr, tag)))
		return XG_R_DROP_GW_BAD_KEY; /* a cipher this host cannot use */
	return 0;
}

int xgt_open(const struct xgt_key *k, uint8_t *frame, size_t len)
{
	uint8_t n[12];

	if (len < XGT_HDR_LEN)
		return XG_R_DROP_GW_TRUNC;
	nonce_of(k, frame, n);
	if (xgt_aead_decrypt(k->cipher, k->k, n, frame, XGT_AD_LEN, frame + XGT_HDR_LEN,
			     len - XGT_HDR_LEN, frame + offsetof(struct xg_tun_hdr, tag)))
		return XG_R_DROP_GW_BAD_MAC;
	return 0;
}

void xgt_rx_install(struct xgt_rx *rx, int slot, const struct xgt_key *k)
{
	memset(&rx->win[slot & 1], 0, sizeof(rx->win[0]));
	rx->key[slot & 1] = *k;
}

void xgt_rx_remove(struct xgt_rx *rx, int slot)
{
	sodium_memzero(&rx->key[slot & 1], sizeof(rx->key[0]));
}

/* The window of bpf/lib/tun.h (xg_replay_accept), on the same layout: a
 * ring of 16 words, each a block number (counter / 16) and its 16 seen
 * bits, changed with one compare-and-swap. */
static int replay_accept(struct xg_gw_replay *r, __u64 c)
{
	__u64 b = c >> XG_GW_BLOCK_SHIFT, bit = 1ULL << (c & ((1 << XG_GW_BLOCK_SHIFT) - 1));
	__u64 *slot = &r->ring[b & (XG_GW_RING - 1)], old, new;

	for (int i = 0; i < 8; i++) {
		old = __atomic_load_n(slot, __ATOMIC_RELAXED);
		if ((old >> 16) > b)
			return XG_R_DROP_GW_TOO_OLD;
		if ((old >> 16) == b) {
			if (old & bit)
				return XG_R_DROP_GW_REPLAY;
			new = old | bit;
		} else {
			new = b << 16 | bit;
		}
		if (!__atomic_compare_exchange_n(slot, &old, new, false, __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED))
			continue;
		if (c > __atomic_load_n(&r->top, __ATOMIC_RELAXED))
			__atomic_store_n(&r->top, c, __ATOMIC_RELAXED);
		return 0;
	}
	return XG_R_DROP_GW_BUSY;
}

static int rx_judge(struct xgt_rx *rx, uint8_t *frame, size_t len)
{
	uint8_t id;
	uint64_t ctr, top;
	int rc, s;

	if ((rc = check(frame, len, &ctr)))
		return rc;
	id = frame[offsetof(struct xg_tun_hdr, key_id)];
	for (s = 0; s < 2; s++)
		if (rx->key[s].valid && rx->key[s].id == id)
			break;
	if (s == 2)
		return XG_R_DROP_GW_BAD_KEY;
	top = __atomic_load_n(&rx->win[s].top, __ATOMIC_RELAXED);
	if (top > ctr && top - ctr >= XG_GW_WINDOW)
		return XG_R_DROP_GW_TOO_OLD;
	if ((rc = check_inner(len)) || (rc = xgt_open(&rx->key[s], frame, len)))
		return rc;
	return replay_accept(&rx->win[s], ctr);
}

int xgt_rx_frame(struct xgt_rx *rx, uint8_t *frame, size_t len)
{
	int rc = rx_judge(rx, frame, len);

	if (rc)
		rx->drops[rc]++;
	else
		rx->accepted++;
	return rc;
}
