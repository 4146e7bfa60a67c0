// SPDX-License-Identifier: BSD-2-Clause
/*
 * `xgate mission apply -f FILE | get [NAME] | delete NAME | state NAME`:
 * missions on an edgeclusterd (edge.xgate.io/v1). apply is declarative like
 * kubectl's: create the mission, or replace it using the resourceVersion it
 * has right now; a race with another writer (409) is retried. A MissionList
 * goes in one request (one transaction, one fsync at the server for all of
 * them); only when some of its missions exist already is it applied one
 * mission at a time.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define MISSIONS    "/apis/edge.xgate.io/v1/missions"
#define APPLY_TRIES 5

static json_t *md(json_t *o)
{
	return json_object_get(o, "metadata");
}

static const char *md_str(json_t *o, const char *k)
{
	return json_string_value(json_object_get(md(o), k));
}

/* "clusters=a,b zone=east" for the table; "all" when nothing restricts it. */
static json_t *placement_text(json_t *spec)
{
	json_t *pl = json_object_get(spec, "placement"), *v;
	json_t *cl = json_object_get(pl, "clusters"), *ml = json_object_get(pl, "matchLabels");
	char buf[512] = "";
	size_t off = 0, i;
	const char *k;

	json_array_foreach(cl, i, v) off +=
	    (size_t)snprintf(buf + off, off < sizeof(buf) ? sizeof(buf) - off : 0, "%s%s",
			     i ? "," : "clusters=", json_string_value(v));
	json_object_foreach(ml, k, v) off +=
	    (size_t)snprintf(buf + off, off < sizeof(buf) ? sizeof(buf) - off : 0, "%s%s=%s",
			     off ? " " : "", k, json_string_value(v));
	return json_string(buf[0] ? buf : "all");
}

static json_t *mission_row(json_t *m)
{
	json_t *st = json_object_get(m, "state");

	return json_pack(
	    "{s:s?,s:s?,s:o,s:I,s:s?}", "name", md_str(m, "name"), "rv",
	    md_str(m, "resourceVersion"), "placement", placement_text(json_object_get(m, "spec")),
	    "states", (json_int_t)json_object_size(st), "created", md_str(m, "creationTimestamp"));
}

static int mission_get(struct cli *c, struct ecc *e, const char *name, const char *selector)
{
	static const char *const cols[] = {"NAME", "RV", "PLACEMENT", "STATES", "CREATED", NULL};
	static const char *const keys[] = {"name", "rv", "placement", "states", "created", NULL};
	char path[1024], enc[700];
	json_t *res;
	int rc;

	if (!name && selector) {
		ecc_urlencode(selector, enc, sizeof(enc));
		snprintf(path, sizeof(path), MISSIONS "?labelSelector=%s", enc);
	} else {
		ecc_path(path, sizeof(path), MISSIONS, name);
	}
	if ((rc = ecc_get(e, path, &res)))
		return rc;
	ecc_print(c, res, name != NULL, mission_row, cols, keys);
	json_decref(res);
	return XG_OK;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* One row per path of the tree ("edge-a", "edge-a/b", ...), in path order so
 * that a subtree's rows follow its root. */
static int mission_state(struct cli *c, struct ecc *e, const char *name)
{
	static const char *const cols[] = {"PATH", "STATE", NULL};
	static const char *const keys[] = {"path", "state", NULL};
	char path[1024];
	json_t *res, *st, *rows, *v;
	const char *k;
	int rc = ecc_get(e, ecc_path(path, sizeof(path), MISSIONS, name), &res);

	if (rc)
		return rc;
	st = json_object_get(res, "state");
	if (c->json) {
		out_json(st ? st : json_object());
	} else {
		size_t n = 0, cap = json_object_size(st);
		const char **paths = calloc(cap ? cap : 1, sizeof(*paths));

		rows = json_array();
		json_object_foreach(st, k, v) if (paths) paths[n++] = k;
		if (paths)
			qsort(paths, n, sizeof(*paths), cmp_str);
		for (size_t i = 0; i < n; i++)
			json_array_append_new(rows,
					      json_pack("{s:s,s:O}", "path", paths[i], "state",
							json_object_get(st, paths[i])));
		free(paths);
		out_rows(c, rows, cols, keys);
	}
	json_decref(res);
	return XG_OK;
}

static int mission_delete(struct ecc *e, const char *name)
{
	char path[1024];
	json_t *res;
	int status, rc;

	ecc_path(path, sizeof(path), MISSIONS, name);
	rc = ecc_call(e, "DELETE", path, NULL, &status, &res);
	if (!rc && status != 200)
		rc = ecc_fail(status, res);
	else if (!rc)
		printf("mission %s deleted\n", name);
	json_decref(res);
	return rc;
}

/* The server owns these: apply says what the mission is, not which version. */
static void strip_server_fields(json_t *m)
{
	json_object_del(md(m), "uid");
	json_object_del(md(m), "resourceVersion");
	json_object_del(md(m), "creationTimestamp");
	json_object_del(m, "state");
}

/* Create or replace one mission object from a file. */
static int apply_one(struct cli *c, struct ecc *e, json_t *m, const char *where)
{
	char path[1024];
	const char *name, *now;
	json_t *res = NULL;
	int status = 0, rc = XG_OK;

	if (!json_is_object(m))
		return xg_fail(XG_EUSAGE, "%s: a mission must be a JSON object", where);
	strip_server_fields(m);
	/* without a name the POST gets the server's field-path answer */
	name = json_is_object(md(m)) ? md_str(m, "name") : NULL;
	for (int tries = 1;; tries++) {
		char rv[32] = "", *body;

		if (name) {
			ecc_path(path, sizeof(path), MISSIONS, name);
			if ((rc = ecc_call(e, "GET", path, NULL, &status, &res)))
				break;
			if (status == 200 && md_str(res, "resourceVersion"))
				snprintf(rv, sizeof(rv), "%s", md_str(res, "resourceVersion"));
			else if (status != 404) {
				rc = ecc_fail(status, res);
				break;
			}
			json_decref(res);
			res = NULL;
		}
		if (rv[0])
			json_object_set_new(md(m), "resourceVersion", json_string(rv));
		else
			snprintf(path, sizeof(path), MISSIONS);
		body = json_dumps(m, JSON_COMPACT);
		json_object_del(md(m), "resourceVersion");
		rc = body ? ecc_call(e, rv[0] ? "PUT" : "POST", path, body, &status, &res)
			  : xg_fail(XG_EFAIL, "out of memory");
		free(body);
		if (rc)
			break;
		if (status == 409 && tries < APPLY_TRIES) {
			/* another writer came in between: read it again */
			json_decref(res);
			res = NULL;
			continue;
		}
		if (status != 200 && status != 201) {
			rc = ecc_fail(status, res);
			break;
		}
		now = md_str(res, "resourceVersion");
		if (c->json)
			out_json(res);
		else
			printf("mission %s %s\n", md_str(res, "name"),
			       status == 201		 ? "created"
			       : now && !strcmp(now, rv) ? "unchanged"
							 : "configured");
		break;
	}
	json_decref(res);
	return rc;
}

/* A MissionList in one POST: all of its missions are created, or none.
 * *exists is set when the server refused it because one of them exists (or
 * it does not know lists): then the caller applies them one by one (create
 * or replace). */
static int apply_list(struct cli *c, struct ecc *e, json_t *doc, bool *exists)
{
	json_t *items = json_object_get(doc, "items"), *m, *res = NULL;
	const char *reason, *field;
	int status, rc;
	char *body;
	size_t i;

	*exists = false;
	json_array_foreach(items, i, m) if (json_is_object(m)) strip_server_fields(m);
	body = json_dumps(doc, JSON_COMPACT);
	if (!body)
		return xg_fail(XG_EFAIL, "out of memory");
	rc = ecc_call(e, "POST", MISSIONS, body, &status, &res);
	free(body);
	if (rc)
		return rc;
	reason = json_string_value(json_object_get(res, "reason"));
	field = json_string_value(json_object_get(json_object_get(res, "details"), "field"));
	/* an edgeclusterd without bulk create refuses the list's kind: one by one, then */
	if ((status == 409 && reason && !strcmp(reason, "AlreadyExists")) ||
	    (status == 422 && field && !strcmp(field, "kind"))) {
		*exists = true;
	} else if (status != 201) {
		rc = ecc_fail(status, res);
	} else if (c->json) {
		out_json(res);
	} else {
		json_array_foreach(json_object_get(res, "items"), i, m)
		    printf("mission %s created\n", md_str(m, "name"));
	}
	json_decref(res);
	return rc;
}

static int mission_apply(struct cli *c, struct ecc *e, const char *file)
{
	json_error_t je;
	json_t *doc, *items, *m;
	size_t i;
	int rc = XG_OK;

	doc = !strcmp(file, "-") ? json_loadf(stdin, JSON_REJECT_DUPLICATES, &je)
				 : json_load_file(file, JSON_REJECT_DUPLICATES, &je);
	if (!doc) {
		if (je.line < 0) /* could not read it: jansson's text names the file */
			return xg_fail(access(file, R_OK) && errno == ENOENT ? XG_ENOTFOUND
									     : XG_EFAIL,
				       "%s", je.text);
		return xg_fail(XG_EUSAGE, "%s:%d:%d: %s", file, je.line, je.column, je.text);
	}
	/* one Mission, or a MissionList of them */
	items = json_object_get(doc, "items");
	if (json_is_array(items) && json_is_string(json_object_get(doc, "kind")) &&
	    !strcmp(json_string_value(json_object_get(doc, "kind")), "MissionList")) {
		bool exists;

		rc = apply_list(c, e, doc, &exists);
		/* some exist already: create or replace them one by one */
		json_array_foreach(items, i, m)
		{
			char where[600];

			if (rc || !exists)
				break;
			snprintf(where, sizeof(where), "%s: items[%zu]", file, i);
			if ((rc = apply_one(c, e, m, where)))
				break;
		}
	} else {
		rc = apply_one(c, e, doc, file);
	}
	json_decref(doc);
	return rc;
}

int cmd_mission(struct cli *c, struct args *a)
{
	const char *verb = arg_next(a), *name = NULL, *file = NULL, *sel = NULL, *s;
	struct ecc e;
	int rc;

	if (!verb)
		return usage_error("mission", "missing command: apply, get, delete or state");
	if (arg_is(verb, "help"))
		return object_help("mission");
	if ((rc = ecc_setup(&e, a)))
		return rc;
	while ((s = arg_next(a))) {
		if (arg_is(verb, "apply") && (arg_is(s, "-f") || arg_is(s, "--filename"))) {
			if (!(file = arg_value(a, s)))
				return XG_EUSAGE;
		} else if (arg_is(verb, "get") && (arg_is(s, "-l") || arg_is(s, "--selector"))) {
			if (!(sel = arg_value(a, s)))
				return XG_EUSAGE;
		} else if (!name && s[0] != '-' && !arg_is(verb, "apply")) {
			name = s;
		} else {
			return usage_error("mission", "unexpected argument '%s'", s);
		}
	}
	if (arg_is(verb, "apply")) {
		if (!file)
			return usage_error(
			    "mission",
			    "apply needs -f FILE (a Mission or MissionList in JSON, - for stdin)");
		return mission_apply(c, &e, file);
	}
	if (arg_is(verb, "get") || arg_is(verb, "ls") || arg_is(verb, "list"))
		return mission_get(c, &e, name, sel);
	if (!arg_is(verb, "delete") && !arg_is(verb, "del") && !arg_is(verb, "state"))
		return usage_error("mission", "unknown command '%s': apply, get, delete or state",
				   verb);
	if (!name)
		return usage_error("mission", "%s needs a mission NAME", verb);
	return arg_is(verb, "state") ? mission_state(c, &e, name) : mission_delete(&e, name);
}
