// SPDX-License-Identifier: BSD-2-Clause
/* gatewayd config parser: good files parse to the right values, each bad
 * file is refused with its line number and the problem. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "aead.h"
#include "conf_check.h"
#include "config.h"

#define K1     "yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk="
#define K2     "fEvQRvjrGLl16GgVxUVz4OEzugh95wXkUBF9MdHVUCo="
#define K1_PUB "HIgo9xNzJMWLKASShiTqIybxZ0U3wGLiUeJ1PKf8ykw=" /* of K1 */
#define K3     "xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg="
#define GW                                                                                         \
	"[Gateway]\nName = gw-a\nCluster = edge-a\nPrivateKey = " K1                               \
	"\nPublicAddress = 127.0.0.1:6081\n"

static struct gw_conf c;

static int parse(const char *text, char *err, size_t errlen)
{
	return gw_conf_parse("t.conf", text, &c, err, errlen);
}

static void expect_err(const char *text, const char *want)
{
	conf_expect_err(parse, text, want);
}

int main(void)
{
	char err[256] = "";
	const char *good = "# gateway of edge cluster A\n"
			   "[Gateway]\n"
			   "Name = gw-a\n"
			   "cluster = edge-a   # keys are case-insensitive\n"
			   "PrivateKey = " K1 "\n"
			   "ListenAddress = 127.0.0.1:7101\n"
			   "PublicAddress = 127.0.0.1:6081\n"
			   "GraceTime = 30s\n"
			   "Subnet = 100 10.1.0.0/16\n"
			   "Subnet = 200 10.1.0.0/16\n"
			   "\n"
			   "[Peer]\n"
			   "Name = gw-b\n"
			   "PublicKey = " K2 "\n"
			   "Endpoint = 127.0.0.1:7102\n"
			   "AllowedSubnets = 10.2.0.0/16, 300 10.3.0.0/16\n"
			   "[Peer]\n"
			   "Name = gw-c\n"
			   "PublicKey = " K3 "\n";
	int rc = gw_conf_parse("good.conf", good, &c, err, sizeof(err));

	CHECK_EXPR(rc == 0);
	if (rc)
		printf("# %s\n", err);
	CHECK_EXPR(!strcmp(c.name, "gw-a") && !strcmp(c.cluster, "edge-a"));
	CHECK_EXPR(ntohs(c.listen.sin_port) == 7101 && ntohs(c.public_addr.sin_port) == 6081);
	CHECK_EXPR(c.grace_s == 30 && c.keepalive_s == 5 && c.hold_s == 15 && c.rekey_s == 120);
	CHECK_EXPR(c.n_subnets == 2 && c.subnets[0].vni == 100 && c.subnets[1].vni == 200 &&
		   c.subnets[0].plen == 16 && c.subnets[0].ip_be == inet_addr("10.1.0.0"));
	CHECK_EXPR(c.n_peers == 2 && !strcmp(c.peers[0].name, "gw-b") &&
		   !strcmp(c.peers[1].name, "gw-c"));
	CHECK_EXPR(c.peers[0].n_allowed == 2 && c.peers[0].allowed[0].vni == 0 &&
		   c.peers[0].allowed[1].vni == 300);
	CHECK_EXPR(c.peers[1].endpoint.sin_port == 0); /* passive peer */
	CHECK_EXPR(!strcmp(c.database, "/var/lib/xgate/gatewayd-gw-a.db") && !c.instance[0] &&
		   !c.public_if[0] && !c.n_dividers);

	expect_err("", "no [Gateway] section");
	expect_err("Name = x\n", "t.conf:1: 'Name = x' outside a section");
	expect_err("[Gateway]\n[Gateway]\n", "t.conf:2: [Gateway] must come once");
	expect_err("[Peer]\n", "t.conf:1: [Peer] before [Gateway]");
	expect_err("[Interface]\n", "t.conf:1: unknown section [Interface]");
	expect_err(GW "Colour = blue\n", "t.conf:6: unknown key 'Colour' in [Gateway]");
	expect_err(GW "Name = gw-b\n", "t.conf:6: Name given twice");
	expect_err(GW "Keepalive\n", "t.conf:6: expected Key = Value");
	expect_err(GW "Keepalive =\n", "t.conf:6: Keepalive has no value");
	expect_err("[Gateway]\nName = GW A\n", "t.conf:2: Name 'GW A': only a-z");
	expect_err("[Gateway]\nPrivateKey = abc\n",
		   "t.conf:2: PrivateKey is not a base64 32-byte key");
	expect_err("[Gateway]\nListenAddress = 127.0.0.1\n",
		   "t.conf:2: ListenAddress '127.0.0.1': expected A.B.C.D:PORT");
	expect_err("[Gateway]\nListenAddress = 127.0.0.1:70000\n", "port must be 1-65535");
	expect_err("[Gateway]\nListenAddress = host:7100\n", "'host' is not an IPv4 address");
	expect_err("[Gateway]\nGraceTime = soon\n", "t.conf:2: GraceTime 'soon': expected seconds");
	expect_err("[Gateway]\nSubnet = 10.1.0.0/16\n",
		   "t.conf:2: Subnet '10.1.0.0/16': expected VNI A.B.C.D/LEN");
	expect_err("[Gateway]\nSubnet = 0 10.1.0.0/16\n", "VNI '0' must be 1-16777215");
	expect_err("[Gateway]\nSubnet = 1 10.1.0.1/16\n", "10.1.0.1/16 has host bits set");
	expect_err("[Gateway]\nSubnet = 1 10.1.0.0/40\n", "prefix length '40' must be 0-32");
	expect_err("[Gateway]\nName = a\nCluster = b\n", "[Gateway] needs a PrivateKey");
	expect_err("[Gateway]\nName = a\nPrivateKey = " K1 "\n", "[Gateway] needs a Cluster");
	expect_err("[Gateway]\nName = a\nCluster = b\nPrivateKey = " K1 "\n",
		   "needs a PublicAddress");
	expect_err(GW "Keepalive = 20\nHoldTime = 10\n",
		   "HoldTime (10s) must exceed Keepalive (20s)");
	expect_err(GW "[Peer]\nPublicKey = " K2 "\n", "t.conf:6: [Peer] needs a Name");
	expect_err(GW "[Peer]\nName = b\n", "t.conf:6: [Peer] b needs a PublicKey");
	expect_err(GW "[Peer]\nName = b\nPublicKey = " K2 "\n[Peer]\nName = b\nPublicKey = " K3
		      "\n",
		   "t.conf:9: peer name 'b' already used on line 6");
	expect_err(GW "[Peer]\nName = b\nPublicKey = " K2 "\n[Peer]\nName = c\nPublicKey = " K2
		      "\n",
		   "peer c has the same PublicKey as b (line 6)");
	expect_err(GW "[Peer]\nName = b\nAllowedIPs = 10.0.0.0/8\n",
		   "t.conf:8: unknown key 'AllowedIPs' in [Peer]");
	expect_err(GW "[Peer]\nName = b\nAllowedSubnets = 10.0.0.0/8, 10.1.1.1/24\n",
		   "10.1.1.1/24 has host bits set");

	/* what must be refused although each value parses */
	expect_err(GW "[Peer]\nName = b\nPublicKey = " K1_PUB "\n",
		   "t.conf:8: PublicKey '" K1_PUB "' of peer b is this gateway's own public key");
	expect_err(GW "[Peer]\nName = gw-a\nPublicKey = " K2 "\n",
		   "t.conf:7: peer Name 'gw-a' is this gateway's own Name");
	expect_err(GW
		   "[Peer]\nName = b\nPublicKey = AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n",
		   "t.conf:8: PublicKey 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=' of peer b "
		   "is not a usable X25519 key");
	expect_err(
	    GW
	    "[Peer]\nName = b\nPublicKey = 4Ot6fDtBuK4WVuP68Z/EatoJjeucMrH9hmIFFl9JuAA=\n", /* order
											       8 */
	    "t.conf:8: PublicKey '4Ot6fDtBuK4WVuP68Z/EatoJjeucMrH9hmIFFl9JuAA=' of peer b is not a "
	    "usable X25519 key");
	expect_err(
	    GW "[Peer]\nName = b\nPublicKey = " K2 "\nEndpoint = 127.0.0.1:7100\n",
	    "t.conf:9: Endpoint '127.0.0.1:7100' of peer b is this gateway's own ListenAddress");
	expect_err(
	    GW "ListenAddress = 0.0.0.0:7200\n[Peer]\nName = b\nPublicKey = " K2
	       "\nEndpoint = 127.0.0.2:7200\n",
	    "t.conf:10: Endpoint '127.0.0.2:7200' of peer b is this gateway's own ListenAddress");
	expect_err(GW "Subnet = 100 10.1.0.0/16\nSubnet = 100  10.1.0.0/16\n",
		   "t.conf:7: Subnet '100  10.1.0.0/16' given twice (line 6)");
	expect_err(GW
		   "Subnet = 100 10.1.0.0/16\nSubnet = 7 10.9.0.0/16\nSubnet = 100 10.1.5.0/24\n",
		   "t.conf:8: Subnet '100 10.1.5.0/24' overlaps Subnet '100 10.1.0.0/16' (line 6)");
	expect_err(GW "Subnet = 100 10.1.5.0/24\nSubnet = 100 0.0.0.0/0\n",
		   "t.conf:7: Subnet '100 0.0.0.0/0' overlaps Subnet '100 10.1.5.0/24' (line 6)");
	/* and what stays allowed: one prefix in two VPCs, another gateway's
	 * port on this address, an address a wildcard listener cannot tell */
	rc = parse(
	    GW "ListenAddress = 0.0.0.0:7200\nSubnet = 100 10.1.0.0/16\nSubnet = 200 10.1.0.0/16\n"
	       "[Peer]\nName = b\nPublicKey = " K2 "\nEndpoint = 127.0.0.1:7201\n"
	       "[Peer]\nName = c\nPublicKey = " K3 "\nEndpoint = 192.0.2.1:7200\n",
	    err, sizeof(err));
	CHECK(rc == 0, "the same prefix in two VPCs, other ports and addresses parse (%s)",
	      rc ? err : "");

	/* how long a replaced data-plane key stays in the maps */
	rc = parse(GW, err, sizeof(err));
	CHECK(rc == 0 && c.rekey_grace_s == 10, "RekeyGrace defaults to 10 s");
	rc = parse(GW "RekeyInterval = 10\n", err, sizeof(err));
	CHECK(rc == 0 && c.rekey_grace_s == 5, "and to half a shorter RekeyInterval (%u)",
	      c.rekey_grace_s);
	rc = parse(GW "RekeyGrace = 3\n", err, sizeof(err));
	CHECK(rc == 0 && c.rekey_grace_s == 3, "RekeyGrace = 3");
	expect_err(GW "RekeyInterval = 20\nRekeyGrace = 20\n",
		   "t.conf:0: RekeyGrace (20s) must be less than RekeyInterval (20s)");

	/* key limits: WireGuard's by default, lower ones for tests */
	rc = parse(GW, err, sizeof(err));
	CHECK(
	    rc == 0 && c.rekey_msgs == 1ULL << 60 && c.reject_msgs == UINT64_MAX - (1ULL << 13) &&
		c.reject_s == 180,
	    "RekeyAfterMessages 2^60, RejectAfterMessages 2^64 - 2^13 - 1, RejectAfterTime 180 s");
	rc = parse(GW "RekeyInterval = 300\n", err, sizeof(err));
	CHECK(rc == 0 && c.reject_s == 360, "RejectAfterTime follows RekeyInterval + 60 s (%u)",
	      c.reject_s);
	rc = parse(GW
		   "RekeyAfterMessages = 1000\nRejectAfterMessages = 2^20\nRejectAfterTime = 200\n",
		   err, sizeof(err));
	CHECK(rc == 0 && c.rekey_msgs == 1000 && c.reject_msgs == 1 << 20 && c.reject_s == 200,
	      "RekeyAfterMessages = 1000, RejectAfterMessages = 2^20, RejectAfterTime = 200 (%s)",
	      rc ? err : "");
	expect_err(GW "RekeyAfterMessages = 0\n",
		   "t.conf:6: RekeyAfterMessages '0': expected a count of packets, "
		   "1-18446744073709551615 or 2^N (N < 64)");
	expect_err(GW "RejectAfterMessages = 2^64\n",
		   "t.conf:6: RejectAfterMessages '2^64': expected a count of packets, "
		   "1-18446744073709551615 or 2^N (N < 64)");
	expect_err(GW "RekeyAfterMessages = 2^20\nRejectAfterMessages = 2^20\n",
		   "t.conf:0: RekeyAfterMessages (1048576) must be less than RejectAfterMessages "
		   "(1048576)");
	expect_err(GW "RejectAfterTime = 120\n",
		   "t.conf:0: RejectAfterTime (120s) must exceed RekeyInterval (120s): keys would "
		   "stop before the next one is in use");

	/* the tunnel's mode and cipher, per peer */
	rc = parse(GW "[Peer]\nName = b\nPublicKey = " K2 "\n[Peer]\nName = c\nPublicKey = " K3
		      "\nMode = encrypt\nCipher = chacha20-poly1305\n",
		   err, sizeof(err));
	CHECK(rc == 0 && c.peers[0].mode == GW_MODE_ENCRYPT &&
		  c.peers[0].ciphers == XGT_CIPHERS_ALL,
	      "Mode defaults to encrypt, Cipher to auto (%s)", rc ? err : "");
	CHECK(rc == 0 && c.peers[1].mode == GW_MODE_ENCRYPT &&
		  c.peers[1].ciphers == XGT_CHACHA20_POLY1305,
	      "Mode = encrypt, Cipher = chacha20-poly1305");
	rc = parse(GW "[Peer]\nName = b\nPublicKey = " K2 "\nMode = AUTH\nCipher = aes-256-gcm\n",
		   err, sizeof(err));
	CHECK(rc == 0 && c.peers[0].mode == GW_MODE_AUTH && c.peers[0].ciphers == XGT_AES256_GCM,
	      "Mode = AUTH (any case), Cipher = aes-256-gcm");
	expect_err(GW "[Peer]\nName = b\nPublicKey = " K2 "\nMode = wireguard\n",
		   "t.conf:9: Mode 'wireguard': expected encrypt or auth");
	expect_err(
	    GW "[Peer]\nName = b\nPublicKey = " K2 "\nCipher = aes-128-gcm\n",
	    "t.conf:9: Cipher 'aes-128-gcm': expected auto, chacha20-poly1305 or aes-256-gcm");
	expect_err(GW "[Peer]\nName = b\nMode = auth\nMode = encrypt\n",
		   "t.conf:9: Mode given twice in this [Peer]");

	return unit_summary();
}
