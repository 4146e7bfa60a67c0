// SPDX-License-Identifier: BSD-2-Clause
/* xgate: the operator CLI. `xgate [OPTIONS] OBJECT COMMAND [ARGS]`. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char usage_text[] =
	"Usage: xgate [OPTIONS] OBJECT COMMAND [ARGS...]\n"
	"\n"
	"Devices:\n"
	"  attach DEV transit|agent|gateway|pass [--mode native|generic] [--force]\n"
	"                                 pass: stub for the far end of a veth we send into\n"
	"  detach DEV\n"
	"  status                         programs, devices, modes, pin paths\n"
	"  stats [DEV] [--all] [--clear]  per-reason counters\n"
	"  reset                          detach every device, remove the instance's pins\n"
	"Host and overlay maps:\n"
	"  host set [ip ADDR] [gateway ADDR|none] [ttl N] | host show\n"
	"  vpc add|replace VNI [dividers ADDR[,ADDR...]] | vpc del VNI | vpc ls\n"
	"  subnet add|replace VNI CIDR [bouncers ADDR[,...]] [gw ADDR] [gwmac MAC] [remote]\n"
	"  subnet del VNI CIDR | subnet ls [VNI]\n"
	"  endpoint add|replace VNI ADDR mac MAC (host ADDR | dev DEV)\n"
	"  endpoint del VNI ADDR | endpoint ls [VNI]\n"
	"  cache ls | cache del VNI ADDR | cache flush     direct-path cache\n"
	"  apply -f FILE                  declarative: the same as the commands above\n"
	"Inter-cluster gateway:\n"
	"  gw genkey | gw pubkey          X25519 keys (base64); pubkey reads the private key on stdin\n"
	"  gw status|peers|routes [--gw NAME | --socket PATH]   a running gatewayd\n"
	"  gw subnet add|del VNI CIDR [--gw NAME | --socket PATH]\n"
	"Edge cluster tree (an edgeclusterd's API):\n"
	"  mission apply -f FILE|DIR [-f ...]  files, or a directory's *.json: MissionLists\n"
	"  mission get [NAME] [-l SELECTOR] | mission delete NAME\n"
	"  mission state NAME             its state map, one entry per path in the tree\n"
	"  cluster get [NAME] | cluster tree     the edge clusters: this one and its descendants\n"
	"  cluster attach --parent URL --token JOIN-TOKEN [--no-wait] [--timeout S] | cluster detach\n"
	"                                 (for attach, --token is the join token: give the API's\n"
	"                                 with $XGATE_TOKEN or --token-file)\n"
	"  mission|cluster ... --server URL     default $XGATE_SERVER, else http://127.0.0.1:7443\n"
	"  mission|cluster ... --token T | --token-file F | --ca FILE\n"
	"                                 defaults $XGATE_TOKEN, $XGATE_TOKEN_FILE, $XGATE_CA\n"
	"\n"
	"Options (anywhere on the line):\n"
	"  -n, --instance NAME  map set under /sys/fs/bpf/xgate/NAME (default: $XGATE_INSTANCE,\n"
	"                       else the --netns name, else \"default\"); one per host\n"
	"  -N, --netns NAME     run in network namespace NAME (/run/netns/NAME); use this,\n"
	"                       not `ip netns exec`, which hides /sys/fs/bpf\n"
	"  -o, --output FMT     table (default) or json;  -j is short for -o json\n"
	"  -v, --verbose        show libbpf's log\n"
	"  -h, --help           this text\n"
	"\n"
	"Exit codes: 0 ok, 1 system error, 2 usage, 3 not found, 4 already exists,\n"
	"            5 permission denied, 6 rejected by the verifier.\n"
	"  mission/cluster: 1 server unreachable or failing (5xx), 2 request refused as invalid\n"
	"            (400/413/415/422: the server's message names the field), 3 not found (404),\n"
	"            4 conflict (409: exists, or changed meanwhile), 5 bad or missing token (401).\n";

int object_help(const char *object)
{
	const char *line = usage_text;

	printf("Usage (xgate %s):\n", object);
	while (*line) {
		const char *nl = strchr(line, '\n');
		int len = nl ? (int)(nl - line) : (int)strlen(line);

		if (len > 2 && line[0] == ' ' && strstr(line, object) && (int)(strstr(line, object) - line) < len)
			printf("%.*s\n", len, line);
		line += len + (nl ? 1 : 0);
	}
	printf("Options: -n INSTANCE, -o table|json, -v. Exit codes: see `xgate help`.\n");
	return XG_OK;
}

const char *arg_value(struct args *a, const char *kw)
{
	const char *v = arg_next(a);

	if (!v)
		xg_err("'%s' needs a value", kw);
	return v;
}

int usage_error(const char *object, const char *fmt, ...)
{
	va_list ap;

	fputs("xgate: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(see `xgate %s help`)\n", object);
	return XG_EUSAGE;
}

/* Switch network namespace only: the mount namespace (and so the bpffs
 * holding our pins) stays the caller's. */
static int enter_netns(const char *name)
{
	char path[256];
	int fd;

	if (!*name || strchr(name, '/') || strlen(name) > 200)
		return xg_fail(XG_EUSAGE, "invalid network namespace name '%s'", name);
	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return xg_fail(errno == ENOENT ? XG_ENOTFOUND : XG_EPERM,
			       "network namespace '%s': %s", name, strerror(errno));
	if (setns(fd, CLONE_NEWNET)) {
		int err = errno;

		close(fd);
		return xg_fail(err == EPERM ? XG_EPERM : XG_EFAIL, "entering network namespace '%s': %s",
			       name, strerror(err));
	}
	close(fd);
	return XG_OK;
}

static const struct {
	const char *name;
	int (*fn)(struct cli *, struct args *);
} objects[] = {
	{ "attach", cmd_attach },     { "detach", cmd_detach }, { "status", cmd_status },
	{ "stats", cmd_stats },       { "reset", cmd_reset },   { "host", cmd_host },
	{ "vpc", cmd_vpc },           { "subnet", cmd_subnet }, { "endpoint", cmd_endpoint },
	{ "ep", cmd_endpoint },       { "cache", cmd_cache },   { "apply", cmd_apply },
	{ "gw", cmd_gw },             { "mission", cmd_mission }, { "cluster", cmd_cluster },
};

int main(int argc, char **argv)
{
	struct cli c = { .instance = getenv("XGATE_INSTANCE") };
	const char *netns = NULL;
	bool inst_given = c.instance && *c.instance;
	char **pos = calloc(argc + 1, sizeof(char *));
	struct args a = { 0, pos };

	if (!pos)
		return XG_EFAIL;
	if (!c.instance || !*c.instance)
		c.instance = XG_DEFAULT_INSTANCE;

	/* Options may appear anywhere; what remains is positional. */
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];

		if (!strcmp(s, "-h") || !strcmp(s, "--help") ||
		    (a.argc == 0 && !strcmp(s, "help"))) {
			fputs(usage_text, stdout);
			free(pos);
			return XG_OK;
		} else if (!strcmp(s, "-j") || !strcmp(s, "--json")) {
			c.json = true;
		} else if (!strcmp(s, "-v") || !strcmp(s, "--verbose")) {
			c.verbose = true;
		} else if (!strcmp(s, "-o") || !strcmp(s, "--output")) {
			if (++i >= argc) {
				free(pos);
				return xg_fail(XG_EUSAGE, "'%s' needs a value: table or json", s);
			}
			if (!strcmp(argv[i], "json"))
				c.json = true;
			else if (!strcmp(argv[i], "table"))
				c.json = false;
			else {
				free(pos);
				return xg_fail(XG_EUSAGE, "unknown output format '%s': table or json",
					       argv[i]);
			}
		} else if (!strcmp(s, "-N") || !strcmp(s, "--netns")) {
			if (++i >= argc) {
				free(pos);
				return xg_fail(XG_EUSAGE, "'%s' needs a namespace name", s);
			}
			netns = argv[i];
		} else if (!strcmp(s, "-n") || !strcmp(s, "--instance")) {
			if (++i >= argc) {
				free(pos);
				return xg_fail(XG_EUSAGE, "'%s' needs an instance name", s);
			}
			c.instance = argv[i];
			inst_given = true;
		} else {
			pos[a.argc++] = argv[i];
		}
	}
	xg_libbpf_capture(c.verbose);
	if (netns) {
		int rc = enter_netns(netns);

		if (rc) {
			free(pos);
			return rc;
		}
		if (!inst_given)
			c.instance = netns;
	}

	if (a.argc == 0) {
		fputs(usage_text, stderr);
		free(pos);
		return XG_EUSAGE;
	}
	for (size_t i = 0; i < sizeof(objects) / sizeof(objects[0]); i++) {
		if (!strcmp(a.argv[0], objects[i].name)) {
			int rc;

			a.argc--;
			a.argv++;
			rc = objects[i].fn(&c, &a);
			free(pos);
			return rc;
		}
	}
	xg_err("unknown object '%s' (try `xgate help`)", a.argv[0]);
	free(pos);
	return XG_EUSAGE;
}
