// SPDX-License-Identifier: BSD-2-Clause
/* Overlay map commands: vpc, subnet, endpoint, cache. Each verb parses its
 * arguments, then calls the operation apply -f calls too (ops.c). */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static int no_more(const char *obj, struct args *a)
{
	return a->argc ? usage_error(obj, "unexpected argument '%s'", a->argv[0]) : XG_OK;
}

/* Open the maps read-write (creating the instance), run op, close. */
#define WITH_MAPS(c, create, call)                                                                 \
	({                                                                                         \
		struct xg_maps _m;                                                                 \
		int _rc = xg_maps_open((c)->instance, (create), &_m);                              \
		if (!_rc) {                                                                        \
			struct xg_maps *m = &_m;                                                   \
			_rc = (call);                                                              \
			xg_maps_close(&_m);                                                        \
		}                                                                                  \
		_rc;                                                                               \
	})

/* ---- vpc ---- */

static int vpc_put(struct cli *c, struct args *a, bool replace)
{
	struct vpc_spec spec = {};
	const char *s;

	if (xg_parse_vni(arg_next(a), &spec.vni))
		return XG_EUSAGE;
	while ((s = arg_next(a))) {
		if (!arg_is(s, "dividers"))
			return usage_error("vpc", "unknown keyword '%s': dividers", s);
		if (xg_parse_ip_list("dividers", arg_value(a, s), spec.v.dividers_be,
				     XG_MAX_DIVIDERS, &spec.v.n_dividers))
			return XG_EUSAGE;
	}
	return WITH_MAPS(c, true, op_vpc_put(m, &spec, replace));
}

static int vpc_add(struct cli *c, struct args *a)
{
	return vpc_put(c, a, false);
}

static int vpc_replace(struct cli *c, struct args *a)
{
	return vpc_put(c, a, true);
}

static int vpc_del(struct cli *c, struct args *a)
{
	__u32 vni;

	if (xg_parse_vni(arg_next(a), &vni))
		return XG_EUSAGE;
	if (no_more("vpc", a))
		return XG_EUSAGE;
	return WITH_MAPS(c, false, op_vpc_del(m, vni));
}

static int vpc_ls(struct cli *c, struct args *a)
{
	static const char *const cols[] = {"VNI", "DIVIDERS", NULL};
	static const char *const keys[] = {"vni", "dividers", NULL};
	__u32 key, next, *prev = NULL;
	struct xg_vpc v;
	struct xg_maps m;
	json_t *rows;
	int rc;

	if (no_more("vpc", a))
		return XG_EUSAGE;
	rc = xg_maps_open(c->instance, false, &m);
	if (rc)
		return rc;
	rows = json_array();
	while (!bpf_map_get_next_key(m.vpc, prev, &next)) {
		key = next;
		prev = &key;
		if (!bpf_map_lookup_elem(m.vpc, &key, &v))
			json_array_append_new(rows,
					      json_pack("{s:i,s:o}", "vni", key, "dividers",
							json_ip_list(v.dividers_be, v.n_dividers)));
	}
	xg_maps_close(&m);
	out_rows(c, rows, cols, keys);
	return XG_OK;
}

const struct cmd vpc_verbs[] = {
    {"add", vpc_add, "VNI [dividers ADDR[,ADDR...]]", "refuses to overwrite (exit 4)"},
    {"replace", vpc_replace, "VNI [dividers ADDR[,ADDR...]]", "creates or overwrites"},
    {"del", vpc_del, "VNI", "refused (exit 4) while subnets, endpoints or sessions of it remain"},
    {"ls", vpc_ls, "", NULL},
    {"delete", vpc_del, NULL, NULL},
    {"list", vpc_ls, NULL, NULL},
    {"show", vpc_ls, NULL, NULL},
    {0},
};

/* ---- subnet ---- */

static int parse_subnet_id(struct args *a, struct subnet_spec *s)
{
	if (xg_parse_vni(arg_next(a), &s->vni))
		return -1;
	return xg_parse_cidr(arg_next(a), &s->ip_be, &s->plen);
}

static int subnet_put(struct cli *c, struct args *a, bool replace)
{
	struct subnet_spec spec = {};
	const char *s;

	if (parse_subnet_id(a, &spec))
		return XG_EUSAGE;
	while ((s = arg_next(a))) {
		if (arg_is(s, "remote")) {
			spec.v.flags |= XG_SUBNET_REMOTE;
			continue;
		}
		const char *v = arg_value(a, s);
		__u32 n;

		if (!v)
			return XG_EUSAGE;
		if (arg_is(s, "bouncers")) {
			if (xg_parse_ip_list("bouncers", v, spec.v.bouncers_be, XG_MAX_BOUNCERS,
					     &n))
				return XG_EUSAGE;
			spec.v.n_bouncers = (__u16)n;
		} else if (arg_is(s, "gw")) {
			if (xg_parse_ip(v, &spec.v.gw_ip_be))
				return XG_EUSAGE;
			spec.has_gw = true;
		} else if (arg_is(s, "gwmac")) {
			if (xg_parse_mac(v, spec.v.gw_mac))
				return XG_EUSAGE;
			spec.has_gwmac = true;
		} else {
			return usage_error(
			    "subnet", "unknown keyword '%s': bouncers, gw, gwmac or remote", s);
		}
	}
	return WITH_MAPS(c, true, op_subnet_put(m, &spec, replace));
}

static int subnet_add(struct cli *c, struct args *a)
{
	return subnet_put(c, a, false);
}

static int subnet_replace(struct cli *c, struct args *a)
{
	return subnet_put(c, a, true);
}

static int subnet_del(struct cli *c, struct args *a)
{
	struct subnet_spec spec = {};

	if (parse_subnet_id(a, &spec))
		return XG_EUSAGE;
	if (no_more("subnet", a))
		return XG_EUSAGE;
	return WITH_MAPS(c, false, op_subnet_del(m, spec.vni, spec.ip_be, spec.plen));
}

static int subnet_ls(struct cli *c, struct args *a)
{
	static const char *const cols[] = {"VNI", "CIDR", "KIND", "BOUNCERS", "GW", "GWMAC", NULL};
	static const char *const keys[] = {"vni", "cidr", "kind", "bouncers", "gw", "gwmac", NULL};
	struct xg_subnet_key key, next, *prev = NULL;
	struct xg_subnet v;
	struct xg_maps m;
	__u32 only = 0;
	json_t *rows;
	int rc;

	if (a->argc && xg_parse_vni(arg_next(a), &only))
		return XG_EUSAGE;
	if (no_more("subnet", a))
		return XG_EUSAGE;
	rc = xg_maps_open(c->instance, false, &m);
	if (rc)
		return rc;
	rows = json_array();
	while (!bpf_map_get_next_key(m.subnet, prev, &next)) {
		char ip[16], cidr[24];

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(m.subnet, &key, &v) || (only && ntohl(key.vni_be) != only))
			continue;
		snprintf(cidr, sizeof(cidr), "%s/%u", xg_ip_str(key.ip_be, ip), key.prefixlen - 32);
		json_array_append_new(
		    rows, json_pack("{s:i,s:s,s:s,s:o,s:o,s:o}", "vni", ntohl(key.vni_be), "cidr",
				    cidr, "kind", v.flags & XG_SUBNET_REMOTE ? "remote" : "local",
				    "bouncers", json_ip_list(v.bouncers_be, v.n_bouncers), "gw",
				    json_ip(v.gw_ip_be), "gwmac", json_mac(v.gw_mac)));
	}
	xg_maps_close(&m);
	out_rows(c, rows, cols, keys);
	return XG_OK;
}

const struct cmd subnet_verbs[] = {
    {"add", subnet_add, "VNI CIDR [bouncers ADDR[,...]] [gw ADDR] [gwmac MAC] [remote]",
     "gw defaults to the first address, gwmac is derived from it"},
    {"replace", subnet_replace, "VNI CIDR [bouncers ADDR[,...]] [gw ADDR] [gwmac MAC] [remote]",
     NULL},
    {"del", subnet_del, "VNI CIDR", NULL},
    {"ls", subnet_ls, "[VNI]", NULL},
    {"delete", subnet_del, NULL, NULL},
    {"list", subnet_ls, NULL, NULL},
    {"show", subnet_ls, NULL, NULL},
    {0},
};

/* ---- endpoint ---- */

static int endpoint_put(struct cli *c, struct args *a, bool replace)
{
	struct ep_spec spec = {};
	bool has_mac = false;
	const char *s;

	if (xg_parse_vni(arg_next(a), &spec.vni) || xg_parse_ip(arg_next(a), &spec.ip_be))
		return XG_EUSAGE;
	while ((s = arg_next(a))) {
		const char *v = arg_value(a, s);

		if (!v)
			return XG_EUSAGE;
		if (arg_is(s, "mac")) {
			if (xg_parse_mac(v, spec.v.mac))
				return XG_EUSAGE;
			has_mac = true;
		} else if (arg_is(s, "host")) {
			if (xg_parse_ip(v, &spec.v.host_be))
				return XG_EUSAGE;
			spec.has_host = true;
		} else if (arg_is(s, "dev")) {
			spec.dev = v;
		} else {
			return usage_error("endpoint", "unknown keyword '%s': mac, host or dev", s);
		}
	}
	if (!has_mac)
		return usage_error("endpoint", "missing `mac MAC`");
	if (spec.dev && spec.has_host)
		return usage_error("endpoint", "give `host` (remote) or `dev` (local), not both");
	return WITH_MAPS(c, true, op_endpoint_put(m, &spec, replace));
}

static int endpoint_add(struct cli *c, struct args *a)
{
	return endpoint_put(c, a, false);
}

static int endpoint_replace(struct cli *c, struct args *a)
{
	return endpoint_put(c, a, true);
}

static int endpoint_del(struct cli *c, struct args *a)
{
	__u32 vni, ip;

	if (xg_parse_vni(arg_next(a), &vni) || xg_parse_ip(arg_next(a), &ip))
		return XG_EUSAGE;
	if (no_more("endpoint", a))
		return XG_EUSAGE;
	return WITH_MAPS(c, false, op_endpoint_del(m, vni, ip));
}

static int endpoint_ls(struct cli *c, struct args *a)
{
	static const char *const cols[] = {"VNI", "IP", "MAC", "HOST", "DEV", NULL};
	static const char *const keys[] = {"vni", "ip", "mac", "host", "dev", NULL};
	struct xg_ep_key key, next, *prev = NULL;
	struct xg_endpoint v;
	struct xg_maps m;
	__u32 only = 0;
	json_t *rows;
	int rc;

	if (a->argc && xg_parse_vni(arg_next(a), &only))
		return XG_EUSAGE;
	if (no_more("endpoint", a))
		return XG_EUSAGE;
	rc = xg_maps_open(c->instance, false, &m);
	if (rc)
		return rc;
	rows = json_array();
	while (!bpf_map_get_next_key(m.endpoint, prev, &next)) {
		char ifn[16];

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(m.endpoint, &key, &v) || (only && key.vni != only))
			continue;
		json_array_append_new(rows, json_pack("{s:i,s:o,s:o,s:o,s:o}", "vni", key.vni, "ip",
						      json_ip(key.ip_be), "mac", json_mac(v.mac),
						      "host", json_ip(v.host_be), "dev",
						      v.flags & XG_EP_LOCAL
							  ? json_string(ifname_of(v.ifindex, ifn))
							  : json_null()));
	}
	xg_maps_close(&m);
	out_rows(c, rows, cols, keys);
	return XG_OK;
}

const struct cmd endpoint_verbs[] = {
    {"add", endpoint_add, "VNI ADDR mac MAC (host ADDR | dev DEV)",
     "dev: the pod behind DEV, here; host: where a remote one lives"},
    {"replace", endpoint_replace, "VNI ADDR mac MAC (host ADDR | dev DEV)", NULL},
    {"del", endpoint_del, "VNI ADDR", NULL},
    {"ls", endpoint_ls, "[VNI]", NULL},
    {"delete", endpoint_del, NULL, NULL},
    {"list", endpoint_ls, NULL, NULL},
    {"show", endpoint_ls, NULL, NULL},
    {0},
};

/* ---- cache: the direct-path cache ---- */

static int cache_ls(struct cli *c, struct args *a)
{
	static const char *const cols[] = {"VNI", "IP", "HOST", NULL};
	static const char *const keys[] = {"vni", "ip", "host", NULL};
	struct xg_ep_key key, next, *prev = NULL;
	struct xg_cache_entry v;
	struct xg_maps m;
	json_t *rows;
	int rc;

	if (no_more("cache", a))
		return XG_EUSAGE;
	rc = xg_maps_open(c->instance, false, &m);
	if (rc)
		return rc;
	rows = json_array();
	while (!bpf_map_get_next_key(m.cache, prev, &next)) {
		key = next;
		prev = &key;
		if (!bpf_map_lookup_elem(m.cache, &key, &v))
			json_array_append_new(rows, json_pack("{s:i,s:o,s:o}", "vni", key.vni, "ip",
							      json_ip(key.ip_be), "host",
							      json_ip(v.host_be)));
	}
	xg_maps_close(&m);
	out_rows(c, rows, cols, keys);
	return XG_OK;
}

static int cache_drop(struct xg_maps *m, const struct xg_ep_key *key)
{
	struct xg_ep_key next;
	int rc = XG_OK;
	char ip[16];

	if (key && bpf_map_delete_elem(m->cache, key))
		rc = xg_fail(XG_ENOTFOUND, "no cache entry for %s in VPC %u",
			     xg_ip_str(key->ip_be, ip), key->vni);
	while (!key && !bpf_map_get_next_key(m->cache, NULL, &next))
		if (bpf_map_delete_elem(m->cache, &next))
			break;
	xg_gen_bump(m); /* the agents' per-CPU copies (xg_dpcache) */
	return rc;
}

static int cache_del(struct cli *c, struct args *a)
{
	struct xg_ep_key key;

	if (xg_parse_vni(arg_next(a), &key.vni) || xg_parse_ip(arg_next(a), &key.ip_be))
		return XG_EUSAGE;
	if (no_more("cache", a))
		return XG_EUSAGE;
	return WITH_MAPS(c, false, cache_drop(m, &key));
}

static int cache_flush(struct cli *c, struct args *a)
{
	if (no_more("cache", a))
		return XG_EUSAGE;
	return WITH_MAPS(c, false, cache_drop(m, NULL));
}

const struct cmd cache_verbs[] = {
    {"ls", cache_ls, "", "where this host learned endpoints live (direct path)"},
    {"del", cache_del, "VNI ADDR", NULL},
    {"flush", cache_flush, "", NULL},
    {"list", cache_ls, NULL, NULL},
    {0},
};
