// SPDX-License-Identifier: BSD-2-Clause
/* Strict codecs for the sync messages: fixed sizes, big-endian, every field
 * checked, so a peer's bug becomes a logged protocol error, not state. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "aead.h"
#include "config.h"
#include "msg.h"

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

size_t gw_route_encode(uint8_t *out, const struct gw_route_msg *m)
{
	put32(out, (uint32_t)(m->version >> 32));
	put32(out + 4, (uint32_t)m->version);
	put32(out + 8, m->key.vni);
	memcpy(out + 12, &m->key.ip_be, 4);
	out[16] = m->key.plen;
	return GW_ROUTE_MSG_LEN;
}

int gw_route_decode(const uint8_t *in, size_t len, struct gw_route_msg *m, const char **why)
{
	uint32_t mask;

	if (len != GW_ROUTE_MSG_LEN) {
		*why = "route message of the wrong length";
		return -1;
	}
	m->version = (uint64_t)get32(in) << 32 | get32(in + 4);
	m->key.vni = get32(in + 8);
	memcpy(&m->key.ip_be, in + 12, 4);
	m->key.plen = in[16];
	if (!m->version) {
		*why = "route version 0";
		return -1;
	}
	if (!m->key.vni || m->key.vni > 0xffffff) {
		*why = "VNI out of range";
		return -1;
	}
	if (m->key.plen > 32) {
		*why = "prefix length over 32";
		return -1;
	}
	mask = m->key.plen ? htonl(~0u << (32 - m->key.plen)) : 0;
	if (m->key.ip_be & ~mask) {
		*why = "prefix with host bits set";
		return -1;
	}
	return 0;
}

static int name_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 32)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
		      s[i] == '_' || s[i] == '.'))
			return 0;
	return 1;
}

size_t gw_info_encode(uint8_t *out, const struct gw_info_msg *m)
{
	size_t a = strlen(m->name), b = strlen(m->cluster);

	out[0] = (uint8_t)a;
	memcpy(out + 1, m->name, a);
	out[1 + a] = (uint8_t)b;
	memcpy(out + 2 + a, m->cluster, b);
	memcpy(out + 2 + a + b, &m->public_ip_be, 4);
	memcpy(out + 6 + a + b, &m->public_port_be, 2);
	out[8 + a + b] = m->mode;
	out[9 + a + b] = m->ciphers;
	return 10 + a + b;
}

int gw_info_decode(const uint8_t *in, size_t len, struct gw_info_msg *m, const char **why)
{
	size_t a, b;

	memset(m, 0, sizeof(*m));
	if (len < 10 || (a = in[0]) > 32 || len < 10 + a || (b = in[1 + a]) > 32 ||
	    len != 10 + a + b) {
		*why = "malformed info message";
		return -1;
	}
	memcpy(m->name, in + 1, a);
	memcpy(m->cluster, in + 2 + a, b);
	memcpy(&m->public_ip_be, in + 2 + a + b, 4);
	memcpy(&m->public_port_be, in + 6 + a + b, 2);
	m->mode = in[8 + a + b];
	m->ciphers = in[9 + a + b];
	/* a NUL inside a name would hide the bytes after it from name_ok */
	if (strlen(m->name) != a || strlen(m->cluster) != b || !name_ok(m->name) ||
	    !name_ok(m->cluster)) {
		*why = "invalid name in info message";
		return -1;
	}
	if (!m->public_ip_be || !m->public_port_be) {
		*why = "info message without a public address";
		return -1;
	}
	if (m->mode > GW_MODE_ENCRYPT) {
		*why = "info message with an unknown mode";
		return -1;
	}
	if (m->ciphers & ~XGT_CIPHERS_ALL) {
		*why = "info message with unknown cipher bits";
		return -1;
	}
	return 0;
}

static const char *mode_name(uint8_t m)
{
	return m == GW_MODE_ENCRYPT ? "encrypt" : "auth";
}

/* a cipher set in words: "aes-256-gcm chacha20-poly1305", or "none" */
static const char *set_name(unsigned c)
{
	switch (c & XGT_CIPHERS_ALL) {
	case XGT_CIPHERS_ALL:
		return "aes-256-gcm chacha20-poly1305";
	case 0:
		return "none";
	default:
		return xgt_cipher_name(c & XGT_CIPHERS_ALL);
	}
}

int gw_info_agree(const struct gw_info_msg *ours, const struct gw_info_msg *theirs,
		  unsigned *cipher, char *why, size_t whylen)
{
	*cipher = 0;
	if (ours->mode != theirs->mode) {
		snprintf(why, whylen, "mode mismatch: we want %s, the peer wants %s",
			 mode_name(ours->mode), mode_name(theirs->mode));
		return -1;
	}
	if (ours->mode == GW_MODE_AUTH)
		return 0;
	*cipher = xgt_cipher_agree(ours->ciphers, theirs->ciphers);
	if (!*cipher) {
		snprintf(why, whylen, "no common cipher: we offer %s, the peer offers %s",
			 set_name(ours->ciphers), set_name(theirs->ciphers));
		return -1;
	}
	return 0;
}

size_t gw_datakey_encode(uint8_t *out, const struct gw_datakey_msg *m)
{
	uint32_t e = htonl(m->epoch);

	memcpy(out, &e, 4);
	out[4] = m->id;
	out[5] = m->flags;
	memcpy(out + 6, m->eph, 32);
	return GW_DATAKEY_LEN;
}

int gw_datakey_decode(const uint8_t *in, size_t len, struct gw_datakey_msg *m, const char **why)
{
	uint32_t e;

	if (len != GW_DATAKEY_LEN) {
		*why = "datakey: wrong length";
		return -1;
	}
	if (in[5] & ~GW_DATAKEY_ACK) {
		*why = "datakey: unknown flags";
		return -1;
	}
	memcpy(&e, in, 4);
	m->epoch = ntohl(e);
	m->id = in[4];
	m->flags = in[5];
	memcpy(m->eph, in + 6, 32);
	for (int i = 0; i < 32; i++)
		if (m->eph[i])
			return 0;
	*why = "datakey: all-zero ephemeral key";
	return -1;
}
