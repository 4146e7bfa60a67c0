// SPDX-License-Identifier: BSD-2-Clause
/*
 * Mission validation, object serialisation, names and labels; see
 * resource.h. Validation stops at the first bad field and reports its path
 * (spec.placement.clusters[1]) in the Kubernetes style, so a user fixes one
 * precise thing at a time. Field order of the checks is fixed (apiVersion,
 * kind, metadata, spec), so the same bad body always gets the same answer.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resource.h"

#define ARGV_MAX	256
#define ARG_LEN_MAX	(16 * 1024)
#define CLUSTERS_MAX	1024
#define LABELS_MAX	64
#define ANNOTATIONS_MAX (256 << 10) /* bytes of keys and values */
#define SECONDS_MAX	86400

/* ---- errors with paths ---- */

static __attribute__((format(printf, 4, 5))) int verr(struct ec_verr *e, int code,
						      const char *field, const char *fmt, ...)
{
	char what[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	e->code = code;
	snprintf(e->field, sizeof(e->field), "%s", field);
	if (*field)
		snprintf(e->msg, sizeof(e->msg), "%s: %s", field, what);
	else
		snprintf(e->msg, sizeof(e->msg), "%s", what);
	return -1;
}

static const char *type_name(json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	default:
		return "null";
	}
}

static int want_type(struct ec_verr *e, const char *path, json_t *v, json_type t, const char *want)
{
	if (json_typeof(v) == t || (t == JSON_TRUE && json_is_boolean(v)))
		return 0;
	return verr(e, 422, path, "must be %s, not %s", want, type_name(v));
}

/* Refuse keys not in the NULL-terminated list. */
static int only_keys(struct ec_verr *e, const char *path, json_t *obj, const char *const *allowed)
{
	const char *k;
	json_t *v;

	json_object_foreach(obj, k, v)
	{
		const char *const *a = allowed;

		while (*a && strcmp(*a, k))
			a++;
		if (!*a) {
			char f[256];

			snprintf(f, sizeof(f), "%s%s%s", path, *path ? "." : "", k);
			return verr(e, 422, f, "unknown field");
		}
	}
	return 0;
}

/* Field paths are short next to buf; a cut one still names the place. */
static const char *sub(char *buf, size_t len, const char *path, const char *key)
{
	if (snprintf(buf, len, "%s.%s", path, key) >= (int)len)
		buf[len - 1] = 0;
	return buf;
}

/* A string without NUL bytes (JSON "\u0000" would cut it short in C). */
static int plain_string(struct ec_verr *e, const char *path, json_t *v, size_t max)
{
	if (want_type(e, path, v, JSON_STRING, "a string"))
		return -1;
	if (strlen(json_string_value(v)) != json_string_length(v))
		return verr(e, 422, path, "must not contain NUL characters");
	if (json_string_length(v) > max)
		return verr(e, 422, path, "longer than %zu bytes", max);
	return 0;
}

static int check_labels(struct ec_verr *e, const char *path, json_t *v)
{
	const char *k, *why;
	json_t *x;
	char f[512];

	if (want_type(e, path, v, JSON_OBJECT, "an object of label KEY: VALUE strings"))
		return -1;
	if (json_object_size(v) > LABELS_MAX)
		return verr(e, 422, path, "at most %d labels", LABELS_MAX);
	json_object_foreach(v, k, x)
	{
		snprintf(f, sizeof(f), "%s.%s", path, k);
		if (strlen(k) > 317 || (why = ec_check_label_key(k)))
			return verr(e, 422, f, "invalid label key: %s",
				    why ? why : "longer than 317 characters");
		if (plain_string(e, f, x, 63))
			return -1;
		if ((why = ec_check_label_value(json_string_value(x))))
			return verr(e, 422, f, "invalid label value: %s", why);
	}
	return 0;
}

/* Annotations: label keys, any string values, ANNOTATIONS_MAX bytes in all
 * (Kubernetes' limit). kubectl apply keeps the object it applied in one. */
static int check_annotations(struct ec_verr *e, const char *path, json_t *v)
{
	const char *k, *why;
	json_t *x;
	char f[512];
	size_t total = 0;

	if (want_type(e, path, v, JSON_OBJECT, "an object of KEY: VALUE strings"))
		return -1;
	json_object_foreach(v, k, x)
	{
		snprintf(f, sizeof(f), "%s.%s", path, k);
		if (strlen(k) > 317 || (why = ec_check_label_key(k)))
			return verr(e, 422, f, "invalid annotation key: %s",
				    why ? why : "longer than 317 characters");
		if (plain_string(e, f, x, ANNOTATIONS_MAX))
			return -1;
		total += strlen(k) + json_string_length(x);
	}
	if (total > ANNOTATIONS_MAX)
		return verr(e, 422, path, "%zu bytes of keys and values, over the limit of %d",
			    total, ANNOTATIONS_MAX);
	return 0;
}

static int check_argv(struct ec_verr *e, const char *path, json_t *v)
{
	size_t i;
	json_t *a;
	char f[300];

	if (want_type(e, path, v, JSON_ARRAY, "an array of strings (argv)"))
		return -1;
	if (!json_array_size(v) || json_array_size(v) > ARGV_MAX)
		return verr(e, 422, path, "must hold 1-%d strings (argv)", ARGV_MAX);
	json_array_foreach(v, i, a)
	{
		snprintf(f, sizeof(f), "%s[%zu]", path, i);
		if (plain_string(e, f, a, ARG_LEN_MAX))
			return -1;
	}
	if (!*json_string_value(json_array_get(v, 0)))
		return verr(e, 422, path, "the program (first element) must not be empty");
	return 0;
}

static int check_seconds(struct ec_verr *e, const char *path, json_t *v)
{
	if (want_type(e, path, v, JSON_INTEGER, "an integer number of seconds"))
		return -1;
	if (json_integer_value(v) < 1 || json_integer_value(v) > SECONDS_MAX)
		return verr(e, 422, path, "must be 1-%d seconds", SECONDS_MAX);
	return 0;
}

/* A field's checker: path names it in the error. */
typedef int check_fn(struct ec_verr *e, const char *path, json_t *v);

static int req_field(struct ec_verr *e, const char *path, json_t *obj, const char *key,
		     const char *what, check_fn *check)
{
	json_t *v = json_object_get(obj, key);
	char f[128];

	sub(f, sizeof(f), path, key);
	if (!v)
		return verr(e, 422, f, "required (%s)", what);
	return check(e, f, v);
}

static int opt_field(struct ec_verr *e, const char *path, json_t *obj, const char *key,
		     check_fn *check)
{
	json_t *v = json_object_get(obj, key);
	char f[128];

	return v ? check(e, sub(f, sizeof(f), path, key), v) : 0;
}

/* An object holding none but the NULL-terminated keys. */
static int keyed_object(struct ec_verr *e, const char *path, json_t *v, const char *const *keys)
{
	if (want_type(e, path, v, JSON_OBJECT, "an object"))
		return -1;
	return only_keys(e, path, v, keys);
}

static int check_command(struct ec_verr *e, const char *p, json_t *c)
{
	static const char *const keys[] = {"command",	     "reverseCommand",
					   "trigger",	     "runWhenTriggerSucceeds",
					   "timeoutSeconds", NULL};
	json_t *v;
	char f[128];

	if (keyed_object(e, p, c, keys) ||
	    req_field(e, p, c, "command", "the argv that applies the mission", check_argv) ||
	    opt_field(e, p, c, "reverseCommand", check_argv) ||
	    opt_field(e, p, c, "trigger", check_argv))
		return -1;
	if ((v = json_object_get(c, "runWhenTriggerSucceeds"))) {
		if (want_type(e, sub(f, sizeof(f), p, "runWhenTriggerSucceeds"), v, JSON_TRUE,
			      "a boolean"))
			return -1;
		if (!json_object_get(c, "trigger"))
			return verr(e, 422, f, "needs spec.command.trigger");
	}
	return opt_field(e, p, c, "timeoutSeconds", check_seconds);
}

static int check_clusters(struct ec_verr *e, const char *p, json_t *v)
{
	json_t *c;
	size_t i, j;
	char f[128];

	if (want_type(e, p, v, JSON_ARRAY, "an array of cluster names"))
		return -1;
	if (json_array_size(v) > CLUSTERS_MAX)
		return verr(e, 422, p, "at most %d clusters", CLUSTERS_MAX);
	json_array_foreach(v, i, c)
	{
		if (snprintf(f, sizeof(f), "%s[%zu]", p, i) >= (int)sizeof(f))
			f[sizeof(f) - 1] = 0;
		if (plain_string(e, f, c, 63))
			return -1;
		if (ec_check_dns_label(json_string_value(c)))
			return verr(e, 422, f, "must be a DNS-1123 label");
		for (j = 0; j < i; j++)
			if (json_equal(json_array_get(v, j), c))
				return verr(e, 422, f, "duplicate of clusters[%zu]", j);
	}
	return 0;
}

static int check_placement(struct ec_verr *e, const char *p, json_t *pl)
{
	static const char *const keys[] = {"clusters", "matchLabels", NULL};

	if (keyed_object(e, p, pl, keys) || opt_field(e, p, pl, "clusters", check_clusters))
		return -1;
	return opt_field(e, p, pl, "matchLabels", check_labels);
}

static int check_statecheck(struct ec_verr *e, const char *p, json_t *sc)
{
	static const char *const keys[] = {"command", "intervalSeconds", "timeoutSeconds", NULL};

	if (keyed_object(e, p, sc, keys) ||
	    req_field(e, p, sc, "command", "the argv that reports state", check_argv) ||
	    opt_field(e, p, sc, "intervalSeconds", check_seconds))
		return -1;
	return opt_field(e, p, sc, "timeoutSeconds", check_seconds);
}

static int check_content(struct ec_verr *e, const char *p, json_t *v)
{
	return plain_string(e, p, v, SIZE_MAX);
}

static int check_spec(struct ec_verr *e, json_t *spec)
{
	static const char *const keys[] = {"content", "command", "placement", "stateCheck", NULL};

	if (!spec)
		return verr(e, 422, "spec", "required");
	if (keyed_object(e, "spec", spec, keys) ||
	    opt_field(e, "spec", spec, "content", check_content) ||
	    opt_field(e, "spec", spec, "command", check_command) ||
	    opt_field(e, "spec", spec, "placement", check_placement) ||
	    opt_field(e, "spec", spec, "stateCheck", check_statecheck))
		return -1;
	if (!json_object_get(spec, "content") && !json_object_get(spec, "command"))
		return verr(e, 422, "spec", "needs content or command (what the mission applies)");
	return 0;
}

/* resourceVersion: a decimal string as we hand them out ("0" never is one,
 * nor "07": a version is one string, not any number that parses to it). */
static int parse_rv(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long n;

	if (!*s || !isdigit((unsigned char)*s) || *s == '0' || strlen(s) > 20)
		return -1;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || *end || !n)
		return -1;
	*out = n;
	return 0;
}

static int check_metadata(struct ec_verr *e, json_t *md, enum ec_op op, struct ec_mission_in *in)
{
	static const char *const keys[] = {
	    "name", "uid", "labels", "annotations", "resourceVersion", "creationTimestamp", NULL};
	const char *why;
	json_t *v;

	if (!md)
		return verr(e, 422, "metadata", "required (it carries the name)");
	if (keyed_object(e, "metadata", md, keys))
		return -1;
	if (!(v = json_object_get(md, "name")))
		return verr(e, 422, "metadata.name", "required");
	if (plain_string(e, "metadata.name", v, 1024))
		return -1;
	if ((why = ec_check_dns_subdomain(json_string_value(v))))
		return verr(e, 422, "metadata.name", "%s", why);
	in->name = json_string_value(v);
	if ((v = json_object_get(md, "uid"))) {
		if (plain_string(e, "metadata.uid", v, 64))
			return -1;
		in->uid = json_string_value(v);
	}
	if ((v = json_object_get(md, "creationTimestamp")) &&
	    plain_string(e, "metadata.creationTimestamp", v, 64))
		return -1;
	if ((v = json_object_get(md, "resourceVersion"))) {
		if (plain_string(e, "metadata.resourceVersion", v, 32))
			return -1;
		if (op == EC_OP_CREATE && *json_string_value(v))
			return verr(e, 422, "metadata.resourceVersion",
				    "must not be set on create");
		if (op == EC_OP_REPLACE && parse_rv(json_string_value(v), &in->rv))
			return verr(e, 422, "metadata.resourceVersion",
				    "must be the resourceVersion you read (a decimal string)");
		in->has_rv = op == EC_OP_REPLACE;
	} else if (op == EC_OP_REPLACE) {
		return verr(e, 422, "metadata.resourceVersion",
			    "required to replace (the version you read: optimistic concurrency)");
	}
	if ((v = json_object_get(md, "labels"))) {
		if (check_labels(e, "metadata.labels", v))
			return -1;
		in->labels = json_incref(v);
	} else {
		in->labels = json_object();
	}
	if ((v = json_object_get(md, "annotations"))) {
		if (check_annotations(e, "metadata.annotations", v))
			return -1;
		in->annotations = json_incref(v);
	} else {
		in->annotations = json_object();
	}
	return 0;
}

/* The start of a body's checks, a Mission's or a MissionList's: an object
 * of known keys in our apiVersion. */
static int check_envelope(struct ec_verr *e, json_t *obj, const char *const *keys)
{
	json_t *v;

	if (!json_is_object(obj))
		return verr(e, 400, "", "the body must be a JSON object, not %s", type_name(obj));
	if (only_keys(e, "", obj, keys))
		return -1;
	if (!(v = json_object_get(obj, "apiVersion")))
		return verr(e, 422, "apiVersion", "required (\"" EC_API_VERSION "\")");
	if (want_type(e, "apiVersion", v, JSON_STRING, "a string"))
		return -1;
	if (strcmp(json_string_value(v), EC_API_VERSION))
		return verr(e, 422, "apiVersion", "must be \"" EC_API_VERSION "\", not \"%.64s\"",
			    json_string_value(v));
	return 0;
}

int ec_mission_validate(json_t *obj, enum ec_op op, struct ec_mission_in *in, struct ec_verr *e)
{
	static const char *const keys[] = {"apiVersion", "kind", "metadata", "spec", "state", NULL};
	json_t *v;

	memset(in, 0, sizeof(*in));
	if (check_envelope(e, obj, keys))
		return -1;
	if (!(v = json_object_get(obj, "kind")))
		return verr(e, 422, "kind", "required (\"Mission\")");
	if (want_type(e, "kind", v, JSON_STRING, "a string"))
		return -1;
	if (strcmp(json_string_value(v), "Mission"))
		return verr(e, 422, "kind", "must be \"Mission\" on this path, not \"%.64s\"",
			    json_string_value(v));
	if ((v = json_object_get(obj, "state")) &&
	    want_type(e, "state", v, JSON_OBJECT, "an object (it is set by the clusters)"))
		return -1;
	if (check_metadata(e, json_object_get(obj, "metadata"), op, in) ||
	    check_spec(e, json_object_get(obj, "spec"))) {
		ec_mission_in_free(in);
		return -1;
	}
	in->spec = json_incref(json_object_get(obj, "spec"));
	return 0;
}

void ec_mission_in_free(struct ec_mission_in *in)
{
	json_decref(in->labels);
	json_decref(in->annotations);
	json_decref(in->spec);
	in->labels = in->annotations = in->spec = NULL;
}

/* ---- MissionList: a bulk create ---- */

bool ec_is_list(json_t *obj, const char *kind)
{
	json_t *k = json_object_get(obj, "kind");

	return json_is_string(k) && !strcmp(json_string_value(k), kind);
}

/* Item i's failure, its path under items[i]. */
static int item_err(struct ec_verr *e, size_t i, const struct ec_verr *ie)
{
	char f[40];

	snprintf(f, sizeof(f), "items[%zu]", i);
	e->code = ie->code;
	if (!*ie->field) {
		snprintf(e->field, sizeof(e->field), "%s", f);
		snprintf(e->msg, sizeof(e->msg), "%s: %.590s", f, ie->msg);
	} else {
		snprintf(e->field, sizeof(e->field), "%s.%.210s", f, ie->field);
		snprintf(e->msg, sizeof(e->msg), "%s.%.590s", f, ie->msg);
	}
	return -1;
}

static int list_envelope(json_t *obj, size_t max_items, struct ec_verr *e)
{
	static const char *const keys[] = {"apiVersion", "kind", "metadata", "items", NULL};
	json_t *v;

	if (check_envelope(e, obj, keys))
		return -1;
	if (!ec_is_list(obj, "MissionList"))
		return verr(e, 422, "kind", "must be \"MissionList\"");
	/* a list read from GET carries metadata.resourceVersion: ignored */
	if ((v = json_object_get(obj, "metadata")) &&
	    want_type(e, "metadata", v, JSON_OBJECT, "an object"))
		return -1;
	if (!(v = json_object_get(obj, "items")))
		return verr(e, 422, "items", "required (the Missions to create)");
	if (want_type(e, "items", v, JSON_ARRAY, "an array of Missions"))
		return -1;
	if (json_array_size(v) > max_items)
		return verr(e, 413, "items",
			    "%zu missions in one MissionList; at most %zu (split the list)",
			    json_array_size(v), max_items);
	return 0;
}

int ec_mission_list_validate(json_t *obj, size_t max_items, size_t max_item,
			     struct ec_mission_in **ins, size_t *n, struct ec_verr *e)
{
	json_t *items = json_object_get(obj, "items"), *seen, *m, *at;
	struct ec_verr ie;
	size_t i, size;
	int rc = 0;

	*ins = NULL;
	*n = 0;
	if (list_envelope(obj, max_items, e))
		return -1;
	if (!json_array_size(items))
		return 0;
	*ins = calloc(json_array_size(items), sizeof(**ins));
	seen = json_object();
	if (!*ins || !seen) {
		json_decref(seen);
		return verr(e, 500, "", "out of memory");
	}
	json_array_foreach(items, i, m)
	{
		if (!json_is_object(m))
			rc = verr(&ie, 422, "", "must be a Mission object, not %s", type_name(m));
		else if (!(rc = ec_mission_validate(m, EC_OP_CREATE, &(*ins)[i], &ie)))
			*n = i + 1;
		/* each one alone must pass where single missions go (the API's
		 * MaxBody, the tree's messages) */
		if (!rc && (size = json_dumpb(m, NULL, 0, JSON_COMPACT)) > max_item)
			rc = verr(&ie, 413, "",
				  "%zu bytes; one mission is at most %zu bytes (MaxBody)", size,
				  max_item);
		if (!rc && (at = json_object_get(seen, (*ins)[i].name)))
			rc = verr(&ie, 409, "metadata.name",
				  "\"%s\" is also the name of items[%" JSON_INTEGER_FORMAT "]",
				  (*ins)[i].name, json_integer_value(at));
		if (rc) {
			item_err(e, i, &ie);
			break;
		}
		json_object_set_new(seen, (*ins)[i].name, json_integer((json_int_t)i));
	}
	json_decref(seen);
	if (rc) {
		ec_mission_list_free(*ins, *n);
		*ins = NULL;
		*n = 0;
	}
	return rc;
}

void ec_mission_list_free(struct ec_mission_in *ins, size_t n)
{
	for (size_t i = 0; ins && i < n; i++)
		ec_mission_in_free(&ins[i]);
	free(ins);
}

/* ---- objects ---- */

void ec_row_free(struct ec_row *r)
{
	free(r->labels);
	free(r->spec);
	free(r->state);
	free(r->annotations);
	r->labels = r->spec = r->state = r->annotations = NULL;
}

/* Stored JSON columns were written by us; a damaged one shows as {} rather
 * than failing the whole list. */
static json_t *column(const char *text)
{
	json_t *v = text ? json_loads(text, 0, NULL) : NULL;

	return v ? v : json_object();
}

json_t *ec_object_json(const char *kind, const struct ec_row *r)
{
	char rv[24];
	json_t *o, *ann = r->annotations ? column(r->annotations) : NULL;

	snprintf(rv, sizeof(rv), "%" PRIu64, r->rv);
	o = json_pack("{s:s,s:s,s:{s:s,s:s,s:s,s:s,s:o},s:o,s:o}", "apiVersion", EC_API_VERSION,
		      "kind", kind, "metadata", "name", r->name, "uid", r->uid, "resourceVersion",
		      rv, "creationTimestamp", r->created, "labels", column(r->labels), "spec",
		      column(r->spec), "state", column(r->state));
	/* as Kubernetes: no annotations, no member */
	if (o && json_object_size(ann))
		json_object_set(json_object_get(o, "metadata"), "annotations", ann);
	json_decref(ann);
	return o;
}

json_t *ec_list_json(const char *kind, uint64_t revision, json_t *items)
{
	char rv[24], k[64];

	snprintf(rv, sizeof(rv), "%" PRIu64, revision);
	snprintf(k, sizeof(k), "%sList", kind);
	return json_pack("{s:s,s:s,s:{s:s},s:o}", "apiVersion", EC_API_VERSION, "kind", k,
			 "metadata", "resourceVersion", rv, "items", items);
}

/* ---- selectors and placement ---- */

bool ec_placement_match(json_t *spec, const char *name, json_t *labels)
{
	json_t *pl = json_object_get(spec, "placement");
	json_t *clusters = json_object_get(pl, "clusters"),
	       *ml = json_object_get(pl, "matchLabels");
	const char *k;
	json_t *v, *c;
	size_t i;

	if (json_array_size(clusters)) {
		bool in = false;

		json_array_foreach(clusters, i, c) in |=
		    json_is_string(c) && !strcmp(json_string_value(c), name);
		if (!in)
			return false;
	}
	json_object_foreach(ml, k, v)
	{
		json_t *have = json_object_get(labels, k);

		if (!have || !json_equal(have, v))
			return false;
	}
	return true;
}

bool ec_json_same_text(const char *stored, json_t *v)
{
	json_t *s = json_loads(stored, 0, NULL);
	bool eq = s && json_equal(s, v);

	json_decref(s);
	return eq;
}
