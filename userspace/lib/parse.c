// SPDX-License-Identifier: BSD-2-Clause
/* Parsers for what operators type; each error says what and why. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xg.h"

int xg_parse_u32(const char *what, const char *s, __u32 min, __u32 max, __u32 *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	/* decimal, or hex after 0x: strtoul would also skip blanks and read a
	 * leading 0 as octal (VNI 010 would be 8) */
	if (!s || !isdigit((unsigned char)*s) || (s[0] == '0' && isdigit((unsigned char)s[1])))
		goto bad;
	v = strtoul(s, &end, 0);
	if (errno || *end || v < min || v > max)
		goto bad;
	*out = (__u32)v;
	return 0;
bad:
	xg_err("invalid %s '%s': expected an integer %u..%u", what, s ? s : "", min, max);
	return -1;
}

int xg_parse_vni(const char *s, __u32 *vni)
{
	return xg_parse_u32("VNI", s, 1, 0xffffff, vni);
}

int xg_parse_ip(const char *s, __u32 *ip_be)
{
	struct in_addr a;

	if (!s || inet_pton(AF_INET, s, &a) != 1) {
		xg_err("invalid IPv4 address '%s'", s ? s : "");
		return -1;
	}
	*ip_be = a.s_addr;
	return 0;
}

int xg_parse_cidr(const char *s, __u32 *ip_be, int *plen)
{
	char buf[64], *slash;
	__u32 len, mask;
	size_t n;
	struct in_addr a;

	if (!s || strlen(s) >= sizeof(buf) || !(slash = strchr(s, '/'))) {
		xg_err("invalid CIDR '%s': expected A.B.C.D/LEN", s ? s : "");
		return -1;
	}
	memcpy(buf, s, slash - s);
	buf[slash - s] = 0;
	if (inet_pton(AF_INET, buf, &a) != 1) {
		xg_err("invalid CIDR '%s': '%s' is not an IPv4 address", s, buf);
		return -1;
	}
	/* decimal as written: strtoul would take " 8" and read "010" as 8 */
	n = strspn(slash + 1, "0123456789");
	if (!n || n > 2 || slash[n + 1] || (n == 2 && slash[1] == '0')) {
		xg_err("invalid prefix length '%s': expected an integer 0..32", slash + 1);
		return -1;
	}
	if (xg_parse_u32("prefix length", slash + 1, 0, 32, &len))
		return -1;
	mask = len ? htonl(~0u << (32 - len)) : 0;
	if (a.s_addr & ~mask) {
		xg_err("invalid CIDR '%s': host bits set (did you mean %s/%u?)", s,
		       inet_ntoa((struct in_addr){a.s_addr & mask}), len);
		return -1;
	}
	*ip_be = a.s_addr;
	*plen = (int)len;
	return 0;
}

int xg_parse_mac(const char *s, __u8 mac[6])
{
	unsigned int b[6];
	char tail;
	bool form = s && strlen(s) == 17;

	/* %2x alone would also take " 2", "+2" and "-2" (as fe) for a byte */
	for (int i = 0; form && i < 17; i++)
		form = i % 3 == 2 ? s[i] == ':' : isxdigit((unsigned char)s[i]);
	if (!form || sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4],
			    &b[5], &tail) != 6) {
		xg_err("invalid MAC address '%s': expected xx:xx:xx:xx:xx:xx", s ? s : "");
		return -1;
	}
	for (int i = 0; i < 6; i++)
		mac[i] = (__u8)b[i];
	if (mac[0] & 1) {
		xg_err("invalid MAC address '%s': multicast/broadcast bit set", s);
		return -1;
	}
	return 0;
}

int xg_parse_ip_list(const char *what, const char *s, __u32 *out, int max, __u32 *n)
{
	char buf[512], *tok, *save = NULL;

	*n = 0;
	if (!s || !*s || strlen(s) >= sizeof(buf)) {
		xg_err("invalid %s list '%s': expected ADDR[,ADDR...]", what, s ? s : "");
		return -1;
	}
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if ((int)*n >= max) {
			xg_err("too many %s in '%s': at most %d", what, s, max);
			return -1;
		}
		if (xg_parse_ip(tok, &out[*n]))
			return -1;
		for (__u32 i = 0; i < *n; i++)
			if (out[i] == out[*n]) {
				xg_err("duplicate %s '%s' in '%s'", what, tok, s);
				return -1;
			}
		(*n)++;
	}
	if (!*n) {
		xg_err("empty %s list", what);
		return -1;
	}
	return 0;
}

const char *xg_ip_str(__u32 ip_be, char buf[16])
{
	return inet_ntop(AF_INET, &ip_be, buf, 16);
}

const char *xg_mac_str(const __u8 *m, char buf[18])
{
	snprintf(buf, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
	return buf;
}

/* A subnet's gateway MAC when none is given: locally administered, derived
 * from the gateway address so every bouncer of the subnet answers alike. */
void xg_gw_mac_default(__u32 gw_ip_be, __u8 mac[6])
{
	mac[0] = 0x02;
	mac[1] = 0x58;
	memcpy(mac + 2, &gw_ip_be, 4);
}
