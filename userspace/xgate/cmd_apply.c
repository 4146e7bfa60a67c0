// SPDX-License-Identifier: BSD-2-Clause
/*
 * `xgate apply -f FILE`: a declarative cluster file (JSON) applied through
 * the same operations as the commands. Everything is validated before
 * anything is written, and every error names the JSON path.
 *
 * { "host": {"ip": A, "gateway": A, "ttl": N},
 *   "attach": [{"dev": D, "program": "transit"|"agent", "mode": "native"|"generic"}],
 *   "vpcs": [{"vni": N, "dividers": [A...]}],
 *   "subnets": [{"vni": N, "cidr": C, "bouncers": [A...], "gw": A, "gwmac": M, "remote": B}],
 *   "endpoints": [{"vni": N, "ip": A, "mac": M, "host": A | "dev": D}] }
 * Entries are upserted; entries not in the file are left alone.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

#define MAXN 4096

struct plan {
	bool has_ip, has_gw, has_ttl;
	__u32 ip, gw, ttl;
	json_t *attach;
	int nv, ns, ne;
	struct vpc_spec *v;
	struct subnet_spec *s;
	struct ep_spec *e;
};

static int bad(const char *file, const char *path, const char *msg)
{
	return xg_fail(XG_EUSAGE, "%s: %s: %s", file, path, msg);
}

static const char *str_at(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Run a CLI parser on a string member; parsers print the detail. */
#define FIELD(obj, key, required, parse)                                              \
	({                                                                            \
		json_t *_v = json_object_get(obj, key);                               \
		int _r = 0;                                                           \
		snprintf(path, sizeof(path), "%s[%zu].%s", sect, i, key);             \
		if (!_v) {                                                            \
			if (required)                                                 \
				_r = bad(file, path, "missing");                      \
			else                                                          \
				_r = 1;                                               \
		} else if (!json_is_string(_v)) {                                     \
			_r = bad(file, path, "must be a string");                     \
		} else {                                                              \
			const char *_s = json_string_value(_v);                       \
			if (parse)                                                    \
				_r = bad(file, path, "invalid value (see above)");    \
		}                                                                     \
		_r;                                                                   \
	})

static int get_vni(const char *file, const char *sect, size_t i, json_t *o, __u32 *vni)
{
	char path[96];
	json_t *v = json_object_get(o, "vni");

	snprintf(path, sizeof(path), "%s[%zu].vni", sect, i);
	if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 0xffffff)
		return bad(file, path, "must be an integer 1..16777215");
	*vni = (__u32)json_integer_value(v);
	return 0;
}

static int get_ip_list(const char *file, const char *path, json_t *arr, __u32 *out, int max,
		       __u32 *n)
{
	size_t i;
	json_t *e;

	*n = 0;
	if (!json_is_array(arr))
		return bad(file, path, "must be an array of IPv4 addresses");
	if ((int)json_array_size(arr) > max)
		return bad(file, path, "too many addresses (at most 8)");
	json_array_foreach(arr, i, e) {
		if (!json_is_string(e) || xg_parse_ip(json_string_value(e), &out[i]))
			return bad(file, path, "must hold IPv4 address strings");
		(*n)++;
	}
	return 0;
}

static int check_keys(const char *file, const char *where, json_t *o, const char *const *allowed)
{
	const char *k;
	json_t *v;
	char msg[128];

	if (!json_is_object(o))
		return bad(file, where, "must be an object");
	json_object_foreach(o, k, v) {
		bool ok = false;

		for (int i = 0; allowed[i]; i++)
			ok |= !strcmp(k, allowed[i]);
		if (!ok) {
			snprintf(msg, sizeof(msg), "unknown field '%s'", k);
			return bad(file, where, msg);
		}
	}
	return 0;
}

static int build(const char *file, json_t *root, struct plan *p)
{
	static const char *const top[] = { "host", "attach", "vpcs", "subnets", "endpoints", NULL };
	static const char *const hostk[] = { "ip", "gateway", "ttl", NULL };
	static const char *const vpck[] = { "vni", "dividers", NULL };
	static const char *const subk[] = { "vni", "cidr", "bouncers", "gw", "gwmac", "remote", NULL };
	static const char *const epk[] = { "vni", "ip", "mac", "host", "dev", NULL };
	static const char *const atk[] = { "dev", "program", "mode", NULL };
	char path[96];
	const char *sect;
	json_t *h, *arr, *o;
	size_t i = 0;

	if (check_keys(file, "(top)", root, top))
		return XG_EUSAGE;
	if ((h = json_object_get(root, "host"))) {
		sect = "host";
		if (check_keys(file, "host", h, hostk))
			return XG_EUSAGE;
		if (json_object_get(h, "ip")) {
			if (FIELD(h, "ip", 1, xg_parse_ip(_s, &p->ip)))
				return XG_EUSAGE;
			p->has_ip = true;
		}
		if (json_object_get(h, "gateway")) {
			p->gw = 0;
			if (FIELD(h, "gateway", 1, strcmp(_s, "none") && xg_parse_ip(_s, &p->gw)))
				return XG_EUSAGE;
			p->has_gw = true;
		}
		if ((o = json_object_get(h, "ttl"))) {
			if (!json_is_integer(o) || json_integer_value(o) < 2 || json_integer_value(o) > 255)
				return bad(file, "host.ttl", "must be an integer 2..255");
			p->ttl = (__u32)json_integer_value(o);
			p->has_ttl = true;
		}
	}
	if ((arr = json_object_get(root, "attach"))) {
		if (!json_is_array(arr))
			return bad(file, "attach", "must be an array");
		json_array_foreach(arr, i, o) {
			const char *prog = str_at(o, "program"), *mode = str_at(o, "mode");
			__u32 ifindex;

			snprintf(path, sizeof(path), "attach[%zu]", i);
			if (check_keys(file, path, o, atk))
				return XG_EUSAGE;
			if (!str_at(o, "dev") || xg_dev_index(str_at(o, "dev"), &ifindex))
				return bad(file, path, "dev: missing or unknown device");
			if (!prog || (strcmp(prog, "transit") && strcmp(prog, "agent")))
				return bad(file, path, "program: must be \"transit\" or \"agent\"");
			if (mode && strcmp(mode, "native") && strcmp(mode, "generic"))
				return bad(file, path, "mode: must be \"native\" or \"generic\"");
		}
		p->attach = arr;
	}
#define SECTION(name, keys, cnt, arrp)                                                  \
	if ((arr = json_object_get(root, name))) {                                     \
		if (!json_is_array(arr) || json_array_size(arr) > MAXN)                \
			return bad(file, name, "must be an array (at most 4096 entries)"); \
		arrp = calloc(json_array_size(arr) + 1, sizeof(*arrp));                 \
		if (!arrp)                                                             \
			return XG_EFAIL;                                               \
		sect = name;                                                           \
		json_array_foreach(arr, i, o) {                                        \
			snprintf(path, sizeof(path), "%s[%zu]", name, i);              \
			if (check_keys(file, path, o, keys))                           \
				return XG_EUSAGE;                                      \
			cnt++;
#define END_SECTION \
	}           \
	}

	SECTION("vpcs", vpck, p->nv, p->v)
		struct vpc_spec *v = &p->v[i];

		if (get_vni(file, sect, i, o, &v->vni))
			return XG_EUSAGE;
		snprintf(path, sizeof(path), "vpcs[%zu].dividers", i);
		if (json_object_get(o, "dividers") &&
		    get_ip_list(file, path, json_object_get(o, "dividers"), v->v.dividers_be,
				XG_MAX_DIVIDERS, &v->v.n_dividers))
			return XG_EUSAGE;
	END_SECTION

	SECTION("subnets", subk, p->ns, p->s)
		struct subnet_spec *s = &p->s[i];
		json_t *rem = json_object_get(o, "remote");
		__u32 n = 0;
		int r;

		if (get_vni(file, sect, i, o, &s->vni) ||
		    FIELD(o, "cidr", 1, xg_parse_cidr(_s, &s->ip_be, &s->plen)))
			return XG_EUSAGE;
		r = FIELD(o, "gw", 0, xg_parse_ip(_s, &s->v.gw_ip_be));
		if (r > 1 || r < 0)
			return XG_EUSAGE;
		s->has_gw = r == 0;
		r = FIELD(o, "gwmac", 0, xg_parse_mac(_s, s->v.gw_mac));
		if (r > 1 || r < 0)
			return XG_EUSAGE;
		s->has_gwmac = r == 0;
		if (rem && !json_is_boolean(rem))
			return bad(file, "subnets[].remote", "must be true or false");
		if (json_is_true(rem))
			s->v.flags |= XG_SUBNET_REMOTE;
		snprintf(path, sizeof(path), "subnets[%zu].bouncers", i);
		if (json_object_get(o, "bouncers") &&
		    get_ip_list(file, path, json_object_get(o, "bouncers"), s->v.bouncers_be,
				XG_MAX_BOUNCERS, &n))
			return XG_EUSAGE;
		s->v.n_bouncers = (__u16)n;
	END_SECTION

	SECTION("endpoints", epk, p->ne, p->e)
		struct ep_spec *e = &p->e[i];
		int r;

		if (get_vni(file, sect, i, o, &e->vni) ||
		    FIELD(o, "ip", 1, xg_parse_ip(_s, &e->ip_be)) ||
		    FIELD(o, "mac", 1, xg_parse_mac(_s, e->v.mac)))
			return XG_EUSAGE;
		r = FIELD(o, "host", 0, xg_parse_ip(_s, &e->v.host_be));
		if (r > 1 || r < 0)
			return XG_EUSAGE;
		e->has_host = r == 0;
		e->dev = str_at(o, "dev");
		snprintf(path, sizeof(path), "endpoints[%zu]", i);
		if (!e->has_host == !e->dev)
			return bad(file, path, "needs exactly one of \"host\" (remote) or \"dev\" (local)");
	END_SECTION
	return XG_OK;
}

int apply_check(const char *file, json_t *root)
{
	struct plan p = {};
	int rc = build(file, root, &p);

	free(p.v);
	free(p.s);
	free(p.e);
	return rc;
}

int cmd_apply(struct cli *c, struct args *a)
{
	const char *file = NULL, *s;
	struct plan p = {};
	json_error_t jerr;
	struct xg_maps m;
	json_t *root;
	size_t i;
	json_t *o;
	int rc;

	while ((s = arg_next(a))) {
		if (arg_is(s, "help"))
			return object_help("apply");
		if (arg_is(s, "-f") || arg_is(s, "--file"))
			file = arg_value(a, s);
		else
			return usage_error("apply", "unexpected argument '%s'", s);
	}
	if (!file)
		return usage_error("apply", "usage: xgate apply -f FILE");
	root = json_load_file(file, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return xg_fail(XG_EUSAGE, "%s:%d:%d: %s", file, jerr.line, jerr.column, jerr.text);
	rc = build(file, root, &p);
	if (rc)
		goto out;
	rc = xg_maps_open(c->instance, true, &m);
	if (rc)
		goto out;
	if (p.has_ip || p.has_gw || p.has_ttl)
		rc = op_host_set(&m, p.has_ip ? &p.ip : NULL, p.has_gw ? &p.gw : NULL,
				 p.has_ttl ? &p.ttl : NULL);
	json_array_foreach(p.attach, i, o) {
		const char *mode = str_at(o, "mode");
		enum xg_role role = !strcmp(str_at(o, "program"), "transit") ? XG_ROLE_TRANSIT :
									   XG_ROLE_AGENT;
		__u32 ifindex, id = 0;
		enum xg_mode cur;

		if (rc)
			break;
		/* Idempotent: a device already running xgate keeps its program. */
		xg_dev_index(str_at(o, "dev"), &ifindex);
		if (!xg_xdp_query(ifindex, &id, &cur) && id)
			continue;
		rc = xg_attach(&m, str_at(o, "dev"), role,
			       mode && !strcmp(mode, "generic") ? XG_MODE_GENERIC : XG_MODE_NATIVE,
			       false);
	}
	for (int k = 0; !rc && k < p.nv; k++)
		rc = op_vpc_put(&m, &p.v[k], true);
	for (int k = 0; !rc && k < p.ns; k++)
		rc = op_subnet_put(&m, &p.s[k], true);
	for (int k = 0; !rc && k < p.ne; k++)
		rc = op_endpoint_put(&m, &p.e[k], true);
	xg_maps_close(&m);
	if (!rc && !c->json)
		printf("applied %s: %d vpcs, %d subnets, %d endpoints\n", file, p.nv, p.ns, p.ne);
out:
	free(p.v);
	free(p.s);
	free(p.e);
	json_decref(root);
	return rc;
}
