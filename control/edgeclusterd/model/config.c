// SPDX-License-Identifier: BSD-2-Clause
/*
 * One parser for edgeclusterd's file, in the style of gatewayd's: keys are
 * case-insensitive, every error names the line and what is wrong with it,
 * and the whole file is checked before anything uses it. Checks that need
 * several keys (TLS on a non-loopback Listen, a token at all) name the line
 * of the key that makes them necessary, or the section's line. The lines
 * are read by ini.c (shared with gatewayd); the keys and their rules are
 * here.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "config.h"
#include "ctl_conf.h"
#include "ini.h"
#include "resource.h"

struct pstate {
	struct ini in;
	struct ec_conf *c;
	int sec_line[5]; /* where each section started, for "needs a ..." errors */
	int key_line[48];
	int label_lines[EC_MAX_LABELS]; /* where each label was set */
};

const char *ec_driver_name(enum ec_driver d)
{
	return d == EC_DRIVER_KUBECTL ? "kubectl" : "local";
}

const char *ec_distro_name(enum ec_distro d)
{
	static const char *const n[] = {"none", "k8s", "k3s", "arktos"};

	return n[d];
}

static int add_label(struct pstate *s, struct ec_conf *c, char *kv, int *lines)
{
	char *eq = strchr(kv, '='), *k, *v;
	const char *why;

	if (!eq)
		return ini_err(&s->in, "label '%s': expected KEY=VALUE", kv);
	*eq = 0;
	k = ini_trim(kv);
	v = ini_trim(eq + 1);
	if ((why = ec_check_label_key(k)))
		return ini_err(&s->in, "label key '%s': %s", k, why);
	if ((why = ec_check_label_value(v)))
		return ini_err(&s->in, "label '%s' value '%s': %s", k, v, why);
	for (int i = 0; i < c->n_labels; i++)
		if (!strcmp(c->labels[i].key, k))
			return ini_err(&s->in, "label '%s' already set on line %d", k, lines[i]);
	if (c->n_labels >= EC_MAX_LABELS)
		return ini_err(&s->in, "too many labels (at most %d)", EC_MAX_LABELS);
	lines[c->n_labels] = s->in.line;
	strcpy(c->labels[c->n_labels].key, k);
	strcpy(c->labels[c->n_labels++].value, v);
	return 0;
}

enum section { SEC_NONE = -1, SEC_CLUSTER, SEC_API, SEC_STORE, SEC_INTERVALS, SEC_HUB };
static const char *const sections[] = {"[Cluster]", "[API]", "[Store]", "[Intervals]", "[Hub]"};
#define N_SECTIONS 5

/* Keys of every section in one table; key_line[] is indexed by position. */
static const struct ini_key keys[] = {
    {SEC_CLUSTER, "Name", 0},
    {SEC_CLUSTER, "Labels", 1},
    {SEC_CLUSTER, "Label", 1},
    {SEC_CLUSTER, "Driver", 0},
    {SEC_CLUSTER, "Distro", 0},
    {SEC_CLUSTER, "Kubectl", 0},
    {SEC_CLUSTER, "Kubeconfig", 0},
    {SEC_CLUSTER, "Parent", 0},
    {SEC_CLUSTER, "JoinToken", 0},
    {SEC_API, "Listen", 0},
    {SEC_API, "TLSCert", 0},
    {SEC_API, "TLSKey", 0},
    {SEC_API, "CA", 0},
    {SEC_API, "Token", 1},
    {SEC_API, "TokenFile", 1},
    {SEC_API, "MaxBody", 0},
    {SEC_API, "MaxListBody", 0},
    {SEC_STORE, "Database", 0},
    {SEC_INTERVALS, "Heartbeat", 0},
    {SEC_INTERVALS, "HeartbeatTimeout", 0},
    {SEC_INTERVALS, "StateCheck", 0},
    {SEC_INTERVALS, "CommandTimeout", 0},
    /* the tree */
    {SEC_HUB, "JoinToken", 1},
    {SEC_HUB, "CredentialLifetime", 0},
    {SEC_INTERVALS, "ReconnectMax", 0},
    {SEC_INTERVALS, "ConnectTimeout", 0},
    {SEC_CLUSTER, "InstallScript", 0},
    {SEC_CLUSTER, "UninstallScript", 0},
    {SEC_HUB, "SendQueueMax", 0},
    {SEC_STORE, "Backend", 0},
    CTL_CONF_ETCD_TABLE(SEC_STORE),
};
enum {
	K_NAME,
	K_LABELS,
	K_LABEL,
	K_DRIVER,
	K_DISTRO,
	K_KUBECTL,
	K_KUBECONFIG,
	K_PARENT,
	K_JOIN,
	K_LISTEN,
	K_CERT,
	K_KEY,
	K_CA,
	K_TOKEN,
	K_TOKENFILE,
	K_MAXBODY,
	K_MAXLISTBODY,
	K_DATABASE,
	K_HB,
	K_HBTO,
	K_STATECHECK,
	K_CMDTO,
	K_HUB_JOIN,
	K_CRED_LIFE,
	K_RECONNECT_MAX,
	K_CONNECT_TO,
	K_INSTALL,
	K_UNINSTALL,
	K_SENDQ,
	K_BACKEND,
	K_ETCD, /* CTL_CONF_ETCD_TABLE from here, indexed by enum ctl_conf_etcd_key */
	K_ETCD_LAST = K_ETCD + CTL_CONF_ETCD_N_KEYS - 1,
	K_COUNT
};
_Static_assert(sizeof(keys) / sizeof(keys[0]) == K_COUNT, "a K_ for every key");
_Static_assert(K_COUNT <= sizeof(((struct pstate *)0)->key_line) / sizeof(int), "key_line");

/* Parent: one URL, or several separated by commas (the roots of an
 * active/standby pair): each must parse; the first goes to parent_url */
static int parents(struct pstate *s, char *v, struct ec_conf *c)
{
	char copy[sizeof(c->parent)], *save = NULL, *p, why[256];
	struct ctl_url u;
	int n = 0;

	if (ini_str(&s->in, "Parent", v, c->parent, sizeof(c->parent)))
		return -1;
	strcpy(copy, v);
	for (p = strtok_r(copy, ", ", &save); p; p = strtok_r(NULL, ", ", &save), n++)
		if (ctl_url_parse(p, CTL_SCHEMES_WS, n ? &u : &c->parent_url, why, sizeof(why)))
			return ini_err(&s->in, "Parent %s", why);
	if (!n)
		return ini_err(&s->in, "Parent '%s': no URL", v);
	return 0;
}

static int key_value(void *arg, int i, char *v)
{
	struct pstate *s = arg;
	struct ec_conf *c = s->c;
	const struct ctl_conf_tokens api_tokens = {c->tokens, &c->n_tokens, EC_MAX_TOKENS};
	const struct ctl_conf_tokens join_tokens = {c->join_tokens, &c->n_join_tokens,
						    EC_MAX_TOKENS};

	if (i == K_ETCD + CTL_CONF_ETCD_PREFIX && (v[0] != '/' || v[strlen(v) - 1] != '/'))
		return ini_err(&s->in, "Prefix '%s': expected /PATH/ (starts and ends with /)", v);
	if (i >= K_ETCD && i <= K_ETCD_LAST)
		return ctl_conf_etcd_key(&s->in, &c->etcd_conf, i - K_ETCD, v);
	switch (i) {
	case K_NAME: {
		const char *e = ec_check_dns_label(v);

		if (e)
			return ini_err(&s->in, "Name '%s': %s", v, e);
		strcpy(c->name, v);
		return 0;
	}
	case K_LABELS: {
		char *save = NULL, *tok;

		for (tok = strtok_r(v, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
			if (add_label(s, c, tok, s->label_lines))
				return -1;
		return 0;
	}
	case K_LABEL:
		return add_label(s, c, v, s->label_lines);
	case K_DRIVER:
		if (!strcasecmp(v, "local"))
			c->driver = EC_DRIVER_LOCAL;
		else if (!strcasecmp(v, "kubectl"))
			c->driver = EC_DRIVER_KUBECTL;
		else
			return ini_err(&s->in, "Driver '%s': local or kubectl", v);
		return 0;
	case K_DISTRO:
		for (int d = EC_DISTRO_NONE; d <= EC_DISTRO_ARKTOS; d++)
			if (!strcasecmp(v, ec_distro_name(d))) {
				c->distro = d;
				return 0;
			}
		return ini_err(&s->in, "Distro '%s': k8s, k3s, arktos or none", v);
	case K_KUBECTL:
		return ini_str(&s->in, "Kubectl", v, c->kubectl, sizeof(c->kubectl));
	case K_KUBECONFIG:
		return ini_readable(&s->in, "Kubeconfig", v, c->kubeconfig, sizeof(c->kubeconfig));
	case K_PARENT:
		return parents(s, v, c);
	case K_JOIN:
		if (strlen(v) < EC_TOKEN_MIN || strlen(v) > EC_TOKEN_MAX || strpbrk(v, " \t"))
			return ini_err(&s->in, "JoinToken must be %d-%d characters without spaces",
				       EC_TOKEN_MIN, EC_TOKEN_MAX);
		strcpy(c->join_token, v);
		return 0;
	case K_LISTEN:
		return ini_addr(&s->in, "Listen", v, &c->listen);
	case K_CERT:
		return ini_readable(&s->in, "TLSCert", v, c->tls_cert, sizeof(c->tls_cert));
	case K_KEY:
		return ini_readable(&s->in, "TLSKey", v, c->tls_key, sizeof(c->tls_key));
	case K_CA:
		return ini_readable(&s->in, "CA", v, c->ca, sizeof(c->ca));
	case K_TOKEN:
		return ctl_conf_token(&s->in, &api_tokens, v, "Token");
	case K_TOKENFILE:
		return ctl_conf_token_file(&s->in, &api_tokens, v);
	case K_MAXBODY:
		return ini_size(&s->in, "MaxBody", v, &c->max_body);
	case K_MAXLISTBODY: /* a MissionList POST; MaxBody if that is larger */
		return ini_size(&s->in, "MaxListBody", v, &c->max_list_body);
	case K_DATABASE:
		return ini_str(&s->in, "Database", v, c->database, sizeof(c->database));
	case K_HB:
		return ini_seconds(&s->in, "Heartbeat", v, 1, 3600, &c->heartbeat_s);
	case K_HBTO:
		return ini_seconds(&s->in, "HeartbeatTimeout", v, 2, 86400,
				   &c->heartbeat_timeout_s);
	case K_STATECHECK:
		return ini_seconds(&s->in, "StateCheck", v, 1, 86400, &c->statecheck_s);
	case K_CMDTO:
		return ini_seconds(&s->in, "CommandTimeout", v, 1, 86400, &c->command_timeout_s);
	case K_HUB_JOIN:
		return ctl_conf_token(&s->in, &join_tokens, v, "JoinToken");
	case K_CRED_LIFE: /* up to a year; short ones are for tests */
		return ini_seconds(&s->in, "CredentialLifetime", v, 2, 366 * 86400,
				   &c->credential_s);
	case K_RECONNECT_MAX:
		return ini_seconds(&s->in, "ReconnectMax", v, 1, 3600, &c->reconnect_max_s);
	case K_CONNECT_TO:
		return ini_seconds(&s->in, "ConnectTimeout", v, 1, 600, &c->connect_timeout_s);
	case K_INSTALL:
		return ini_readable(&s->in, "InstallScript", v, c->install_script,
				    sizeof(c->install_script));
	case K_UNINSTALL:
		return ini_readable(&s->in, "UninstallScript", v, c->uninstall_script,
				    sizeof(c->uninstall_script));
	case K_SENDQ:
		return ini_size(&s->in, "SendQueueMax", v, &c->hub_queue_max);
	case K_BACKEND:
		return ctl_conf_etcd_backend(&s->in, v, &c->etcd);
	}
	return ini_err(&s->in, "key %d is not handled", i); /* every K_ has a case */
}

/* [Store]: etcd's keys only with it, its TLS whole and used; a root only */
static int store_check(struct pstate *s, struct ec_conf *c)
{
	int *kl = s->key_line;

	if (!c->etcd)
		return ctl_conf_etcd_unused(&s->in, kl + K_ETCD);
	if (!kl[K_ETCD + CTL_CONF_ETCD_ENDPOINTS])
		return ini_err_at(&s->in, kl[K_BACKEND], "Backend = etcd needs Endpoints");
	if (kl[K_PARENT])
		return ini_err_at(&s->in, kl[K_BACKEND],
				  "Backend = etcd is for the root of the tree, and Parent is set "
				  "(line %d)",
				  kl[K_PARENT]);
	if (ctl_conf_etcd_pair(&s->in, kl + K_ETCD) ||
	    ctl_conf_etcd_plain(&s->in, &c->etcd_conf, kl + K_ETCD) ||
	    ctl_conf_etcd_ttl(&s->in, &c->etcd_conf,
			      kl[K_ETCD + CTL_CONF_ETCD_TTL] ? kl[K_ETCD + CTL_CONF_ETCD_TTL]
							     : kl[K_BACKEND]))
		return -1;
	if (!c->etcd_conf.prefix[0])
		snprintf(c->etcd_conf.prefix, sizeof(c->etcd_conf.prefix), "/xgate/edge/%s/",
			 c->name);
	return 0;
}

/* Rules across keys, checked once the whole file is read. */
static int finish(struct pstate *s, struct ec_conf *c)
{
	int *kl = s->key_line;
	const struct ctl_conf_api api = {&c->listen,
					 kl[K_LISTEN],
					 kl[K_CERT],
					 kl[K_KEY],
					 s->sec_line[SEC_API] ? s->sec_line[SEC_API]
							      : s->sec_line[SEC_CLUSTER],
					 c->n_tokens};

	if (!s->sec_line[SEC_CLUSTER])
		return ini_err_at(&s->in, 1, "no [Cluster] section (it names this cluster)");
	if (!c->name[0])
		return ini_err_at(&s->in, s->sec_line[SEC_CLUSTER], "[Cluster] needs a Name");
	if (!kl[K_DRIVER] && c->distro != EC_DISTRO_NONE)
		c->driver = EC_DRIVER_KUBECTL; /* a Kubernetes flavour is driven by kubectl */
	if (c->driver == EC_DRIVER_KUBECTL && c->distro == EC_DISTRO_NONE)
		return ini_err_at(&s->in, kl[K_DRIVER],
				  "Driver kubectl needs Distro = k8s, k3s or arktos");
	if (c->driver == EC_DRIVER_LOCAL && (kl[K_KUBECTL] || kl[K_KUBECONFIG]))
		return ini_err_at(&s->in, kl[K_KUBECTL] ? kl[K_KUBECTL] : kl[K_KUBECONFIG],
				  "%s is only used with Driver = kubectl",
				  kl[K_KUBECTL] ? "Kubectl" : "Kubeconfig");
	if (kl[K_JOIN] && !kl[K_PARENT])
		return ini_err_at(&s->in, kl[K_JOIN],
				  "JoinToken without Parent: there is nothing to join");
	if (ctl_conf_api_check(&s->in, &api) || store_check(s, c))
		return -1;
	if (c->heartbeat_timeout_s <= c->heartbeat_s)
		return ini_err_at(&s->in, kl[K_HBTO] ? kl[K_HBTO] : kl[K_HB],
				  "HeartbeatTimeout (%us) must exceed Heartbeat (%us)",
				  c->heartbeat_timeout_s, c->heartbeat_s);
	if (!c->kubectl[0])
		strcpy(c->kubectl, "kubectl");
	if (!c->database[0])
		snprintf(c->database, sizeof(c->database), "/var/lib/xgate/edgeclusterd-%s.db",
			 c->name);
	return 0;
}

int ec_conf_parse(const char *file, const char *text, struct ec_conf *c, char *err, size_t errlen)
{
	struct pstate s = {.c = c};
	const struct ini_table table = {.sections = sections,
					.n_sections = N_SECTIONS,
					.sections_hint =
					    "[Cluster], [API], [Hub], [Store] or [Intervals]",
					.keys = keys,
					.n_keys = K_COUNT,
					.sec_line = s.sec_line,
					.key_line = s.key_line};
	int rc;

	memset(c, 0, sizeof(*c));
	c->listen.sin_family = AF_INET;
	c->listen.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	c->listen.sin_port = htons(7443);
	c->max_body = 1 << 20;
	c->max_list_body = 8 << 20;
	c->heartbeat_s = 10;
	c->heartbeat_timeout_s = 0;
	c->statecheck_s = 30;
	c->command_timeout_s = 60;
	c->credential_s = 30 * 86400; /* rotated at half-life while connected */
	c->reconnect_max_s = 30;
	c->connect_timeout_s = 10;
	c->hub_queue_max = 64 << 20;
	ctl_conf_etcd_init(&c->etcd_conf);

	ini_init(&s.in, file, text, "[Cluster]", err, errlen);
	rc = ini_table_read(&s.in, &table, key_value, &s);
	if (!rc && !c->heartbeat_timeout_s)
		c->heartbeat_timeout_s = 3 * c->heartbeat_s;
	return rc ? rc : finish(&s, c);
}

/* ini_load passes the config as void *: this gives it its type back. */
static int parse_text(const char *file, const char *text, void *c, char *err, size_t errlen)
{
	return ec_conf_parse(file, text, c, err, errlen);
}

int ec_conf_load(const char *path, struct ec_conf *c, char *err, size_t errlen)
{
	return ini_load(path, parse_text, c, err, errlen);
}
