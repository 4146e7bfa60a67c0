// SPDX-License-Identifier: BSD-2-Clause
/* Tables for humans, JSON for scripts: every listing is built as JSON rows
 * first so the two can never disagree. */
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

void out_json(json_t *v)
{
	char *s = json_dumps(v, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	if (s)
		puts(s);
	free(s);
}

static void cell(json_t *v, char *buf, size_t len)
{
	size_t i, off = 0;
	json_t *e;

	if (!v || json_is_null(v)) {
		snprintf(buf, len, "-");
	} else if (json_is_string(v)) {
		snprintf(buf, len, "%s", json_string_value(v));
	} else if (json_is_integer(v)) {
		snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	} else if (json_is_boolean(v)) {
		snprintf(buf, len, "%s", json_is_true(v) ? "yes" : "no");
	} else if (json_is_array(v)) {
		buf[0] = 0;
		json_array_foreach(v, i, e) {
			char sub[64];

			cell(e, sub, sizeof(sub));
			off += snprintf(buf + off, off < len ? len - off : 0, "%s%s", i ? "," : "", sub);
		}
		if (!json_array_size(v))
			snprintf(buf, len, "-");
	} else {
		snprintf(buf, len, "?");
	}
}

void out_rows(struct cli *c, json_t *v, const char *const *cols, const char *const *keys)
{
	size_t ncol = 0, i, w[16] = { 0 };
	json_t *row;
	char buf[256];

	if (c->json) {
		out_json(v);
		json_decref(v);
		return;
	}
	while (cols[ncol])
		ncol++;
	for (size_t k = 0; k < ncol; k++)
		w[k] = strlen(cols[k]);
	json_array_foreach(v, i, row) {
		for (size_t k = 0; k < ncol; k++) {
			cell(json_object_get(row, keys[k]), buf, sizeof(buf));
			if (strlen(buf) > w[k])
				w[k] = strlen(buf);
		}
	}
	for (size_t k = 0; k < ncol; k++)
		printf("%-*s%s", (int)w[k], cols[k], k + 1 < ncol ? "  " : "\n");
	json_array_foreach(v, i, row) {
		for (size_t k = 0; k < ncol; k++) {
			cell(json_object_get(row, keys[k]), buf, sizeof(buf));
			printf("%-*s%s", (int)w[k], buf, k + 1 < ncol ? "  " : "\n");
		}
	}
	json_decref(v);
}

json_t *json_ip(__u32 ip_be)
{
	char b[16];

	return ip_be ? json_string(xg_ip_str(ip_be, b)) : json_null();
}

json_t *json_mac(const __u8 *mac)
{
	char b[18];

	return json_string(xg_mac_str(mac, b));
}

json_t *json_ip_list(const __u32 *ips, __u32 n)
{
	json_t *a = json_array();

	for (__u32 i = 0; i < n; i++)
		json_array_append_new(a, json_ip(ips[i]));
	return a;
}

const char *ifname_of(__u32 ifindex, char buf[16])
{
	if (!if_indextoname(ifindex, buf))
		snprintf(buf, 16, "(gone:%u)", ifindex);
	return buf;
}
