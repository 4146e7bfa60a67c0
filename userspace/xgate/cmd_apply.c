// SPDX-License-Identifier: BSD-2-Clause
/*
 * `xgate apply -f FILE`: a declarative cluster file (JSON) applied through
 * the same operations as the commands. Everything is validated before
 * anything is written, and every error names the JSON path.
 *
 * { "host": {"ip": A, "gateway": A, "ttl": N},
 *   "attach": [{"dev": D, "program": "transit"|"agent"|"gateway"|"ingress",
 *               "mode": "native"|"generic"}],
 *   "vpcs": [{"vni": N, "dividers": [A...]}],
 *   "subnets": [{"vni": N, "cidr": C, "bouncers": [A...], "gw": A, "gwmac": M, "remote": B}],
 *   "endpoints": [{"vni": N, "ip": A, "mac": M, "host": A | "dev": D}],
 *   "sessions": [{"proto": "tcp"|"udp", "public": "A:P", "vni": N, "pod": "A:P",
 *                 "host": A | "via": A}] }
 * Entries are upserted; entries not in the file are left alone. A session
 * is added (kept as it is, counters too, when it is there already); a
 * public or pod endpoint held by another session (another pod, form or
 * other host included) refuses the file (exit 4). "host" (the pod's host,
 * on the ingress host) and "via" (the ingress host, on the pod's host) are
 * the dedicated-gateway form, as in `xgate ingress add`. What the
 * entries refer to (devices, VPCs) is checked too before the first write,
 * so a refused file changes nothing.
 */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define MAXN 4096

static int bad(const char *file, const char *path, const char *msg)
{
	return xg_fail(XG_EUSAGE, "%s: %s: %s", file, path, msg);
}

/* A reference to something that is not there (device, VPC): exit 3. */
static int missing(const char *file, const char *path, const char *fmt, const char *what)
{
	char msg[160];

	snprintf(msg, sizeof(msg), fmt, what);
	return xg_fail(XG_ENOTFOUND, "%s: %s: %s", file, path, msg);
}

static const char *str_at(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Run a CLI parser on a string member; parsers print the detail. */
#define FIELD(obj, key, required, parse)                                                           \
	({                                                                                         \
		json_t *_v = json_object_get(obj, key);                                            \
		int _r = 0;                                                                        \
		snprintf(path, sizeof(path), "%s[%zu].%s", sect, i, key);                          \
		if (!_v) {                                                                         \
			if (required)                                                              \
				_r = bad(file, path, "missing");                                   \
			else                                                                       \
				_r = 1;                                                            \
		} else if (!json_is_string(_v)) {                                                  \
			_r = bad(file, path, "must be a string");                                  \
		} else {                                                                           \
			const char *_s = json_string_value(_v);                                    \
			if (parse)                                                                 \
				_r = bad(file, path, "invalid value (see above)");                 \
		}                                                                                  \
		_r;                                                                                \
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
	json_array_foreach(arr, i, e)
	{
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
	json_object_foreach(o, k, v)
	{
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

static bool plan_has_vpc(const struct apply_plan *p, __u32 vni)
{
	for (int k = 0; k < p->nv; k++)
		if (p->v[k].vni == vni)
			return true;
	return false;
}

/* Every subnet and endpoint needs its VPC: in the file, or in the maps
 * (m NULL: there is no instance yet). */
static int check_refs(const char *file, const struct apply_plan *p, struct xg_maps *m)
{
	char path[64], vni[16];

	for (int k = 0; k < p->ns + p->ne; k++) {
		__u32 v = k < p->ns ? p->s[k].vni : p->e[k - p->ns].vni;

		if (plan_has_vpc(p, v) || (m && op_vpc_exists(m, v)))
			continue;
		snprintf(path, sizeof(path), "%s[%d].vni", k < p->ns ? "subnets" : "endpoints",
			 k < p->ns ? k : k - p->ns);
		snprintf(vni, sizeof(vni), "%u", v);
		return missing(file, path, "VPC %s is neither in the file nor configured", vni);
	}
	for (int k = 0; k < p->nsess; k++) {
		if (plan_has_vpc(p, p->sess[k].v.vni) || (m && op_vpc_exists(m, p->sess[k].v.vni)))
			continue;
		snprintf(path, sizeof(path), "sessions[%d].vni", k);
		snprintf(vni, sizeof(vni), "%u", p->sess[k].v.vni);
		return missing(file, path, "VPC %s is neither in the file nor configured", vni);
	}
	/* a local endpoint is recorded at this host's address */
	for (int k = 0; k < p->ne; k++) {
		struct xg_host h = {};
		size_t i;
		json_t *o;
		bool transit = false;

		if (!p->e[k].dev || p->has_ip)
			continue;
		json_array_foreach(p->attach, i, o) transit |=
		    !strcmp(str_at(o, "program"), "transit");
		if (transit || (m && !xg_host_get(m, &h) && h.ip_be))
			break;
		snprintf(path, sizeof(path), "endpoints[%d].dev", k);
		return missing(file, path, "a local endpoint needs this host's address: %s",
			       "set host.ip, or attach a transit device");
	}
	return XG_OK;
}

static bool instance_has_maps(const char *instance)
{
	char root[PATH_MAX], path[PATH_MAX + 16];

	if (xg_instance_root(instance, root, sizeof(root)))
		return false;
	snprintf(path, sizeof(path), "%s/%s", root, XG_MAP_HOST);
	return !access(path, F_OK);
}

/* A session's "host" or "via" (at most one, a host address): the
 * dedicated-gateway form's flag and other host into v. 0, or the exit code
 * after a message naming the JSON path. */
static int get_sess_host(const char *file, const char *sect, size_t i, json_t *o, struct xg_sess *v)
{
	static const char *const keys[] = {"host", "via"};
	static const __u16 flags[] = {XG_SESS_FORM_GATEWAY, XG_SESS_POD_SIDE};
	char path[96];

	for (int k = 0; k < 2; k++) {
		int r = FIELD(o, keys[k], 0, xg_parse_ip(_s, &v->host_be));

		if (r == 1)
			continue;
		if (r)
			return r;
		if (v->flags) {
			snprintf(path, sizeof(path), "%s[%zu]", sect, i);
			return bad(file, path,
				   "\"host\" (on the ingress host) and \"via\" (on the pod's host) "
				   "exclude each other");
		}
		if (!v->host_be)
			return bad(file, path, "0.0.0.0 is no host");
		v->flags = flags[k];
	}
	return 0;
}

static int build(const char *file, json_t *root, struct apply_plan *p)
{
	static const char *const top[] = {"host",      "attach",   "vpcs", "subnets",
					  "endpoints", "sessions", NULL};
	static const char *const hostk[] = {"ip", "gateway", "ttl", NULL};
	static const char *const vpck[] = {"vni", "dividers", NULL};
	static const char *const subk[] = {"vni",   "cidr",   "bouncers", "gw",
					   "gwmac", "remote", NULL};
	static const char *const epk[] = {"vni", "ip", "mac", "host", "dev", NULL};
	static const char *const atk[] = {"dev", "program", "mode", NULL};
	static const char *const sessk[] = {"proto", "public", "vni", "pod", "host", "via", NULL};
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
			if (!json_is_integer(o) || json_integer_value(o) < 2 ||
			    json_integer_value(o) > 255)
				return bad(file, "host.ttl", "must be an integer 2..255");
			p->ttl = (__u32)json_integer_value(o);
			p->has_ttl = true;
		}
	}
	if ((arr = json_object_get(root, "attach"))) {
		if (!json_is_array(arr))
			return bad(file, "attach", "must be an array");
		json_array_foreach(arr, i, o)
		{
			const char *prog = str_at(o, "program"), *mode = str_at(o, "mode");

			snprintf(path, sizeof(path), "attach[%zu]", i);
			if (check_keys(file, path, o, atk))
				return XG_EUSAGE;
			snprintf(path, sizeof(path), "attach[%zu].dev", i);
			if (!str_at(o, "dev"))
				return bad(file, path, "missing (a device name)");
			if (!if_nametoindex(str_at(o, "dev")))
				return missing(file, path, "unknown device '%s'", str_at(o, "dev"));
			snprintf(path, sizeof(path), "attach[%zu].program", i);
			if (!prog || (strcmp(prog, "transit") && strcmp(prog, "agent") &&
				      strcmp(prog, "gateway") && strcmp(prog, "ingress")))
				return bad(file, path,
					   "must be \"transit\", \"agent\", \"gateway\" or "
					   "\"ingress\"");
			snprintf(path, sizeof(path), "attach[%zu].mode", i);
			if (mode && strcmp(mode, "native") && strcmp(mode, "generic"))
				return bad(file, path, "must be \"native\" or \"generic\"");
		}
		p->attach = arr;
	}
#define SECTION(name, keys, cnt, arrp)                                                             \
	if ((arr = json_object_get(root, name))) {                                                 \
		if (!json_is_array(arr) || json_array_size(arr) > MAXN)                            \
			return bad(file, name, "must be an array (at most 4096 entries)");         \
		arrp = calloc(json_array_size(arr) + 1, sizeof(*arrp));                            \
		if (!arrp)                                                                         \
			return XG_EFAIL;                                                           \
		sect = name;                                                                       \
		json_array_foreach(arr, i, o)                                                      \
		{                                                                                  \
			snprintf(path, sizeof(path), "%s[%zu]", name, i);                          \
			if (check_keys(file, path, o, keys))                                       \
				return XG_EUSAGE;                                                  \
			cnt++;
#define END_SECTION                                                                                \
	}                                                                                          \
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
	snprintf(path, sizeof(path), "subnets[%zu].remote", i);
	if (rem && !json_is_boolean(rem))
		return bad(file, path, "must be true or false");
	if (json_is_true(rem))
		s->v.flags |= XG_SUBNET_REMOTE;
	snprintf(path, sizeof(path), "subnets[%zu].bouncers", i);
	if (json_object_get(o, "bouncers") &&
	    get_ip_list(file, path, json_object_get(o, "bouncers"), s->v.bouncers_be,
			XG_MAX_BOUNCERS, &n))
		return XG_EUSAGE;
	s->v.n_bouncers = (__u16)n;
	if (!n && !(s->v.flags & XG_SUBNET_REMOTE))
		return bad(file, path, "a local subnet needs bouncers (or \"remote\": true)");
	if (s->has_gw && s->plen && (s->v.gw_ip_be & htonl(~0u << (32 - s->plen))) != s->ip_be) {
		snprintf(path, sizeof(path), "subnets[%zu].gw", i);
		return bad(file, path, "outside the subnet");
	}
	END_SECTION

	SECTION("endpoints", epk, p->ne, p->e)
	struct ep_spec *e = &p->e[i];
	int r;

	if (get_vni(file, sect, i, o, &e->vni) || FIELD(o, "ip", 1, xg_parse_ip(_s, &e->ip_be)) ||
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
	snprintf(path, sizeof(path), "endpoints[%zu].dev", i);
	if (json_object_get(o, "dev") && !e->dev)
		return bad(file, path, "must be a string");
	if (e->dev && !if_nametoindex(e->dev))
		return missing(file, path, "unknown device '%s'", e->dev);
	END_SECTION

	SECTION("sessions", sessk, p->nsess, p->sess)
	struct sess_spec *x = &p->sess[i];

	x->k.proto = 0;
	if (FIELD(o, "proto", 1, xg_parse_proto(_s, &x->k.proto)) ||
	    FIELD(o, "public", 1,
		  xg_parse_endpoint("public endpoint", _s, &x->k.ip_be, &x->k.port_be)) ||
	    get_vni(file, sect, i, o, &x->v.vni) ||
	    FIELD(o, "pod", 1,
		  xg_parse_endpoint("pod endpoint", _s, &x->v.pod_ip_be, &x->v.pod_port_be)))
		return XG_EUSAGE;
	if (get_sess_host(file, sect, i, o, &x->v))
		return XG_EUSAGE;
	for (size_t j = 0; j < i; j++) {
		const struct sess_spec *y = &p->sess[j];

		snprintf(path, sizeof(path), "sessions[%zu]", i);
		if (y->k.proto == x->k.proto && y->k.ip_be == x->k.ip_be &&
		    y->k.port_be == x->k.port_be)
			return bad(file, path, "the same public endpoint as an earlier session");
		if (y->k.proto == x->k.proto && y->v.vni == x->v.vni &&
		    y->v.pod_ip_be == x->v.pod_ip_be && y->v.pod_port_be == x->v.pod_port_be)
			return bad(file, path, "the same pod endpoint as an earlier session");
	}
	END_SECTION
	return XG_OK;
}

int apply_plan_parse(const char *file, const char *text, size_t len, struct apply_plan *p)
{
	json_error_t jerr;

	memset(p, 0, sizeof(*p));
	p->root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!p->root)
		return xg_fail(XG_EUSAGE, "%s:%d:%d: %s", file, jerr.line, jerr.column, jerr.text);
	return build(file, p->root, p);
}

int apply_plan_load(const char *file, struct apply_plan *p)
{
	json_error_t jerr;

	memset(p, 0, sizeof(*p));
	p->root = json_load_file(file, JSON_REJECT_DUPLICATES, &jerr);
	if (!p->root && jerr.line < 0) /* could not read it: jansson's text names the file */
		return xg_fail(access(file, F_OK) && errno == ENOENT ? XG_ENOTFOUND : XG_EFAIL,
			       "%s", jerr.text);
	if (!p->root)
		return xg_fail(XG_EUSAGE, "%s:%d:%d: %s", file, jerr.line, jerr.column, jerr.text);
	return build(file, p->root, p);
}

void apply_plan_free(struct apply_plan *p)
{
	free(p->v);
	free(p->s);
	free(p->e);
	free(p->sess);
	json_decref(p->root);
	memset(p, 0, sizeof(*p));
}

/* Before the first write: a session of the file whose public or pod
 * endpoint another session holds refuses the whole file (exit 4). */
static int check_sessions(const char *file, const struct apply_plan *p, struct xg_maps *m)
{
	struct xg_sess_maps sm;
	char path[64], ip[16], ip2[16];
	int rc = xg_sess_open(m, &sm);

	for (int k = 0; !rc && k < p->nsess; k++) {
		const struct sess_spec *x = &p->sess[k];
		struct xg_sess_rev_key rk = xg_sess_rev_key_of(&x->k, &x->v);
		struct xg_sess_rev rv;
		struct xg_sess cur;

		snprintf(path, sizeof(path), "sessions[%d]", k);
		if (!bpf_map_lookup_elem(sm.fwd, &x->k, &cur) &&
		    (cur.vni != x->v.vni || cur.pod_ip_be != x->v.pod_ip_be ||
		     cur.pod_port_be != x->v.pod_port_be || cur.flags != x->v.flags ||
		     cur.host_be != x->v.host_be))
			rc =
			    xg_fail(XG_EEXIST,
				    "%s: %s: public endpoint %s:%u is taken by another "
				    "session (pod %s:%u in VPC %u)",
				    file, path, xg_ip_str(x->k.ip_be, ip), ntohs(x->k.port_be),
				    xg_ip_str(cur.pod_ip_be, ip2), ntohs(cur.pod_port_be), cur.vni);
		else if (!bpf_map_lookup_elem(sm.rev, &rk, &rv) &&
			 (rv.pub_ip_be != x->k.ip_be || rv.pub_port_be != x->k.port_be))
			rc = xg_fail(XG_EEXIST,
				     "%s: %s: the pod endpoint already serves another "
				     "session (public port %u)",
				     file, path, ntohs(rv.pub_port_be));
	}
	if (sm.fwd >= 0)
		xg_sess_close(&sm);
	return rc;
}

int cmd_apply(struct cli *c, struct args *a)
{
	const char *file = NULL, *s;
	struct apply_plan p;
	struct xg_maps m;
	size_t i;
	json_t *o;
	int rc;

	while ((s = arg_next(a))) {
		if (arg_is(s, "-f") || arg_is(s, "--file"))
			file = arg_value(a, s);
		else
			return usage_error("apply", "unexpected argument '%s'", s);
	}
	if (!file)
		return usage_error("apply", "usage: xgate apply -f FILE");
	rc = apply_plan_load(file, &p);
	if (rc)
		goto out;
	if (!instance_has_maps(c->instance)) {
		rc = check_refs(file, &p, NULL);
		if (rc)
			goto out;
	}
	rc = xg_maps_open(c->instance, true, &m);
	if (rc)
		goto out;
	rc = check_refs(file, &p, &m);
	if (!rc && p.nsess)
		rc = check_sessions(file, &p, &m);
	if (!rc && (p.has_ip || p.has_gw || p.has_ttl))
		rc = op_host_set(&m, p.has_ip ? &p.ip : NULL, p.has_gw ? &p.gw : NULL,
				 p.has_ttl ? &p.ttl : NULL);
	json_array_foreach(p.attach, i, o)
	{
		const char *mode = str_at(o, "mode");
		const char *prog = str_at(o, "program");
		enum xg_role role = !strcmp(prog, "transit")   ? XG_ROLE_TRANSIT
				    : !strcmp(prog, "gateway") ? XG_ROLE_GATEWAY
				    : !strcmp(prog, "ingress") ? XG_ROLE_INGRESS
							       : XG_ROLE_AGENT;
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
	if (!rc && p.nsess) {
		struct xg_sess_maps sm;

		rc = xg_sess_open(&m, &sm);
		for (int k = 0; !rc && k < p.nsess; k++)
			rc = xg_sess_add(&m, &sm, &p.sess[k].k, &p.sess[k].v);
		if (sm.fwd >= 0)
			xg_sess_close(&sm);
	}
	xg_maps_close(&m);
	if (!rc && !c->json)
		printf("applied %s: %d vpcs, %d subnets, %d endpoints, %d sessions\n", file, p.nv,
		       p.ns, p.ne, p.nsess);
out:
	apply_plan_free(&p);
	return rc;
}
