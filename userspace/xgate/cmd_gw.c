// SPDX-License-Identifier: BSD-2-Clause
/*
 * `xgate gw genkey|pubkey`: gateway static keys, X25519 via libsodium,
 * base64 like WireGuard's so operators can handle them the same way:
 *   xgate gw genkey | tee gw.key | xgate gw pubkey > gw.pub
 */
#include <dirent.h>
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli.h"

#define KEY_B64_LEN                                                                                \
	sodium_base64_ENCODED_LEN(crypto_scalarmult_BYTES, sodium_base64_VARIANT_ORIGINAL)

/* `xgate gw genkey > gw.key`: the shell made the file with its umask before
 * we ran, so a umask set here is too late. A regular file others can read
 * is made private before the key goes in (as wg genkey warns of). */
static void private_stdout(void)
{
	struct stat st;

	if (fstat(STDOUT_FILENO, &st) || !S_ISREG(st.st_mode) || !(st.st_mode & 077))
		return;
	if (fchmod(STDOUT_FILENO, st.st_mode & 0700))
		xg_err("warning: the key goes to a file others can read (%s); set `umask 077` "
		       "first",
		       strerror(errno));
}

static int genkey(void)
{
	unsigned char sk[crypto_scalarmult_SCALARBYTES];
	char b64[KEY_B64_LEN];

	randombytes_buf(sk, sizeof(sk));
	sodium_bin2base64(b64, sizeof(b64), sk, sizeof(sk), sodium_base64_VARIANT_ORIGINAL);
	sodium_memzero(sk, sizeof(sk));
	private_stdout();
	puts(b64);
	sodium_memzero(b64, sizeof(b64));
	return XG_OK;
}

static int pubkey(void)
{
	unsigned char sk[crypto_scalarmult_SCALARBYTES], pk[crypto_scalarmult_BYTES];
	char line[256], b64[KEY_B64_LEN];
	size_t len = 0;
	int rc = XG_OK;

	if (!fgets(line, sizeof(line), stdin)) {
		return xg_fail(XG_EUSAGE, "gw pubkey: expected a base64 private key on stdin");
	}
	line[strcspn(line, "\r\n")] = 0;
	if (sodium_base642bin(sk, sizeof(sk), line, strlen(line), NULL, &len, NULL,
			      sodium_base64_VARIANT_ORIGINAL) ||
	    len != sizeof(sk)) {
		rc = xg_fail(XG_EUSAGE, "gw pubkey: not a base64 32-byte private key");
	} else if (crypto_scalarmult_base(pk, sk)) {
		rc = xg_fail(XG_EUSAGE, "gw pubkey: invalid private key");
	} else {
		sodium_bin2base64(b64, sizeof(b64), pk, sizeof(pk), sodium_base64_VARIANT_ORIGINAL);
		puts(b64);
	}
	sodium_memzero(sk, sizeof(sk));
	sodium_memzero(line, sizeof(line));
	return rc;
}

/* The daemon's control socket: --socket PATH, --gw NAME, or the only one. */
static int ctl_path(const char *sock, const char *name, char *out, size_t len)
{
	struct dirent *de;
	int found = 0;
	DIR *d;

	if (sock) {
		snprintf(out, len, "%s", sock);
		return XG_OK;
	}
	if (name) {
		snprintf(out, len, "/run/xgate/gatewayd-%s.sock", name);
		return XG_OK;
	}
	d = opendir("/run/xgate");
	while (d && (de = readdir(d))) {
		if (strncmp(de->d_name, "gatewayd-", 9) || !strstr(de->d_name, ".sock"))
			continue;
		if (strlen(de->d_name) + 12 > len)
			continue;
		snprintf(out, len, "/run/xgate/%.*s", (int)(len - 12), de->d_name);
		found++;
	}
	if (d)
		closedir(d);
	if (found == 1)
		return XG_OK;
	return xg_fail(
	    found ? XG_EUSAGE : XG_ENOTFOUND, "%s: say which with --gw NAME or --socket PATH",
	    found ? "several gatewayds run here" : "no gatewayd control socket in /run/xgate");
}

/* The exit code for a refusal: gatewayd's "code" (exists, not_found,
 * invalid, failed); a refusal without one is of the request's form. */
static int reply_code(json_t *res)
{
	const char *code = json_string_value(json_object_get(res, "code"));

	if (code)
		return !strcmp(code, "exists")	    ? XG_EEXIST
		       : !strcmp(code, "not_found") ? XG_ENOTFOUND
		       : !strcmp(code, "invalid")   ? XG_EUSAGE
						    : XG_EFAIL;
	return XG_EUSAGE;
}

static json_t *ctl_request(const char *path, const char *req, int *rc)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char buf[1 << 20];
	size_t got = 0;
	json_error_t je;
	json_t *res;
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		*rc = xg_fail(errno == EACCES ? XG_EPERM : XG_ENOTFOUND,
			      "cannot reach gatewayd at %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if (write(fd, req, strlen(req)) < 0)
		*rc = XG_EFAIL;
	shutdown(fd, SHUT_WR);
	for (ssize_t n;
	     got < sizeof(buf) - 1 && (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0;)
		got += (size_t)n;
	close(fd);
	buf[got] = 0;
	res = json_loads(buf, 0, &je);
	if (!res) {
		*rc = xg_fail(XG_EFAIL, "gatewayd sent an unreadable reply");
		return NULL;
	}
	if (json_is_string(json_object_get(res, "error"))) {
		*rc = xg_fail(reply_code(res), "gatewayd: %s",
			      json_string_value(json_object_get(res, "error")));
		json_decref(res);
		return NULL;
	}
	*rc = XG_OK;
	return res;
}

static int gw_query(struct cli *c, const char *verb, struct args *a)
{
	/* session, then data plane (packets through the tunnel to/from it) */
	static const char *const pcols[] = {
	    "PEER",	 "STATE",   "MODE",    "CIPHER",  "HANDSHAKE_S_AGO", "PUBLIC",	  "ROUTES",
	    "FRAMES_IN", "REFUSED", "TX_PKTS", "RX_PKTS", "RX_DROPPED",	     "KEY_AGE_S", NULL};
	static const char *const pkeys[] = {
	    "name",	  "state",	"mode",	     "cipher",	"last_handshake_s_ago",
	    "public",	  "routes",	"rx_frames", "refused", "tx_packets",
	    "rx_packets", "rx_dropped", "key_age_s", NULL};
	static const char *const rcols[] = {"VNI",   "PREFIX", "ORIGIN", "VERSION",
					    "STATE", "AGE_S",  NULL};
	static const char *const rkeys[] = {"vni",   "prefix", "origin", "version",
					    "state", "age_s",  NULL};
	const char *sock = NULL, *name = NULL, *s;
	char path[256], req[128];
	json_t *res;
	int rc;

	snprintf(req, sizeof(req), "%s", verb);
	if (arg_is(verb, "subnet")) {
		const char *op = arg_next(a), *vni = arg_next(a), *cidr = arg_next(a);
		__u32 v, ip;
		int plen;

		if (!op || (!arg_is(op, "add") && !arg_is(op, "del")))
			return usage_error("gw", "usage: xgate gw subnet add|del VNI CIDR");
		if (xg_parse_vni(vni, &v) || xg_parse_cidr(cidr, &ip, &plen))
			return XG_EUSAGE;
		snprintf(req, sizeof(req), "subnet %s %u %s", op, v, cidr);
	}
	while ((s = arg_next(a))) {
		if (arg_is(s, "--socket"))
			sock = arg_value(a, s);
		else if (arg_is(s, "--gw"))
			name = arg_value(a, s);
		else
			return usage_error("gw", "unexpected argument '%s'", s);
		if (!sock && !name)
			return XG_EUSAGE;
	}
	rc = ctl_path(sock, name, path, sizeof(path));
	if (rc)
		return rc;
	res = ctl_request(path, req, &rc);
	if (!res)
		return rc;
	if (c->json) {
		out_json(arg_is(verb, "peers")	  ? json_object_get(res, "peers")
			 : arg_is(verb, "routes") ? json_object_get(res, "routes")
						  : res);
	} else if (arg_is(verb, "peers")) {
		out_rows(c, json_incref(json_object_get(res, "peers")), pcols, pkeys);
	} else if (arg_is(verb, "routes")) {
		out_rows(c, json_incref(json_object_get(res, "routes")), rcols, rkeys);
	} else if (arg_is(verb, "status")) {
		printf("gateway %s  cluster %s  public %s  peers %lld/%lld up  routes %lld\n",
		       json_string_value(json_object_get(res, "name")),
		       json_string_value(json_object_get(res, "cluster")),
		       json_string_value(json_object_get(res, "public")),
		       (long long)json_integer_value(json_object_get(res, "peers_up")),
		       (long long)json_integer_value(json_object_get(res, "peers")),
		       (long long)json_integer_value(json_object_get(res, "routes")));
	}
	json_decref(res);
	return XG_OK;
}

static int gw_status(struct cli *c, struct args *a)
{
	return gw_query(c, "status", a);
}

static int gw_peers(struct cli *c, struct args *a)
{
	return gw_query(c, "peers", a);
}

static int gw_routes(struct cli *c, struct args *a)
{
	return gw_query(c, "routes", a);
}

static int gw_subnet(struct cli *c, struct args *a)
{
	return gw_query(c, "subnet", a);
}

static int gw_key(struct args *a, int (*fn)(void))
{
	if (a->argc)
		return usage_error("gw", "unexpected argument '%s'", a->argv[0]);
	if (sodium_init() < 0)
		return xg_fail(XG_EFAIL, "libsodium failed to initialise");
	return fn();
}

static int gw_genkey(struct cli *c, struct args *a)
{
	(void)c;
	return gw_key(a, genkey);
}

static int gw_pubkey(struct cli *c, struct args *a)
{
	(void)c;
	return gw_key(a, pubkey);
}

const struct cmd gw_verbs[] = {
    {"genkey", gw_genkey, "", "a private X25519 key (base64) on stdout; umask 077 first"},
    {"pubkey", gw_pubkey, "", "the public key of the private key read on stdin"},
    {"status", gw_status, "[--gw NAME | --socket PATH]",
     "a running gatewayd; --gw (its Name) when several run here"},
    {"peers", gw_peers, "[--gw NAME | --socket PATH]", "sessions and tunnel counters"},
    {"routes", gw_routes, "[--gw NAME | --socket PATH]", "learned and own subnets"},
    {"subnet", gw_subnet, "add|del VNI CIDR [--gw NAME | --socket PATH]",
     "announce (withdraw) a subnet of this cluster"},
    {0},
};
