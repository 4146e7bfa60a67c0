// SPDX-License-Identifier: BSD-2-Clause
/* Session ingress entries: a public endpoint (protocol, IPv4, port) and
 * its pod (VNI, IPv4, port), as a forward entry for `ingress` and a reverse
 * one for `agent` (xgate_abi.h, "session ingress"). The dedicated-gateway
 * form is the same pair with a flag and the other host (XG_SESS_POD_SIDE),
 * on the ingress host and on the pod's host. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xg.h"

int xg_sess_open(struct xg_maps *m, struct xg_sess_maps *s)
{
	const char *names[] = {XG_MAP_SESS, XG_MAP_SESS_REV, XG_MAP_SESSCACHE, XG_MAP_SESSRCACHE,
			       XG_MAP_SGEN};
	int *fds[] = {&s->fwd, &s->rev, &s->cache, &s->rcache, &s->sgen};
	char path[PATH_MAX + 64];

	s->fwd = s->rev = s->cache = s->rcache = s->sgen = -1;
	for (int i = 0; i < 5; i++) {
		snprintf(path, sizeof(path), "%s/%s", m->root, names[i]);
		if (access(path, F_OK) && errno == ENOENT) {
			/* an instance made before sessions existed */
			int rc = xg_maps_complete(m);

			if (rc)
				return rc;
		}
		*fds[i] = bpf_obj_get(path);
		if (*fds[i] < 0) {
			int err = errno;

			xg_sess_close(s);
			return xg_fail(xg_errno_code(-err), "%s: %s", path, strerror(err));
		}
	}
	return XG_OK;
}

void xg_sess_close(struct xg_sess_maps *s)
{
	if (s->fwd >= 0)
		close(s->fwd);
	if (s->rev >= 0)
		close(s->rev);
	if (s->cache >= 0)
		close(s->cache);
	if (s->rcache >= 0)
		close(s->rcache);
	if (s->sgen >= 0)
		close(s->sgen);
	s->fwd = s->rev = s->cache = s->rcache = s->sgen = -1;
}

/* After a session is deleted: no CPU may use its copy any more. Read,
 * add, write: two writers racing both write g + 1, which still differs
 * from what every slot was filled under before either deleted. */
static void sgen_bump(struct xg_sess_maps *s)
{
	__u32 zero = 0, g = 0;

	bpf_map_lookup_elem(s->sgen, &zero, &g);
	g++;
	if (bpf_map_update_elem(s->sgen, &zero, &g, BPF_ANY))
		xg_err("warning: cannot bump %s (%s): a deleted session may be used for its "
		       "copies' lifetime",
		       XG_MAP_SGEN, strerror(errno));
}

void xg_sess_pending(const struct xg_sess_maps *s, const struct xg_sess_key *k, __u64 *packets,
		     __u64 *bytes)
{
	int ncpu = libbpf_num_possible_cpus();
	__u32 i = XG_SESS_SLOT(k->ip_be, k->port_be, k->proto);
	struct xg_sess_slot *v;

	*packets = *bytes = 0;
	if (ncpu <= 0 || !(v = calloc((size_t)ncpu, sizeof(*v))))
		return;
	if (!bpf_map_lookup_elem(s->cache, &i, v))
		for (int c = 0; c < ncpu; c++)
			if (v[c].present && v[c].key.ip_be == k->ip_be &&
			    v[c].key.port_be == k->port_be && v[c].key.proto == k->proto) {
				*packets += v[c].packets;
				*bytes += v[c].bytes;
			}
	free(v);
}

void xg_sess_rev_pending(const struct xg_sess_maps *s, const struct xg_sess_rev_key *k,
			 __u64 *packets, __u64 *bytes)
{
	int ncpu = libbpf_num_possible_cpus();
	__u32 i = XG_SESS_RSLOT(k->vni, k->pod_ip_be, k->pod_port_be, k->proto);
	struct xg_sess_rslot *v;

	*packets = *bytes = 0;
	if (ncpu <= 0 || !(v = calloc((size_t)ncpu, sizeof(*v))))
		return;
	if (!bpf_map_lookup_elem(s->rcache, &i, v))
		for (int c = 0; c < ncpu; c++)
			if (v[c].present && v[c].key.vni == k->vni &&
			    v[c].key.pod_ip_be == k->pod_ip_be &&
			    v[c].key.pod_port_be == k->pod_port_be && v[c].key.proto == k->proto) {
				*packets += v[c].packets;
				*bytes += v[c].bytes;
			}
	free(v);
}

int xg_parse_proto(const char *s, __u8 *proto)
{
	if (s && !strcmp(s, "tcp")) {
		*proto = IPPROTO_TCP;
		return 0;
	}
	if (s && !strcmp(s, "udp")) {
		*proto = IPPROTO_UDP;
		return 0;
	}
	xg_err("invalid protocol '%s': tcp or udp", s ? s : "");
	return -1;
}

const char *xg_proto_str(__u8 proto)
{
	return proto == IPPROTO_TCP ? "tcp" : proto == IPPROTO_UDP ? "udp" : "?";
}

int xg_parse_endpoint(const char *what, const char *s, __u32 *ip_be, __u16 *port_be)
{
	char buf[32], *colon, *end;
	struct in_addr a;
	unsigned long port;

	if (!s || strlen(s) >= sizeof(buf) || !(colon = strrchr(s, ':')))
		goto bad;
	memcpy(buf, s, (size_t)(colon - s));
	buf[colon - s] = 0;
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (inet_pton(AF_INET, buf, &a) != 1 || !a.s_addr || !colon[1] || *end || errno ||
	    colon[1] == '-' || colon[1] == '+' || port < 1 || port > 65535)
		goto bad;
	*ip_be = a.s_addr;
	*port_be = htons((__u16)port);
	return 0;
bad:
	xg_err("invalid %s '%s': expected A.B.C.D:PORT (a non-zero address, port 1..65535)", what,
	       s ? s : "");
	return -1;
}

struct xg_sess_rev_key xg_sess_rev_key_of(const struct xg_sess_key *k, const struct xg_sess *v)
{
	struct xg_sess_rev_key rk = {.vni = v->vni,
				     .pod_ip_be = v->pod_ip_be,
				     .pod_port_be = v->pod_port_be,
				     .proto = k->proto};

	return rk;
}

static const char *pub_str(const struct xg_sess_key *k, char *buf, size_t len)
{
	char ip[16];

	snprintf(buf, len, "%s %s:%u", xg_proto_str(k->proto), xg_ip_str(k->ip_be, ip),
		 ntohs(k->port_be));
	return buf;
}

static const char *pod_str(const struct xg_sess *v, char *buf, size_t len)
{
	char ip[16];

	snprintf(buf, len, "VPC %u pod %s:%u", v->vni, xg_ip_str(v->pod_ip_be, ip),
		 ntohs(v->pod_port_be));
	return buf;
}

static bool same_target(const struct xg_sess *a, const struct xg_sess *b)
{
	return a->vni == b->vni && a->pod_ip_be == b->pod_ip_be &&
	       a->pod_port_be == b->pod_port_be && a->flags == b->flags && a->host_be == b->host_be;
}

int xg_sess_add(struct xg_maps *m, struct xg_sess_maps *s, const struct xg_sess_key *k,
		const struct xg_sess *v)
{
	struct xg_sess_rev_key rk = xg_sess_rev_key_of(k, v);
	struct xg_sess_rev rv = {.pub_ip_be = k->ip_be,
				 .pub_port_be = k->port_be,
				 .flags = v->flags,
				 .host_be = v->host_be};
	struct xg_sess cur = {}, fv = *v;
	struct xg_sess_rev crv;
	char pub[48], pod[64], other[48];
	struct xg_host host;
	struct xg_vpc vpc;

	pub_str(k, pub, sizeof(pub));
	pod_str(v, pod, sizeof(pod));
	if (k->proto != IPPROTO_TCP && k->proto != IPPROTO_UDP)
		return xg_fail(XG_EUSAGE, "session %s: protocol must be tcp or udp", pub);
	if (!k->ip_be || !k->port_be || !v->pod_ip_be || !v->pod_port_be)
		return xg_fail(XG_EUSAGE, "session %s -> %s: zero address or port", pub, pod);
	if (v->flags & ~(XG_SESS_FORM_GATEWAY | XG_SESS_POD_SIDE) ||
	    v->flags == (XG_SESS_FORM_GATEWAY | XG_SESS_POD_SIDE))
		return xg_fail(XG_EUSAGE, "session %s: invalid flags %#x", pub, v->flags);
	if (!v->flags != !v->host_be)
		return xg_fail(XG_EUSAGE,
			       "session %s: a host goes with the dedicated-gateway form, and only "
			       "there",
			       pub);
	if (bpf_map_lookup_elem(m->vpc, &v->vni, &vpc))
		return xg_fail(XG_ENOTFOUND, "session %s: VPC %u does not exist", pub, v->vni);
	/* On a host whose public address is its underlay address, UDP to the
	 * Geneve port there is the underlay's: `ingress` never looks for a
	 * session on it (docs/architecture.md, "Session ingress", one NIC). */
	if (k->proto == IPPROTO_UDP && k->port_be == htons(XG_GENEVE_PORT) &&
	    !(v->flags & XG_SESS_POD_SIDE) && !xg_host_get(m, &host) && host.ip_be == k->ip_be)
		return xg_fail(XG_EUSAGE,
			       "session %s: UDP port %u of the host address is the underlay's "
			       "(Geneve)",
			       pub, XG_GENEVE_PORT);
	if (!bpf_map_lookup_elem(s->fwd, k, &cur)) {
		if (same_target(&cur, v))
			return XG_OK; /* already there: counters kept */
		return xg_fail(XG_EEXIST, "public endpoint %s is taken by another session (%s)",
			       pub, pod_str(&cur, other, sizeof(other)));
	}
	memset(&fv.in, 0, sizeof(fv.in));
	if (bpf_map_update_elem(s->rev, &rk, &rv, BPF_NOEXIST)) {
		struct xg_sess_key ok = {.proto = k->proto};

		if (errno != EEXIST)
			return xg_fail(errno == E2BIG || errno == ENOMEM ? XG_EFAIL
									 : xg_errno_code(-errno),
				       "session %s: reverse map: %s", pub,
				       errno == E2BIG ? "full" : strerror(errno));
		if (!bpf_map_lookup_elem(s->rev, &rk, &crv)) {
			ok.ip_be = crv.pub_ip_be;
			ok.port_be = crv.pub_port_be;
		}
		return xg_fail(XG_EEXIST, "%s already serves session %s", pod,
			       pub_str(&ok, other, sizeof(other)));
	}
	if (bpf_map_update_elem(s->fwd, k, &fv, BPF_NOEXIST)) {
		int err = errno;

		bpf_map_delete_elem(s->rev, &rk); /* no half session left */
		if (err == EEXIST)
			return xg_fail(XG_EEXIST, "public endpoint %s is taken by another session",
				       pub);
		return xg_fail(XG_EFAIL, "session %s: forward map: %s", pub,
			       err == E2BIG ? "full" : strerror(err));
	}
	/* form 2: the other host is a next hop of this one's XDP alone */
	if (v->host_be)
		xg_maps_neigh_keep(m, v->host_be);
	return XG_OK;
}

int xg_sess_del(struct xg_sess_maps *s, const struct xg_sess_key *k)
{
	struct xg_sess_rev_key rk;
	struct xg_sess v;
	char pub[48];

	if (bpf_map_lookup_elem(s->fwd, k, &v) || bpf_map_delete_elem(s->fwd, k))
		return xg_fail(XG_ENOTFOUND, "no session at %s", pub_str(k, pub, sizeof(pub)));
	/* no CPU's copy of the forward entry outlives it, then none of the
	 * reverse one: forward gone first, as the entries */
	sgen_bump(s);
	rk = xg_sess_rev_key_of(k, &v);
	bpf_map_delete_elem(s->rev, &rk);
	sgen_bump(s);
	return XG_OK;
}

int xg_sess_flush(struct xg_sess_maps *s, unsigned int *n)
{
	struct xg_sess_key k;
	struct xg_sess_rev_key rk;
	struct xg_sess v;

	*n = 0;
	while (!bpf_map_get_next_key(s->fwd, NULL, &k)) {
		bool had = !bpf_map_lookup_elem(s->fwd, &k, &v);

		if (bpf_map_delete_elem(s->fwd, &k))
			return xg_fail(XG_EFAIL, "flushing sessions: %s", strerror(errno));
		if (had) {
			rk = xg_sess_rev_key_of(&k, &v);
			bpf_map_delete_elem(s->rev, &rk);
		}
		(*n)++;
	}
	sgen_bump(s);
	while (!bpf_map_get_next_key(s->rev, NULL, &rk))
		if (bpf_map_delete_elem(s->rev, &rk))
			return xg_fail(XG_EFAIL, "flushing sessions: %s", strerror(errno));
	sgen_bump(s);
	return XG_OK;
}
