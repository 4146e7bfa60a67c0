/* SPDX-License-Identifier: BSD-2-Clause */
/* gatewayd configuration: a wg-quick-style file, [Gateway] then [Peer]s. */
#ifndef GWD_CONFIG_H
#define GWD_CONFIG_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#define GW_NAME_MAX    32
#define GW_MAX_PEERS   256
#define GW_MAX_SUBNETS 1024
#define GW_MAX_ALLOWED 64
#define GW_KEY_LEN     32

struct gw_prefix {
	__u32 vni; /* 0 in AllowedSubnets: any VNI */
	__u32 ip_be;
	__u8 plen;
	int line; /* where it was given */
};

/* The tunnel type used with a peer (proto/gatewayd.md, "Mode and cipher
 * agreement"): xgtun type 0 or 1. The values are INFO's mode byte. */
enum gw_mode { GW_MODE_AUTH = 0, GW_MODE_ENCRYPT = 1 };

struct gw_peer_conf {
	char name[GW_NAME_MAX + 1];
	enum gw_mode mode; /* Mode, default auth */
	unsigned ciphers;  /* Cipher: the enum xgt_cipher bits it allows (auto: both) */
	unsigned char public_key[GW_KEY_LEN];
	struct sockaddr_in endpoint; /* control address; port 0: passive peer */
	struct gw_prefix allowed[GW_MAX_ALLOWED];
	int n_allowed; /* 0: any prefix not owned by another peer */
	int line;
};

struct gw_conf {
	char name[GW_NAME_MAX + 1];
	char cluster[GW_NAME_MAX + 1];
	unsigned char private_key[GW_KEY_LEN];
	unsigned char public_key[GW_KEY_LEN]; /* derived from private_key */
	struct sockaddr_in listen;
	struct sockaddr_in public_addr;
	char database[256];
	char instance[64];    /* xgate instance of the gateway program; "" = no XDP */
	char public_if[16];   /* public NIC (tunnel packets leave by it) */
	char dividers[8][64]; /* xgate instances whose xg_subnet gets remote subnets */
	int n_dividers;
	unsigned grace_s, keepalive_s, hold_s, rekey_s;
	unsigned rekey_grace_s; /* a replaced key leaves the maps this long after */
	/* key limits (proto/gatewayd.md, "Key limits"): a new sending key
	 * after rekey_msgs counters, none used past reject_msgs counters or
	 * reject_s seconds (WireGuard's 2^60, 2^64 - 2^13 - 1 and 180 s) */
	uint64_t rekey_msgs, reject_msgs;
	unsigned reject_s;
	struct gw_prefix subnets[GW_MAX_SUBNETS];
	int n_subnets;
	struct gw_peer_conf peers[GW_MAX_PEERS];
	int n_peers;
};

/* Parse; on error returns -1 and writes "FILE:LINE: what is wrong" to err. */
int gw_conf_load(const char *path, struct gw_conf *c, char *err, size_t errlen);
int gw_conf_parse(const char *name, const char *text, struct gw_conf *c, char *err, size_t errlen);

#endif
