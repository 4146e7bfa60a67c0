// SPDX-License-Identifier: BSD-2-Clause
/*
 * `xgate cluster get [NAME] | tree`: the edge clusters an edgeclusterd knows
 * (itself first; its descendants once the tree links exist, with paths like
 * "b" and "b/c" under it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define CLUSTERS "/apis/edge.xgate.io/v1/edgeclusters"

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

static int fetch(struct ecc *e, const char *name, json_t **res)
{
	char path[512], enc[256];
	int status, rc;

	if (name) {
		ecc_urlencode(name, enc, sizeof(enc));
		snprintf(path, sizeof(path), CLUSTERS "/%s", enc);
	} else {
		snprintf(path, sizeof(path), CLUSTERS);
	}
	if ((rc = ecc_call(e, "GET", path, NULL, &status, res)))
		return rc;
	if (status != 200) {
		rc = ecc_fail(status, *res);
		json_decref(*res);
		*res = NULL;
	}
	return rc;
}

static int cluster_get(struct cli *c, struct ecc *e, const char *name)
{
	static const char *const cols[] = {"NAME",     "PATH",	   "HEALTH", "DISTRO", "DRIVER",
					   "CHILDREN", "MISSIONS", "LABELS", NULL};
	static const char *const keys[] = {"name",     "path",	   "health", "distro", "driver",
					   "children", "missions", "labels", NULL};
	json_t *res, *rows, *o;
	size_t i;
	int rc = fetch(e, name, &res);

	if (rc)
		return rc;
	if (c->json) {
		out_json(res);
	} else {
		rows = json_array();
		if (name)
			json_array_append_new(rows, cluster_row(res));
		else
			json_array_foreach(json_object_get(res, "items"), i, o)
			    json_array_append_new(rows, cluster_row(o));
		out_rows(c, rows, cols, keys);
	}
	json_decref(res);
	return XG_OK;
}

static int by_path(const void *a, const void *b)
{
	const char *pa = str_at(*(json_t *const *)a, "state", "path");
	const char *pb = str_at(*(json_t *const *)b, "state", "path");

	return strcmp(pa ? pa : "", pb ? pb : "");
}

/* The serving cluster first, then its descendants in path order, indented
 * by depth; -o json nests them under "children". */
static int cluster_tree(struct cli *c, struct ecc *e)
{
	json_t *res, *items, **sorted, *root = NULL, *node;
	size_t n, i;
	int rc = fetch(e, NULL, &res);

	if (rc)
		return rc;
	items = json_object_get(res, "items");
	n = json_array_size(items);
	sorted = calloc(n ? n : 1, sizeof(*sorted));
	if (!sorted) {
		json_decref(res);
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
		if (!c->json) {
			json_t *lt = labels_text(json_object_get(node, "labels"));

			printf("%*s%s%s  %s  %s/%s%s%s\n", depth * 2, "", depth ? "- " : "",
			       json_string_value(json_object_get(node, "name")),
			       json_string_value(json_object_get(node, "health")),
			       json_string_value(json_object_get(node, "distro")),
			       json_string_value(json_object_get(node, "driver")),
			       *json_string_value(lt) ? "  " : "", json_string_value(lt));
			json_decref(lt);
		}
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
	json_decref(root);
	free(sorted);
	json_decref(res);
	return XG_OK;
}

int cmd_cluster(struct cli *c, struct args *a)
{
	const char *verb = arg_next(a), *name = NULL, *s;
	struct ecc e;
	int rc;

	if (!verb)
		return usage_error("cluster", "missing command: get or tree");
	if (arg_is(verb, "help"))
		return object_help("cluster");
	if ((rc = ecc_setup(&e, a)))
		return rc;
	while ((s = arg_next(a))) {
		if (arg_is(verb, "get") && !name && s[0] != '-')
			name = s;
		else
			return usage_error("cluster", "unexpected argument '%s'", s);
	}
	if (arg_is(verb, "get") || arg_is(verb, "ls") || arg_is(verb, "list"))
		return cluster_get(c, &e, name);
	if (arg_is(verb, "tree"))
		return cluster_tree(c, &e);
	return usage_error("cluster",
			   "unknown command '%s': get or tree (attach and detach come "
			   "with the tree links)",
			   verb);
}
