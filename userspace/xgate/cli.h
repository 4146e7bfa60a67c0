/* SPDX-License-Identifier: BSD-2-Clause */
/* The xgate CLI: shared state, the operations every front end (argv,
 * apply -f) goes through, and output helpers. */
#ifndef XG_CLI_H
#define XG_CLI_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "xg.h"

struct cli {
	const char *instance;
	bool json;
	bool verbose;
};

/* Argument cursor: iproute2-style "keyword value" parsing. */
struct args {
	int argc;
	char **argv;
};

static inline const char *arg_next(struct args *a)
{
	if (a->argc <= 0)
		return NULL;
	a->argc--;
	return *a->argv++;
}

static inline bool arg_is(const char *s, const char *kw)
{
	return s && !strcmp(s, kw);
}

/* A keyword's value, or an error naming the keyword. */
const char *arg_value(struct args *a, const char *kw);

/*
 * The command tables: one per object, each row {name, handler, usage}. They
 * drive both dispatch and help (`xgate help`, `xgate OBJECT help`, the usage
 * line a usage error points to), so the two cannot disagree. A verb with a
 * NULL usage is an alias: dispatched, not listed.
 */
typedef int (*cmd_fn)(struct cli *c, struct args *a);
struct cmd {
	const char *name;
	cmd_fn fn;
	const char *usage; /* what follows "xgate OBJECT VERB" */
	const char *help;  /* one line, or NULL */
};
struct object {
	const char *name;
	const char *alias;	 /* another name it answers to, or NULL */
	const char *section;	 /* heading in `xgate help`, on the first object of a group */
	const struct cmd *verbs; /* NULL-terminated; NULL for an object that is a command */
	cmd_fn fn;		 /* ... then its handler, usage and help */
	const char *usage;
	const char *help;
	const char *notes; /* printed under the object's lines, or NULL */
	bool no_maps;	   /* talks to a daemon, not to an instance's maps */
};
extern const struct object xg_objects[];
const struct object *object_find(const char *name);
int object_run(const struct object *o, struct cli *c, struct args *a);
int object_help(const char *object);
void help_print(FILE *f);
/* "xgate OBJECT: unknown ..." with the object's verbs; exit 2. */
int usage_error(const char *object, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The verb tables of each object (cmd_*.c). */
extern const struct cmd host_verbs[], vpc_verbs[], subnet_verbs[], endpoint_verbs[], cache_verbs[],
    neigh_verbs[], gw_verbs[], mission_verbs[], cluster_verbs[], ingress_verbs[], app_verbs[],
    session_verbs[], node_verbs[];

/* ---- ops.c: the operations every front end (commands, apply -f) uses ---- */
struct vpc_spec {
	__u32 vni;
	struct xg_vpc v;
};
struct subnet_spec {
	__u32 vni;
	__u32 ip_be;
	int plen;
	struct xg_subnet v;
	bool has_gw, has_gwmac;
};
struct ep_spec {
	__u32 vni;
	__u32 ip_be;
	struct xg_endpoint v;
	const char *dev;
	bool has_host;
};

int op_vpc_put(struct xg_maps *m, const struct vpc_spec *s, bool replace);
int op_vpc_del(struct xg_maps *m, __u32 vni);
int op_subnet_put(struct xg_maps *m, struct subnet_spec *s, bool replace);
int op_subnet_del(struct xg_maps *m, __u32 vni, __u32 ip_be, int plen);
int op_endpoint_put(struct xg_maps *m, struct ep_spec *s, bool replace);
int op_endpoint_del(struct xg_maps *m, __u32 vni, __u32 ip_be);
int op_host_set(struct xg_maps *m, const __u32 *ip, const __u32 *gw, const __u32 *ttl);
bool op_vpc_exists(struct xg_maps *m, __u32 vni);

struct sess_spec {
	struct xg_sess_key k;
	struct xg_sess v;
};

/* ---- cmd_apply.c: the cluster file reader (apply -f), checked whole ---- */
struct apply_plan {
	json_t *root;
	bool has_ip, has_gw, has_ttl;
	__u32 ip, gw, ttl;
	json_t *attach; /* root's "attach" array, checked */
	int nv, ns, ne, nsess;
	struct vpc_spec *v;
	struct subnet_spec *s;
	struct ep_spec *e;
	struct sess_spec *sess;
};
/* Parse and check a cluster file (file names it in messages) into p: XG_OK,
 * or the exit code after a message naming the JSON path. Call
 * apply_plan_free(p) either way. References to devices are checked here,
 * to VPCs by cmd_apply against the maps. */
int apply_plan_parse(const char *file, const char *text, size_t len, struct apply_plan *p);
int apply_plan_load(const char *file, struct apply_plan *p);
void apply_plan_free(struct apply_plan *p);

/* ---- commands that are objects of their own ---- */
int cmd_attach(struct cli *c, struct args *a);
int cmd_detach(struct cli *c, struct args *a);
int cmd_status(struct cli *c, struct args *a);
int cmd_reset(struct cli *c, struct args *a);
int cmd_stats(struct cli *c, struct args *a);
int cmd_apply(struct cli *c, struct args *a);

/* ---- edgeapi.c: the daemons' API client (http or https) ---- */
struct ecc_daemon;
struct ecc {
	const struct ecc_daemon *d;
	char server[512];
	bool tls;
	char host[256];
	int port;
	char base[256]; /* path prefix of the server URL, "" if none */
	char token[320];
	const char *ca;
};
/* Which daemon a command talks to: its environment variables' prefix and
 * its default server. */
struct ecc_daemon {
	const char *name;
	const char *env; /* "XGATE": $XGATE_SERVER, $XGATE_TOKEN, $XGATE_TOKEN_FILE */
	const char *server;
};
extern const struct ecc_daemon ecc_edgeclusterd, ecc_fornaxd;
/* Take --server, --token, --token-file and --ca out of a (the rest stays). */
int ecc_setup(struct ecc *e, struct args *a, const struct ecc_daemon *d);
/* One request; XG_OK with the HTTP status and the JSON answer (or NULL). */
int ecc_call(const struct ecc *e, const char *method, const char *path, const char *body,
	     int *status, json_t **out);
/* Print the server's message as it is; the exit code for the HTTP status. */
int ecc_fail(int status, json_t *resp);
void ecc_urlencode(const char *s, char *out, size_t len);
/* "base/NAME" (NAME percent-encoded) in path, or base alone if name is NULL. */
const char *ecc_path(char *path, size_t len, const char *base, const char *name);
/* GET path expecting 200: else the failure is reported (ecc_fail), *res NULL. */
int ecc_get(const struct ecc *e, const char *path, json_t **res);
/* A get's answer, one object (one) or a list's items: JSON, or a row each. */
void ecc_print(struct cli *c, json_t *res, bool one, json_t *(*row)(json_t *o),
	       const char *const *cols, const char *const *keys);

/* ---- output.c ---- */
/* Print rows (JSON objects) as an aligned table with the given columns, or
 * the whole value as JSON. Takes ownership of v. */
void out_rows(struct cli *c, json_t *v, const char *const *cols, const char *const *keys);
void out_json(json_t *v);
json_t *json_ip(__u32 ip_be);
json_t *json_mac(const __u8 *mac);
json_t *json_ip_list(const __u32 *ips, __u32 n);
const char *ifname_of(__u32 ifindex, char buf[16]);

#endif
