// SPDX-License-Identifier: BSD-2-Clause
/*
 * `xgate app|session|node`: applications, sessions and nodes on a fornaxd
 * (core.fornax-serverless.centaurusinfra.io/v1, proto/fornax.md). Same
 * server and token options as `mission`, with fornaxd's defaults
 * ($XGATE_FORNAX_SERVER, else http://127.0.0.1:8470). Applications and
 * sessions live in a namespace: --namespace NS, default "default".
 *
 * `session open APP --wait` polls the session until it is Available (then
 * prints its endpoints) or final: a watch would save a few requests, but a
 * poll every POLL_MS is simpler to get right for a command that waits
 * seconds at most, and the benchmark measures opens with its own client.
 */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define GROUP	      "/apis/core.fornax-serverless.centaurusinfra.io/v1"
#define POLL_MS	      20
#define DATA_MAX      (16u << 10) /* sessionData, decoded (the server's limit) */
#define WAIT_SLACK_S  5		  /* past the session's own open timeout */
#define DEFAULT_NS    "default"
#define NAME_RAND_LEN 5

struct sv_args {
	const char *ns;
	const char *name;
	const char *file;
	const char *data;
	const char *session_name;
	long timeout_s, grace_s;
	bool wait, keep_instance, all_ns;
};

static json_t *md(json_t *o)
{
	return json_object_get(o, "metadata");
}

static const char *md_str(json_t *o, const char *k)
{
	return json_string_value(json_object_get(md(o), k));
}

static json_t *jget(json_t *o, const char *path)
{
	char key[64];

	while (o && *path) {
		size_t n = strcspn(path, ".");

		snprintf(key, sizeof(key), "%.*s", (int)n, path);
		o = json_object_get(o, key);
		path += n + (path[n] == '.');
	}
	return o;
}

static json_int_t jint(json_t *o, const char *path)
{
	return json_integer_value(jget(o, path));
}

static const char *jstr(json_t *o, const char *path)
{
	const char *s = json_string_value(jget(o, path));

	return s ? s : "";
}

/* "NS/resource[/NAME]" under the group: namespaced, or every namespace. */
static const char *ns_path(char *path, size_t len, const char *ns, const char *resource,
			   const char *name)
{
	char base[512];

	if (ns)
		snprintf(base, sizeof(base), GROUP "/namespaces/%s/%s", ns, resource);
	else
		snprintf(base, sizeof(base), GROUP "/%s", resource);
	return ecc_path(path, len, base, name);
}

/* "TCP 198.51.100.10:30001,..." */
static json_t *endpoints_text(json_t *s)
{
	json_t *eps = jget(s, "status.accessEndPoints"), *ep;
	char buf[512] = "";
	size_t off = 0, i;

	json_array_foreach(eps, i, ep) off += (size_t)snprintf(
	    buf + off, off < sizeof(buf) ? sizeof(buf) - off : 0, "%s%s %s:%lld", i ? "," : "",
	    jstr(ep, "protocol"), jstr(ep, "ipAddress"), (long long)jint(ep, "port"));
	return json_string(buf[0] ? buf : "-");
}

/* ---- app ---- */

static json_t *app_row(json_t *a)
{
	return json_pack(
	    "{s:s?,s:s?,s:I,s:I,s:I,s:I,s:I,s:I}", "name", md_str(a, "name"), "ns",
	    md_str(a, "namespace"), "min", jint(a, "spec.scalingPolicy.minimumInstance"), "max",
	    jint(a, "spec.scalingPolicy.maximumInstance"), "total",
	    jint(a, "status.totalInstances"), "idle", jint(a, "status.idleInstances"), "allocated",
	    jint(a, "status.allocatedInstances"), "pending", jint(a, "status.pendingInstances"));
}

static int app_get(struct cli *c, struct ecc *e, const struct sv_args *o)
{
	static const char *const cols[] = {"NAME", "NAMESPACE", "MIN",	   "MAX", "TOTAL",
					   "IDLE", "IN USE",	"PENDING", NULL};
	static const char *const keys[] = {"name", "ns",	"min",	   "max", "total",
					   "idle", "allocated", "pending", NULL};
	char path[1024];
	json_t *res;
	int rc;

	ns_path(path, sizeof(path), o->all_ns && !o->name ? NULL : o->ns, "applications", o->name);
	if ((rc = ecc_get(e, path, &res)))
		return rc;
	ecc_print(c, res, o->name != NULL, app_row, cols, keys);
	json_decref(res);
	return XG_OK;
}

/* Create the application, or replace what may change (the scaling policy,
 * the labels) at the resourceVersion it has now. */
static int app_apply(struct cli *c, struct ecc *e, const struct sv_args *o)
{
	json_error_t je;
	json_t *a, *res = NULL;
	const char *name, *ns;
	char path[1024], rv[32] = "", *body;
	int status = 0, rc;

	a = !strcmp(o->file, "-") ? json_loadf(stdin, JSON_REJECT_DUPLICATES, &je)
				  : json_load_file(o->file, JSON_REJECT_DUPLICATES, &je);
	if (!a)
		return je.line < 0
			   ? xg_fail(access(o->file, R_OK) ? XG_ENOTFOUND : XG_EFAIL, "%s", je.text)
			   : xg_fail(XG_EUSAGE, "%s:%d:%d: %s", o->file, je.line, je.column,
				     je.text);
	if (!json_is_object(a) || !json_is_object(md(a))) {
		json_decref(a);
		return xg_fail(XG_EUSAGE, "%s: an Application is a JSON object with metadata",
			       o->file);
	}
	json_object_del(md(a), "resourceVersion");
	json_object_del(md(a), "uid");
	json_object_del(md(a), "creationTimestamp");
	json_object_del(a, "status");
	ns = md_str(a, "namespace") ? md_str(a, "namespace") : o->ns;
	name = md_str(a, "name");
	if (name) {
		rc = ecc_call(e, "GET", ns_path(path, sizeof(path), ns, "applications", name), NULL,
			      &status, &res);
		if (rc)
			goto out;
		if (status == 200 && md_str(res, "resourceVersion"))
			snprintf(rv, sizeof(rv), "%s", md_str(res, "resourceVersion"));
		else if (status != 404) {
			rc = ecc_fail(status, res);
			goto out;
		}
		json_decref(res);
		res = NULL;
	}
	if (rv[0])
		json_object_set_new(md(a), "resourceVersion", json_string(rv));
	else
		ns_path(path, sizeof(path), ns, "applications", NULL);
	body = json_dumps(a, JSON_COMPACT);
	rc = body ? ecc_call(e, rv[0] ? "PUT" : "POST", path, body, &status, &res)
		  : xg_fail(XG_EFAIL, "out of memory");
	free(body);
	if (rc)
		goto out;
	if (status != 200 && status != 201) {
		rc = ecc_fail(status, res);
	} else if (c->json) {
		out_json(res);
	} else {
		const char *now = md_str(res, "resourceVersion");

		printf("application %s/%s %s\n", ns, md_str(res, "name"),
		       status == 201		 ? "created"
		       : now && !strcmp(now, rv) ? "unchanged"
						 : "configured");
	}
out:
	json_decref(res);
	json_decref(a);
	return rc;
}

static int delete_one(struct ecc *e, const char *what, const char *path, const char *name,
		      const char *done)
{
	json_t *res = NULL;
	int status, rc = ecc_call(e, "DELETE", path, NULL, &status, &res);

	if (!rc && status != 200 && status != 202)
		rc = ecc_fail(status, res);
	else if (!rc)
		printf("%s %s %s\n", what, name, done);
	json_decref(res);
	return rc;
}

/* ---- session ---- */

static json_t *session_row(json_t *s)
{
	return json_pack("{s:s?,s:s,s:s,s:s,s:s,s:o}", "name", md_str(s, "name"), "app",
			 jstr(s, "spec.applicationName"), "status", jstr(s, "status.sessionStatus"),
			 "pod", jstr(s, "status.podReference.name"), "node",
			 jstr(s, "status.podReference.node"), "endpoints", endpoints_text(s));
}

static int session_get(struct cli *c, struct ecc *e, const struct sv_args *o)
{
	static const char *const cols[] = {"NAME", "APPLICATION", "STATUS", "POD",
					   "NODE", "ENDPOINTS",	  NULL};
	static const char *const keys[] = {"name", "app",	"status", "pod",
					   "node", "endpoints", NULL};
	char path[1024];
	json_t *res;
	int rc;

	ns_path(path, sizeof(path), o->all_ns && !o->name ? NULL : o->ns, "applicationsessions",
		o->name);
	if ((rc = ecc_get(e, path, &res)))
		return rc;
	ecc_print(c, res, o->name != NULL, session_row, cols, keys);
	json_decref(res);
	return XG_OK;
}

/* APP-xxxxx: a name the server is unlikely to have (a clash is a 409). */
static void session_name(char *out, size_t len, const char *app)
{
	static const char alnum[] = "bcdfghjklmnpqrstvwxz2456789";
	char r[NAME_RAND_LEN + 1];

	for (int i = 0; i < NAME_RAND_LEN; i++)
		r[i] = alnum[randombytes_uniform(sizeof(alnum) - 1)];
	r[NAME_RAND_LEN] = 0;
	snprintf(out, len, "%.50s-%s", app, r);
}

static bool is_final(const char *st)
{
	return !strcmp(st, "Closed") || !strcmp(st, "Timeout");
}

static bool is_open(const char *st)
{
	return !strcmp(st, "Available") || !strcmp(st, "InUse");
}

static void print_session(struct cli *c, json_t *s)
{
	json_t *eps = jget(s, "status.accessEndPoints"), *ep;
	size_t i;

	if (c->json) {
		out_json(s);
		return;
	}
	printf("session %s/%s %s\n", md_str(s, "namespace") ? md_str(s, "namespace") : "",
	       md_str(s, "name"), jstr(s, "status.sessionStatus"));
	json_array_foreach(eps, i, ep) printf("  %s %s:%lld\n", jstr(ep, "protocol"),
					      jstr(ep, "ipAddress"), (long long)jint(ep, "port"));
}

/* Poll until the session is open (0) or final or the wait is over. */
static int session_wait(struct cli *c, struct ecc *e, const char *path, long timeout_s)
{
	struct timespec t0, now, nap = {0, POLL_MS * 1000000L};
	json_t *res = NULL;
	int status, rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		const char *st;

		if ((rc = ecc_call(e, "GET", path, NULL, &status, &res)))
			return rc;
		if (status != 200) {
			rc = ecc_fail(status, res);
			json_decref(res);
			return rc;
		}
		st = jstr(res, "status.sessionStatus");
		if (is_open(st) || is_final(st)) {
			print_session(c, res);
			rc = is_open(st)
				 ? XG_OK
				 : xg_fail(XG_EFAIL, "session %s is %s%s%s", md_str(res, "name"),
					   st, jstr(res, "status.reason")[0] ? ": " : "",
					   jstr(res, "status.reason"));
			json_decref(res);
			return rc;
		}
		json_decref(res);
		res = NULL;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec > timeout_s + WAIT_SLACK_S)
			return xg_fail(XG_EFAIL, "session not open after %ld s (still %s)",
				       timeout_s + WAIT_SLACK_S, st);
		nanosleep(&nap, NULL);
	}
}

static int session_open(struct cli *c, struct ecc *e, const struct sv_args *o)
{
	size_t dlen = o->data ? strlen(o->data) : 0;
	char name[128], path[1024], *b64, *body;
	json_t *s, *spec, *res = NULL;
	int status, rc;

	if (dlen > DATA_MAX)
		return xg_fail(XG_EUSAGE, "--data is %zu bytes: at most %u", dlen, DATA_MAX);
	b64 = malloc(sodium_base64_ENCODED_LEN(dlen, sodium_base64_VARIANT_ORIGINAL));
	if (!b64)
		return xg_fail(XG_EFAIL, "out of memory");
	sodium_bin2base64(b64, sodium_base64_ENCODED_LEN(dlen, sodium_base64_VARIANT_ORIGINAL),
			  (const unsigned char *)(o->data ? o->data : ""), dlen,
			  sodium_base64_VARIANT_ORIGINAL);
	if (o->session_name)
		snprintf(name, sizeof(name), "%s", o->session_name);
	else
		session_name(name, sizeof(name), o->name);
	spec = json_pack("{s:s,s:s,s:b}", "applicationName", o->name, "sessionData", b64,
			 "killInstanceWhenSessionClosed", !o->keep_instance);
	free(b64);
	if (o->timeout_s >= 0)
		json_object_set_new(spec, "openTimeoutSeconds", json_integer(o->timeout_s));
	if (o->grace_s >= 0)
		json_object_set_new(spec, "closeGracePeriodSeconds", json_integer(o->grace_s));
	s = json_pack("{s:s,s:s,s:{s:s,s:s},s:o}", "apiVersion",
		      "core.fornax-serverless.centaurusinfra.io/v1", "kind", "ApplicationSession",
		      "metadata", "name", name, "namespace", o->ns, "spec", spec);
	body = s ? json_dumps(s, JSON_COMPACT) : NULL;
	json_decref(s);
	if (!body)
		return xg_fail(XG_EFAIL, "out of memory");
	rc = ecc_call(e, "POST", ns_path(path, sizeof(path), o->ns, "applicationsessions", NULL),
		      body, &status, &res);
	free(body);
	if (rc)
		return rc;
	if (status != 201 && status != 200) {
		rc = ecc_fail(status, res);
	} else if (o->wait) {
		rc = session_wait(c, e,
				  ns_path(path, sizeof(path), o->ns, "applicationsessions", name),
				  o->timeout_s >= 0 ? o->timeout_s : 10);
	} else {
		print_session(c, res);
	}
	json_decref(res);
	return rc;
}

/* ---- node ---- */

static json_t *node_row(json_t *n)
{
	json_t *conds = jget(n, "status.conditions"), *cd, *addr;
	const char *ready = "Unknown";
	size_t i;

	json_array_foreach(conds, i, cd) if (!strcmp(jstr(cd, "type"), "Ready")) ready =
	    !strcmp(jstr(cd, "status"), "True") ? "Ready" : "NotReady";
	addr = json_array_get(jget(n, "status.addresses"), 0);
	return json_pack("{s:s?,s:s,s:s,s:s,s:O?,s:O?,s:I}", "name", md_str(n, "name"), "ready",
			 ready, "ip", jstr(addr, "address"), "cidr", jstr(n, "spec.podCIDR"), "cpu",
			 jget(n, "status.allocatable.cpu"), "memory",
			 jget(n, "status.allocatable.memory"), "rev",
			 jint(n, "status.nodeRevision"));
}

static int node_get(struct cli *c, struct ecc *e, const struct sv_args *o)
{
	static const char *const cols[] = {"NAME", "STATUS", "ADDRESS",	 "POD CIDR",
					   "CPU",  "MEMORY", "REVISION", NULL};
	static const char *const keys[] = {"name", "ready",  "ip",  "cidr",
					   "cpu",  "memory", "rev", NULL};
	char path[1024];
	json_t *res;
	int rc;

	if ((rc = ecc_get(e, ecc_path(path, sizeof(path), GROUP "/nodes", o->name), &res)))
		return rc;
	ecc_print(c, res, o->name != NULL, node_row, cols, keys);
	json_decref(res);
	return XG_OK;
}

/* ---- the command line ---- */

static int num(const char *object, const char *opt, const char *v, long max, long *out)
{
	char *end;
	long n;

	if (!v)
		return XG_EUSAGE;
	n = strtol(v, &end, 10);
	if (!*v || *end || n < 0 || n > max)
		return usage_error(object, "%s '%s': a whole number of seconds, 0..%ld", opt, v,
				   max);
	*out = n;
	return XG_OK;
}

/* The options of object's verb; the one positional argument goes to name. */
static int sv_parse(const char *object, const char *verb, struct args *a, struct sv_args *o)
{
	bool open = !strcmp(object, "session") && arg_is(verb, "open");
	const char *s;

	memset(o, 0, sizeof(*o));
	o->ns = DEFAULT_NS;
	o->timeout_s = o->grace_s = -1;
	while ((s = arg_next(a))) {
		int rc = XG_OK;

		if (arg_is(s, "--namespace") && strcmp(object, "node")) {
			if (!(o->ns = arg_value(a, s)))
				return XG_EUSAGE;
		} else if (arg_is(s, "-A") && arg_is(verb, "get") && strcmp(object, "node")) {
			o->all_ns = true;
		} else if (arg_is(verb, "apply") && (arg_is(s, "-f") || arg_is(s, "--filename"))) {
			if (!(o->file = arg_value(a, s)))
				return XG_EUSAGE;
		} else if (open && arg_is(s, "--data")) {
			if (!(o->data = arg_value(a, s)))
				return XG_EUSAGE;
		} else if (open && arg_is(s, "--name")) {
			if (!(o->session_name = arg_value(a, s)))
				return XG_EUSAGE;
		} else if (open && arg_is(s, "--wait")) {
			o->wait = true;
		} else if (open && arg_is(s, "--keep-instance")) {
			o->keep_instance = true;
		} else if (open && arg_is(s, "--timeout")) {
			rc = num(object, s, arg_value(a, s), 3600, &o->timeout_s);
		} else if (open && arg_is(s, "--grace")) {
			rc = num(object, s, arg_value(a, s), 3600, &o->grace_s);
		} else if (!o->name && s[0] != '-' && !arg_is(verb, "apply")) {
			o->name = s;
		} else {
			return usage_error(object, "unexpected argument '%s'", s);
		}
		if (rc)
			return rc;
	}
	return XG_OK;
}

static int app_main(struct cli *c, struct args *a, const char *verb)
{
	struct sv_args o;
	struct ecc e;
	char path[1024];
	int rc;

	if ((rc = ecc_setup(&e, a, &ecc_fornaxd)) || (rc = sv_parse("app", verb, a, &o)))
		return rc;
	if (arg_is(verb, "apply"))
		return o.file ? app_apply(c, &e, &o)
			      : usage_error("app", "apply needs -f FILE (an Application in JSON, "
						   "- for stdin)");
	if (arg_is(verb, "get"))
		return app_get(c, &e, &o);
	if (!o.name)
		return usage_error("app", "delete needs an application NAME");
	return delete_one(&e, "application",
			  ns_path(path, sizeof(path), o.ns, "applications", o.name), o.name,
			  "deleted");
}

static int session_main(struct cli *c, struct args *a, const char *verb)
{
	struct sv_args o;
	struct ecc e;
	char path[1024];
	int rc;

	if ((rc = ecc_setup(&e, a, &ecc_fornaxd)) || (rc = sv_parse("session", verb, a, &o)))
		return rc;
	if (arg_is(verb, "get"))
		return session_get(c, &e, &o);
	if (!o.name)
		return usage_error("session", "%s needs %s", verb,
				   arg_is(verb, "open") ? "an application NAME" : "a session NAME");
	if (arg_is(verb, "open"))
		return session_open(c, &e, &o);
	return delete_one(&e, "session",
			  ns_path(path, sizeof(path), o.ns, "applicationsessions", o.name), o.name,
			  "closing");
}

static int node_main(struct cli *c, struct args *a, const char *verb)
{
	struct sv_args o;
	struct ecc e;
	char path[1024];
	int rc;

	if ((rc = ecc_setup(&e, a, &ecc_fornaxd)) || (rc = sv_parse("node", verb, a, &o)))
		return rc;
	if (arg_is(verb, "get"))
		return node_get(c, &e, &o);
	if (!o.name)
		return usage_error("node", "delete needs a node NAME");
	return delete_one(&e, "node", ecc_path(path, sizeof(path), GROUP "/nodes", o.name), o.name,
			  "forgotten");
}

#define VERB(fn, main, verb)                                                                       \
	static int fn(struct cli *c, struct args *a)                                               \
	{                                                                                          \
		return main(c, a, verb);                                                           \
	}
VERB(app_apply_cmd, app_main, "apply")
VERB(app_get_cmd, app_main, "get")
VERB(app_delete_cmd, app_main, "delete")
VERB(session_open_cmd, session_main, "open")
VERB(session_get_cmd, session_main, "get")
VERB(session_close_cmd, session_main, "close")
VERB(node_get_cmd, node_main, "get")
VERB(node_delete_cmd, node_main, "delete")

const struct cmd app_verbs[] = {
    {"apply", app_apply_cmd, "-f FILE [--namespace NS]",
     "create, or change the scaling policy and labels"},
    {"get", app_get_cmd, "[NAME] [--namespace NS | -A]", NULL},
    {"delete", app_delete_cmd, "NAME [--namespace NS]", "its pods stop, its sessions close"},
    {"ls", app_get_cmd, NULL, NULL},
    {"del", app_delete_cmd, NULL, NULL},
    {0},
};

const struct cmd session_verbs[] = {
    {"open", session_open_cmd,
     "APP [--data TEXT] [--name N] [--timeout S] [--grace S] [--keep-instance] [--wait]",
     "--wait: until Available, then print its endpoints"},
    {"get", session_get_cmd, "[NAME] [--namespace NS | -A]", NULL},
    {"close", session_close_cmd, "NAME [--namespace NS]", NULL},
    {"ls", session_get_cmd, NULL, NULL},
    {"delete", session_close_cmd, NULL, NULL},
    {0},
};

const struct cmd node_verbs[] = {
    {"get", node_get_cmd, "[NAME]", NULL},
    {"delete", node_delete_cmd, "NAME", "forget it and its credential"},
    {"ls", node_get_cmd, NULL, NULL},
    {0},
};
