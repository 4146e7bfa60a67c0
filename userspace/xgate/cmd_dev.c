// SPDX-License-Identifier: BSD-2-Clause
/* Device commands: attach, detach, status, reset; host set|show. */
#include <bpf/bpf.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int cmd_attach(struct cli *c, struct args *a)
{
	const char *dev, *role_s, *s;
	enum xg_mode mode = XG_MODE_NATIVE;
	enum xg_role role;
	struct xg_maps m;
	bool force = false;
	int rc;

	dev = arg_next(a);
	role_s = arg_next(a);
	if (!dev || !role_s)
		return usage_error(
		    "attach",
		    "usage: xgate attach DEV transit|agent|gateway|ingress|pass [--mode native|generic]");
	if (arg_is(role_s, "transit"))
		role = XG_ROLE_TRANSIT;
	else if (arg_is(role_s, "agent"))
		role = XG_ROLE_AGENT;
	else if (arg_is(role_s, "pass"))
		role = XG_ROLE_PASS;
	else if (arg_is(role_s, "gateway"))
		role = XG_ROLE_GATEWAY;
	else if (arg_is(role_s, "ingress"))
		role = XG_ROLE_INGRESS;
	else
		return usage_error("attach",
				   "unknown program '%s': transit, agent, gateway, ingress or pass",
				   role_s);
	while ((s = arg_next(a))) {
		if (arg_is(s, "--mode") || arg_is(s, "mode")) {
			const char *v = arg_value(a, s);

			if (arg_is(v, "native") || arg_is(v, "drv"))
				mode = XG_MODE_NATIVE;
			else if (arg_is(v, "generic") || arg_is(v, "skb"))
				mode = XG_MODE_GENERIC;
			else
				return usage_error("attach", "unknown mode '%s': native or generic",
						   v ? v : "");
		} else if (arg_is(s, "--force") || arg_is(s, "force")) {
			force = true;
		} else {
			return usage_error("attach", "unexpected argument '%s'", s);
		}
	}
	{
		__u32 ifindex;

		rc = xg_dev_index(dev, &ifindex); /* before creating anything */
		if (rc)
			return rc;
	}
	if (role == XG_ROLE_PASS) /* needs no instance */
		return xg_attach(NULL, dev, role, mode, force);
	rc = xg_maps_open(c->instance, true, &m);
	if (rc)
		return rc;
	rc = xg_attach(&m, dev, role, mode, force);
	xg_maps_close(&m);
	return rc;
}

static bool instance_exists(const char *instance)
{
	char root[PATH_MAX], path[PATH_MAX + 16];

	if (xg_instance_root(instance, root, sizeof(root)))
		return false;
	snprintf(path, sizeof(path), "%s/%s", root, XG_MAP_HOST);
	return access(path, F_OK) == 0;
}

int cmd_detach(struct cli *c, struct args *a)
{
	struct xg_maps m;
	const char *dev;
	int rc;

	dev = arg_next(a);
	if (!dev || a->argc)
		return usage_error("detach", "usage: xgate detach DEV");
	/* No instance (e.g. a `pass` stub's namespace): just let the program go. */
	if (!instance_exists(c->instance))
		return xg_detach(NULL, dev);
	rc = xg_maps_open(c->instance, false, &m);
	if (rc)
		return rc;
	rc = xg_detach(&m, dev);
	xg_maps_close(&m);
	return rc;
}

static json_t *host_json(struct xg_maps *m)
{
	struct xg_host h;
	char ifn[16];

	if (xg_host_get(m, &h))
		return json_null();
	return json_pack(
	    "{s:o,s:o,s:s,s:i}", "ip", json_ip(h.ip_be), "gateway", json_ip(h.gateway_be), "nic",
	    h.nic_ifindex ? ifname_of(h.nic_ifindex, ifn) : "-", "ttl", h.ttl ? h.ttl : 64);
}

static const char *role_name(__u32 r)
{
	return r == XG_ROLE_TRANSIT   ? "transit"
	       : r == XG_ROLE_AGENT   ? "agent"
	       : r == XG_ROLE_GATEWAY ? "gateway"
	       : r == XG_ROLE_INGRESS ? "ingress"
				      : "none";
}

/* The pass stubs of this namespace: they belong to no instance's maps,
 * yet they are xgate's, and a veth path needs them. */
static void pass_rows(json_t *rows)
{
	__u32 idx[256];
	int n = xg_pass_stubs(idx, 256);

	for (int i = 0; i < n; i++) {
		char ifn[16];
		__u32 id = 0;
		enum xg_mode mode = XG_MODE_NATIVE;

		if (xg_xdp_query(idx[i], &id, &mode))
			continue;
		json_array_append_new(
		    rows, json_pack("{s:s,s:i,s:s,s:s,s:i,s:n}", "dev", ifname_of(idx[i], ifn),
				    "ifindex", idx[i], "role", "pass", "mode",
				    mode == XG_MODE_GENERIC ? "generic" : "native", "prog_id", id,
				    "slot"));
	}
}

static json_t *devices_json(struct xg_maps *m)
{
	__u32 key, next, *prev = NULL;
	json_t *rows = json_array();
	struct xg_iface ifc;

	while (!bpf_map_get_next_key(m->ifaces, prev, &next)) {
		char ifn[16];
		__u32 id = 0;
		enum xg_mode mode = XG_MODE_NATIVE;
		bool present = if_indextoname(next, ifn) != NULL;
		json_t *row;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(m->ifaces, &key, &ifc))
			continue;
		if (present && xg_xdp_query(key, &id, &mode))
			id = 0;
		row = json_pack("{s:s,s:i,s:s,s:s,s:o,s:i}", "dev", ifname_of(key, ifn), "ifindex",
				key, "role", role_name(ifc.role), "mode",
				!id			  ? "-"
				: mode == XG_MODE_GENERIC ? "generic"
							  : "native",
				"prog_id", id ? json_integer(id) : json_null(), "slot", ifc.slot);
		if (ifc.flags & XG_IFACE_HAS_POD) {
			char ip[16];

			json_object_set_new(row, "pod",
					    json_pack("{s:i,s:s,s:o}", "vni", ifc.vni, "ip",
						      xg_ip_str(ifc.pod_ip_be, ip), "mac",
						      json_mac(ifc.pod_mac)));
			json_object_set_new(row, "pod_ip", json_string(ip));
		}
		json_array_append_new(rows, row);
	}
	pass_rows(rows);
	return rows;
}

int cmd_status(struct cli *c, struct args *a)
{
	static const char *const names[] = {XG_MAP_HOST,   XG_MAP_IFACES,   XG_MAP_VPC,
					    XG_MAP_SUBNET, XG_MAP_ENDPOINT, XG_MAP_CACHE,
					    XG_MAP_STATS,  XG_MAP_TXPORTS,  NULL};
	static const char *const cols[] = {"DEV", "ROLE", "MODE", "PROG", "SLOT", "POD", NULL};
	static const char *const keys[] = {"dev",  "role",   "mode", "prog_id",
					   "slot", "pod_ip", NULL};
	struct xg_maps m;
	json_t *st, *maps, *host;
	char path[PATH_MAX + 64];
	int rc;

	if (a->argc)
		return usage_error("status", "unexpected argument '%s'", a->argv[0]);
	if (!instance_exists(c->instance)) {
		__u32 idx[1];

		/* a pod's namespace: only pass stubs, no instance */
		if (xg_pass_stubs(idx, 1) == 1) {
			json_t *rows = json_array();

			pass_rows(rows);
			st = json_pack("{s:n,s:o}", "instance", "devices", rows);
			if (c->json)
				out_json(st);
			else
				out_rows(c, json_incref(rows), cols, keys);
			json_decref(st);
			return XG_OK;
		}
	}
	rc = xg_maps_open(c->instance, false, &m);
	if (rc)
		return rc;
	maps = json_object();
	for (int i = 0; names[i]; i++) {
		snprintf(path, sizeof(path), "%s/%s", m.root, names[i]);
		json_object_set_new(maps, names[i], json_string(path));
	}
	host = host_json(&m);
	st = json_pack("{s:s,s:s,s:o,s:o,s:o}", "instance", m.instance, "pin_dir", m.root, "host",
		       host, "maps", maps, "devices", devices_json(&m));
	xg_maps_close(&m);
	if (c->json) {
		out_json(st);
	} else {
		printf("instance %s  pins %s/\n",
		       json_string_value(json_object_get(st, "instance")),
		       json_string_value(json_object_get(st, "pin_dir")));
		printf("host ip %s  gateway %s  nic %s  ttl %lld\n\n",
		       json_is_string(json_object_get(host, "ip"))
			   ? json_string_value(json_object_get(host, "ip"))
			   : "-",
		       json_is_string(json_object_get(host, "gateway"))
			   ? json_string_value(json_object_get(host, "gateway"))
			   : "-",
		       json_string_value(json_object_get(host, "nic")),
		       (long long)json_integer_value(json_object_get(host, "ttl")));
		out_rows(c, json_incref(json_object_get(st, "devices")), cols, keys);
	}
	json_decref(st);
	return XG_OK;
}

static int reset_pass_stubs(void)
{
	__u32 idx[256];
	int n = xg_pass_stubs(idx, 256), worst = XG_OK;

	for (int i = 0; i < n; i++) {
		char ifn[IF_NAMESIZE];
		int rc = if_indextoname(idx[i], ifn) ? xg_detach(NULL, ifn) : XG_OK;

		if (rc)
			worst = rc;
	}
	return worst;
}

int cmd_reset(struct cli *c, struct args *a)
{
	__u32 key, next, *prev = NULL;
	struct xg_maps m;
	int rc, worst;

	if (a->argc)
		return usage_error("reset", "unexpected argument '%s'", a->argv[0]);
	worst = reset_pass_stubs();
	if (!instance_exists(c->instance)) {
		rc = xg_instance_remove(c->instance); /* partial leftovers */
		return rc ? rc : worst;
	}
	rc = xg_maps_open(c->instance, false, &m);
	if (rc)
		return rc;
	while (!bpf_map_get_next_key(m.ifaces, prev, &next)) {
		char ifn[IF_NAMESIZE];
		__u32 id;
		enum xg_mode mode;

		key = next;
		prev = &key;
		if (!if_indextoname(key, ifn) || xg_xdp_query(key, &id, &mode) || !id)
			continue;
		rc = xg_detach(NULL, ifn);
		if (rc)
			worst = rc;
	}
	xg_maps_close(&m);
	rc = xg_instance_remove(c->instance);
	return rc ? rc : worst;
}

static int host_show(struct cli *c, struct args *a)
{
	static const char *const cols[] = {"IP", "GATEWAY", "NIC", "TTL", NULL};
	static const char *const keys[] = {"ip", "gateway", "nic", "ttl", NULL};
	struct xg_maps m;
	json_t *h;
	int rc;

	if (a->argc)
		return usage_error("host", "unexpected argument '%s'", a->argv[0]);
	rc = xg_maps_open(c->instance, false, &m);
	if (rc)
		return rc;
	h = host_json(&m);
	xg_maps_close(&m);
	if (c->json) {
		out_json(h);
		json_decref(h);
	} else {
		out_rows(c, json_pack("[o]", h), cols, keys);
	}
	return XG_OK;
}

static int host_set(struct cli *c, struct args *a)
{
	__u32 ip, gw, ttl, *pip = NULL, *pgw = NULL, *pttl = NULL;
	struct xg_maps m;
	const char *s;
	int rc;

	while ((s = arg_next(a))) {
		const char *v = arg_value(a, s);

		if (!v)
			return XG_EUSAGE;
		if (arg_is(s, "ip")) {
			if (xg_parse_ip(v, &ip))
				return XG_EUSAGE;
			pip = &ip;
		} else if (arg_is(s, "gateway")) {
			gw = 0;
			if (!arg_is(v, "none") && xg_parse_ip(v, &gw))
				return XG_EUSAGE;
			pgw = &gw;
		} else if (arg_is(s, "ttl")) {
			if (xg_parse_u32("TTL", v, 2, 255, &ttl))
				return XG_EUSAGE;
			pttl = &ttl;
		} else {
			return usage_error("host", "unknown keyword '%s': ip, gateway or ttl", s);
		}
	}
	if (!pip && !pgw && !pttl)
		return usage_error("host", "nothing to set: ip, gateway or ttl");
	rc = xg_maps_open(c->instance, true, &m);
	if (rc)
		return rc;
	rc = op_host_set(&m, pip, pgw, pttl);
	xg_maps_close(&m);
	return rc;
}

const struct cmd host_verbs[] = {
    {"set", host_set, "[ip ADDR] [gateway ADDR|none] [ttl N]",
     "underlay address, cluster gateway, outer TTL"},
    {"show", host_show, "", NULL},
    {0},
};
