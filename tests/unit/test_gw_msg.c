// SPDX-License-Identifier: BSD-2-Clause
/* gatewayd message codecs: round trips, and every malformed field refused. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "unit.h"
#include "msg.h"


int main(void)
{
	struct gw_route_msg m = { .version = 0x0102030405060708ull, .key = { 4000000, 0, 16 } }, d;
	struct gw_info_msg i = { .name = "gw-a", .cluster = "edge-a" }, j;
	uint8_t buf[128], bad[128];
	const char *why = "";
	size_t n;

	m.key.ip_be = inet_addr("10.2.0.0");
	n = gw_route_encode(buf, &m);
	CHECK(n == GW_ROUTE_MSG_LEN && buf[0] == 1 && buf[7] == 8, "route encodes big-endian");
	CHECK(gw_route_decode(buf, n, &d, &why) == 0 && d.version == m.version &&
	      d.key.vni == m.key.vni && d.key.ip_be == m.key.ip_be && d.key.plen == 16,
	      "route round trip");
	CHECK(gw_route_decode(buf, n - 1, &d, &why) < 0 && strstr(why, "length"), "short route refused");
	memcpy(bad, buf, n);
	bad[16] = 33;
	CHECK(gw_route_decode(bad, n, &d, &why) < 0 && strstr(why, "over 32"), "plen 33 refused");
	memcpy(bad, buf, n);
	bad[8] = 1; /* VNI > 24 bits */
	CHECK(gw_route_decode(bad, n, &d, &why) < 0 && strstr(why, "VNI"), "VNI over 24 bits refused");
	memcpy(bad, buf, n);
	bad[15] = 1; /* host bit */
	CHECK(gw_route_decode(bad, n, &d, &why) < 0 && strstr(why, "host bits"), "host bits refused");
	memcpy(bad, buf, n);
	memset(bad, 0, 8);
	CHECK(gw_route_decode(bad, n, &d, &why) < 0 && strstr(why, "version 0"), "version 0 refused");

	i.public_ip_be = inet_addr("127.0.0.2");
	i.public_port_be = htons(6081);
	n = gw_info_encode(buf, &i);
	CHECK(gw_info_decode(buf, n, &j, &why) == 0 && !strcmp(j.name, "gw-a") &&
	      !strcmp(j.cluster, "edge-a") && j.public_ip_be == i.public_ip_be &&
	      j.public_port_be == i.public_port_be, "info round trip");
	CHECK(gw_info_decode(buf, n + 1, &j, &why) < 0, "trailing byte refused");
	memcpy(bad, buf, n);
	bad[0] = 40;
	CHECK(gw_info_decode(bad, n, &j, &why) < 0, "name length past the message refused");
	memcpy(bad, buf, n);
	bad[1] = 'G';
	CHECK(gw_info_decode(bad, n, &j, &why) < 0 && strstr(why, "invalid name"), "bad name refused");
	memcpy(bad, buf, n);
	bad[3] = 0; /* "gw\0a": the name's length says 4 */
	CHECK(gw_info_decode(bad, n, &j, &why) < 0 && strstr(why, "invalid name"),
	      "NUL inside a name refused");
	memcpy(bad, buf, n);
	memset(bad + n - 2, 0, 2);
	CHECK(gw_info_decode(bad, n, &j, &why) < 0 && strstr(why, "public address"), "port 0 refused");
	CHECK(gw_info_decode(buf, 3, &j, &why) < 0, "truncated info refused");
	return unit_summary();
}
