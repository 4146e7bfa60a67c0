/* SPDX-License-Identifier: BSD-2-Clause */
/* The xgate CLI: shared state, the operations every front end (argv,
 * apply -f) goes through, and output helpers. */
#ifndef XG_CLI_H
#define XG_CLI_H

#include <jansson.h>
#include <stdbool.h>
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
int object_help(const char *object);
int usage_error(const char *object, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- operations (cmd_net.c) ---- */
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
int op_subnet_put(struct xg_maps *m, struct subnet_spec *s, bool replace);
int op_endpoint_put(struct xg_maps *m, struct ep_spec *s, bool replace);
int op_host_set(struct xg_maps *m, const __u32 *ip, const __u32 *gw, const __u32 *ttl);

/* ---- commands ---- */
int cmd_attach(struct cli *c, struct args *a);
int cmd_detach(struct cli *c, struct args *a);
int cmd_status(struct cli *c, struct args *a);
int cmd_reset(struct cli *c, struct args *a);
int cmd_host(struct cli *c, struct args *a);
int cmd_vpc(struct cli *c, struct args *a);
int cmd_subnet(struct cli *c, struct args *a);
int cmd_endpoint(struct cli *c, struct args *a);
int cmd_cache(struct cli *c, struct args *a);
int cmd_stats(struct cli *c, struct args *a);
int cmd_apply(struct cli *c, struct args *a);
/* What apply -f checks before it writes anything: XG_OK, or the exit code
 * after the error (the JSON path) was printed. root is the parsed file. */
int apply_check(const char *file, json_t *root);
int cmd_gw(struct cli *c, struct args *a);
int cmd_mission(struct cli *c, struct args *a);
int cmd_cluster(struct cli *c, struct args *a);

/* ---- edgeapi.c: the edgeclusterd API client (http or https) ---- */
struct ecc {
	char server[512];
	bool tls;
	char host[256];
	int port;
	char base[256]; /* path prefix of the server URL, "" if none */
	char token[320];
	const char *ca;
};
/* Take --server, --token, --token-file and --ca out of a (the rest stays). */
int ecc_setup(struct ecc *e, struct args *a);
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
