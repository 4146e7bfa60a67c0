// SPDX-License-Identifier: BSD-2-Clause
/* `xgate neigh`: the kernel-managed neighbour entries xgate keeps for the
 * underlay next hops (libxgate neigh.c, docs/architecture.md "Underlay
 * neighbours"), in the instance's network namespace. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <net/if.h>
#include <linux/neighbour.h>

#include "cli.h"

#define NEIGH_MAX 4096

static const char *state_str(__u16 s)
{
	switch (s) {
	case NUD_INCOMPLETE:
		return "incomplete";
	case NUD_REACHABLE:
		return "reachable";
	case NUD_STALE:
		return "stale";
	case NUD_DELAY:
		return "delay";
	case NUD_PROBE:
		return "probe";
	case NUD_FAILED:
		return "failed";
	case NUD_NOARP:
		return "noarp";
	case NUD_PERMANENT:
		return "permanent";
	default:
		return "none";
	}
}

static int with_neigh(struct xg_neigh **n)
{
	*n = xg_neigh_open();
	if (!*n)
		return xg_fail(xg_errno_code(-errno), "netlink: %s", strerror(errno));
	return XG_OK;
}

static int neigh_ls(struct cli *c, struct args *a)
{
	static const char *const cols[] = {"ADDRESS", "DEV", "STATE", "MAC", "MANAGED", NULL};
	static const char *const keys[] = {"ip", "dev", "state", "mac", "managed", NULL};
	static struct xg_neigh_entry e[NEIGH_MAX];
	struct xg_neigh *n;
	json_t *rows;
	int cnt, rc;

	if (a->argc)
		return usage_error("neigh", "ls: unexpected '%s'", a->argv[0]);
	rc = with_neigh(&n);
	if (rc)
		return rc;
	cnt = xg_neigh_list(n, e, NEIGH_MAX);
	xg_neigh_close(n);
	if (cnt < 0)
		return xg_fail(xg_errno_code(cnt), "listing neighbours: %s", strerror(-cnt));
	rows = json_array();
	for (int i = 0; i < cnt; i++) {
		char dev[IF_NAMESIZE] = "?", mac[18] = "";

		if_indextoname(e[i].ifindex, dev);
		if (e[i].has_mac)
			xg_mac_str(e[i].mac, mac);
		json_array_append_new(rows,
				      json_pack("{s:o,s:s,s:s,s:s,s:b}", "ip", json_ip(e[i].ip_be),
						"dev", dev, "state", state_str(e[i].state), "mac",
						mac, "managed", e[i].managed));
	}
	out_rows(c, rows, cols, keys);
	return XG_OK;
}

/* keep|release ADDR: the entry for ADDR's next hop */
static int neigh_one(struct cli *c, struct args *a, bool keep)
{
	const char *s = arg_next(a);
	struct xg_neigh *n;
	__u32 ip;
	char buf[16];
	int rc;

	(void)c;
	if (!s)
		return usage_error("neigh", "%s: needs ADDR", keep ? "keep" : "release");
	if (xg_parse_ip(s, &ip))
		return XG_EUSAGE;
	if (a->argc)
		return usage_error("neigh", "unexpected '%s'", a->argv[0]);
	rc = with_neigh(&n);
	if (rc)
		return rc;
	rc = keep ? xg_neigh_keep(n, ip) : xg_neigh_release(n, ip);
	xg_neigh_close(n);
	if (rc == -ENETUNREACH)
		return xg_fail(XG_ENOTFOUND, "%s: local or no route: no neighbour to %s",
			       xg_ip_str(ip, buf), keep ? "keep" : "release");
	if (rc == -ENOENT)
		return xg_fail(XG_ENOTFOUND, "%s: no entry of xgate for its next hop",
			       xg_ip_str(ip, buf));
	if (rc < 0)
		return xg_fail(xg_errno_code(rc), "%s: %s", xg_ip_str(ip, buf), strerror(-rc));
	if (rc == 1)
		fprintf(stderr,
			"xgate: note: this kernel has no managed neighbour entries (5.16+): "
			"%s resolved once only\n",
			xg_ip_str(ip, buf));
	return XG_OK;
}

static int neigh_keep(struct cli *c, struct args *a)
{
	return neigh_one(c, a, true);
}

static int neigh_release(struct cli *c, struct args *a)
{
	return neigh_one(c, a, false);
}

const struct cmd neigh_verbs[] = {
    {"ls", neigh_ls, "", "the underlay neighbour entries xgate keeps (kernel-managed)"},
    {"keep", neigh_keep, "ADDR", "keep the entry for ADDR's next hop resolved"},
    {"release", neigh_release, "ADDR", "delete that entry, if it is xgate's"},
    {"list", neigh_ls, NULL, NULL},
    {0},
};
