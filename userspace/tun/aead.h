/* SPDX-License-Identifier: BSD-2-Clause */
/* Sealing and opening type 1 (AEAD) tunnel frames, proto/xgtun.md
 * "Type 1: AEAD": ChaCha20-Poly1305-IETF or AES-256-GCM from libsodium,
 * nonce = salt | counter, the header's first 16 bytes as associated data,
 * the inner frame encrypted in place, the tag in the header's tag field.
 * A frame here is the tunnel header followed by the inner Ethernet frame
 * (what follows the outer UDP header). */
#ifndef XGT_AEAD_H
#define XGT_AEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xgate_abi.h"

/* Bit values, as in INFO's cipher set (proto/gatewayd.md). */
enum xgt_cipher {
	XGT_CHACHA20_POLY1305 = 1,
	XGT_AES256_GCM = 2,
};
#define XGT_CIPHERS_ALL (XGT_CHACHA20_POLY1305 | XGT_AES256_GCM)

#define XGT_KEY_LEN  32
#define XGT_SALT_LEN 4
#define XGT_HDR_LEN  ((size_t)sizeof(struct xg_tun_hdr))
#define XGT_AD_LEN   XG_TUN_AUTH_LEN

/* One direction's key of one epoch: what DATAKEY derives. */
struct xgt_key {
	uint8_t id;
	uint8_t cipher; /* enum xgt_cipher */
	bool valid;
	uint8_t salt[XGT_SALT_LEN];
	uint8_t k[XGT_KEY_LEN];
};

/* libsodium's initialisation; 0, or -1 if it failed. */
int xgt_init(void);
/* Can this host use the cipher? AES-256-GCM needs AES-NI and PCLMUL. */
bool xgt_cipher_available(enum xgt_cipher c);
/* The ciphers this host can offer. */
unsigned xgt_ciphers_local(void);
/* "chacha20-poly1305", "aes-256-gcm", or "none" for anything else. */
const char *xgt_cipher_name(unsigned c);
/* By name as above; 0 for an unknown name. */
unsigned xgt_cipher_by_name(const char *name);
/* What two peers use given their offers: AES-256-GCM if both offer it,
 * else ChaCha20-Poly1305 if both do, else 0 (no common cipher). */
unsigned xgt_cipher_agree(unsigned ours, unsigned theirs);

/* The cipher alone, in place, tag detached (16 bytes), for either cipher:
 * 0, or -1 (a cipher this host cannot use; decrypt: a wrong tag, buf then
 * zeroed). The frame functions below are built on these; the known-answer
 * tests check them against the ciphers' published vectors. */
int xgt_aead_encrypt(unsigned cipher, const uint8_t key[XGT_KEY_LEN], const uint8_t nonce[12],
		     const uint8_t *ad, size_t adlen, uint8_t *buf, size_t len, uint8_t tag[16]);
int xgt_aead_decrypt(unsigned cipher, const uint8_t key[XGT_KEY_LEN], const uint8_t nonce[12],
		     const uint8_t *ad, size_t adlen, uint8_t *buf, size_t len,
		     const uint8_t tag[16]);

/* Writes a type 1 header (version, type, key id, VNI, counter; flags,
 * reserved and tag zero) at frame. */
void xgt_hdr_build(uint8_t *frame, uint8_t key_id, uint32_t vni, uint64_t counter);

/* Seals frame (header already built, len = header + inner) in place.
 * Returns 0, or the reason it cannot (an XG_R_DROP_GW_* value): a header
 * that is not a valid type 1 header for this key (BAD_HDR, BAD_KEY), an
 * inner frame shorter than Ethernet (TRUNC) or over XG_TUN_MAX_INNER
 * (TOO_BIG). */
int xgt_seal(const struct xgt_key *k, uint8_t *frame, size_t len);
/* Opens frame in place with k, whose id the caller matched with the
 * header's: 0, or XG_R_DROP_GW_BAD_MAC (the inner bytes are then zeroed,
 * never half decrypted). Only the tag is checked here. */
int xgt_open(const struct xgt_key *k, uint8_t *frame, size_t len);

/* A receiver's state for one peer: its two receive keys, each with the
 * replay window of the data path's layout (struct xg_gw_replay, the same
 * algorithm as bpf/lib/tun.h: a worker can share a window with the XDP
 * program), and what was dropped, by reason. */
struct xgt_rx {
	struct xgt_key key[2];
	struct xg_gw_replay win[2];
	uint64_t accepted;
	uint64_t drops[XG_R__COUNT];
};

/* Installs k in slot (0 or 1), its window zeroed first. */
void xgt_rx_install(struct xgt_rx *rx, int slot, const struct xgt_key *k);
/* Removes the key of slot and wipes it. */
void xgt_rx_remove(struct xgt_rx *rx, int slot);
/* Every receive check of proto/xgtun.md that needs no routes, in its
 * order: header, key id, window pre-check, tag (opening the frame in
 * place), replay. Returns 0 (frame + XGT_HDR_LEN is the clear inner frame)
 * or the XG_R_DROP_GW_* reason, counted in rx->drops. */
int xgt_rx_frame(struct xgt_rx *rx, uint8_t *frame, size_t len);

#endif
