// SPDX-License-Identifier: BSD-2-Clause
/*
 * The CLI's value parsers (userspace/lib/parse.c): the first byte picks one,
 * the rest is the argument as typed. What a parser accepts must print back
 * to a value it accepts again, the same; a MAC address and a CIDR must have
 * been typed in that printed form, an integer as decimal or 0x hex.
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <strings.h>

#include "fuzz.h"
#include "xg.h"

/* An accepted integer reads as the value it was taken for: decimal, or hex
 * after 0x (not octal after a bare 0, not after blanks). */
static bool as_typed(const char *s, __u32 v)
{
	char dec[16];

	snprintf(dec, sizeof(dec), "%u", v);
	if (!strcmp(s, dec))
		return true;
	if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || !s[2] ||
	    strspn(s + 2, "0123456789abcdefABCDEF") != strlen(s + 2))
		return false;
	return strtoul(s + 2, NULL, 16) == v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s, buf[24];
	__u32 v, v2, ips[8], n;
	__u8 mac[6], mac2[6];
	int plen;

	if (!size)
		return 0;
	s = fz_text(data + 1, size - 1);
	switch (data[0] % 6) {
	case 0:
		if (!xg_parse_vni(s, &v))
			FZ_ASSERT(v >= 1 && v <= 0xffffff && as_typed(s, v));
		break;
	case 1:
		if (!xg_parse_ip(s, &v))
			FZ_ASSERT(!xg_parse_ip(xg_ip_str(v, buf), &v2) && v == v2);
		break;
	case 2:
		if (!xg_parse_cidr(s, &v, &plen)) {
			char cidr[24];

			FZ_ASSERT(plen >= 0 && plen <= 32 &&
				  !(v & ~(plen ? htonl(~0u << (32 - plen)) : 0)));
			snprintf(cidr, sizeof(cidr), "%s/%d", xg_ip_str(v, buf), plen);
			FZ_ASSERT(!strcmp(s, cidr));
		}
		break;
	case 3: /* and only the form the error message asks for is accepted */
		if (!xg_parse_mac(s, mac))
			FZ_ASSERT(!xg_parse_mac(xg_mac_str(mac, buf), mac2) &&
				  !memcmp(mac, mac2, 6) && !strcasecmp(s, buf));
		break;
	case 4:
		if (!xg_parse_ip_list("dividers", s, ips, 8, &n))
			FZ_ASSERT(n >= 1 && n <= 8);
		break;
	default:
		if (!xg_parse_u32("port", s, 1, 65535, &v))
			FZ_ASSERT(v >= 1 && v <= 65535 && as_typed(s, v));
		break;
	}
	free(s);
	return 0;
}
