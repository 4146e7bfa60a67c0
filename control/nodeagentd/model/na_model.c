// SPDX-License-Identifier: BSD-2-Clause
/* nodeagentd's states, records and their JSON on the node link. */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "na_model.h"

static const char *const pod_names[] = {"Creating",   "Standby",     "Activating", "Running",
					"Evacuating", "Terminating", "Terminated", "Failed"};
static const char *const sess_names[] = {"Starting", "Available", "InUse",
					 "Closing",  "Closed",	  "Timeout"};

const char *na_pod_state_name(enum na_pod_state s)
{
	return (unsigned)s < sizeof(pod_names) / sizeof(pod_names[0]) ? pod_names[s] : "?";
}

const char *na_sess_state_name(enum na_sess_state s)
{
	return (unsigned)s < sizeof(sess_names) / sizeof(sess_names[0]) ? sess_names[s] : "?";
}

int na_pod_state_parse(const char *s, enum na_pod_state *out)
{
	for (unsigned i = 0; s && i < sizeof(pod_names) / sizeof(pod_names[0]); i++)
		if (!strcmp(s, pod_names[i])) {
			*out = (enum na_pod_state)i;
			return 0;
		}
	return -1;
}

int na_sess_state_parse(const char *s, enum na_sess_state *out)
{
	for (unsigned i = 0; s && i < sizeof(sess_names) / sizeof(sess_names[0]); i++)
		if (!strcmp(s, sess_names[i])) {
			*out = (enum na_sess_state)i;
			return 0;
		}
	return -1;
}

bool na_pod_final(enum na_pod_state s)
{
	return s == NA_POD_TERMINATED || s == NA_POD_FAILED;
}

bool na_sess_final(enum na_sess_state s)
{
	return s == NA_SESS_CLOSED || s == NA_SESS_TIMEOUT;
}

bool na_sess_may(enum na_sess_state from, enum na_sess_state to)
{
	if (from == to || na_sess_final(from))
		return false;
	switch (to) {
	case NA_SESS_STARTING:
		return false;
	case NA_SESS_AVAILABLE:
		return from == NA_SESS_STARTING || from == NA_SESS_INUSE;
	case NA_SESS_INUSE:
		return from == NA_SESS_AVAILABLE || from == NA_SESS_STARTING;
	case NA_SESS_CLOSING:
		return true;
	case NA_SESS_CLOSED:
		return true;
	case NA_SESS_TIMEOUT:
		return from == NA_SESS_STARTING;
	}
	return false;
}

int na_quote_len(const char *s, int max)
{
	int n = (int)strnlen(s, (size_t)max);

	/* cut inside a character: back to its first byte */
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}

int na_pod_ports_from_spec(struct na_pod *p, char *err, size_t errlen)
{
	json_t *cs = json_object_get(p->spec, "containers"), *c;
	size_t ci;

	p->n_ports = 0;
	if (!json_is_array(cs) || !json_array_size(cs) || json_array_size(cs) > NA_CTRS_MAX) {
		snprintf(err, errlen, "pod.containers: 1 to %d containers are required",
			 NA_CTRS_MAX);
		return -1;
	}
	json_array_foreach(cs, ci, c)
	{
		json_t *ports = json_object_get(c, "ports"), *v;
		size_t i;

		if (!json_is_object(c)) {
			snprintf(err, errlen, "pod.containers[%zu]: an object", ci);
			return -1;
		}
		if (ports && !json_is_array(ports)) {
			snprintf(err, errlen, "pod.containers[%zu].ports: a list", ci);
			return -1;
		}
		json_array_foreach(ports, i, v)
		{
			json_int_t n = json_integer_value(json_object_get(v, "containerPort"));
			const char *pr = json_string_value(json_object_get(v, "protocol"));
			uint8_t proto = pr && !strcmp(pr, "UDP") ? IPPROTO_UDP : IPPROTO_TCP;

			if (n < 1 || n > 65535) {
				snprintf(err, errlen,
					 "pod.containers[%zu].ports[%zu].containerPort: 1..65535",
					 ci, i);
				return -1;
			}
			if (pr && strcmp(pr, "TCP") && strcmp(pr, "UDP")) {
				snprintf(err, errlen,
					 "pod.containers[%zu].ports[%zu].protocol: '%.*s' is not "
					 "TCP or UDP",
					 ci, i, na_quote_len(pr, 20), pr);
				return -1;
			}
			/* one netns: two containers cannot both listen on it */
			for (int j = 0; j < p->n_ports; j++)
				if (p->ports[j].port == n && p->ports[j].proto == proto) {
					snprintf(
					    err, errlen,
					    "pod.containers[%zu].ports[%zu].containerPort: %d/%s "
					    "is already a port of the pod",
					    ci, i, (int)n, pr ? pr : "TCP");
					return -1;
				}
			if (p->n_ports == NA_PORTS_MAX) {
				snprintf(err, errlen,
					 "pod.containers[%zu].ports: at most %d ports in a pod", ci,
					 NA_PORTS_MAX);
				return -1;
			}
			p->ports[p->n_ports].port = (uint16_t)n;
			p->ports[p->n_ports].proto = proto;
			p->n_ports++;
		}
	}
	if (!p->n_ports) {
		snprintf(err, errlen, "pod.containers[0].ports: 1 to %d ports are required",
			 NA_PORTS_MAX);
		return -1;
	}
	return 0;
}

static int strings(json_t *a, bool required, size_t ci, const char *field, char *err, size_t errlen)
{
	json_t *v;
	size_t i;

	if (!a && !required)
		return 0;
	if (!json_is_array(a) || (required && !json_array_size(a))) {
		snprintf(err, errlen, "pod.containers[%zu].%s: %s", ci, field,
			 required ? "a non-empty list of strings is required"
				  : "a list of strings");
		return -1;
	}
	json_array_foreach(a, i, v) if (!json_is_string(v))
	{
		snprintf(err, errlen, "pod.containers[%zu].%s[%zu]: a string", ci, field, i);
		return -1;
	}
	return 0;
}

void na_ctr_name(json_t *c, int i, char *out, size_t len)
{
	const char *n = json_string_value(json_object_get(c, "name"));

	if (n && *n)
		snprintf(out, len, "%s", n);
	else
		snprintf(out, len, "c%d", i);
}

static int check_container(json_t *cs, size_t ci, char *err, size_t errlen)
{
	json_t *c = json_array_get(cs, ci), *name = json_object_get(c, "name");
	json_t *lim = json_object_get(json_object_get(c, "resources"), "limits"), *v;
	const char *n = json_string_value(name);
	char mine[64], other[64];
	int64_t q;
	size_t i;

	/* it names the container's log file in the pod's directory */
	if (name && (!n || !*n || strlen(n) > 63 ||
		     strspn(n, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(n) ||
		     n[0] == '-' || n[strlen(n) - 1] == '-')) {
		snprintf(err, errlen, "pod.containers[%zu].name '%.*s': a name (a DNS-1123 label)",
			 ci, n ? na_quote_len(n, 64) : 1, n ? n : "?");
		return -1;
	}
	na_ctr_name(c, (int)ci, mine, sizeof(mine));
	for (i = 0; i < ci; i++) {
		na_ctr_name(json_array_get(cs, i), (int)i, other, sizeof(other));
		if (!strcmp(mine, other)) {
			snprintf(
			    err, errlen,
			    "pod.containers[%zu].name '%s': already the name of containers[%zu]",
			    ci, mine, i);
			return -1;
		}
	}
	if (strings(json_object_get(c, "command"), true, ci, "command", err, errlen) ||
	    strings(json_object_get(c, "args"), false, ci, "args", err, errlen))
		return -1;
	json_array_foreach(json_object_get(c, "env"), i, v)
	{
		const char *k = json_string_value(json_object_get(v, "name"));
		json_t *val = json_object_get(v, "value");

		if (!k || !*k || strchr(k, '=') || (val && !json_is_string(val))) {
			snprintf(err, errlen,
				 "pod.containers[%zu].env[%zu]: a name (without '=') and a string "
				 "value",
				 ci, i);
			return -1;
		}
	}
	if ((v = json_object_get(lim, "cpu")) && na_cpu_milli(json_string_value(v), &q)) {
		snprintf(err, errlen,
			 "pod.containers[%zu].resources.limits.cpu: not a CPU quantity", ci);
		return -1;
	}
	if ((v = json_object_get(lim, "memory")) && na_mem_bytes(json_string_value(v), &q)) {
		snprintf(err, errlen,
			 "pod.containers[%zu].resources.limits.memory: not a memory quantity", ci);
		return -1;
	}
	return 0;
}

int na_pod_check_spec(json_t *pod, char *err, size_t errlen)
{
	json_t *cs = json_object_get(pod, "containers");
	struct na_pod p;

	memset(&p, 0, sizeof(p));
	p.spec = pod;
	if (na_pod_ports_from_spec(&p, err, errlen))
		return -1;
	for (size_t ci = 0; ci < json_array_size(cs); ci++)
		if (check_container(cs, ci, err, errlen))
			return -1;
	return 0;
}

char *na_ctrs_str(const struct na_pod *p)
{
	char *s = malloc(NA_CTRS_MAX * 44 + 1);
	size_t off = 0;

	if (!s)
		return NULL;
	s[0] = 0;
	for (int i = 0; i < p->n_ctrs; i++)
		off +=
		    (size_t)snprintf(s + off, NA_CTRS_MAX * 44 + 1 - off, "%s%d:%llu", i ? " " : "",
				     (int)p->ctrs[i].pid, (unsigned long long)p->ctrs[i].start);
	return s;
}

int na_ctrs_parse(struct na_pod *p, const char *s)
{
	p->n_ctrs = 0;
	while (s && *s) {
		char *end;
		long pid = strtol(s, &end, 10);
		unsigned long long st;

		if (end == s || *end != ':' || pid < 0 || p->n_ctrs == NA_CTRS_MAX)
			return -1;
		s = end + 1;
		st = strtoull(s, &end, 10);
		if (end == s || (*end && *end != ' '))
			return -1;
		p->ctrs[p->n_ctrs].pid = (pid_t)pid;
		p->ctrs[p->n_ctrs].start = st;
		p->n_ctrs++;
		s = *end ? end + 1 : end;
	}
	return 0;
}

static const char *proto_name(uint8_t p)
{
	return p == IPPROTO_UDP ? "UDP" : "TCP";
}

json_t *na_pod_json(const struct na_pod *p)
{
	char ip[INET_ADDRSTRLEN] = "";
	json_t *ports = json_array(), *o;

	for (int i = 0; i < p->n_ports; i++)
		json_array_append_new(ports,
				      json_pack("{s:i,s:s}", "containerPort", p->ports[i].port,
						"protocol", proto_name(p->ports[i].proto)));
	if (p->ip_be)
		inet_ntop(AF_INET, &p->ip_be, ip, sizeof(ip));
	o = json_pack("{s:s,s:s,s:s,s:s,s:o,s:s,s:s}", "podIdentifier", p->id, "application",
		      p->app, "state", na_pod_state_name(p->state), "podIP", ip, "ports", ports,
		      "reason", p->reason, "message", p->message);
	return o;
}

json_t *na_eps_json(const struct na_sess *s)
{
	json_t *a = json_array();
	char ip[INET_ADDRSTRLEN];

	for (int i = 0; i < s->n_eps; i++) {
		inet_ntop(AF_INET, &s->eps[i].ip_be, ip, sizeof(ip));
		json_array_append_new(a, json_pack("{s:s,s:s,s:i,s:i}", "protocol",
						   proto_name(s->eps[i].proto), "ipAddress", ip,
						   "port", s->eps[i].port, "podPort",
						   s->eps[i].pod_port));
	}
	return a;
}

int na_eps_from_json(struct na_sess *s, json_t *a)
{
	json_t *v;
	size_t i;

	s->n_eps = 0;
	if (!json_is_array(a) || json_array_size(a) > NA_PORTS_MAX)
		return -1;
	json_array_foreach(a, i, v)
	{
		const char *ip = json_string_value(json_object_get(v, "ipAddress"));
		const char *pr = json_string_value(json_object_get(v, "protocol"));
		json_int_t port = json_integer_value(json_object_get(v, "port"));
		json_int_t pp = json_integer_value(json_object_get(v, "podPort"));
		struct na_endpoint *e = &s->eps[i];

		if (!ip || inet_pton(AF_INET, ip, &e->ip_be) != 1 || port < 1 || port > 65535 ||
		    pp < 1 || pp > 65535)
			return -1;
		e->proto = pr && !strcmp(pr, "UDP") ? IPPROTO_UDP : IPPROTO_TCP;
		e->port = (uint16_t)port;
		e->pod_port = (uint16_t)pp;
		s->n_eps++;
	}
	return 0;
}

const char *na_owner_check(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > NA_OWNER_MAX)
		return "must be 1 to 64 characters";
	for (size_t i = 0; i < n; i++)
		if (!(s[i] >= '0' && s[i] <= '9') && !(s[i] >= 'a' && s[i] <= 'z') &&
		    !(s[i] >= 'A' && s[i] <= 'Z') && s[i] != '-' && s[i] != '_')
			return "must be letters, digits, '-' or '_'";
	return NULL;
}

int na_owner_parse(json_t *session, char out[NA_OWNER_MAX + 1], char *err, size_t errlen)
{
	json_t *o = json_object_get(session, "owner");
	const char *v = json_string_value(o), *why;

	out[0] = 0;
	if (!o || json_is_null(o))
		return 0;
	if ((why = v ? na_owner_check(v) : "must be a string"))
		return snprintf(err, errlen, "session.owner '%.*s': %s", na_quote_len(v ?: "", 40),
				v ?: "", why),
		       -1;
	snprintf(out, NA_OWNER_MAX + 1, "%s", v);
	return 0;
}

json_t *na_sess_json(const struct na_sess *s)
{
	json_t *o =
	    json_pack("{s:s,s:s,s:s,s:o,s:i,s:s}", "sessionIdentifier", s->id, "podIdentifier",
		      s->pod, "state", na_sess_state_name(s->state), "accessEndPoints",
		      na_eps_json(s), "clientSessions", s->clients, "reason", s->reason);

	/* absent, not "", without one: a core checks an owner it is given */
	if (o && s->owner[0])
		json_object_set_new(o, "owner", json_string(s->owner));
	return o;
}

int na_cpu_milli(const char *q, int64_t *out)
{
	char *end;
	double v;

	if (!q || !*q)
		return -1;
	errno = 0;
	v = strtod(q, &end);
	if (errno || end == q || v < 0 || !isfinite(v))
		return -1;
	if (!*end)
		v *= 1000;
	else if (strcmp(end, "m"))
		return -1;
	/* checked as a double: a value past int64 has no conversion (it came
	 * out negative, and accepted) */
	if (v >= (double)((int64_t)1 << 40) + 1)
		return -1;
	*out = (int64_t)v;
	return 0;
}

int na_mem_bytes(const char *q, int64_t *out)
{
	static const struct {
		const char *s;
		double mul;
	} sfx[] = {{"", 1},	      {"k", 1e3},	    {"M", 1e6},
		   {"G", 1e9},	      {"T", 1e12},	    {"Ki", 1024.0},
		   {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0}};
	char *end;
	double v;

	if (!q || !*q)
		return -1;
	errno = 0;
	v = strtod(q, &end);
	if (errno || end == q || v < 0 || !isfinite(v))
		return -1;
	for (unsigned i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++)
		if (!strcmp(end, sfx[i].s)) {
			v *= sfx[i].mul;
			if (v > 9e18)
				return -1;
			*out = (int64_t)v;
			return 0;
		}
	return -1;
}

uint32_t na_slot_ip(uint32_t net_be, int plen, int slot)
{
	uint64_t size = plen >= 32 ? 1 : (uint64_t)1 << (32 - plen);

	/* .0 network, .1 gateway, last: broadcast */
	if (slot < 0 || (uint64_t)slot + 4 > size)
		return 0;
	return htonl(ntohl(net_be) + 2 + (uint32_t)slot);
}

void na_pod_mac(uint32_t ip_be, uint8_t mac[6])
{
	mac[0] = 0x02;
	mac[1] = 0x4e; /* 'N' */
	memcpy(mac + 2, &ip_be, 4);
}

/* ---- form 2 (proto/fornax.md "Endpoints") ---- */

static int ipv4_field(json_t *o, const char *k, uint32_t *out, char *err, size_t errlen)
{
	json_t *v = json_object_get(o, k);
	const char *s = json_string_value(v);

	if (!s)
		return snprintf(err, errlen, "%s: required, an IPv4 address (a string)", k), -1;
	if (inet_pton(AF_INET, s, out) != 1 || !*out)
		return snprintf(err, errlen, "%s '%.*s': not an IPv4 address", k,
				na_quote_len(s, 40), s),
		       -1;
	return 0;
}

static int id_field(json_t *o, const char *k, char *out, size_t len, char *err, size_t errlen)
{
	const char *s = json_string_value(json_object_get(o, k));

	if (!s || !*s || !strchr(s, '/') || strlen(s) >= len)
		return snprintf(err, errlen, "%s '%.*s': required, NS/NAME", k,
				s ? na_quote_len(s, 60) : 0, s ? s : ""),
		       -1;
	snprintf(out, len, "%s", s);
	return 0;
}

int na_ing_open_parse(json_t *m, struct na_ing_req *r, char *err, size_t errlen)
{
	json_t *vni = json_object_get(m, "vni"), *ports = json_object_get(m, "ports"), *v;
	size_t i;

	memset(r, 0, sizeof(*r));
	if (id_field(m, "sessionIdentifier", r->s.id, sizeof(r->s.id), err, errlen) ||
	    id_field(m, "podIdentifier", r->s.pod, sizeof(r->s.pod), err, errlen) ||
	    ipv4_field(m, "podIP", &r->s.pod_ip_be, err, errlen) ||
	    ipv4_field(m, "host", &r->s.peer_be, err, errlen))
		return -1;
	if (!json_is_integer(vni) || json_integer_value(vni) < 1 ||
	    json_integer_value(vni) > 0xffffff)
		return snprintf(err, errlen, "vni: required, an integer 1..16777215"), -1;
	r->vni = (uint32_t)json_integer_value(vni);
	if (!json_is_array(ports) || !json_array_size(ports) ||
	    json_array_size(ports) > NA_PORTS_MAX)
		return snprintf(err, errlen, "ports: required, an array of 1..%d", NA_PORTS_MAX),
		       -1;
	json_array_foreach(ports, i, v)
	{
		json_t *cp = json_object_get(v, "containerPort");
		const char *pr = json_string_value(json_object_get(v, "protocol"));

		if (!json_is_integer(cp) || json_integer_value(cp) < 1 ||
		    json_integer_value(cp) > 65535)
			return snprintf(err, errlen, "ports[%zu].containerPort: required, 1..65535",
					i),
			       -1;
		if (pr && strcmp(pr, "TCP") && strcmp(pr, "UDP"))
			return snprintf(err, errlen, "ports[%zu].protocol '%.*s': TCP or UDP", i,
					na_quote_len(pr, 20), pr),
			       -1;
		r->ports[i].port = (uint16_t)json_integer_value(cp);
		r->ports[i].proto = pr && !strcmp(pr, "UDP") ? IPPROTO_UDP : IPPROTO_TCP;
		r->n_ports++;
	}
	return 0;
}

int na_ing_pod_side_parse(json_t *ing, const struct na_pod *p, struct na_sess *s, char *err,
			  size_t errlen)
{
	json_t *eps = json_object_get(ing, "accessEndPoints");

	if (!json_is_object(ing))
		return snprintf(err, errlen, "ingress: must be an object"), -1;
	if (ipv4_field(ing, "host", &s->peer_be, err, errlen))
		return snprintf(err + strlen(err), errlen - strlen(err), " (ingress.host)"), -1;
	if (na_eps_from_json(s, eps))
		return snprintf(err, errlen,
				"ingress.accessEndPoints: an array of up to %d "
				"{protocol, ipAddress, port, podPort}",
				NA_PORTS_MAX),
		       -1;
	if (s->n_eps != p->n_ports)
		return snprintf(err, errlen,
				"ingress.accessEndPoints: %d endpoints for a pod with %d ports",
				s->n_eps, p->n_ports),
		       -1;
	for (int i = 0; i < s->n_eps; i++) {
		bool found = false;

		for (int j = 0; j < p->n_ports && !found; j++)
			found = p->ports[j].port == s->eps[i].pod_port &&
				p->ports[j].proto == s->eps[i].proto;
		if (!found)
			return snprintf(err, errlen,
					"ingress.accessEndPoints[%d].podPort %u: not a port of the "
					"pod",
					i, s->eps[i].pod_port),
			       -1;
	}
	return 0;
}

json_t *na_ing_json(const struct na_sess *s)
{
	char pod[INET_ADDRSTRLEN], host[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &s->pod_ip_be, pod, sizeof(pod));
	inet_ntop(AF_INET, &s->peer_be, host, sizeof(host));
	return json_pack("{s:s,s:s,s:s,s:s,s:s,s:o,s:s}", "sessionIdentifier", s->id,
			 "podIdentifier", s->pod, "state",
			 na_sess_final(s->state) ? "Closed" : "Open", "podIP", pod, "host", host,
			 "accessEndPoints", na_eps_json(s), "reason", s->reason);
}
