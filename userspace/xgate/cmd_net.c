// SPDX-License-Identifier: BSD-2-Clause
/* Overlay maps: host, vpc, subnet, endpoint, cache. The op_* functions are
 * the single code path for both the commands and `apply -f`. */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

#define HELP(obj, v)                          \
	do {                                  \
		if (arg_is((v), "help"))      \
			return object_help(obj); \
	} while (0)

static int put_err(const char *what)
{
	if (errno == EEXIST)
		return xg_fail(XG_EEXIST, "%s already exists (use `replace` to overwrite)", what);
	if (errno == E2BIG || errno == ENOSPC)
		return xg_fail(XG_EFAIL, "%s: map is full", what);
	return xg_fail(xg_errno_code(errno), "%s: %s", what, strerror(errno));
}

static int require_vpc(struct xg_maps *m, __u32 vni)
{
	struct xg_vpc v;

	if (bpf_map_lookup_elem(m->vpc, &vni, &v))
		return xg_fail(XG_ENOTFOUND, "VPC %u does not exist (`xgate vpc add %u` first)", vni,
			       vni);
	return XG_OK;
}

int op_host_set(struct xg_maps *m, const __u32 *ip, const __u32 *gw, const __u32 *ttl)
{
	struct xg_host h;
	int rc = xg_host_get(m, &h);

	if (rc)
		return rc;
	if (ip) {
		/* Of the devices we are attached to, the one carrying the
		 * address is the underlay NIC: a gateway has two, and attach
		 * alone cannot tell which one. */
		__u32 nic = xg_ipv4_ifindex(*ip);
		struct xg_iface ifc;

		h.ip_be = *ip;
		if (nic && !bpf_map_lookup_elem(m->ifaces, &nic, &ifc))
			h.nic_ifindex = nic;
	}
	if (gw) {
		h.gateway_be = *gw;
		if (*gw)
			xg_neigh_prime(*gw);
	}
	if (ttl)
		h.ttl = (__u8)*ttl;
	return xg_host_put(m, &h);
}

int op_vpc_put(struct xg_maps *m, const struct vpc_spec *s, bool replace)
{
	char what[32];

	snprintf(what, sizeof(what), "VPC %u", s->vni);
	if (bpf_map_update_elem(m->vpc, &s->vni, &s->v, replace ? BPF_ANY : BPF_NOEXIST))
		return put_err(what);
	xg_gen_bump(m);
	for (__u32 i = 0; i < s->v.n_dividers; i++)
		xg_neigh_prime(s->v.dividers_be[i]);
	return XG_OK;
}

static struct xg_subnet_key subnet_key(__u32 vni, __u32 ip_be, int plen)
{
	struct xg_subnet_key k = { .prefixlen = 32 + plen, .vni_be = htonl(vni), .ip_be = ip_be };

	return k;
}

static bool subnet_exists(struct xg_maps *m, const struct xg_subnet_key *k)
{
	struct xg_subnet_key cur, next, *prev = NULL;

	while (!bpf_map_get_next_key(m->subnet, prev, &next)) {
		if (!memcmp(&next, k, sizeof(*k)))
			return true;
		cur = next;
		prev = &cur;
	}
	return false;
}

int op_subnet_put(struct xg_maps *m, struct subnet_spec *s, bool replace)
{
	struct xg_subnet_key k = subnet_key(s->vni, s->ip_be, s->plen);
	__u32 mask = s->plen ? htonl(~0u << (32 - s->plen)) : 0;
	char what[64], ip[16];
	int rc = require_vpc(m, s->vni);

	if (rc)
		return rc;
	snprintf(what, sizeof(what), "subnet %s/%d in VPC %u", xg_ip_str(s->ip_be, ip), s->plen,
		 s->vni);
	if (!(s->v.flags & XG_SUBNET_REMOTE) && !s->v.n_bouncers)
		return xg_fail(XG_EUSAGE, "%s: a local subnet needs bouncers (or mark it remote)",
			       what);
	if (!s->has_gw && s->plen <= 30)
		s->v.gw_ip_be = htonl(ntohl(s->ip_be) + 1); /* first host address */
	if (s->v.gw_ip_be && (s->v.gw_ip_be & mask) != s->ip_be)
		return xg_fail(XG_EUSAGE, "%s: gateway %s is outside the subnet", what,
			       xg_ip_str(s->v.gw_ip_be, ip));
	if (!s->has_gwmac && s->v.gw_ip_be)
		xg_gw_mac_default(s->v.gw_ip_be, s->v.gw_mac);
	/* LPM tries have no BPF_NOEXIST, and a lookup returns the longest
	 * match, so only a walk finds an exact duplicate. */
	if (!replace && subnet_exists(m, &k)) {
		errno = EEXIST;
		return put_err(what);
	}
	if (bpf_map_update_elem(m->subnet, &k, &s->v, BPF_ANY))
		return put_err(what);
	xg_gen_bump(m);
	for (__u32 i = 0; i < s->v.n_bouncers; i++)
		xg_neigh_prime(s->v.bouncers_be[i]);
	return XG_OK;
}

int op_endpoint_put(struct xg_maps *m, struct ep_spec *s, bool replace)
{
	struct xg_ep_key k = { .vni = s->vni, .ip_be = s->ip_be };
	struct xg_endpoint old;
	struct xg_host h;
	char what[48], ip[16];
	int rc = require_vpc(m, s->vni);

	if (rc)
		return rc;
	snprintf(what, sizeof(what), "endpoint %s in VPC %u", xg_ip_str(s->ip_be, ip), s->vni);
	rc = xg_host_get(m, &h);
	if (rc)
		return rc;
	if (!replace && !bpf_map_lookup_elem(m->endpoint, &k, &old)) {
		errno = EEXIST;
		return put_err(what);
	}
	if (s->dev) {
		struct xg_iface ifc = {};
		__u32 ifindex;

		rc = xg_dev_index(s->dev, &ifindex);
		if (rc)
			return rc;
		if (!h.ip_be)
			return xg_fail(XG_ENOTFOUND, "%s: this host's address is not set "
						     "(`xgate host set ip ADDR` or attach transit)", what);
		s->v.host_be = h.ip_be;
		s->v.ifindex = ifindex;
		s->v.flags |= XG_EP_LOCAL;
		if (bpf_map_lookup_elem(m->ifaces, &ifindex, &ifc)) {
			memset(&ifc, 0, sizeof(ifc));
			rc = xg_slot_alloc(m, &ifc.slot);
			if (rc)
				return rc;
		}
		ifc.vni = s->vni;
		ifc.pod_ip_be = s->ip_be;
		memcpy(ifc.pod_mac, s->v.mac, 6);
		ifc.flags |= XG_IFACE_HAS_POD;
		if (bpf_map_update_elem(m->ifaces, &ifindex, &ifc, BPF_ANY) ||
		    bpf_map_update_elem(m->txports, &ifindex, &ifindex, BPF_ANY)) {
			rc = put_err(what);
			xg_gen_bump(m);
			return rc;
		}
	} else if (!s->has_host) {
		return xg_fail(XG_EUSAGE, "%s: needs `host ADDR` (remote) or `dev DEV` (local)", what);
	}
	rc = bpf_map_update_elem(m->endpoint, &k, &s->v, BPF_ANY) ? put_err(what) : XG_OK;
	xg_gen_bump(m);
	if (rc)
		return rc;
	/* This host's own idea of where the endpoint lives is now exact. */
	xg_cache_forget(m, s->vni, s->ip_be);
	if (s->v.host_be != h.ip_be)
		xg_neigh_prime(s->v.host_be);
	return XG_OK;
}

/* The data plane relies on it (bpf/lib/route.h, xg_vpc_of): every subnet
 * and endpoint belongs to an existing VPC. Adding them requires the VPC;
 * deleting the VPC requires that none is left. */
static int vpc_del(struct xg_maps *m, __u32 vni)
{
	struct xg_subnet_key sk, snext, *sprev = NULL;
	struct xg_ep_key ek, enext, *eprev = NULL;
	struct xg_vpc v;
	unsigned int ns = 0, ne = 0;

	if (bpf_map_lookup_elem(m->vpc, &vni, &v))
		return xg_fail(XG_ENOTFOUND, "VPC %u does not exist", vni);
	while (!bpf_map_get_next_key(m->subnet, sprev, &snext)) {
		sk = snext;
		sprev = &sk;
		ns += ntohl(sk.vni_be) == vni;
	}
	while (!bpf_map_get_next_key(m->endpoint, eprev, &enext)) {
		ek = enext;
		eprev = &ek;
		ne += ek.vni == vni;
	}
	if (ns || ne)
		return xg_fail(XG_EEXIST, "VPC %u is in use: %u subnet(s) and %u endpoint(s) "
					  "still belong to it (delete them first)", vni, ns, ne);
	if (bpf_map_delete_elem(m->vpc, &vni))
		return xg_fail(XG_ENOTFOUND, "VPC %u does not exist", vni);
	xg_gen_bump(m);
	return XG_OK;
}

/* ---- commands ---- */

static int open_rw(struct cli *c, struct xg_maps *m)
{
	return xg_maps_open(c->instance, true, m);
}

int cmd_vpc(struct cli *c, struct args *a)
{
	const char *verb = arg_next(a), *s;
	struct vpc_spec spec = {};
	struct xg_maps m;
	int rc;

	if (!verb)
		return usage_error("vpc", "missing command: add, replace, del or ls");
	HELP("vpc", verb);
	if (arg_is(verb, "ls") || arg_is(verb, "list") || arg_is(verb, "show")) {
		static const char *const cols[] = { "VNI", "DIVIDERS", NULL };
		static const char *const keys[] = { "vni", "dividers", NULL };
		__u32 key, next, *prev = NULL;
		json_t *rows = json_array();
		struct xg_vpc v;

		if (a->argc)
			return usage_error("vpc", "unexpected argument '%s'", a->argv[0]);
		rc = xg_maps_open(c->instance, false, &m);
		if (rc)
			return json_decref(rows), rc;
		while (!bpf_map_get_next_key(m.vpc, prev, &next)) {
			key = next;
			prev = &key;
			if (!bpf_map_lookup_elem(m.vpc, &key, &v))
				json_array_append_new(rows, json_pack("{s:i,s:o}", "vni", key,
								      "dividers",
								      json_ip_list(v.dividers_be,
										   v.n_dividers)));
		}
		xg_maps_close(&m);
		out_rows(c, rows, cols, keys);
		return XG_OK;
	}
	if (arg_is(verb, "add") || arg_is(verb, "replace")) {
		if (xg_parse_vni(arg_next(a), &spec.vni))
			return XG_EUSAGE;
		while ((s = arg_next(a))) {
			if (!arg_is(s, "dividers"))
				return usage_error("vpc", "unknown keyword '%s': dividers", s);
			if (xg_parse_ip_list("dividers", arg_value(a, s), spec.v.dividers_be,
					     XG_MAX_DIVIDERS, &spec.v.n_dividers))
				return XG_EUSAGE;
		}
		rc = open_rw(c, &m);
		if (rc)
			return rc;
		rc = op_vpc_put(&m, &spec, arg_is(verb, "replace"));
		xg_maps_close(&m);
		return rc;
	}
	if (arg_is(verb, "del") || arg_is(verb, "delete")) {
		if (xg_parse_vni(arg_next(a), &spec.vni))
			return XG_EUSAGE;
		if (a->argc)
			return usage_error("vpc", "unexpected argument '%s'", a->argv[0]);
		rc = xg_maps_open(c->instance, false, &m);
		if (rc)
			return rc;
		rc = vpc_del(&m, spec.vni);
		xg_maps_close(&m);
		return rc;
	}
	return usage_error("vpc", "unknown command '%s': add, replace, del or ls", verb);
}

static int parse_subnet_id(struct args *a, struct subnet_spec *s)
{
	if (xg_parse_vni(arg_next(a), &s->vni))
		return -1;
	return xg_parse_cidr(arg_next(a), &s->ip_be, &s->plen);
}

int cmd_subnet(struct cli *c, struct args *a)
{
	const char *verb = arg_next(a), *s;
	struct subnet_spec spec = {};
	struct xg_maps m;
	int rc;

	if (!verb)
		return usage_error("subnet", "missing command: add, replace, del or ls");
	HELP("subnet", verb);
	if (arg_is(verb, "ls") || arg_is(verb, "list") || arg_is(verb, "show")) {
		static const char *const cols[] = { "VNI", "CIDR", "KIND", "BOUNCERS", "GW", "GWMAC", NULL };
		static const char *const keys[] = { "vni", "cidr", "kind", "bouncers", "gw", "gwmac", NULL };
		struct xg_subnet_key key, next, *prev = NULL;
		json_t *rows = json_array();
		__u32 only = 0;
		struct xg_subnet v;

		if (a->argc && xg_parse_vni(arg_next(a), &only))
			return XG_EUSAGE;
		rc = xg_maps_open(c->instance, false, &m);
		if (rc)
			return rc;
		while (!bpf_map_get_next_key(m.subnet, prev, &next)) {
			char ip[16], cidr[24];

			key = next;
			prev = &key;
			if (bpf_map_lookup_elem(m.subnet, &key, &v) ||
			    (only && ntohl(key.vni_be) != only))
				continue;
			snprintf(cidr, sizeof(cidr), "%s/%u", xg_ip_str(key.ip_be, ip),
				 key.prefixlen - 32);
			json_array_append_new(
				rows, json_pack("{s:i,s:s,s:s,s:o,s:o,s:o}", "vni", ntohl(key.vni_be),
						"cidr", cidr, "kind",
						v.flags & XG_SUBNET_REMOTE ? "remote" : "local",
						"bouncers", json_ip_list(v.bouncers_be, v.n_bouncers),
						"gw", json_ip(v.gw_ip_be), "gwmac", json_mac(v.gw_mac)));
		}
		xg_maps_close(&m);
		out_rows(c, rows, cols, keys);
		return XG_OK;
	}
	if (arg_is(verb, "add") || arg_is(verb, "replace")) {
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
				if (xg_parse_ip_list("bouncers", v, spec.v.bouncers_be,
						     XG_MAX_BOUNCERS, &n))
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
				return usage_error("subnet", "unknown keyword '%s': bouncers, gw, "
							     "gwmac or remote", s);
			}
		}
		rc = open_rw(c, &m);
		if (rc)
			return rc;
		rc = op_subnet_put(&m, &spec, arg_is(verb, "replace"));
		xg_maps_close(&m);
		return rc;
	}
	if (arg_is(verb, "del") || arg_is(verb, "delete")) {
		struct xg_subnet_key k;
		char ip[16];

		if (parse_subnet_id(a, &spec))
			return XG_EUSAGE;
		rc = xg_maps_open(c->instance, false, &m);
		if (rc)
			return rc;
		k = subnet_key(spec.vni, spec.ip_be, spec.plen);
		if (bpf_map_delete_elem(m.subnet, &k))
			rc = xg_fail(XG_ENOTFOUND, "subnet %s/%d in VPC %u does not exist",
				     xg_ip_str(spec.ip_be, ip), spec.plen, spec.vni);
		else
			xg_gen_bump(&m);
		xg_maps_close(&m);
		return rc;
	}
	return usage_error("subnet", "unknown command '%s': add, replace, del or ls", verb);
}

int cmd_endpoint(struct cli *c, struct args *a)
{
	const char *verb = arg_next(a), *s;
	struct ep_spec spec = {};
	struct xg_maps m;
	int rc;

	if (!verb)
		return usage_error("endpoint", "missing command: add, replace, del or ls");
	HELP("endpoint", verb);
	if (arg_is(verb, "ls") || arg_is(verb, "list") || arg_is(verb, "show")) {
		static const char *const cols[] = { "VNI", "IP", "MAC", "HOST", "DEV", NULL };
		static const char *const keys[] = { "vni", "ip", "mac", "host", "dev", NULL };
		struct xg_ep_key key, next, *prev = NULL;
		json_t *rows = json_array();
		struct xg_endpoint v;
		__u32 only = 0;

		if (a->argc && xg_parse_vni(arg_next(a), &only))
			return XG_EUSAGE;
		rc = xg_maps_open(c->instance, false, &m);
		if (rc)
			return rc;
		while (!bpf_map_get_next_key(m.endpoint, prev, &next)) {
			char ifn[16];

			key = next;
			prev = &key;
			if (bpf_map_lookup_elem(m.endpoint, &key, &v) || (only && key.vni != only))
				continue;
			json_array_append_new(
				rows, json_pack("{s:i,s:o,s:o,s:o,s:o}", "vni", key.vni, "ip",
						json_ip(key.ip_be), "mac", json_mac(v.mac), "host",
						json_ip(v.host_be), "dev",
						v.flags & XG_EP_LOCAL ?
							json_string(ifname_of(v.ifindex, ifn)) :
							json_null()));
		}
		xg_maps_close(&m);
		out_rows(c, rows, cols, keys);
		return XG_OK;
	}
	if (arg_is(verb, "add") || arg_is(verb, "replace")) {
		bool has_mac = false;

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
		rc = open_rw(c, &m);
		if (rc)
			return rc;
		rc = op_endpoint_put(&m, &spec, arg_is(verb, "replace"));
		xg_maps_close(&m);
		return rc;
	}
	if (arg_is(verb, "del") || arg_is(verb, "delete")) {
		struct xg_ep_key k;
		struct xg_endpoint v;
		char ip[16];

		if (xg_parse_vni(arg_next(a), &spec.vni) || xg_parse_ip(arg_next(a), &spec.ip_be))
			return XG_EUSAGE;
		rc = xg_maps_open(c->instance, false, &m);
		if (rc)
			return rc;
		k.vni = spec.vni;
		k.ip_be = spec.ip_be;
		if (bpf_map_lookup_elem(m.endpoint, &k, &v) || bpf_map_delete_elem(m.endpoint, &k)) {
			rc = xg_fail(XG_ENOTFOUND, "endpoint %s in VPC %u does not exist",
				     xg_ip_str(spec.ip_be, ip), spec.vni);
		} else if (v.flags & XG_EP_LOCAL) {
			struct xg_iface ifc;

			if (!bpf_map_lookup_elem(m.ifaces, &v.ifindex, &ifc)) {
				ifc.flags &= ~XG_IFACE_HAS_POD;
				if (ifc.role == XG_ROLE_NONE) {
					bpf_map_delete_elem(m.ifaces, &v.ifindex);
					bpf_map_delete_elem(m.txports, &v.ifindex);
				} else {
					bpf_map_update_elem(m.ifaces, &v.ifindex, &ifc, BPF_ANY);
				}
			}
		}
		if (!rc)
			xg_gen_bump(&m);
		xg_cache_forget(&m, spec.vni, spec.ip_be);
		xg_maps_close(&m);
		return rc;
	}
	return usage_error("endpoint", "unknown command '%s': add, replace, del or ls", verb);
}

int cmd_cache(struct cli *c, struct args *a)
{
	const char *verb = arg_next(a);
	struct xg_ep_key key, next, *prev = NULL;
	struct xg_maps m;
	int rc;

	if (!verb)
		return usage_error("cache", "missing command: ls, del or flush");
	HELP("cache", verb);
	if (!arg_is(verb, "ls") && !arg_is(verb, "list") && !arg_is(verb, "flush") &&
	    !arg_is(verb, "del"))
		return usage_error("cache", "unknown command '%s': ls, del or flush", verb);
	if (arg_is(verb, "del")) {
		if (xg_parse_vni(arg_next(a), &key.vni) || xg_parse_ip(arg_next(a), &key.ip_be))
			return XG_EUSAGE;
	}
	rc = xg_maps_open(c->instance, false, &m);
	if (rc)
		return rc;
	if (arg_is(verb, "del")) {
		char ip[16];

		if (bpf_map_delete_elem(m.cache, &key))
			rc = xg_fail(XG_ENOTFOUND, "no cache entry for %s in VPC %u",
				     xg_ip_str(key.ip_be, ip), key.vni);
	} else if (arg_is(verb, "flush")) {
		while (!bpf_map_get_next_key(m.cache, NULL, &next))
			if (bpf_map_delete_elem(m.cache, &next))
				break;
	} else {
		static const char *const cols[] = { "VNI", "IP", "HOST", NULL };
		static const char *const keys[] = { "vni", "ip", "host", NULL };
		json_t *rows = json_array();
		struct xg_cache_entry v;

		while (!bpf_map_get_next_key(m.cache, prev, &next)) {
			key = next;
			prev = &key;
			if (!bpf_map_lookup_elem(m.cache, &key, &v))
				json_array_append_new(rows, json_pack("{s:i,s:o,s:o}", "vni", key.vni,
								      "ip", json_ip(key.ip_be),
								      "host", json_ip(v.host_be)));
		}
		out_rows(c, rows, cols, keys);
	}
	if (!arg_is(verb, "ls") && !arg_is(verb, "list"))
		xg_gen_bump(&m); /* the agents' per-CPU copies (xg_dpcache) */
	xg_maps_close(&m);
	return rc;
}
