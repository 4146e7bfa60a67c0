// SPDX-License-Identifier: BSD-2-Clause
/*
 * One parser for nodeagentd's file, in the style of edgeclusterd's: keys are
 * case-insensitive, every error names its line and quotes the value, and
 * the whole file is checked before anything uses it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "ctl_url.h"
#include "ini.h"
#include "na_config.h"
#include "na_model.h"

enum sec { S_NONE, S_NODE, S_CORE, S_STORE, S_PODS };

const char *na_cgroup_mode_name(enum na_cgroup_mode m)
{
	static const char *const n[] = {"auto", "v1", "v2", "none"};

	return n[m];
}

static int copy(struct ini *in, const char *key, const char *v, char *out, size_t len)
{
	if (strlen(v) >= len)
		return ini_err(in, "%s '%.40s...' is longer than %zu characters", key, v, len - 1);
	memcpy(out, v, strlen(v) + 1);
	return 0;
}

static int uint_in(struct ini *in, const char *key, const char *v, unsigned lo, unsigned hi,
		   unsigned *out)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || end == v || *end || *v == '-' || n < lo || n > hi)
		return ini_err(in, "%s '%s': expected a number from %u to %u", key, v, lo, hi);
	*out = (unsigned)n;
	return 0;
}

static int ipv4(struct ini *in, const char *key, const char *v, uint32_t *out)
{
	if (inet_pton(AF_INET, v, out) != 1)
		return ini_err(in, "%s '%s': expected an IPv4 address", key, v);
	return 0;
}

static bool name_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > NA_NAME_MAX || s[0] == '-' || s[n - 1] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return false;
	return true;
}

static bool ifname_ok(const char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
			return false;
	return true;
}

static int node_key(struct ini *in, struct na_config *c, const char *k, const char *v)
{
	unsigned u = 0; /* gcc -O2 cannot see uint_in sets it on success */

	if (!strcasecmp(k, "Name")) {
		if (!name_ok(v))
			return ini_err(in, "Name '%s': expected a DNS label (a-z, 0-9, '-')", v);
		return copy(in, k, v, c->name, sizeof(c->name));
	}
	if (!strcasecmp(k, "Ip"))
		return ipv4(in, k, v, &c->ip_be);
	if (!strcasecmp(k, "PublicIp"))
		return ipv4(in, k, v, &c->public_ip_be);
	if (!strcasecmp(k, "Instance"))
		return copy(in, k, v, c->instance, sizeof(c->instance));
	if (!strcasecmp(k, "Netns")) {
		if (!*v || strchr(v, '/') || !strcmp(v, ".") || !strcmp(v, ".."))
			return ini_err(in, "Netns '%s': a name under /run/netns", v);
		return copy(in, k, v, c->netns, sizeof(c->netns));
	}
	if (!strcasecmp(k, "Cpu")) {
		if (na_cpu_milli(v, &c->cpu_milli) || c->cpu_milli < 1)
			return ini_err(in, "Cpu '%s': expected a CPU quantity (2, 1500m)", v);
		return 0;
	}
	if (!strcasecmp(k, "Memory")) {
		if (na_mem_bytes(v, &c->mem_bytes) || c->mem_bytes < (1 << 20))
			return ini_err(in, "Memory '%s': expected a memory quantity (512Mi, 4Gi)",
				       v);
		return 0;
	}
	if (!strcasecmp(k, "Role")) {
		if (strcasecmp(v, "pod") && strcasecmp(v, "ingress"))
			return ini_err(in, "Role '%s': expected pod or ingress", v);
		c->role = strcasecmp(v, "pod") ? NA_ROLE_INGRESS : NA_ROLE_POD;
		return 0;
	}
	if (!strcasecmp(k, "Pods")) {
		if (uint_in(in, k, v, 1, 4096, &u))
			return -1;
		c->max_pods = u;
		return 0;
	}
	return ini_err(in,
		       "unknown key '%s' in [Node] (Name, Ip, PublicIp, Instance, Netns, "
		       "Role, Cpu, Memory, Pods)",
		       k);
}

static int core_key(struct ini *in, struct na_config *c, const char *k, const char *v)
{
	if (!strcasecmp(k, "URL")) {
		/* one core, or every core of an active/standby set, comma-separated */
		char one[sizeof(c->url)], e[300];
		int n = 0;

		for (const char *p = v; *p; n++) {
			size_t len = strcspn(p, ",");
			struct ctl_url u;

			if (n == NA_MAX_CORES)
				return ini_err(in, "URL '%s': more than %d cores", v, NA_MAX_CORES);
			snprintf(one, sizeof(one), "%.*s", (int)len, p);
			if (ctl_url_parse(one, CTL_SCHEMES_WS, &u, e, sizeof(e)))
				return ini_err(in, "URL: %s", e);
			/* the credential crosses the link: in clear only on this host */
			if (!u.tls && strcmp(u.host, "localhost") && strncmp(u.host, "127.", 4))
				return ini_err(
				    in, "URL '%s': ws:// only to loopback; use wss:// (and CA)",
				    one);
			p += len + (p[len] == ',');
		}
		return copy(in, k, v, c->url, sizeof(c->url));
	}
	if (!strcasecmp(k, "CA")) {
		if (copy(in, k, v, c->ca, sizeof(c->ca)))
			return -1;
		if (access(v, R_OK))
			return ini_err(in, "CA %s: %s", v, strerror(errno));
		return 0;
	}
	if (!strcasecmp(k, "JoinToken")) {
		if (strlen(v) < 16)
			return ini_err(in, "JoinToken: at least 16 characters");
		return copy(in, k, v, c->join_token, sizeof(c->join_token));
	}
	if (!strcasecmp(k, "ReconnectMaxSeconds"))
		return ini_seconds(in, k, v, 1, 3600, &c->reconnect_max_s);
	return ini_err(in, "unknown key '%s' in [Core] (URL, CA, JoinToken, ReconnectMaxSeconds)",
		       k);
}

static int pods_key(struct ini *in, struct na_config *c, const char *k, const char *v)
{
	if (!strcasecmp(k, "RunDir"))
		return copy(in, k, v, c->run_dir, sizeof(c->run_dir));
	if (!strcasecmp(k, "NetnsPrefix")) {
		if (!*v || !ifname_ok(v))
			return ini_err(in, "NetnsPrefix '%s': a-z, 0-9 and '-' only", v);
		return copy(in, k, v, c->netns_prefix, sizeof(c->netns_prefix));
	}
	if (!strcasecmp(k, "VethPrefix")) {
		if (!*v || !ifname_ok(v))
			return ini_err(in, "VethPrefix '%s': a-z, 0-9 and '-' only", v);
		return copy(in, k, v, c->veth_prefix, sizeof(c->veth_prefix));
	}
	if (!strcasecmp(k, "Cgroup")) {
		for (int m = NA_CG_AUTO; m <= NA_CG_NONE; m++)
			if (!strcasecmp(v, na_cgroup_mode_name(m))) {
				c->cgroup = m;
				return 0;
			}
		return ini_err(in, "Cgroup '%s': auto, v1, v2 or none", v);
	}
	if (!strcasecmp(k, "CgroupParent")) {
		if (!*v || *v == '/' || strstr(v, ".."))
			return ini_err(in, "CgroupParent '%s': a relative path without '..'", v);
		return copy(in, k, v, c->cgroup_parent, sizeof(c->cgroup_parent));
	}
	if (!strcasecmp(k, "NetScript"))
		return copy(in, k, v, c->net_script, sizeof(c->net_script));
	if (!strcasecmp(k, "Xgate"))
		return copy(in, k, v, c->xgate, sizeof(c->xgate));
	if (!strcasecmp(k, "StartTimeoutSeconds"))
		return ini_seconds(in, k, v, 1, 600, &c->start_timeout_s);
	if (!strcasecmp(k, "Mtu"))
		return uint_in(in, k, v, 576, 9000, &c->mtu);
	if (!strcasecmp(k, "SessionPingSeconds"))
		return ini_seconds(in, k, v, 0, 3600, &c->ping_s);
	if (!strcasecmp(k, "SessionPingMisses"))
		return uint_in(in, k, v, 1, 100, &c->ping_misses);
	if (!strcasecmp(k, "LogMaxBytes"))
		return uint_in(in, k, v, 1024, 1u << 30, &c->log_max_bytes);
	if (!strcasecmp(k, "LogFiles"))
		return uint_in(in, k, v, 0, 20, &c->log_files);
	return ini_err(in,
		       "unknown key '%s' in [Pods] (RunDir, NetnsPrefix, VethPrefix, Cgroup, "
		       "CgroupParent, NetScript, Xgate, StartTimeoutSeconds, Mtu, "
		       "SessionPingSeconds, SessionPingMisses, LogMaxBytes, LogFiles)",
		       k);
}

static void defaults(struct na_config *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->instance, sizeof(c->instance), "default");
	c->cpu_milli = 2000;
	c->mem_bytes = 2ll << 30;
	c->max_pods = 100;
	snprintf(c->url, sizeof(c->url), "ws://127.0.0.1:8470");
	c->reconnect_max_s = 30;
	snprintf(c->netns_prefix, sizeof(c->netns_prefix), "fxp-");
	snprintf(c->veth_prefix, sizeof(c->veth_prefix), "fxv");
	c->cgroup = NA_CG_AUTO;
	snprintf(c->net_script, sizeof(c->net_script), "/usr/lib/xgate/nodeagent-net.sh");
	snprintf(c->xgate, sizeof(c->xgate), "xgate");
	c->start_timeout_s = 30;
	c->mtu = 1500;
	c->ping_s = 10;
	c->ping_misses = 3;
	c->log_max_bytes = 10u << 20;
	c->log_files = 2;
}

int na_conf_parse(const char *file, const char *text, void *conf, char *err, size_t errlen)
{
	struct na_config *c = conf;
	enum sec sec = S_NONE;
	struct ini in;
	char *k, *v;
	int item, node_line = 0;

	defaults(c);
	ini_init(&in, file, text, "[Node]", err, errlen);
	while ((item = ini_next(&in, &k, &v)) > 0) {
		int rc = 0;

		if (item == INI_SECTION) {
			if (!strcasecmp(k, "[Node]"))
				sec = S_NODE, node_line = in.line;
			else if (!strcasecmp(k, "[Core]"))
				sec = S_CORE;
			else if (!strcasecmp(k, "[Store]"))
				sec = S_STORE;
			else if (!strcasecmp(k, "[Pods]"))
				sec = S_PODS;
			else
				rc = ini_err(
				    &in, "unknown section %s ([Node] [Core] [Store] [Pods])", k);
		} else if (sec == S_NODE) {
			rc = node_key(&in, c, k, v);
		} else if (sec == S_CORE) {
			rc = core_key(&in, c, k, v);
		} else if (sec == S_STORE) {
			rc = strcasecmp(k, "Database")
				 ? ini_err(&in, "unknown key '%s' in [Store] (Database)", k)
				 : copy(&in, k, v, c->database, sizeof(c->database));
		} else {
			rc = pods_key(&in, c, k, v);
		}
		if (rc) {
			ini_wipe(&in);
			return -1;
		}
	}
	if (item == INI_ERROR)
		return -1;
	if (!c->name[0])
		return ini_err_at(&in, node_line, "[Node] needs a Name");
	if (!c->ip_be)
		return ini_err_at(&in, node_line, "[Node] needs an Ip (its cluster address)");
	/* an ingress host's public address is what it is for: said, not assumed */
	if (c->role == NA_ROLE_INGRESS && !c->public_ip_be)
		return ini_err_at(&in, node_line, "[Node] Role = ingress needs a PublicIp");
	if (!c->public_ip_be)
		c->public_ip_be = c->ip_be;
	if (!c->database[0])
		snprintf(c->database, sizeof(c->database), "/var/lib/xgate/nodeagentd/%s.db",
			 c->name);
	if (!c->run_dir[0])
		snprintf(c->run_dir, sizeof(c->run_dir), "/run/xgate/nodeagentd/%s", c->name);
	if (!c->cgroup_parent[0])
		snprintf(c->cgroup_parent, sizeof(c->cgroup_parent), "xgate-nodeagentd/%s",
			 c->name);
	if (strlen(c->veth_prefix) + 4 > 15)
		return ini_err_at(&in, 0, "VethPrefix '%s': at most 10 characters", c->veth_prefix);
	return 0;
}

int na_conf_load(const char *path, struct na_config *c, char *err, size_t errlen)
{
	if (!path)
		return snprintf(err, errlen, "no configuration file (-c FILE)"), -1;
	return ini_load(path, na_conf_parse, c, err, errlen);
}
