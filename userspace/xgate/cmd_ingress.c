// SPDX-License-Identifier: BSD-2-Clause
/* xgate ingress: session endpoints (public ip:port -> pod ip:port) for the
 * `ingress` program on a node's public NIC and the `agent` SNAT of the pod's
 * replies. The work is libxgate's (lib/sess.c), shared with the daemons. */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <time.h>

#include "cli.h"

static int no_more(struct args *a)
{
	return a->argc ? usage_error("ingress", "unexpected argument '%s'", a->argv[0]) : XG_OK;
}

/* tcp|udp PUBLIC_IP:PORT */
static int parse_pub(struct args *a, const char *verb, struct xg_sess_key *k)
{
	const char *proto = arg_next(a), *pub = arg_next(a);

	if (!proto || !pub)
		return usage_error("ingress", "%s: expected tcp|udp PUBLIC_IP:PORT", verb);
	if (xg_parse_proto(proto, &k->proto) ||
	    xg_parse_endpoint("public endpoint", pub, &k->ip_be, &k->port_be))
		return XG_EUSAGE;
	return XG_OK;
}

static int with_sess(struct cli *c, bool create, struct xg_maps *m, struct xg_sess_maps *s)
{
	int rc = xg_maps_open(c->instance, create, m);

	if (rc)
		return rc;
	rc = xg_sess_open(m, s);
	if (rc)
		xg_maps_close(m);
	return rc;
}

static int ingress_add(struct cli *c, struct args *a)
{
	struct xg_sess_key k = {};
	struct xg_sess v = {};
	struct xg_sess_maps s;
	struct xg_maps m;
	const char *kw, *pod;
	int rc = parse_pub(a, "add", &k);

	if (rc)
		return rc;
	kw = arg_next(a);
	if (!arg_is(kw, "vni"))
		return usage_error("ingress",
				   "add: expected `vni VNI POD_IP:PORT` after the public endpoint, "
				   "got '%s'",
				   kw ? kw : "");
	if (xg_parse_vni(arg_value(a, "vni"), &v.vni))
		return XG_EUSAGE;
	pod = arg_next(a);
	if (!pod)
		return usage_error("ingress", "add: expected POD_IP:PORT after the VNI");
	if (xg_parse_endpoint("pod endpoint", pod, &v.pod_ip_be, &v.pod_port_be))
		return XG_EUSAGE;
	/* Dedicated-gateway form: `host` on the ingress host names the pod's
	 * host, `via` on the pod's host names the ingress host. */
	kw = arg_next(a);
	if (kw) {
		if (!arg_is(kw, "host") && !arg_is(kw, "via"))
			return usage_error("ingress",
					   "add: expected `host POD_HOST` or `via INGRESS_HOST` "
					   "after the pod endpoint, got '%s'",
					   kw);
		v.flags = arg_is(kw, "host") ? XG_SESS_FORM_GATEWAY : XG_SESS_POD_SIDE;
		if (xg_parse_ip(arg_value(a, kw), &v.host_be))
			return XG_EUSAGE;
		if (!v.host_be)
			return usage_error("ingress", "add: %s: 0.0.0.0 is no host", kw);
	}
	if ((rc = no_more(a)))
		return rc;
	rc = with_sess(c, true, &m, &s);
	if (rc)
		return rc;
	rc = xg_sess_add(&m, &s, &k, &v);
	xg_sess_close(&s);
	xg_maps_close(&m);
	return rc;
}

static int ingress_del(struct cli *c, struct args *a)
{
	struct xg_sess_key k = {};
	struct xg_sess_maps s;
	struct xg_maps m;
	int rc = parse_pub(a, "del", &k);

	if (rc || (rc = no_more(a)))
		return rc;
	rc = with_sess(c, false, &m, &s);
	if (rc)
		return rc;
	rc = xg_sess_del(&s, &k);
	xg_sess_close(&s);
	xg_maps_close(&m);
	return rc;
}

static int ingress_flush(struct cli *c, struct args *a)
{
	struct xg_sess_maps s;
	struct xg_maps m;
	unsigned int n = 0;
	int rc = no_more(a);

	if (rc)
		return rc;
	rc = with_sess(c, false, &m, &s);
	if (rc)
		return rc;
	rc = xg_sess_flush(&s, &n);
	xg_sess_close(&s);
	xg_maps_close(&m);
	if (!rc && c->verbose)
		fprintf(stderr, "xgate: %u session(s) removed\n", n);
	return rc;
}

static json_t *ctr_json(const struct xg_sess_ctr *ctr)
{
	return json_pack("{s:I,s:I}", "packets", (json_int_t)ctr->packets, "bytes",
			 (json_int_t)ctr->bytes);
}

static int ingress_ls(struct cli *c, struct args *a)
{
	static const char *const cols[] = {"PROTO",   "PUBLIC",	  "VNI",      "POD",
					   "IN_PKTS", "IN_BYTES", "OUT_PKTS", "OUT_BYTES",
					   "IDLE_MS", NULL};
	static const char *const keys[] = {"proto",	 "public",   "vni",	    "pod",
					   "in_packets", "in_bytes", "out_packets", "out_bytes",
					   "idle_ms",	 NULL};
	struct xg_sess_key k, next, *prev = NULL;
	struct xg_sess_maps s;
	struct timespec ts;
	struct xg_maps m;
	json_t *rows;
	__u64 now;
	int rc = no_more(a);

	if (rc)
		return rc;
	rc = with_sess(c, false, &m, &s);
	if (rc)
		return rc;
	clock_gettime(CLOCK_MONOTONIC, &ts); /* bpf_ktime_get_ns's clock */
	now = (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
	rows = json_array();
	while (!bpf_map_get_next_key(s.fwd, prev, &next)) {
		struct xg_sess_rev_key rk;
		struct xg_sess_rev rv = {};
		struct xg_sess v;
		char ip[16], pub[32], pod[32];
		__u64 last;
		json_t *row;

		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(s.fwd, &k, &v))
			continue;
		rk = xg_sess_rev_key_of(&k, &v);
		bpf_map_lookup_elem(s.rev, &rk, &rv);
		{ /* what CPUs counted and have not added to the entry yet */
			__u64 pp, pb;

			xg_sess_pending(&s, &k, &pp, &pb);
			v.in.packets += pp;
			v.in.bytes += pb;
			xg_sess_rev_pending(&s, &rk, &pp, &pb);
			rv.out.packets += pp;
			rv.out.bytes += pb;
		}
		snprintf(pub, sizeof(pub), "%s:%u", xg_ip_str(k.ip_be, ip), ntohs(k.port_be));
		snprintf(pod, sizeof(pod), "%s:%u", xg_ip_str(v.pod_ip_be, ip),
			 ntohs(v.pod_port_be));
		last = v.in.last_ns > rv.out.last_ns ? v.in.last_ns : rv.out.last_ns;
		row = json_pack("{s:s,s:s,s:i,s:s}", "proto", xg_proto_str(k.proto), "public", pub,
				"vni", (int)v.vni, "pod", pod);
		/* the form, and the other host of the dedicated-gateway form */
		json_object_set_new(row, "form",
				    json_string(v.flags & XG_SESS_FORM_GATEWAY ? "gateway"
						: v.flags & XG_SESS_POD_SIDE   ? "pod-side"
									       : "node"));
		json_object_set_new(
		    row, "host", v.host_be ? json_string(xg_ip_str(v.host_be, ip)) : json_null());
		if (c->json) {
			json_object_set_new(row, "in", ctr_json(&v.in));
			json_object_set_new(row, "out", ctr_json(&rv.out));
		} else {
			json_object_set_new(row, "in_packets",
					    json_integer((json_int_t)v.in.packets));
			json_object_set_new(row, "in_bytes", json_integer((json_int_t)v.in.bytes));
			json_object_set_new(row, "out_packets",
					    json_integer((json_int_t)rv.out.packets));
			json_object_set_new(row, "out_bytes",
					    json_integer((json_int_t)rv.out.bytes));
		}
		/* never seen: null, so "idle" is never confused with "busy" */
		json_object_set_new(
		    row, "idle_ms",
		    last ? json_integer((json_int_t)((now > last ? now - last : 0) / 1000000))
			 : json_null());
		json_array_append_new(rows, row);
	}
	xg_sess_close(&s);
	xg_maps_close(&m);
	out_rows(c, rows, cols, keys);
	return XG_OK;
}

const struct cmd ingress_verbs[] = {
    {"add", ingress_add,
     "tcp|udp PUBLIC_IP:PORT vni VNI POD_IP:PORT [host POD_HOST | via INGRESS_HOST]",
     "a session: public endpoint DNATed to the pod (host, via: docs/cli.md)"},
    {"del", ingress_del, "tcp|udp PUBLIC_IP:PORT", NULL},
    {"ls", ingress_ls, "", "sessions, their counters both ways and idle time"},
    {"flush", ingress_flush, "", "remove every session"},
    {"list", ingress_ls, NULL, NULL},
    {0},
};
