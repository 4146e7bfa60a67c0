// SPDX-License-Identifier: BSD-2-Clause
/*
 * One parser for gatewayd's file. Keys are case-insensitive as in
 * wg-quick; every error names the line and what is wrong with it; the
 * whole file is checked before anything uses it. The lines are read by
 * ini.c (shared with edgeclusterd); the keys and their rules are here.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "aead.h"
#include "config.h"
#include "ini.h"

static int parse_name(struct ini *s, const char *key, const char *v, char *out)
{
	size_t n = strlen(v);

	if (!n || n > GW_NAME_MAX)
		return ini_err(s, "%s must be 1-%d characters", key, GW_NAME_MAX);
	for (size_t i = 0; i < n; i++)
		if (!((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= '0' && v[i] <= '9') || v[i] == '-' ||
		      v[i] == '_' || v[i] == '.'))
			return ini_err(s, "%s '%s': only a-z, 0-9, '-', '_' and '.' are allowed",
				       key, v);
	memcpy(out, v, n + 1);
	return 0;
}

static int parse_key(struct ini *s, const char *key, const char *v, unsigned char *out)
{
	size_t len = 0;

	if (sodium_base642bin(out, GW_KEY_LEN, v, strlen(v), NULL, &len, NULL,
			      sodium_base64_VARIANT_ORIGINAL) ||
	    len != GW_KEY_LEN)
		return ini_err(
		    s, "%s is not a base64 32-byte key (make one with `xgate gw genkey`)", key);
	return 0;
}

/* "[VNI] A.B.C.D/LEN"; VNI required when need_vni. */
static int parse_prefix(struct ini *s, const char *key, char *v, bool need_vni,
			struct gw_prefix *out)
{
	char *sp = strpbrk(v, " \t"), *cidr = v, *slash, *end;
	unsigned long n;
	struct in_addr a;
	__u32 mask;

	memset(out, 0, sizeof(*out));
	if (sp) {
		*sp = 0;
		errno = 0;
		n = strtoul(v, &end, 10);
		if (errno || *end || !n || n > 0xffffff)
			return ini_err(s, "%s: VNI '%s' must be 1-16777215", key, v);
		out->vni = (__u32)n;
		cidr = ini_trim(sp + 1);
	} else if (need_vni) {
		return ini_err(s, "%s '%s': expected VNI A.B.C.D/LEN", key, v);
	}
	slash = strchr(cidr, '/');
	if (!slash)
		return ini_err(s, "%s '%s': expected A.B.C.D/LEN", key, cidr);
	*slash = 0;
	if (inet_pton(AF_INET, cidr, &a) != 1)
		return ini_err(s, "%s: '%s' is not an IPv4 address", key, cidr);
	errno = 0;
	n = strtoul(slash + 1, &end, 10);
	if (errno || *end || end == slash + 1 || n > 32)
		return ini_err(s, "%s: prefix length '%s' must be 0-32", key, slash + 1);
	mask = n ? htonl(~0u << (32 - n)) : 0;
	if (a.s_addr & ~mask)
		return ini_err(s, "%s: %s/%lu has host bits set", key, cidr, n);
	out->ip_be = a.s_addr;
	out->plen = (__u8)n;
	out->line = s->line;
	return 0;
}

static bool prefix_overlap(const struct gw_prefix *a, const struct gw_prefix *b)
{
	__u8 plen = a->plen < b->plen ? a->plen : b->plen;
	__u32 mask = plen ? htonl(~0u << (32 - plen)) : 0;

	return a->vni == b->vni && ((a->ip_be ^ b->ip_be) & mask) == 0;
}

/* A Subnet that repeats or overlaps an earlier one: both would be announced
 * and every peer would refuse one of them as a conflict. */
static int check_subnet(struct ini *s, const struct gw_conf *c, const char *value)
{
	const struct gw_prefix *n = &c->subnets[c->n_subnets - 1];

	for (int i = 0; i < c->n_subnets - 1; i++) {
		const struct gw_prefix *o = &c->subnets[i];
		char ip[INET_ADDRSTRLEN];

		if (!prefix_overlap(o, n))
			continue;
		inet_ntop(AF_INET, &o->ip_be, ip, sizeof(ip));
		if (o->plen == n->plen)
			return ini_err(s, "Subnet '%s' given twice (line %d)", value, o->line);
		return ini_err(s, "Subnet '%s' overlaps Subnet '%u %s/%u' (line %d)", value, o->vni,
			       ip, o->plen, o->line);
	}
	return 0;
}

/* A message count: decimal, or 2^N; at least 1. */
static int parse_count(struct ini *s, const char *key, const char *v, uint64_t *out)
{
	unsigned long long n;
	char *end;

	errno = 0;
	if (!strncmp(v, "2^", 2)) {
		n = strtoull(v + 2, &end, 10);
		if (!errno && end != v + 2 && !*end && v[2] != '-' && n < 64) {
			*out = 1ULL << n;
			return 0;
		}
	} else {
		n = strtoull(v, &end, 10);
		if (!errno && end != v && !*end && *v != '-' && n > 0) {
			*out = n;
			return 0;
		}
	}
	return ini_err(s, "%s '%s': expected a count of packets, 1-%llu or 2^N (N < 64)", key, v,
		       (unsigned long long)UINT64_MAX);
}

enum section { SEC_NONE, SEC_GATEWAY, SEC_PEER };

static int gateway_kv(struct ini *s, struct gw_conf *c, const char *k, char *v, unsigned *seen)
{
	char value[INI_LINE_MAX];
	static const char *const keys[] = {"Name",
					   "Cluster",
					   "PrivateKey",
					   "ListenAddress",
					   "PublicAddress",
					   "Database",
					   "Instance",
					   "GraceTime",
					   "Keepalive",
					   "HoldTime",
					   "RekeyInterval",
					   "Subnet",
					   "PublicInterface",
					   "Divider",
					   "RekeyGrace",
					   "RekeyAfterMessages",
					   "RejectAfterMessages",
					   "RejectAfterTime"};
	int i, n = sizeof(keys) / sizeof(keys[0]);

	for (i = 0; i < n && strcasecmp(k, keys[i]); i++)
		;
	if (i == n)
		return ini_err(s, "unknown key '%s' in [Gateway]", k);
	if (i != 11 && i != 13 && (*seen & (1u << i)))
		return ini_err(s, "%s given twice", keys[i]);
	*seen |= 1u << i;
	switch (i) {
	case 0:
		return parse_name(s, "Name", v, c->name);
	case 1:
		return parse_name(s, "Cluster", v, c->cluster);
	case 2:
		if (parse_key(s, "PrivateKey", v, c->private_key))
			return -1;
		crypto_scalarmult_base(c->public_key, c->private_key);
		return 0;
	case 3:
		return ini_addr(s, "ListenAddress", v, &c->listen);
	case 4:
		return ini_addr(s, "PublicAddress", v, &c->public_addr);
	case 5:
		if (!*v || strlen(v) >= sizeof(c->database))
			return ini_err(s, "Database path must be 1-%zu characters",
				       sizeof(c->database) - 1);
		strcpy(c->database, v);
		return 0;
	case 6:
		return parse_name(s, "Instance", v, c->instance);
	case 7:
		return ini_seconds(s, "GraceTime", v, 0, 86400, &c->grace_s);
	case 8:
		return ini_seconds(s, "Keepalive", v, 1, 3600, &c->keepalive_s);
	case 9:
		return ini_seconds(s, "HoldTime", v, 2, 3600, &c->hold_s);
	case 10:
		return ini_seconds(s, "RekeyInterval", v, 10, 86400, &c->rekey_s);
	case 12:
		if (!*v || strlen(v) >= sizeof(c->public_if))
			return ini_err(s,
				       "PublicInterface must be a device name of 1-%zu characters",
				       sizeof(c->public_if) - 1);
		strcpy(c->public_if, v);
		return 0;
	case 14:
		return ini_seconds(s, "RekeyGrace", v, 1, 600, &c->rekey_grace_s);
	case 15:
		return parse_count(s, "RekeyAfterMessages", v, &c->rekey_msgs);
	case 16:
		return parse_count(s, "RejectAfterMessages", v, &c->reject_msgs);
	case 17:
		return ini_seconds(s, "RejectAfterTime", v, 11, 86400 + 3600, &c->reject_s);
	case 13:
		if (c->n_dividers >= 8)
			return ini_err(s, "too many Divider lines (at most 8)");
		return parse_name(s, "Divider", v, c->dividers[c->n_dividers++]);
	case 11:
		if (c->n_subnets >= GW_MAX_SUBNETS)
			return ini_err(s, "too many Subnet lines (at most %d)", GW_MAX_SUBNETS);
		snprintf(value, sizeof(value), "%s", v);
		if (parse_prefix(s, "Subnet", v, true, &c->subnets[c->n_subnets++]))
			return -1;
		return check_subnet(s, c, value);
	}
	return ini_err(s, "unknown key '%s' in [Gateway]", k);
}

/* Whether an X25519 public key is of small order (all zero among them):
 * every DH with it gives the all-zero output, which the handshake refuses,
 * so a peer with it could never connect. Clamping makes any scalar a
 * multiple of the cofactor, so one product tells. */
static bool small_order(const unsigned char pk[GW_KEY_LEN])
{
	unsigned char scalar[32] = {1}, q[32];

	return crypto_scalarmult(q, scalar, pk) != 0;
}

static bool own_address(const struct sockaddr_in *listen, const struct sockaddr_in *ep)
{
	if (ep->sin_port != listen->sin_port)
		return false;
	if (ep->sin_addr.s_addr == listen->sin_addr.s_addr)
		return true;
	/* listening on every address: any loopback address is ours too */
	return listen->sin_addr.s_addr == htonl(INADDR_ANY) &&
	       (ntohl(ep->sin_addr.s_addr) >> 24) == 127;
}

/* Checks of one [Peer] key against the [Gateway] (which comes first, so it
 * is complete here); errors name the key's line and quote its value. */
static int peer_vs_gateway(struct ini *s, const struct gw_conf *c, const struct gw_peer_conf *p,
			   int key, const char *v)
{
	switch (key) {
	case 0:
		if (!strcmp(p->name, c->name))
			return ini_err(s, "peer Name '%s' is this gateway's own Name", v);
		return 0;
	case 1:
		if (small_order(p->public_key))
			return ini_err(
			    s,
			    "PublicKey '%s' of peer %s is not a usable X25519 key (a "
			    "small-order point such as all zeros: no session could use it)",
			    v, p->name[0] ? p->name : "(unnamed)");
		if (!sodium_memcmp(p->public_key, c->public_key, GW_KEY_LEN))
			return ini_err(s,
				       "PublicKey '%s' of peer %s is this gateway's own public key",
				       v, p->name[0] ? p->name : "(unnamed)");
		return 0;
	case 2:
		if (own_address(&c->listen, &p->endpoint))
			return ini_err(
			    s, "Endpoint '%s' of peer %s is this gateway's own ListenAddress", v,
			    p->name[0] ? p->name : "(unnamed)");
		return 0;
	}
	return 0;
}

static int peer_kv(struct ini *s, const struct gw_conf *c, struct gw_peer_conf *p, const char *k,
		   char *v, unsigned *seen)
{
	static const char *const keys[] = {"Name",	     "PublicKey", "Endpoint",
					   "AllowedSubnets", "Mode",	  "Cipher"};
	int i, n = sizeof(keys) / sizeof(keys[0]);

	for (i = 0; i < n && strcasecmp(k, keys[i]); i++)
		;
	if (i == n)
		return ini_err(s, "unknown key '%s' in [Peer]", k);
	if (i != 3 && (*seen & (1u << i)))
		return ini_err(s, "%s given twice in this [Peer]", keys[i]);
	*seen |= 1u << i;
	switch (i) {
	case 0:
		return parse_name(s, "Name", v, p->name) || peer_vs_gateway(s, c, p, i, v) ? -1 : 0;
	case 1:
		return parse_key(s, "PublicKey", v, p->public_key) || peer_vs_gateway(s, c, p, i, v)
			   ? -1
			   : 0;
	case 2:
		return ini_addr(s, "Endpoint", v, &p->endpoint) || peer_vs_gateway(s, c, p, i, v)
			   ? -1
			   : 0;
	case 4:
		if (!strcasecmp(v, "encrypt"))
			p->mode = GW_MODE_ENCRYPT;
		else if (!strcasecmp(v, "auth"))
			p->mode = GW_MODE_AUTH;
		else
			return ini_err(s, "Mode '%s': expected encrypt or auth", v);
		return 0;
	case 5:
		if (!strcasecmp(v, "auto"))
			p->ciphers = XGT_CIPHERS_ALL;
		else if (!(p->ciphers = xgt_cipher_by_name(v)))
			return ini_err(
			    s, "Cipher '%s': expected auto, chacha20-poly1305 or aes-256-gcm", v);
		return 0;
	default: {
		char *save = NULL, *tok;

		for (tok = strtok_r(v, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (p->n_allowed >= GW_MAX_ALLOWED)
				return ini_err(s, "too many AllowedSubnets (at most %d)",
					       GW_MAX_ALLOWED);
			if (parse_prefix(s, "AllowedSubnets", ini_trim(tok), false,
					 &p->allowed[p->n_allowed++]))
				return -1;
		}
		return 0;
	}
	}
}

/* The checks of a [Peer] that need all its keys; errors name its [Peer] line. */
static int finish_peer(struct ini *s, struct gw_conf *c, unsigned seen)
{
	struct gw_peer_conf *p = &c->peers[c->n_peers - 1];

	if (!(seen & 1))
		return ini_err_at(s, p->line, "[Peer] needs a Name");
	if (!(seen & 2))
		return ini_err_at(s, p->line, "[Peer] %s needs a PublicKey", p->name);
	for (int i = 0; i < c->n_peers - 1; i++) {
		if (!strcmp(c->peers[i].name, p->name))
			return ini_err_at(s, p->line, "peer name '%s' already used on line %d",
					  p->name, c->peers[i].line);
		if (!memcmp(c->peers[i].public_key, p->public_key, GW_KEY_LEN))
			return ini_err_at(s, p->line,
					  "peer %s has the same PublicKey as %s (line %d)", p->name,
					  c->peers[i].name, c->peers[i].line);
	}
	return 0;
}

int gw_conf_parse(const char *file, const char *text, struct gw_conf *c, char *err, size_t errlen)
{
	struct ini s;
	enum section sec = SEC_NONE;
	unsigned gw_seen = 0, peer_seen = 0;
	enum ini_item item;
	char *k, *v;

	memset(c, 0, sizeof(*c));
	c->grace_s = 60;
	c->keepalive_s = 5;
	c->hold_s = 15;
	c->rekey_s = 120;
	c->rekey_grace_s = 10;
	c->rekey_msgs = 1ULL << 60;
	c->reject_msgs = UINT64_MAX - (1ULL << 13);
	c->listen.sin_family = AF_INET;
	c->listen.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	c->listen.sin_port = htons(7100);

	ini_init(&s, file, text, "[Gateway]", err, errlen);
	while ((item = ini_next(&s, &k, &v)) != INI_END) {
		if (item == INI_ERROR)
			return -1;
		if (item == INI_SECTION) {
			if (sec == SEC_PEER && finish_peer(&s, c, peer_seen))
				return -1;
			if (!strcasecmp(k, "[Gateway]")) {
				if (gw_seen || sec != SEC_NONE)
					return ini_err(&s, "[Gateway] must come once, first");
				sec = SEC_GATEWAY;
				gw_seen = 1u << 31;
			} else if (!strcasecmp(k, "[Peer]")) {
				if (sec == SEC_NONE)
					return ini_err(&s, "[Peer] before [Gateway]");
				if (c->n_peers >= GW_MAX_PEERS)
					return ini_err(&s, "too many peers (at most %d)",
						       GW_MAX_PEERS);
				sec = SEC_PEER;
				peer_seen = 0;
				c->peers[c->n_peers].ciphers = XGT_CIPHERS_ALL;
				/* encrypted unless said otherwise (proto/gatewayd.md) */
				c->peers[c->n_peers].mode = GW_MODE_ENCRYPT;
				c->peers[c->n_peers++].line = s.line;
			} else {
				return ini_err(&s, "unknown section %s: [Gateway] or [Peer]", k);
			}
			continue;
		}
		if (!*v)
			return ini_err(&s, "%s has no value", k);
		if (sec == SEC_GATEWAY
			? gateway_kv(&s, c, k, v, &gw_seen)
			: peer_kv(&s, c, &c->peers[c->n_peers - 1], k, v, &peer_seen))
			return -1;
	}
	if (sec == SEC_PEER && finish_peer(&s, c, peer_seen))
		return -1;
	/* what is missing from the whole file is told at line 0 */
	if (!gw_seen)
		return ini_err_at(&s, 0, "no [Gateway] section");
	if (!c->name[0])
		return ini_err_at(&s, 0, "[Gateway] needs a Name");
	if (!c->cluster[0])
		return ini_err_at(&s, 0, "[Gateway] needs a Cluster");
	if (!(gw_seen & (1u << 2)))
		return ini_err_at(&s, 0, "[Gateway] needs a PrivateKey");
	if (!c->public_addr.sin_port)
		return ini_err_at(
		    &s, 0, "[Gateway] needs a PublicAddress (where peers send tunnel packets)");
	/* a replaced key must be gone before the next rekey reuses its slot;
	 * not given, the grace shrinks to fit a short RekeyInterval */
	if (!(gw_seen & (1u << 14)) && c->rekey_grace_s > c->rekey_s / 2)
		c->rekey_grace_s = c->rekey_s / 2;
	if (c->rekey_grace_s >= c->rekey_s)
		return ini_err_at(&s, 0, "RekeyGrace (%us) must be less than RekeyInterval (%us)",
				  c->rekey_grace_s, c->rekey_s);
	/* WireGuard's Reject-After-Time is its Rekey-After-Time + 60 s */
	if (!(gw_seen & (1u << 17)))
		c->reject_s = c->rekey_s + 60;
	if (c->reject_s <= c->rekey_s)
		return ini_err_at(
		    &s, 0,
		    "RejectAfterTime (%us) must exceed RekeyInterval (%us): keys would "
		    "stop before the next one is in use",
		    c->reject_s, c->rekey_s);
	if (c->rekey_msgs >= c->reject_msgs)
		return ini_err_at(&s, 0,
				  "RekeyAfterMessages (%llu) must be less than RejectAfterMessages "
				  "(%llu)",
				  (unsigned long long)c->rekey_msgs,
				  (unsigned long long)c->reject_msgs);
	if (c->hold_s <= c->keepalive_s)
		return ini_err_at(&s, 0, "HoldTime (%us) must exceed Keepalive (%us)", c->hold_s,
				  c->keepalive_s);
	if (!c->database[0])
		snprintf(c->database, sizeof(c->database), "/var/lib/xgate/gatewayd-%s.db",
			 c->name);
	return 0;
}

/* ini_load passes the config as void *: this gives it its type back. */
static int parse_text(const char *file, const char *text, void *c, char *err, size_t errlen)
{
	return gw_conf_parse(file, text, c, err, errlen);
}

int gw_conf_load(const char *path, struct gw_conf *c, char *err, size_t errlen)
{
	return ini_load(path, parse_text, c, err, errlen);
}
