/* SPDX-License-Identifier: BSD-2-Clause */
/* gatewayd sync messages (plaintext inside session frames, proto/gatewayd.md).
 * Each gateway speaks for itself only (full mesh): the origin of an
 * announcement is the authenticated peer of the session it arrived on. */
#ifndef GWD_MSG_H
#define GWD_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "routes.h"

enum gw_msg_type {
	GW_T_AUTH = 1,
	GW_T_KEEPALIVE = 2,
	GW_T_ANNOUNCE = 3,
	GW_T_WITHDRAW = 4,
	GW_T_FULL_BEGIN = 5,
	GW_T_FULL_END = 6,
	GW_T_DATAKEY = 7,
	GW_T_HELLO_INFO = 8,
};

#define GW_ROUTE_MSG_LEN 17 /* version u64 | vni u32 (24 bits used) | ip u32 | plen u8 */
#define GW_INFO_MAX	 80

struct gw_route_msg {
	uint64_t version;
	struct rt_key key;
};

/* After AUTH each side says who it is: name, cluster, public data address;
 * and the tunnel it wants with the receiver: mode (enum gw_mode) and the AEAD
 * ciphers it can use (enum xgt_cipher bits). */
struct gw_info_msg {
	char name[33];
	char cluster[33];
	uint32_t public_ip_be;
	uint16_t public_port_be;
	uint8_t mode;
	uint8_t ciphers;
};

/* DATAKEY: the sender will send with key (epoch, id) once acked; ACK: the
 * receiver installed it. Each carries its sender's fresh X25519 public key,
 * which the key of that epoch mixes in. epoch u32 | id u8 | flags u8 |
 * ephemeral (32). */
#define GW_DATAKEY_LEN 38
#define GW_DATAKEY_ACK 0x1
struct gw_datakey_msg {
	uint32_t epoch;
	uint8_t id;
	uint8_t flags;
	uint8_t eph[32];
};

/* The tunnel two gateways use, from the INFO each sent (proto/gatewayd.md,
 * "Mode and cipher agreement"); both ends reach the same answer. Returns 0
 * and the cipher (an enum xgt_cipher; 0 in auth mode), or -1 with why the
 * session must be refused, in words, in why. */
int gw_info_agree(const struct gw_info_msg *ours, const struct gw_info_msg *theirs,
		  unsigned *cipher, char *why, size_t whylen);

size_t gw_datakey_encode(uint8_t *out, const struct gw_datakey_msg *m);
int gw_datakey_decode(const uint8_t *in, size_t len, struct gw_datakey_msg *m, const char **why);
size_t gw_route_encode(uint8_t *out, const struct gw_route_msg *m);
/* 0, or -1 with a reason (wrong length, VNI out of range, host bits set). */
int gw_route_decode(const uint8_t *in, size_t len, struct gw_route_msg *m, const char **why);
size_t gw_info_encode(uint8_t *out, const struct gw_info_msg *m);
int gw_info_decode(const uint8_t *in, size_t len, struct gw_info_msg *m, const char **why);

#endif
