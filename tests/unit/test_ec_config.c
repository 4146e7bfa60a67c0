// SPDX-License-Identifier: BSD-2-Clause
/* edgeclusterd config parser: a good file parses to the right values, each
 * bad file is refused with its line number and the problem. */
#include <arpa/inet.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf_check.h"
#include "config.h"

#define TOK "0123456789abcdef-token"
#define MIN "[Cluster]\nName = edge-a\n[API]\nToken = " TOK "\n"

static struct ec_conf c;

static int parse(const char *text, char *err, size_t errlen)
{
	return ec_conf_parse("t.conf", text, &c, err, errlen);
}

static void expect_err(const char *text, const char *want)
{
	conf_expect_err(parse, text, want);
}

static bool has_token(const char *t)
{
	unsigned char h[EC_HASH_LEN];

	ec_token_digest(t, strlen(t), h);
	for (int i = 0; i < c.n_tokens; i++)
		if (!memcmp(h, c.tokens[i], EC_HASH_LEN))
			return true;
	return false;
}

int main(void)
{
	char tf[] = "/tmp/ec-tokens-XXXXXX", bad[] = "/tmp/ec-badtok-XXXXXX", text[2048];
	char err[512] = "";
	int fd = mkstemp(tf), fd2 = mkstemp(bad), rc;

	if (sodium_init() < 0 || fd < 0 || fd2 < 0)
		return 1;
	dprintf(fd, "# operators\nfedcba9876543210-first\n\n  second-token-0123456789  # ci\n");
	dprintf(fd2, "good-token-0123456789\nshort\n");
	close(fd);
	close(fd2);

	snprintf(text, sizeof(text),
		 "# edge cluster A\n"
		 "[Cluster]\n"
		 "name = edge-a      # keys are case-insensitive\n"
		 "Labels = zone=east, example.com/tier=edge\n"
		 "Label = empty=\n"
		 "Distro = k3s\n"
		 "Kubeconfig = /etc/hostname\n"
		 "Parent = wss://parent.example:7443/hub\n"
		 "JoinToken = join-0123456789abcdef\n"
		 "[API]\n"
		 "Listen = 127.0.0.2:9443\n"
		 "Token = " TOK "\n"
		 "TokenFile = %s\n"
		 "MaxBody = 64K\n"
		 "[Hub]\n"
		 "SendQueueMax = 2M\n"
		 "[Store]\n"
		 "Database = /tmp/x.db\n"
		 "[Intervals]\n"
		 "Heartbeat = 5s\n"
		 "StateCheck = 20\n"
		 "CommandTimeout = 90\n",
		 tf);
	rc = ec_conf_parse("good.conf", text, &c, err, sizeof(err));
	CHECK(rc == 0, "good file parses (%s)", err);
	CHECK(!strcmp(c.name, "edge-a"), "name");
	CHECK(c.n_labels == 3 && !strcmp(c.labels[1].key, "example.com/tier") &&
		  !strcmp(c.labels[1].value, "edge") && !strcmp(c.labels[2].key, "empty") &&
		  !c.labels[2].value[0],
	      "Labels list and a repeated Label, empty value allowed");
	CHECK(c.distro == EC_DISTRO_K3S && c.driver == EC_DRIVER_KUBECTL,
	      "a Kubernetes distro defaults to the kubectl driver");
	CHECK(!strcmp(c.kubectl, "kubectl"), "Kubectl defaults to kubectl on PATH");
	CHECK(c.parent_url.tls && !strcmp(c.parent_url.host, "parent.example") &&
		  c.parent_url.port == 7443 && !strcmp(c.parent_url.path, "/hub"),
	      "Parent URL parsed");
	CHECK(!strcmp(c.join_token, "join-0123456789abcdef"), "JoinToken kept");
	CHECK(ntohs(c.listen.sin_port) == 9443 && ntohl(c.listen.sin_addr.s_addr) == 0x7f000002,
	      "Listen");
	CHECK(c.n_tokens == 3 && has_token(TOK) && has_token("fedcba9876543210-first") &&
		  has_token("second-token-0123456789") && !has_token("wrong-token-0123456789"),
	      "Token and TokenFile tokens (comments, blank lines skipped), as digests");
	CHECK(c.max_body == 65536, "MaxBody 64K");
	CHECK(!strcmp(c.database, "/tmp/x.db"), "Database");
	CHECK(c.hub_queue_max == 2u << 20, "[Hub] SendQueueMax");
	CHECK(c.heartbeat_s == 5 && c.heartbeat_timeout_s == 15 && c.statecheck_s == 20 &&
		  c.command_timeout_s == 90,
	      "intervals; HeartbeatTimeout defaults to 3 x Heartbeat");

	rc = ec_conf_parse("min.conf", MIN, &c, err, sizeof(err));
	CHECK(rc == 0 && c.driver == EC_DRIVER_LOCAL && c.distro == EC_DISTRO_NONE &&
		  ntohs(c.listen.sin_port) == 7443 &&
		  ntohl(c.listen.sin_addr.s_addr) == 0x7f000001 && c.max_body == 1 << 20 &&
		  !strcmp(c.database, "/var/lib/xgate/edgeclusterd-edge-a.db") && !c.parent[0] &&
		  c.hub_queue_max == 64u << 20,
	      "defaults: local driver, 127.0.0.1:7443, 1 MiB bodies, database by name, root (%s)",
	      err);
	rc = ec_conf_parse(
	    "tls.conf",
	    MIN "Listen = 0.0.0.0:7443\nTLSCert = /etc/hostname\nTLSKey = /etc/hostname\n", &c, err,
	    sizeof(err));
	CHECK(rc == 0, "0.0.0.0 with TLS and a token is accepted (%s)", err);

	/* the root on etcd; a child listing two roots */
	rc = ec_conf_parse("etcd.conf",
			   MIN "[Store]\nBackend = etcd\nEndpoints = http://127.0.0.1:2379, "
			       "http://127.0.0.2:2379\n",
			   &c, err, sizeof(err));
	CHECK(rc == 0 && c.etcd && !strcmp(c.etcd_conf.prefix, "/xgate/edge/edge-a/") &&
		  c.etcd_conf.timeout_ms == 2000 && c.etcd_conf.election_ttl_s == 10,
	      "Backend = etcd: Prefix by Name, Timeout 2 s, ElectionTTL 10 s (%s)", err);
	rc = ec_conf_parse("min.conf", MIN, &c, err, sizeof(err));
	CHECK(rc == 0 && !c.etcd, "sqlite is the default");
	rc = ec_conf_parse("kid.conf",
			   "[Cluster]\nName = k\nParent = ws://10.0.0.1:7443, wss://b.example\n"
			   "[API]\nToken = " TOK "\n",
			   &c, err, sizeof(err));
	CHECK(rc == 0 && !strcmp(c.parent_url.host, "10.0.0.1") && c.parent_url.port == 7443,
	      "Parent with two roots: the first parsed (%s)", err);
	expect_err("[Cluster]\nName = k\nParent = ws://10.0.0.1:7443,ftp://b\n",
		   "t.conf:3: Parent 'ftp://b': expected wss://");
	expect_err(MIN "[Store]\nBackend = mysql\n",
		   "t.conf:6: Backend 'mysql': expected sqlite or etcd");
	expect_err(MIN "[Store]\nEndpoints = http://h:1\n",
		   "t.conf:6: Endpoints is for Backend = etcd (the store is sqlite)");
	expect_err(MIN "[Store]\nBackend = etcd\n", "t.conf:6: Backend = etcd needs Endpoints");
	expect_err(MIN "[Store]\nBackend = etcd\nEndpoints = ftp://h\n",
		   "t.conf:7: Endpoints 'ftp://h': expected http://HOST:PORT");
	expect_err(MIN "[Store]\nBackend = etcd\nEndpoints = http://h:1\nPrefix = xgate\n",
		   "t.conf:8: Prefix 'xgate': expected /PATH/");
	expect_err(MIN "[Store]\nBackend = etcd\nEndpoints = http://h:1\nTimeout = 5s\n"
		       "ElectionTTL = 10s\n",
		   "t.conf:9: ElectionTTL 10s must be at least 3 x Timeout (5s)");
	rc = ec_conf_parse("ms.conf",
			   MIN "[Store]\nBackend = etcd\nEndpoints = http://h:1\nTimeout = 300ms\n"
			       "ElectionTTL = 1s\n",
			   &c, err, sizeof(err));
	CHECK(rc == 0 && c.etcd_conf.timeout_ms == 300 && c.etcd_conf.election_ttl_s == 1,
	      "Timeout in milliseconds: 300ms with a 1 s lease (%s)", err);
	expect_err(MIN "[Store]\nBackend = etcd\nEndpoints = http://h:1\nTimeout = 400ms\n"
		       "ElectionTTL = 1s\n",
		   "t.conf:9: ElectionTTL 1s must be at least 3 x Timeout (400ms)");
	expect_err(MIN "[Store]\nBackend = etcd\nEndpoints = http://h:1\nTimeout = 50ms\n",
		   "t.conf:8: Timeout '50ms': expected 100ms to 60s (e.g. 2s or 500ms)");
	expect_err(MIN "[Store]\nBackend = etcd\nEndpoints = http://h:1\nTimeout = 2m\n",
		   "t.conf:8: Timeout '2m': expected 100ms to 60s (e.g. 2s or 500ms)");
	expect_err(MIN "[Store]\nBackend = etcd\nEndpoints = http://h:1\nTLSCA = /etc/hostname\n",
		   "t.conf:8: TLSCA is given but an endpoint is http://");
	expect_err(
	    "[Cluster]\nName = k\nParent = ws://h:1\n[API]\nToken = " TOK
	    "\n[Store]\nBackend = etcd\nEndpoints = http://h:1\n",
	    "t.conf:7: Backend = etcd is for the root of the tree, and Parent is set (line 3)");

	/* every error names the line */
	expect_err("Name = x\n", "t.conf:1: 'Name = x' outside a section");
	expect_err("[Cluster]\nName = a\n[Nodes]\n", "t.conf:3: unknown section [Nodes]");
	expect_err("[Cluster]\n[Cluster]\n", "t.conf:2: [Cluster] given twice (first on line 1)");
	expect_err("[Cluster]\nName\n", "t.conf:2: expected Key = Value");
	expect_err("[Cluster]\nName =\n", "t.conf:2: Name has no value");
	expect_err("[Cluster]\nName = Edge_A\n",
		   "t.conf:2: Name 'Edge_A': must be a DNS-1123 label");
	expect_err("[Cluster]\nName = a\nName = b\n",
		   "t.conf:3: Name given twice (first on line 2)");
	expect_err("[Cluster]\nName = a\nColour = red\n",
		   "t.conf:3: unknown key 'Colour' in [Cluster]");
	expect_err("[Cluster]\nName = a\n[API]\nDatabase = x\n",
		   "t.conf:4: unknown key 'Database' in [API]");
	expect_err("[Cluster]\nName = a\nLabels = zone\n",
		   "t.conf:3: label 'zone': expected KEY=VALUE");
	expect_err("[Cluster]\nName = a\nLabels = -zone=x\n", "t.conf:3: label key '-zone'");
	expect_err("[Cluster]\nName = a\nLabel = zone=east west\n",
		   "t.conf:3: label 'zone' value 'east west'");
	expect_err("[Cluster]\nName = a\nLabel = z=1\nLabels = y=2, z=3\n",
		   "t.conf:4: label 'z' already set on line 3");
	expect_err("[Cluster]\nName = a\nDriver = docker\n",
		   "t.conf:3: Driver 'docker': local or kubectl");
	expect_err("[Cluster]\nName = a\nDistro = openshift\n", "t.conf:3: Distro 'openshift'");
	expect_err("[Cluster]\nName = a\nDriver = kubectl\n[API]\nToken = " TOK "\n",
		   "t.conf:3: Driver kubectl needs Distro");
	expect_err("[Cluster]\nName = a\nKubeconfig = /etc/hostname\n[API]\nToken = " TOK "\n",
		   "t.conf:3: Kubeconfig is only used with Driver = kubectl");
	expect_err("[Cluster]\nName = a\nDistro = k8s\nKubeconfig = /nonexistent/kc\n",
		   "t.conf:4: Kubeconfig /nonexistent/kc: No such file");
	expect_err("[Cluster]\nName = a\nParent = ftp://x\n",
		   "t.conf:3: Parent 'ftp://x': expected wss://");
	expect_err("[Cluster]\nName = a\nParent = http://h:7443\n",
		   "t.conf:3: Parent 'http://h:7443': expected wss://HOST[:PORT][/PATH] (ws://");
	expect_err("[Cluster]\nName = a\nParent = https://h:7443\n",
		   "t.conf:3: Parent 'https://h:7443': expected wss://");
	expect_err("[Cluster]\nName = a\nParent = wss://h:99999\n",
		   "t.conf:3: Parent 'wss://h:99999': port");
	expect_err("[Cluster]\nName = a\nJoinToken = join-0123456789abcdef\n[API]\nToken = " TOK
		   "\n",
		   "t.conf:3: JoinToken without Parent");
	expect_err("[Cluster]\nName = a\n[API]\nListen = 127.0.0.1\n",
		   "t.conf:4: Listen '127.0.0.1': expected A.B.C.D:PORT");
	expect_err("[Cluster]\nName = a\n[API]\nListen = 127.0.0.1:0\n",
		   "t.conf:4: Listen '127.0.0.1:0': port must be 1-65535");
	expect_err(
	    "[Cluster]\nName = a\n[API]\nToken = " TOK "\nListen = 0.0.0.0:7443\n",
	    "t.conf:5: Listen 0.0.0.0 is not a loopback address: it needs TLSCert and TLSKey");
	expect_err("[Cluster]\nName = a\n[API]\nListen = 10.1.2.3:7443\nToken = " TOK "\n",
		   "t.conf:4: Listen 10.1.2.3 is not a loopback address");
	expect_err("[Cluster]\nName = a\n[API]\nListen = 127.0.0.1:7443\n",
		   "t.conf:3: [API] needs a Token or TokenFile");
	expect_err("[Cluster]\nName = a\n", "t.conf:1: [API] needs a Token or TokenFile");
	expect_err("[Cluster]\nName = a\n[API]\nToken = short\n",
		   "t.conf:4: Token must be 16-256 characters");
	expect_err("[Cluster]\nName = a\n[API]\nToken = has space in it 0123\n",
		   "t.conf:4: Token: only printable characters without spaces");
	expect_err("[Cluster]\nName = a\n[API]\nTokenFile = /nonexistent/tokens\n",
		   "t.conf:4: TokenFile /nonexistent/tokens: No such file");
	snprintf(text, sizeof(text), "[Cluster]\nName = a\n[API]\n\nTokenFile = %s\n", bad);
	{
		char want[128];

		snprintf(want, sizeof(want), "t.conf:5: TokenFile %s line 2: token must be", bad);
		expect_err(text, want);
	}
	expect_err(MIN "TLSCert = /etc/hostname\n", "t.conf:5: TLSCert without TLSKey");
	expect_err(MIN "TLSKey = /etc/hostname\n", "t.conf:5: TLSKey without TLSCert");
	expect_err(MIN "TLSCert = /nonexistent.pem\n",
		   "t.conf:5: TLSCert /nonexistent.pem: No such file");
	expect_err(MIN "MaxBody = 12 bytes\n", "t.conf:5: MaxBody '12 bytes': expected a size");
	expect_err(MIN "MaxBody = 100\n",
		   "t.conf:5: MaxBody '100': expected a size from 1K to 64M");
	expect_err(MIN "MaxBody = 65M\n", "t.conf:5: MaxBody '65M'");
	expect_err(MIN "[Intervals]\nHeartbeat = 0\n",
		   "t.conf:6: Heartbeat '0': expected seconds 1-3600");
	expect_err(MIN "[Intervals]\nStateCheck = 5m\n", "t.conf:6: StateCheck '5m'");
	expect_err(MIN "[Intervals]\nHeartbeat = 10\nHeartbeatTimeout = 10\n",
		   "t.conf:7: HeartbeatTimeout (10s) must exceed Heartbeat (10s)");
	expect_err("[API]\nToken = " TOK "\n", "t.conf:1: no [Cluster] section");
	expect_err("[Cluster]\nLabels = a=b\n[API]\nToken = " TOK "\n",
		   "t.conf:1: [Cluster] needs a Name");
	expect_err("[Cluster]\nName = a\n[API]\nToken = " TOK
		   "\n[Store]\nDatabase = /x\nDatabase = /y\n",
		   "t.conf:7: Database given twice");

	rc = ec_conf_load("/nonexistent/edge.conf", &c, err, sizeof(err));
	CHECK(rc < 0 && strstr(err, "/nonexistent/edge.conf: No such file"), "missing file: %s",
	      err);
	unlink(tf);
	unlink(bad);
	return unit_summary();
}
