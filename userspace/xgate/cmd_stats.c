// SPDX-License-Identifier: BSD-2-Clause
/* `xgate stats [DEV]`: per-reason counters, per device, summed over CPUs. */
#include <bpf/bpf.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static json_t *slot_json(struct xg_maps *m, __u32 slot, bool all, int *err)
{
	struct xg_stat st[XG_R_MAX];
	json_t *counters = json_object();

	*err = xg_stats_read(m, slot, st);
	for (unsigned int r = 1; !*err && r < XG_R__COUNT; r++) {
		if (!all && !st[r].packets)
			continue;
		json_object_set_new(counters, xg_reason_name(r),
				    json_pack("{s:I,s:I}", "packets", (json_int_t)st[r].packets,
					      "bytes", (json_int_t)st[r].bytes));
	}
	return counters;
}

static void print_table(json_t *devs)
{
	size_t i;
	json_t *d;

	printf("%-12s %-30s %12s %14s  %s\n", "DEV", "REASON", "PACKETS", "BYTES", "MEANING");
	json_array_foreach(devs, i, d)
	{
		const char *dev = json_string_value(json_object_get(d, "dev"));
		json_t *counters = json_object_get(d, "counters"), *v;
		const char *reason;

		if (!json_object_size(counters))
			printf("%-12s %-30s %12s %14s\n", dev, "-", "0", "0");
		json_object_foreach(counters, reason, v)
		{
			const char *desc = "";

			for (unsigned int r = 1; r < XG_R__COUNT; r++)
				if (!strcmp(xg_reason_name(r), reason))
					desc = xg_reason_desc(r);
			printf("%-12s %-30s %12lld %14lld  %s\n", dev, reason,
			       (long long)json_integer_value(json_object_get(v, "packets")),
			       (long long)json_integer_value(json_object_get(v, "bytes")), desc);
		}
	}
}

int cmd_stats(struct cli *c, struct args *a)
{
	const char *dev = NULL, *s;
	bool all = false, clear = false;
	__u32 key, next, *prev = NULL;
	json_t *devs = json_array();
	struct xg_iface ifc;
	struct xg_maps m;
	int rc, err = 0;

	while ((s = arg_next(a))) {
		if (arg_is(s, "--all") || arg_is(s, "all")) {
			all = true;
		} else if (arg_is(s, "--clear") || arg_is(s, "clear")) {
			clear = true;
		} else if (!dev && s[0] != '-') {
			dev = s;
		} else {
			json_decref(devs);
			return usage_error("stats", "unexpected argument '%s'", s);
		}
	}
	rc = xg_maps_open(c->instance, false, &m);
	if (rc) {
		json_decref(devs);
		return rc;
	}
	if (dev) {
		__u32 ifindex;

		rc = xg_dev_index(dev, &ifindex);
		if (!rc && bpf_map_lookup_elem(m.ifaces, &ifindex, &ifc))
			rc = xg_fail(XG_ENOTFOUND, "%s is not an xgate device (see `xgate status`)",
				     dev);
		if (!rc && clear)
			rc = xg_stats_clear(&m, ifc.slot);
		if (!rc)
			json_array_append_new(devs, json_pack("{s:s,s:o}", "dev", dev, "counters",
							      slot_json(&m, ifc.slot, all, &err)));
	} else {
		while (!rc && !bpf_map_get_next_key(m.ifaces, prev, &next)) {
			char ifn[16];

			key = next;
			prev = &key;
			if (bpf_map_lookup_elem(m.ifaces, &key, &ifc))
				continue;
			if (clear)
				rc = xg_stats_clear(&m, ifc.slot);
			json_array_append_new(devs, json_pack("{s:s,s:o}", "dev",
							      ifname_of(key, ifn), "counters",
							      slot_json(&m, ifc.slot, all, &err)));
		}
		if (!rc && clear)
			rc = xg_stats_clear(&m, 0);
		/* Slot 0 collects devices xgate does not know (e.g. removed ones). */
		json_t *other = slot_json(&m, 0, false, &err);

		if (json_object_size(other) || all)
			json_array_append_new(
			    devs, json_pack("{s:s,s:o}", "dev", "(other)", "counters", other));
		else
			json_decref(other);
	}
	xg_maps_close(&m);
	if (!rc && err)
		rc = err;
	if (!rc) {
		if (c->json)
			out_json(devs);
		else
			print_table(devs);
	}
	json_decref(devs);
	return rc;
}
