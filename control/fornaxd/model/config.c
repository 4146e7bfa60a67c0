// SPDX-License-Identifier: BSD-2-Clause
/*
 * fornaxd's file, read by the same line reader as the other daemons'
 * (ini.c): keys are case-insensitive, every error names the line and
 * quotes the value, and the whole file is checked before anything uses it.
 * Rules across keys (TLS off loopback, a token at all) name the line of the
 * key that makes them necessary.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <sodium.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "config.h"
#include "ctl_conf.h"
#include "ini.h"

enum section { SEC_NONE = -1, SEC_API, SEC_STORE, SEC_NODES, N_SECTIONS };
static const char *const sections[] = {"[API]", "[Store]", "[Nodes]"};

static const struct ini_key keys[] = {
    {SEC_API, "Listen", 0},
    {SEC_API, "TLSCert", 0},
    {SEC_API, "TLSKey", 0},
    {SEC_API, "Token", 1},
    {SEC_API, "TokenFile", 1},
    {SEC_API, "MaxBody", 0},
    {SEC_STORE, "Database", 0},
    {SEC_NODES, "JoinToken", 1},
    {SEC_NODES, "PodCIDR", 0},
    {SEC_NODES, "NodePrefix", 0},
    {SEC_NODES, "VNI", 0},
    {SEC_NODES, "PortRange", 0},
    {SEC_NODES, "StateSeconds", 0},
    {SEC_NODES, "SendQueueMax", 0},
    {SEC_NODES, "EndpointForm", 0},
    {SEC_STORE, "Backend", 0},
    {SEC_STORE, "Election", 0},
    CTL_CONF_ETCD_TABLE(SEC_STORE),
    {SEC_API, "MaxSessionsPerClient", 0},
};
enum {
	K_LISTEN,
	K_CERT,
	K_KEY,
	K_TOKEN,
	K_TOKENFILE,
	K_MAXBODY,
	K_DATABASE,
	K_JOIN,
	K_PODCIDR,
	K_NODEPREFIX,
	K_VNI,
	K_PORTS,
	K_STATE,
	K_SENDQ,
	K_FORM,
	K_BACKEND,
	K_ELECTION,
	K_ETCD, /* CTL_CONF_ETCD_TABLE from here, indexed by enum ctl_conf_etcd_key */
	K_ETCD_LAST = K_ETCD + CTL_CONF_ETCD_N_KEYS - 1,
	K_MAXSESS,
	K_COUNT
};
_Static_assert(sizeof(keys) / sizeof(keys[0]) == K_COUNT, "a K_ for every key");

struct pstate {
	struct ini in;
	struct fx_conf *c;
	int sec_line[N_SECTIONS];
	int key_line[K_COUNT];
};

static int cidr(struct pstate *s, const char *v, struct fx_conf *c)
{
	char ip[32], *slash;
	struct in_addr a;
	long bits;

	if (strlen(v) >= sizeof(ip) || !(slash = strchr(strcpy(ip, v), '/')))
		return ini_err(&s->in, "PodCIDR '%s': expected A.B.C.D/N", v);
	*slash = 0;
	bits = strtol(slash + 1, &slash, 10);
	if (*slash || inet_pton(AF_INET, ip, &a) != 1 || bits < 8 || bits > 28)
		return ini_err(&s->in, "PodCIDR '%s': expected A.B.C.D/N with N 8..28", v);
	c->pod_net = ntohl(a.s_addr);
	c->pod_net_bits = (int)bits;
	if (c->pod_net & ~(0xffffffffu << (32 - bits)))
		return ini_err(&s->in, "PodCIDR '%s': host bits are set", v);
	return 0;
}

static int number(struct pstate *s, const char *key, const char *v, unsigned long lo,
		  unsigned long hi, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(v, &end, 10);
	if (errno || *end || *v == '-' || *out < lo || *out > hi)
		return ini_err(&s->in, "%s '%s': expected a number %lu..%lu", key, v, lo, hi);
	return 0;
}

static int key_value(void *arg, int i, char *v)
{
	struct pstate *s = arg;
	struct fx_conf *c = s->c;
	const struct ctl_conf_tokens api_tokens = {c->tokens, &c->n_tokens, FX_MAX_TOKENS};
	const struct ctl_conf_tokens join_tokens = {c->join_tokens, &c->n_join_tokens,
						    FX_MAX_TOKENS};
	unsigned long n, m;
	char *dash;

	if (i >= K_ETCD && i <= K_ETCD_LAST)
		return ctl_conf_etcd_key(&s->in, &c->etcd_conf, i - K_ETCD, v);
	switch (i) {
	case K_LISTEN:
		return ini_addr(&s->in, "Listen", v, &c->listen);
	case K_CERT:
		return ini_readable(&s->in, "TLSCert", v, c->tls_cert, sizeof(c->tls_cert));
	case K_KEY:
		return ini_readable(&s->in, "TLSKey", v, c->tls_key, sizeof(c->tls_key));
	case K_TOKEN:
		return ctl_conf_token(&s->in, &api_tokens, v, "Token");
	case K_TOKENFILE:
		return ctl_conf_token_file(&s->in, &api_tokens, v);
	case K_MAXBODY:
		return ini_size(&s->in, "MaxBody", v, &c->max_body);
	case K_DATABASE:
		return ini_str(&s->in, "Database", v, c->database, sizeof(c->database));
	case K_JOIN:
		return ctl_conf_token(&s->in, &join_tokens, v, "JoinToken");
	case K_PODCIDR:
		return cidr(s, v, c);
	case K_NODEPREFIX:
		if (number(s, "NodePrefix", v, 16, 30, &n))
			return -1;
		c->node_bits = (int)n;
		return 0;
	case K_VNI:
		if (number(s, "VNI", v, 1, 0xffffff, &n))
			return -1;
		c->vni = (uint32_t)n;
		return 0;
	case K_PORTS:
		if (!(dash = strchr(v, '-')))
			return ini_err(&s->in, "PortRange '%s': expected LO-HI", v);
		*dash = 0;
		if (number(s, "PortRange", ini_trim(v), 1024, 65535, &n) ||
		    number(s, "PortRange", ini_trim(dash + 1), 1024, 65535, &m))
			return -1;
		if (m < n)
			return ini_err(&s->in, "PortRange %lu-%lu: HI below LO", n, m);
		c->port_lo = (unsigned)n;
		c->port_hi = (unsigned)m;
		return 0;
	case K_STATE:
		return ini_seconds(&s->in, "StateSeconds", v, 1, 3600, &c->state_s);
	case K_SENDQ:
		return ini_size(&s->in, "SendQueueMax", v, &c->queue_max);
	case K_FORM:
		if (number(s, "EndpointForm", v, 1, 2, &n))
			return -1;
		c->endpoint_form = (int)n;
		return 0;
	case K_BACKEND: {
		bool etcd;

		if (ctl_conf_etcd_backend(&s->in, v, &etcd))
			return -1;
		c->store = etcd ? FX_STORE_ETCD : FX_STORE_SQLITE;
		return 0;
	}
	case K_ELECTION:
		if (strcasecmp(v, "on") && strcasecmp(v, "off"))
			return ini_err(&s->in, "Election '%s': expected on or off", v);
		c->election = !strcasecmp(v, "on");
		return 0;
	case K_MAXSESS:
		if (number(s, "MaxSessionsPerClient", v, 0, 1000000, &n))
			return -1;
		c->max_sess_client = (unsigned)n;
		return 0;
	}
	return ini_err(&s->in, "key %d is not handled", i); /* every K_ has a case */
}

/* [Store]: each backend's keys only with it; etcd's TLS whole and used */
static int store_check(struct pstate *s, struct fx_conf *c)
{
	/* the first of them given is the one reported */
	static const int etcd_only[] = {K_ETCD + CTL_CONF_ETCD_ENDPOINTS,
					K_ETCD + CTL_CONF_ETCD_PREFIX,
					K_ETCD + CTL_CONF_ETCD_CA,
					K_ETCD + CTL_CONF_ETCD_CERT,
					K_ETCD + CTL_CONF_ETCD_KEY,
					K_ETCD + CTL_CONF_ETCD_TIMEOUT,
					K_ELECTION,
					K_ETCD + CTL_CONF_ETCD_TTL};
	int *kl = s->key_line;

	if (c->store == FX_STORE_SQLITE) {
		for (size_t i = 0; i < sizeof(etcd_only) / sizeof(etcd_only[0]); i++)
			if (kl[etcd_only[i]])
				return ini_err_at(&s->in, kl[etcd_only[i]],
						  "%s is for Backend = etcd (the store is sqlite)",
						  keys[etcd_only[i]].name);
		return 0;
	}
	if (kl[K_DATABASE])
		return ini_err_at(&s->in, kl[K_DATABASE],
				  "Database is for Backend = sqlite (the store is etcd)");
	if (!kl[K_ETCD + CTL_CONF_ETCD_ENDPOINTS])
		return ini_err_at(&s->in, kl[K_BACKEND], "Backend = etcd needs Endpoints");
	if (ctl_conf_etcd_pair(&s->in, kl + K_ETCD))
		return -1;
	if (c->election &&
	    ctl_conf_etcd_ttl(&s->in, &c->etcd_conf,
			      kl[K_ETCD + CTL_CONF_ETCD_TTL] ? kl[K_ETCD + CTL_CONF_ETCD_TTL]
							     : kl[K_ELECTION]))
		return -1;
	return ctl_conf_etcd_plain(&s->in, &c->etcd_conf, kl + K_ETCD);
}

static int finish(struct pstate *s, struct fx_conf *c)
{
	int *kl = s->key_line;
	const struct ctl_conf_api api = {&c->listen, kl[K_LISTEN],	   kl[K_CERT],
					 kl[K_KEY],  s->sec_line[SEC_API], c->n_tokens};

	if (ctl_conf_api_check(&s->in, &api))
		return -1;
	if (c->node_bits <= c->pod_net_bits)
		return ini_err_at(&s->in, kl[K_NODEPREFIX] ? kl[K_NODEPREFIX] : kl[K_PODCIDR],
				  "NodePrefix /%d must be longer than PodCIDR's /%d", c->node_bits,
				  c->pod_net_bits);
	if (store_check(s, c))
		return -1;
	if (!c->database[0])
		snprintf(c->database, sizeof(c->database), "/var/lib/xgate/fornaxd.db");
	if (!c->etcd_conf.prefix[0])
		snprintf(c->etcd_conf.prefix, sizeof(c->etcd_conf.prefix), "/xgate/fornaxd/");
	return 0;
}

int fx_conf_parse(const char *file, const char *text, struct fx_conf *c, char *err, size_t errlen)
{
	struct pstate s = {.c = c};
	const struct ini_table table = {.sections = sections,
					.n_sections = N_SECTIONS,
					.sections_hint = "[API], [Store] or [Nodes]",
					.keys = keys,
					.n_keys = K_COUNT,
					.sec_line = s.sec_line,
					.key_line = s.key_line};
	int rc;

	memset(c, 0, sizeof(*c));
	c->listen.sin_family = AF_INET;
	c->listen.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	c->listen.sin_port = htons(8470);
	c->max_body = 1 << 20;
	c->pod_net = 0x0af40000; /* 10.244.0.0/16 */
	c->pod_net_bits = 16;
	c->node_bits = 24;
	c->vni = 1;
	c->port_lo = 30000;
	c->port_hi = 32767;
	c->state_s = 60;
	c->queue_max = 4 << 20;
	c->endpoint_form = 1;
	ctl_conf_etcd_init(&c->etcd_conf);
	c->max_sess_client = 1000;

	ini_init(&s.in, file, text, "[API]", err, errlen);
	rc = ini_table_read(&s.in, &table, key_value, &s);
	return rc ? rc : finish(&s, c);
}

static int parse_text(const char *file, const char *text, void *c, char *err, size_t errlen)
{
	return fx_conf_parse(file, text, c, err, errlen);
}

int fx_conf_load(const char *path, struct fx_conf *c, char *err, size_t errlen)
{
	return ini_load(path, parse_text, c, err, errlen);
}
