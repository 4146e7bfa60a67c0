// SPDX-License-Identifier: BSD-2-Clause
/*
 * `xgate cluster get [NAME] | tree`: the edge clusters an edgeclusterd knows
 * (itself first, then its descendants with paths like "b" and "b/c");
 * `xgate cluster attach --parent URL --token T | detach`: drive its attach
 * state machine (the Attach resource) and follow it to its end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define CLUSTERS "/apis/edge.xgate.io/v1/edgeclusters"
#define ATTACH	 "/apis/edge.xgate.io/v1/attach"

static const char *str_at(json_t *o, const char *a, const char *b)
{
	return json_string_value(json_object_get(json_object_get(o, a), b));
}

static json_t *labels_text(json_t *labels)
{
	char buf[512] = "";
	size_t off = 0;
	const char *k;
	json_t *v;

	json_object_foreach(labels, k, v) off +=
	    (size_t)snprintf(buf + off, off < sizeof(buf) ? sizeof(buf) - off : 0, "%s%s=%s",
			     off ? "," : "", k, json_string_value(v));
	return json_string(buf);
}

static json_t *cluster_row(json_t *o)
{
	json_t *st = json_object_get(o, "state");

	return json_pack(
	    "{s:s?,s:s?,s:s?,s:s?,s:s?,s:I,s:I,s:o}", "name", str_at(o, "metadata", "name"), "path",
	    str_at(o, "state", "path"), "health", str_at(o, "state", "health"), "distro",
	    str_at(o, "spec", "distro"), "driver", str_at(o, "spec", "driver"), "children",
	    (json_int_t)json_array_size(json_object_get(st, "children")), "missions",
	    json_integer_value(json_object_get(json_object_get(st, "missions"), "matched")),
	    "labels", labels_text(json_object_get(json_object_get(o, "metadata"), "labels")));
}

static int cluster_get(struct cli *c, struct ecc *e, const char *name)
{
	static const char *const cols[] = {"NAME",     "PATH",	   "HEALTH", "DISTRO", "DRIVER",
					   "CHILDREN", "MISSIONS", "LABELS", NULL};
	static const char *const keys[] = {"name",     "path",	   "health", "distro", "driver",
					   "children", "missions", "labels", NULL};
	char path[1024];
	json_t *res;
	int rc = ecc_get(e, ecc_path(path, sizeof(path), CLUSTERS, name), &res);

	if (rc)
		return rc;
	ecc_print(c, res, name != NULL, cluster_row, cols, keys);
	json_decref(res);
	return XG_OK;
}

static int by_path(const void *a, const void *b)
{
	const char *pa = str_at(*(json_t *const *)a, "state", "path");
	const char *pb = str_at(*(json_t *const *)b, "state", "path");

	return strcmp(pa ? pa : "", pb ? pb : "");
}

/* One line of the tree table: the name indented by depth. */
static json_t *tree_row(json_t *o, int depth)
{
	json_t *st = json_object_get(o, "state"), *m = json_object_get(st, "missions");
	char name[160], missions[64], kind[64];
	const char *hb = str_at(o, "state", "lastHeartbeat");

	snprintf(name, sizeof(name), "%*s%s%s", depth * 2, "", depth ? "- " : "",
		 str_at(o, "metadata", "name") ? str_at(o, "metadata", "name") : "?");
	snprintf(missions, sizeof(missions), "%" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT,
		 json_integer_value(json_object_get(m, "matched")),
		 json_integer_value(json_object_get(m, "known")));
	snprintf(kind, sizeof(kind), "%s/%s",
		 str_at(o, "spec", "distro") ? str_at(o, "spec", "distro") : "?",
		 str_at(o, "spec", "driver") ? str_at(o, "spec", "driver") : "?");
	return json_pack("{s:s,s:s?,s:s,s:s,s:s,s:o}", "name", name, "health",
			 str_at(o, "state", "health"), "missions", missions, "kind", kind,
			 "heartbeat", hb ? hb : "-", "labels",
			 labels_text(json_object_get(json_object_get(o, "metadata"), "labels")));
}

/* The serving cluster first, then its descendants in path order, indented
 * by depth (a table; MISSIONS is matched/known); -o json nests them under
 * "children". */
static int cluster_tree(struct cli *c, struct ecc *e)
{
	static const char *const cols[] = {"NAME",	     "HEALTH", "MISSIONS", "DISTRO/DRIVER",
					   "LAST HEARTBEAT", "LABELS", NULL};
	static const char *const keys[] = {"name",	"health", "missions", "kind",
					   "heartbeat", "labels", NULL};
	json_t *res, *items, **sorted, *root = NULL, *node, *table = json_array();
	size_t n, i;
	int rc = ecc_get(e, CLUSTERS, &res);

	if (rc)
		return rc;
	items = json_object_get(res, "items");
	n = json_array_size(items);
	sorted = calloc(n ? n : 1, sizeof(*sorted));
	if (!sorted) {
		json_decref(res);
		json_decref(table);
		return xg_fail(XG_EFAIL, "out of memory");
	}
	for (i = 0; i < n; i++)
		sorted[i] = json_array_get(items, i);
	if (n > 1)
		qsort(sorted + 1, n - 1, sizeof(*sorted), by_path);
	for (i = 0; i < n; i++) {
		const char *path = str_at(sorted[i], "state", "path");
		int depth = i ? 1 : 0;

		for (const char *p = path && i ? path : ""; *p; p++)
			depth += *p == '/';
		node = json_pack("{s:s?,s:s?,s:s?,s:s?,s:O?,s:[]}", "name",
				 str_at(sorted[i], "metadata", "name"), "health",
				 str_at(sorted[i], "state", "health"), "distro",
				 str_at(sorted[i], "spec", "distro"), "driver",
				 str_at(sorted[i], "spec", "driver"), "labels",
				 json_object_get(json_object_get(sorted[i], "metadata"), "labels"),
				 "children");
		if (!c->json)
			json_array_append_new(table, tree_row(sorted[i], depth));
		if (!root) {
			root = node;
			continue;
		}
		/* parent: the deepest node already placed whose path prefixes ours */
		json_t *parent = root, *ch;
		const char *path_i = str_at(sorted[i], "state", "path");

		for (bool moved = true; moved && path_i;) {
			size_t j;

			moved = false;
			json_array_foreach(json_object_get(parent, "children"), j, ch)
			{
				const char *cp = json_string_value(json_object_get(ch, "path"));
				size_t l = cp ? strlen(cp) : 0;

				if (l && !strncmp(path_i, cp, l) && path_i[l] == '/') {
					parent = ch;
					moved = true;
					break;
				}
			}
		}
		json_object_set_new(node, "path", json_string(path_i ? path_i : ""));
		json_array_append_new(json_object_get(parent, "children"), node);
	}
	if (c->json)
		out_json(root ? root : json_object());
	else
		out_rows(c, json_incref(table), cols, keys);
	json_decref(table);
	json_decref(root);
	free(sorted);
	json_decref(res);
	return XG_OK;
}

/* ---- attach / detach: the Attach resource ---- */

static const char *phase_of(json_t *att)
{
	const char *p = str_at(att, "state", "phase");

	return p ? p : "?";
}

/* The phases an attach (detach) passes, in order: a phase shorter than a
 * poll (install_in_progress without an InstallScript) is still one the
 * daemon went through and stored, so it is printed too. */
static const char *const attach_phases[] = {"registering", "install_in_progress", "active", NULL};
static const char *const detach_phases[] = {"deregistering", "uninstall_in_progress", "inactive",
					    NULL};

static int phase_index(const char *const *order, const char *p)
{
	for (int i = 0; order[i]; i++)
		if (!strcmp(order[i], p))
			return i;
	return -1;
}

/* Print now, and the phases of the same run between last and now. */
static void print_phases(const char *last, const char *now, const char *want)
{
	const char *const *order = !strcmp(want, "active") ? attach_phases : detach_phases;
	int from = last[0] ? phase_index(order, last) + 1 : 0, to = phase_index(order, now);

	if (to >= 0 && (last[0] == 0 || from > 0))
		for (int i = from; i < to; i++)
			printf("%s\n", order[i]);
	printf("%s\n", now);
	fflush(stdout);
}

/* Follow the state machine until it settles on want (or inactive, which
 * ends an attach that failed); print every phase it passes. */
static int follow(struct ecc *e, json_t *att, const char *want, int timeout_s)
{
	char last[64] = "";
	time_t end = time(NULL) + timeout_s;
	int status, rc = XG_OK;

	json_incref(att);
	for (;;) {
		const char *p = phase_of(att);

		if (strcmp(p, last)) {
			print_phases(last, p, want);
			snprintf(last, sizeof(last), "%s", p);
		}
		if (!strcmp(p, want))
			break;
		if (!strcmp(p, "inactive")) { /* an attach that ended here failed */
			rc = xg_fail(XG_EFAIL, "attach failed: %s",
				     str_at(att, "state", "lastError")
					 ? str_at(att, "state", "lastError")
					 : "see the daemon's log");
			break;
		}
		if (time(NULL) >= end) {
			rc = xg_fail(
			    XG_EFAIL, "still %s after %ds%s%s (it carries on in the daemon)", p,
			    timeout_s, str_at(att, "state", "lastError") ? ": " : "",
			    str_at(att, "state", "lastError") ? str_at(att, "state", "lastError")
							      : "");
			break;
		}
		usleep(200 * 1000);
		json_decref(att);
		att = NULL;
		if ((rc = ecc_call(e, "GET", ATTACH, NULL, &status, &att)))
			return rc;
		if (status != 200) {
			rc = ecc_fail(status, att);
			break;
		}
	}
	json_decref(att);
	return rc;
}

/* `attach --token T`: T is the join token (as the issue and the docs write
 * it), so it is taken out before ecc_setup would read it as the API's bearer
 * token; the API token then comes from --token-file or the environment. */
static const char *take_join_token(struct args *a)
{
	const char *t = NULL;
	int kept = 0;

	for (int i = 0; i < a->argc; i++) {
		if ((!strcmp(a->argv[i], "--token") || !strcmp(a->argv[i], "--join-token")) &&
		    i + 1 < a->argc && !t) {
			t = a->argv[++i];
			continue;
		}
		a->argv[kept++] = a->argv[i];
	}
	a->argc = kept;
	return t;
}

static int cluster_attach(struct cli *c, struct ecc *e, struct args *a, bool detach,
			  const char *token)
{
	const char *parent = NULL, *s;
	int status, rc, timeout_s = 60;
	bool wait = true;
	json_t *res, *body = NULL;
	char *text = NULL;

	while ((s = arg_next(a))) {
		if (!detach && arg_is(s, "--parent") && !parent)
			parent = arg_value(a, s);
		else if (arg_is(s, "--no-wait"))
			wait = false;
		else if (arg_is(s, "--timeout")) {
			const char *v = arg_value(a, s);

			timeout_s = v ? atoi(v) : 0;
			if (timeout_s < 1)
				return usage_error("cluster", "--timeout SECONDS (at least 1)");
		} else
			return usage_error("cluster", "unexpected argument '%s'", s);
		if (parent && !*parent)
			return XG_EUSAGE;
	}
	if (!detach && (!parent || !token))
		return usage_error("cluster", "attach needs --parent URL and --token JOIN-TOKEN");
	if (!detach) {
		body = json_pack("{s:s,s:s,s:{s:s,s:s}}", "apiVersion", "edge.xgate.io/v1", "kind",
				 "Attach", "spec", "parent", parent, "token", token);
		text = body ? json_dumps(body, JSON_COMPACT) : NULL;
		json_decref(body);
		if (!text)
			return xg_fail(XG_EFAIL, "out of memory");
	}
	rc = ecc_call(e, detach ? "DELETE" : "PUT", ATTACH, text, &status, &res);
	free(text);
	if (rc)
		return rc;
	if (status != 202 && status != 200) {
		rc = ecc_fail(status, res);
		json_decref(res);
		return rc;
	}
	if (c->json && !wait)
		out_json(res);
	else if (!wait)
		printf("%s\n", phase_of(res));
	else
		rc = follow(e, res, detach ? "inactive" : "active", timeout_s);
	json_decref(res);
	return rc;
}

static int cluster_main(struct cli *c, struct args *a, const char *verb)
{
	const char *name = NULL, *s, *join = NULL;
	struct ecc e;
	int rc;

	if (arg_is(verb, "attach"))
		join = take_join_token(a);
	if ((rc = ecc_setup(&e, a, &ecc_edgeclusterd)))
		return rc;
	if (arg_is(verb, "attach") || arg_is(verb, "detach"))
		return cluster_attach(c, &e, a, arg_is(verb, "detach"), join);
	while ((s = arg_next(a))) {
		if (arg_is(verb, "get") && !name && s[0] != '-')
			name = s;
		else
			return usage_error("cluster", "unexpected argument '%s'", s);
	}
	if (arg_is(verb, "get") || arg_is(verb, "ls") || arg_is(verb, "list"))
		return cluster_get(c, &e, name);
	return cluster_tree(c, &e);
}

#define VERB(fn, verb)                                                                             \
	static int fn(struct cli *c, struct args *a)                                               \
	{                                                                                          \
		return cluster_main(c, a, verb);                                                   \
	}
VERB(cluster_get_cmd, "get")
VERB(cluster_tree_cmd, "tree")
VERB(cluster_attach_cmd, "attach")
VERB(cluster_detach_cmd, "detach")

const struct cmd cluster_verbs[] = {
    {"get", cluster_get_cmd, "[NAME]", "the edge clusters: this one and its descendants"},
    {"tree", cluster_tree_cmd, "", "the same as an indented tree"},
    {"attach", cluster_attach_cmd, "--parent URL --token JOIN-TOKEN [--no-wait] [--timeout S]",
     "link to a parent; prints each phase to active"},
    {"detach", cluster_detach_cmd, "[--no-wait] [--timeout S]",
     "unlink; prints each phase to inactive"},
    {"ls", cluster_get_cmd, NULL, NULL},
    {"list", cluster_get_cmd, NULL, NULL},
    {0},
};
