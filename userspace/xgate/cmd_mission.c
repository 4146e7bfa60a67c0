// SPDX-License-Identifier: BSD-2-Clause
/*
 * `xgate mission apply -f FILE|DIR [-f ...] | get [NAME] | delete NAME |
 * state NAME`: missions on an edgeclusterd (edge.xgate.io/v1). apply is
 * declarative like kubectl's: create the mission, or replace it using the
 * resourceVersion it has right now; a race with another writer (409) is
 * retried. What several files (or a directory's *.json, or a MissionList)
 * hold goes in MissionLists of up to APPLY_LIST_MAX, one request each (one
 * transaction, one fsync at the server for all of them: one POST per
 * mission costs the tree ~6x the CPU); only a list some of whose missions
 * exist already is applied one mission at a time.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#define MISSIONS       "/apis/edge.xgate.io/v1/missions"
#define APPLY_TRIES    5
#define APPLY_LIST_MAX 1000 /* missions per request (the server takes up to 5000) */
#define APPLY_FILES    64   /* -f options */

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
static int apply_list(struct cli *c, struct ecc *e, json_t *doc, bool *exists, json_t *wheres,
		      size_t first)
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
		size_t k;

		rc = ecc_fail(status, res);
		/* items[K] of the request: say which file it came from */
		if (field && sscanf(field, "items[%zu]", &k) == 1 &&
		    json_array_get(wheres, first + k))
			fprintf(stderr, "(items[%zu] is %s)\n", k,
				json_string_value(json_array_get(wheres, first + k)));
	} else if (c->json) {
		out_json(res);
	} else {
		json_array_foreach(json_object_get(res, "items"), i, m)
		    printf("mission %s created\n", md_str(m, "name"));
	}
	json_decref(res);
	return rc;
}

/* Read one file (- for stdin): its Mission, or its MissionList's items,
 * appended to items, each with where it came from. */
static int load_file(const char *file, json_t *items, json_t *wheres, bool *list)
{
	json_error_t je;
	json_t *doc, *v, *m;
	size_t i;

	*list = false;
	doc = !strcmp(file, "-") ? json_loadf(stdin, JSON_REJECT_DUPLICATES, &je)
				 : json_load_file(file, JSON_REJECT_DUPLICATES, &je);
	if (!doc) {
		if (je.line < 0) /* could not read it: jansson's text names the file */
			return xg_fail(access(file, R_OK) && errno == ENOENT ? XG_ENOTFOUND
									     : XG_EFAIL,
				       "%s", je.text);
		return xg_fail(XG_EUSAGE, "%s:%d:%d: %s", file, je.line, je.column, je.text);
	}
	v = json_object_get(doc, "items");
	*list = json_is_array(v) && json_is_string(json_object_get(doc, "kind")) &&
		!strcmp(json_string_value(json_object_get(doc, "kind")), "MissionList");
	if (!*list) {
		json_array_append(items, doc);
		json_array_append_new(wheres, json_string(file));
	}
	json_array_foreach(*list ? v : NULL, i, m)
	{
		char where[600];

		snprintf(where, sizeof(where), "%s: items[%zu]", file, i);
		json_array_append(items, m);
		json_array_append_new(wheres, json_string(where));
	}
	json_decref(doc);
	return XG_OK;
}

static int json_file(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return d->d_name[0] != '.' && n > 5 && !strcmp(d->d_name + n - 5, ".json");
}

/* A file, or a directory's *.json files in name order (not its subdirectories). */
static int load_source(const char *src, json_t *items, json_t *wheres, bool *list)
{
	struct dirent **ents;
	struct stat st;
	int n, rc = XG_OK;

	if (strcmp(src, "-") && !stat(src, &st) && S_ISDIR(st.st_mode)) {
		n = scandir(src, &ents, json_file, alphasort);
		if (n < 0)
			return xg_fail(XG_EFAIL, "%s: %s", src, strerror(errno));
		if (!n)
			rc = xg_fail(XG_ENOTFOUND, "%s: no *.json files", src);
		for (int i = 0; i < n; i++) {
			char path[4096];
			bool l = false;

			snprintf(path, sizeof(path), "%s/%s", src, ents[i]->d_name);
			if (!rc)
				rc = load_file(path, items, wheres, &l);
			free(ents[i]);
		}
		free(ents);
		*list = true;
		return rc;
	}
	return load_file(src, items, wheres, list);
}

/* Missions first..first+n-1 of items as one MissionList; if some exist
 * already, one by one. */
static int apply_batch(struct cli *c, struct ecc *e, json_t *items, json_t *wheres, size_t first,
		       size_t n)
{
	json_t *list = json_pack("{s:s,s:s,s:[]}", "apiVersion", "edge.xgate.io/v1", "kind",
				 "MissionList", "items");
	json_t *arr = json_object_get(list, "items");
	bool exists = false;
	int rc;

	for (size_t i = first; i < first + n; i++)
		json_array_append(arr, json_array_get(items, i));
	rc = apply_list(c, e, list, &exists, wheres, first);
	json_decref(list);
	for (size_t i = first; !rc && exists && i < first + n; i++)
		rc = apply_one(c, e, json_array_get(items, i),
			       json_string_value(json_array_get(wheres, i)));
	return rc;
}

static int mission_apply(struct cli *c, struct ecc *e, const char *const *files, int nfiles)
{
	json_t *items = json_array(), *wheres = json_array();
	bool list = false;
	size_t n;
	int rc = XG_OK;

	for (int i = 0; !rc && i < nfiles; i++) {
		bool l = false;

		rc = load_source(files[i], items, wheres, &l);
		list |= l;
	}
	n = json_array_size(items);
	if (!rc && nfiles == 1 && !list && n == 1) /* one Mission: create or replace it */
		rc = apply_one(c, e, json_array_get(items, 0), files[0]);
	else
		for (size_t i = 0; !rc && i < n; i += APPLY_LIST_MAX)
			rc = apply_batch(c, e, items, wheres, i,
					 n - i < APPLY_LIST_MAX ? n - i : APPLY_LIST_MAX);
	json_decref(items);
	json_decref(wheres);
	return rc;
}

static int mission_main(struct cli *c, struct args *a, const char *verb)
{
	const char *name = NULL, *files[APPLY_FILES], *sel = NULL, *s;
	struct ecc e;
	int rc, nfiles = 0;

	if ((rc = ecc_setup(&e, a, &ecc_edgeclusterd)))
		return rc;
	while ((s = arg_next(a))) {
		if (arg_is(verb, "apply") && (arg_is(s, "-f") || arg_is(s, "--filename"))) {
			if (nfiles == APPLY_FILES)
				return usage_error("mission",
						   "apply takes at most %d -f (name a "
						   "directory instead)",
						   APPLY_FILES);
			if (!(files[nfiles++] = arg_value(a, s)))
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
		if (!nfiles)
			return usage_error("mission",
					   "apply needs -f FILE (a Mission or MissionList in JSON, "
					   "- for stdin) or -f DIR (its *.json files)");
		return mission_apply(c, &e, files, nfiles);
	}
	if (arg_is(verb, "get") || arg_is(verb, "ls") || arg_is(verb, "list"))
		return mission_get(c, &e, name, sel);
	if (!name)
		return usage_error("mission", "%s needs a mission NAME", verb);
	return arg_is(verb, "state") ? mission_state(c, &e, name) : mission_delete(&e, name);
}

#define VERB(fn, verb)                                                                             \
	static int fn(struct cli *c, struct args *a)                                               \
	{                                                                                          \
		return mission_main(c, a, verb);                                                   \
	}
VERB(mission_apply_cmd, "apply")
VERB(mission_get_cmd, "get")
VERB(mission_delete_cmd, "delete")
VERB(mission_state_cmd, "state")

const struct cmd mission_verbs[] = {
    {"apply", mission_apply_cmd, "-f FILE|DIR [-f ...]",
     "files, a directory's *.json, or - : Missions and MissionLists"},
    {"get", mission_get_cmd, "[NAME] [-l SELECTOR]", NULL},
    {"delete", mission_delete_cmd, "NAME", NULL},
    {"state", mission_state_cmd, "NAME", "its state map, one entry per path in the tree"},
    {"ls", mission_get_cmd, NULL, NULL},
    {"list", mission_get_cmd, NULL, NULL},
    {"del", mission_delete_cmd, NULL, NULL},
    {0},
};
