// SPDX-License-Identifier: BSD-2-Clause
/* The object table, dispatch, and the help printed from the same tables
 * (`xgate help`, `xgate OBJECT help`, docs/cli.md). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

#define HELP_COL 33 /* where a line's explanation starts when it fits */

static const char options_text[] =
    "Options (anywhere on the line):\n"
    "  -n, --instance NAME  map set under /sys/fs/bpf/xgate/NAME (default: $XGATE_INSTANCE,\n"
    "                       else the --netns name, else \"default\"); one per host. Without\n"
    "                       -N, commands run in the network namespace the instance was made in\n"
    "  -N, --netns NAME     run in network namespace NAME (/run/netns/NAME); use this,\n"
    "                       not `ip netns exec`, which hides /sys/fs/bpf\n"
    "  -o, --output FMT     table (default) or json;  -j is short for -o json\n"
    "  -v, --verbose        show libbpf's log\n"
    "  -h, --help           this text\n";

static const char exit_text[] =
    "Exit codes: 0 ok, 1 system error, 2 usage, 3 not found, 4 already exists,\n"
    "            5 permission denied, 6 rejected by the verifier.\n"
    "  gw: 2 refused as invalid, 3 no such subnet or no gatewayd, 4 subnet already there.\n"
    "  ingress: 2 malformed endpoint, 3 unknown VNI (or no such session), 4 public port\n"
    "            taken by another session (or the pod endpoint serves one already).\n"
    "  mission/cluster/app/session/node: 1 server unreachable or failing (5xx), 2 request\n"
    "            refused as invalid (400/413/415/422: the server's message names the field),\n"
    "            3 not found (404), 4 conflict (409: exists, or changed meanwhile), 5 bad or\n"
    "            missing token (401). session open --wait: 1 the session timed out or closed.\n";

static const char edge_notes[] =
    "  mission|cluster ... --server URL     default $XGATE_SERVER, else http://127.0.0.1:7443\n"
    "  mission|cluster ... --token T | --token-file F | --ca FILE\n"
    "                                 defaults $XGATE_TOKEN, $XGATE_TOKEN_FILE, $XGATE_CA\n"
    "                                 (for cluster attach, --token is the join token: give the\n"
    "                                 API's with $XGATE_TOKEN or --token-file)\n";

static const char fornax_notes[] =
    "  app|session|node ... --server URL  default $XGATE_FORNAX_SERVER, else "
    "http://127.0.0.1:8470\n"
    "  app|session|node ... --token T | --token-file F | --ca FILE\n"
    "                                 defaults $XGATE_FORNAX_TOKEN, $XGATE_FORNAX_TOKEN_FILE,\n"
    "                                 $XGATE_CA; --namespace NS: default \"default\"\n";

const struct object xg_objects[] = {
    {.name = "attach",
     .section = "Devices",
     .fn = cmd_attach,
     .usage = "DEV transit|agent|gateway|ingress|pass [--mode native|generic] [--force]",
     .help = "pass: the stub for the far end of a veth xgate sends into"},
    {.name = "detach", .fn = cmd_detach, .usage = "DEV"},
    {.name = "status",
     .fn = cmd_status,
     .usage = "",
     .help = "instance, host, devices and pass stubs: role, mode, prog id"},
    {.name = "stats",
     .fn = cmd_stats,
     .usage = "[DEV] [--all] [--clear]",
     .help = "per-reason counters (packets, bytes)"},
    {.name = "reset",
     .fn = cmd_reset,
     .usage = "",
     .help = "detach every device and pass stub, remove the instance's pins"},
    {.name = "host", .section = "Host and overlay maps", .verbs = host_verbs},
    {.name = "vpc", .verbs = vpc_verbs},
    {.name = "subnet", .verbs = subnet_verbs},
    {.name = "endpoint", .alias = "ep", .verbs = endpoint_verbs},
    {.name = "cache", .verbs = cache_verbs},
    {.name = "neigh", .verbs = neigh_verbs},
    {.name = "apply",
     .fn = cmd_apply,
     .usage = "-f FILE",
     .help = "a cluster file: all of it checked, then applied"},
    {.name = "ingress", .section = "Session ingress", .verbs = ingress_verbs},
    {.name = "gw", .section = "Inter-cluster gateway", .verbs = gw_verbs, .no_maps = true},
    {.name = "mission",
     .section = "Edge cluster tree (an edgeclusterd's API)",
     .verbs = mission_verbs,
     .notes = edge_notes,
     .no_maps = true},
    {.name = "cluster", .verbs = cluster_verbs, .notes = edge_notes, .no_maps = true},
    {.name = "app",
     .section = "Serverless (a fornaxd's API)",
     .verbs = app_verbs,
     .notes = fornax_notes,
     .no_maps = true},
    {.name = "session", .verbs = session_verbs, .notes = fornax_notes, .no_maps = true},
    {.name = "node", .verbs = node_verbs, .notes = fornax_notes, .no_maps = true},
    {0},
};

const struct object *object_find(const char *name)
{
	for (const struct object *o = xg_objects; o->name; o++)
		if (!strcmp(o->name, name) || (o->alias && !strcmp(o->alias, name)))
			return o;
	return NULL;
}

static void line(FILE *f, const char *obj, const char *verb, const char *usage, const char *help)
{
	char buf[256];
	int n = snprintf(buf, sizeof(buf), "  %s%s%s%s%s", obj, verb ? " " : "", verb ? verb : "",
			 usage && *usage ? " " : "", usage ? usage : "");

	if (!help)
		fprintf(f, "%s\n", buf);
	else if (n < HELP_COL - 1)
		fprintf(f, "%-*s%s\n", HELP_COL, buf, help);
	else
		fprintf(f, "%s\n%*s%s\n", buf, HELP_COL, "", help);
}

static void object_lines(FILE *f, const struct object *o)
{
	if (!o->verbs) {
		line(f, o->name, NULL, o->usage, o->help);
		return;
	}
	for (const struct cmd *v = o->verbs; v->name; v++)
		if (v->usage)
			line(f, o->name, v->name, v->usage, v->help);
}

void help_print(FILE *f)
{
	fputs("Usage: xgate [OPTIONS] OBJECT COMMAND [ARGS...]\n", f);
	for (const struct object *o = xg_objects; o->name; o++) {
		if (o->section)
			fprintf(f, "\n%s:\n", o->section);
		object_lines(f, o);
		if (o->notes && (!o[1].name || o[1].notes != o->notes))
			fputs(o->notes, f);
	}
	fputc('\n', f);
	fputs(options_text, f);
	fputc('\n', f);
	fputs(exit_text, f);
}

int object_help(const char *name)
{
	const struct object *o = object_find(name);

	if (!o)
		return xg_fail(XG_EUSAGE, "unknown object '%s' (try `xgate help`)", name);
	printf("Usage: xgate [OPTIONS] %s%s\n", o->name, o->verbs ? " COMMAND [ARGS...]" : " ...");
	object_lines(stdout, o);
	if (o->notes)
		fputs(o->notes, stdout);
	printf(
	    "Options: -n INSTANCE, -N NETNS, -o table|json, -v. Exit codes: see `xgate help`.\n");
	return XG_OK;
}

/* "add, replace, del or ls": an object's listed verbs, for messages. */
static const char *verb_list(const struct object *o, char *buf, size_t len)
{
	size_t off = 0;
	int n = 0, total = 0;

	buf[0] = 0;
	for (const struct cmd *v = o->verbs; v && v->name; v++)
		total += v->usage != NULL;
	for (const struct cmd *v = o->verbs; v && v->name; v++) {
		if (!v->usage)
			continue;
		n++;
		off += (size_t)snprintf(buf + off, off < len ? len - off : 0, "%s%s",
					n == 1	     ? ""
					: n == total ? " or "
						     : ", ",
					v->name);
	}
	return buf;
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

int object_run(const struct object *o, struct cli *c, struct args *a)
{
	const char *verb;
	char verbs[160];

	if (a->argc && (arg_is(a->argv[0], "help") || arg_is(a->argv[0], "--help")))
		return object_help(o->name);
	if (!o->verbs)
		return o->fn(c, a);
	verb = arg_next(a);
	if (!verb)
		return usage_error(o->name, "missing command: %s",
				   verb_list(o, verbs, sizeof(verbs)));
	for (const struct cmd *v = o->verbs; v->name; v++)
		if (!strcmp(v->name, verb))
			return v->fn(c, a);
	return usage_error(o->name, "unknown command '%s': %s", verb,
			   verb_list(o, verbs, sizeof(verbs)));
}
