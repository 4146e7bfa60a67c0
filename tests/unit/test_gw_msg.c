// SPDX-License-Identifier: BSD-2-Clause
/* gatewayd message codecs: round trips, and every malformed field refused. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "aead.h"
#include "config.h"
#include "msg.h"
#include "unit.h"

/* Both ends must reach the same answer: every case is checked both ways. */
static void agree_both(uint8_t m1, uint8_t c1, uint8_t m2, uint8_t c2, int want_rc,
		       unsigned want_cipher, const char *want_why, const char *what)
{
	struct gw_info_msg a = {.mode = m1, .ciphers = c1}, b = {.mode = m2, .ciphers = c2};
	char why1[128] = "", why2[128] = "";
	unsigned x = 99, y = 99;
	int r1 = gw_info_agree(&a, &b, &x, why1, sizeof(why1));
	int r2 = gw_info_agree(&b, &a, &y, why2, sizeof(why2));

	CHECK(r1 == want_rc && r2 == want_rc && x == want_cipher && y == want_cipher &&
		  (!want_why || strstr(why1, want_why)),
	      "%s (%s)", what, want_rc ? why1 : xgt_cipher_name(x));
}

static void agreement(void)
{
	agree_both(GW_MODE_AUTH, 3, GW_MODE_AUTH, 1, 0, 0, NULL, "auth and auth: no cipher");
	agree_both(GW_MODE_ENCRYPT, 3, GW_MODE_ENCRYPT, 3, 0, XGT_AES256_GCM, NULL,
		   "both have AES-GCM: AES-256-GCM");
	agree_both(GW_MODE_ENCRYPT, 3, GW_MODE_ENCRYPT, 1, 0, XGT_CHACHA20_POLY1305, NULL,
		   "one without AES-GCM: ChaCha20-Poly1305");
	agree_both(GW_MODE_ENCRYPT, 2, GW_MODE_ENCRYPT, 1, -1, 0,
		   "no common cipher: we offer aes-256-gcm, the peer offers chacha20-poly1305",
		   "AES-GCM only against ChaCha20 only: refused");
	agree_both(GW_MODE_ENCRYPT, 0, GW_MODE_ENCRYPT, 3, -1, 0, "we offer none",
		   "nothing offered: refused");
	agree_both(GW_MODE_ENCRYPT, 3, GW_MODE_AUTH, 3, -1, 0,
		   "mode mismatch: we want encrypt, the peer wants auth",
		   "encrypt against auth: refused, no fallback to clear");
}

int main(void)
{
	struct gw_route_msg m = {.version = 0x0102030405060708ull, .key = {4000000, 0, 16}}, d;
	struct gw_info_msg i = {.name = "gw-a", .cluster = "edge-a"}, j;
	uint8_t buf[128], bad[128];
	const char *why = "";
	size_t n;

	m.key.ip_be = inet_addr("10.2.0.0");
	n = gw_route_encode(buf, &m);
	CHECK(n == GW_ROUTE_MSG_LEN && buf[0] == 1 && buf[7] == 8, "route encodes big-endian");
	CHECK(gw_route_decode(buf, n, &d, &why) == 0 && d.version == m.version &&
		  d.key.vni == m.key.vni && d.key.ip_be == m.key.ip_be && d.key.plen == 16,
	      "route round trip");
	CHECK(gw_route_decode(buf, n - 1, &d, &why) < 0 && strstr(why, "length"),
	      "short route refused");
	memcpy(bad, buf, n);
	bad[16] = 33;
	CHECK(gw_route_decode(bad, n, &d, &why) < 0 && strstr(why, "over 32"), "plen 33 refused");
	memcpy(bad, buf, n);
	bad[8] = 1; /* VNI > 24 bits */
	CHECK(gw_route_decode(bad, n, &d, &why) < 0 && strstr(why, "VNI"),
	      "VNI over 24 bits refused");
	memcpy(bad, buf, n);
	bad[15] = 1; /* host bit */
	CHECK(gw_route_decode(bad, n, &d, &why) < 0 && strstr(why, "host bits"),
	      "host bits refused");
	memcpy(bad, buf, n);
	memset(bad, 0, 8);
	CHECK(gw_route_decode(bad, n, &d, &why) < 0 && strstr(why, "version 0"),
	      "version 0 refused");

	i.public_ip_be = inet_addr("127.0.0.2");
	i.public_port_be = htons(6081);
	n = gw_info_encode(buf, &i);
	CHECK(gw_info_decode(buf, n, &j, &why) == 0 && !strcmp(j.name, "gw-a") &&
		  !strcmp(j.cluster, "edge-a") && j.public_ip_be == i.public_ip_be &&
		  j.public_port_be == i.public_port_be,
	      "info round trip");
	CHECK(gw_info_decode(buf, n + 1, &j, &why) < 0, "trailing byte refused");
	memcpy(bad, buf, n);
	bad[0] = 40;
	CHECK(gw_info_decode(bad, n, &j, &why) < 0, "name length past the message refused");
	memcpy(bad, buf, n);
	bad[1] = 'G';
	CHECK(gw_info_decode(bad, n, &j, &why) < 0 && strstr(why, "invalid name"),
	      "bad name refused");
	memcpy(bad, buf, n);
	bad[3] = 0; /* "gw\0a": the name's length says 4 */
	CHECK(gw_info_decode(bad, n, &j, &why) < 0 && strstr(why, "invalid name"),
	      "NUL inside a name refused");
	memcpy(bad, buf, n);
	memset(bad + n - 4, 0, 2);
	CHECK(gw_info_decode(bad, n, &j, &why) < 0 && strstr(why, "public address"),
	      "port 0 refused");
	CHECK(gw_info_decode(buf, 3, &j, &why) < 0, "truncated info refused");
	CHECK(gw_info_decode(buf, n - 2, &j, &why) < 0 && strstr(why, "malformed"),
	      "info without mode and ciphers refused");

	/* the tunnel fields: mode and cipher set */
	i.mode = GW_MODE_ENCRYPT;
	i.ciphers = XGT_CIPHERS_ALL;
	n = gw_info_encode(buf, &i);
	CHECK(n == 10 + strlen("gw-a") + strlen("edge-a") && buf[n - 2] == 1 && buf[n - 1] == 3,
	      "mode and cipher set are the last two bytes");
	CHECK(gw_info_decode(buf, n, &j, &why) == 0 && j.mode == GW_MODE_ENCRYPT &&
		  j.ciphers == XGT_CIPHERS_ALL,
	      "mode and ciphers round trip");
	memcpy(bad, buf, n);
	bad[n - 2] = 2;
	CHECK(gw_info_decode(bad, n, &j, &why) < 0 && strstr(why, "unknown mode"),
	      "mode 2 refused");
	memcpy(bad, buf, n);
	bad[n - 1] = 4;
	CHECK(gw_info_decode(bad, n, &j, &why) < 0 && strstr(why, "cipher bits"),
	      "unknown cipher bit refused");
	agreement();

	/* DATAKEY: epoch, id, flags and the ephemeral key */
	{
		struct gw_datakey_msg dk = {.epoch = 0x01020304, .id = 9, .flags = GW_DATAKEY_ACK},
				      dd;

		memset(dk.eph, 0xab, sizeof(dk.eph));
		n = gw_datakey_encode(buf, &dk);
		CHECK(n == 38 && buf[0] == 1 && buf[3] == 4 && buf[4] == 9 && buf[5] == 1 &&
			  buf[6] == 0xab && buf[37] == 0xab,
		      "datakey encodes to 38 bytes, big-endian epoch, ephemeral last");
		CHECK(gw_datakey_decode(buf, n, &dd, &why) == 0 && dd.epoch == dk.epoch &&
			  dd.id == 9 && dd.flags == 1 && !memcmp(dd.eph, dk.eph, 32),
		      "datakey round trip");
		CHECK(gw_datakey_decode(buf, 6, &dd, &why) < 0 && strstr(why, "length"),
		      "the ephemeral-less 6-byte datakey refused");
		memcpy(bad, buf, n);
		bad[5] = 2;
		CHECK(gw_datakey_decode(bad, n, &dd, &why) < 0 && strstr(why, "flags"),
		      "unknown datakey flag refused");
		memcpy(bad, buf, n);
		memset(bad + 6, 0, 32);
		CHECK(gw_datakey_decode(bad, n, &dd, &why) < 0 && strstr(why, "all-zero"),
		      "all-zero ephemeral refused");
	}
	return unit_summary();
}
