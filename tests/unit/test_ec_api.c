// SPDX-License-Identifier: BSD-2-Clause
/* edgeclusterd's API handlers without sockets: routing, codes, Status
 * bodies with field paths, optimistic concurrency, no-op replaces, the
 * cluster's own EdgeCluster, MissionList creates (all or nothing), lists
 * streamed from a snapshot. (tests/edge/api.sh does the same over HTTP.) */
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "api.h"

void ecd_log(const char *fmt, ...)
{
	(void)fmt;
}

static struct ecd D;
static json_t *res;
static size_t parts;	  /* api_stream_next calls of the last streamed answer */
static json_t *announced; /* names on_mission was called with, in order */

static void on_mission(struct ecd *d, const char *name, bool deleted)
{
	(void)d;
	if (!deleted)
		json_array_append_new(announced, json_string(name));
}

/* Drain a streamed answer in small parts, as the transport does in chunks. */
static char *drain(struct api_stream *st)
{
	struct xg_buf b = {0};
	int more;

	parts = 0;
	do {
		more = api_stream_next(st, &b, 64);
		parts++;
	} while (more > 0);
	api_stream_free(st);
	if (more < 0) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

static int call(enum ec_method m, const char *path, const char *query, const char *ctype,
		const char *body)
{
	struct api_req rq = {.method = m,
			     .path = path,
			     .query = query ? query : "",
			     .content_type = ctype ? ctype : "",
			     .body = body,
			     .body_len = body ? strlen(body) : 0,
			     .peer = "test"};
	struct api_resp rs;

	api_handle(&D, &rq, &rs);
	if (rs.stream)
		rs.body = drain(rs.stream);
	json_decref(res);
	res = rs.body ? json_loads(rs.body, 0, NULL) : NULL;
	free(rs.body);
	return rs.code;
}

static const char *s_at(const char *a, const char *b)
{
	json_t *o = b ? json_object_get(json_object_get(res, a), b) : json_object_get(res, a);

	return json_string_value(o) ? json_string_value(o) : "";
}

static const char *field(void)
{
	return s_at("details", "field");
}

#define M "/apis/edge.xgate.io/v1/missions"
#define J "application/json"
#define BODY(name, extra)                                                                          \
	"{\"apiVersion\":\"edge.xgate.io/v1\",\"kind\":\"Mission\",\"metadata\":{\"name\":\"" name \
	"\"" extra "},\"spec\":{\"content\":\"x\"}}"

static json_t *item(const char *name)
{
	return json_pack("{s:s,s:s,s:{s:s},s:{s:s}}", "apiVersion", "edge.xgate.io/v1", "kind",
			 "Mission", "metadata", "name", name, "spec", "content", "x");
}

/* A MissionList of n missions PREFIX-0000, PREFIX-0001, ... */
static json_t *list_of(int n, const char *prefix)
{
	json_t *items = json_array();
	char name[64];

	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s-%04d", prefix, i);
		json_array_append_new(items, item(name));
	}
	return json_pack("{s:s,s:s,s:o}", "apiVersion", "edge.xgate.io/v1", "kind", "MissionList",
			 "items", items);
}

static json_t *items_of(json_t *v)
{
	return json_object_get(v, "items");
}

static int post_list(json_t *l)
{
	char *b = json_dumps(l, JSON_COMPACT);
	int code = call(EC_POST, M, NULL, J, b);

	free(b);
	json_decref(l);
	return code;
}

static uint64_t revision(void)
{
	uint64_t r = 0;

	return ec_store_revision(&D.store, &r) ? 0 : r;
}

static bool exists(const char *name)
{
	char path[300];

	snprintf(path, sizeof(path), M "/%s", name);
	return call(EC_GET, path, NULL, NULL, NULL) == 200;
}

static void test_mission_lists(void)
{
	char big[5000] = "", body[5200], uid[40];
	uint64_t rev0 = revision();
	json_t *l, *it, *spec_x = json_pack("{s:s}", "content", "x");
	size_t i, before;
	bool ok;
	int code;

	announced = json_array();
	D.on_mission = on_mission;
	code = post_list(list_of(3, "bulk"));
	ok = code == 201 && !strcmp(s_at("kind", NULL), "MissionList") &&
	     json_array_size(items_of(res)) == 3;
	json_array_foreach(items_of(res), i, it)
	{
		json_t *md = json_object_get(it, "metadata");
		char name[32], rv[32];

		snprintf(name, sizeof(name), "bulk-%04zu", i);
		snprintf(rv, sizeof(rv), "%llu", (unsigned long long)(rev0 + 1 + i));
		ok &= !strcmp(json_string_value(json_object_get(md, "name")), name) &&
		      json_string_length(json_object_get(md, "uid")) == 36 &&
		      !strcmp(json_string_value(json_object_get(md, "resourceVersion")), rv) &&
		      json_string_length(json_object_get(md, "creationTimestamp")) == 20 &&
		      !strcmp(json_string_value(json_object_get(it, "kind")), "Mission") &&
		      json_equal(json_object_get(it, "spec"), spec_x);
	}
	CHECK(ok, "MissionList of 3: 201, in order, each with a uid, its own resourceVersion, a "
		  "creationTimestamp");
	CHECK(atoll(s_at("metadata", "resourceVersion")) == (long long)rev0 + 3 &&
		  revision() == rev0 + 3,
	      "the answer's resourceVersion is the revision after the create");
	CHECK(json_array_size(announced) == 3 &&
		  !strcmp(json_string_value(json_array_get(announced, 2)), "bulk-0002"),
	      "on_mission for every created item, in order");
	snprintf(uid, sizeof(uid), "%s",
		 json_string_value(json_object_get(
		     json_object_get(json_array_get(items_of(res), 1), "metadata"), "uid")));
	CHECK(exists("bulk-0001") && !strcmp(s_at("metadata", "uid"), uid),
	      "a created item is stored with the uid of the answer");

	/* refusals write nothing and apply nothing */
	rev0 = revision();
	before = json_array_size(announced);
	l = list_of(4, "inv");
	json_object_set_new(json_object_get(json_array_get(items_of(l), 3), "spec"), "placement",
			    json_pack("{s:[s]}", "clusters", "Bad_Name"));
	CHECK(post_list(l) == 422 && !strcmp(field(), "items[3].spec.placement.clusters[0]") &&
		  !strncmp(s_at("message", NULL), "items[3].spec.placement.clusters[0]: ", 37),
	      "an invalid item: 422 naming items[3]: %s", s_at("message", NULL));
	l = list_of(2, "inv");
	json_array_set_new(items_of(l), 1, json_integer(42));
	CHECK(post_list(l) == 422 && !strcmp(field(), "items[1]"),
	      "an item that is no object: 422 items[1]: %s", s_at("message", NULL));
	l = list_of(3, "dup");
	json_array_append_new(items_of(l), item("dup-0001"));
	CHECK(post_list(l) == 409 && !strcmp(field(), "items[3].metadata.name") &&
		  !strcmp(s_at("reason", NULL), "Conflict") &&
		  strstr(s_at("message", NULL), "items[1]"),
	      "a name twice in the list: 409 naming both: %s", s_at("message", NULL));
	l = list_of(3, "new");
	json_array_append_new(items_of(l), item("bulk-0002"));
	CHECK(post_list(l) == 409 && !strcmp(field(), "items[3].metadata.name") &&
		  !strcmp(s_at("reason", NULL), "AlreadyExists") &&
		  strstr(s_at("message", NULL), "\"bulk-0002\" already exists"),
	      "an existing name: 409 AlreadyExists: %s", s_at("message", NULL));
	CHECK(post_list(list_of(API_LIST_ITEMS_MAX + 1, "cap")) == 413 && !strcmp(field(), "items"),
	      "%d items: 413: %s", API_LIST_ITEMS_MAX + 1, s_at("message", NULL));
	D.conf.max_body = 4096;
	memset(big, 'y', sizeof(big) - 1);
	l = list_of(2, "size");
	json_object_set_new(json_object_get(json_array_get(items_of(l), 1), "spec"), "content",
			    json_string(big));
	CHECK(post_list(l) == 413 && !strcmp(field(), "items[1]"),
	      "an item over MaxBody: 413 items[1]: %s", s_at("message", NULL));
	CHECK(revision() == rev0 && json_array_size(announced) == before && !exists("inv-0000") &&
		  !exists("dup-0000") && !exists("new-0000") && !exists("cap-0000") &&
		  !exists("size-0000"),
	      "no refused list wrote or applied anything");
	CHECK(post_list(list_of(60, "many")) == 201 && json_array_size(items_of(res)) == 60 &&
		  revision() == rev0 + 60,
	      "a list larger than MaxBody (4K) is created: 60 items");
	snprintf(body, sizeof(body),
		 "{\"apiVersion\":\"edge.xgate.io/v1\",\"kind\":\"Mission\",\"metadata\":{"
		 "\"name\":\"single\"},\"spec\":{\"content\":\"%s\"}}",
		 big);
	CHECK(call(EC_POST, M, NULL, J, body) == 413 && !exists("single"),
	      "one Mission over MaxBody: 413");
	D.conf.max_body = 1 << 20;
	rev0 = revision();
	CHECK(post_list(list_of(0, "none")) == 201 && json_array_size(items_of(res)) == 0 &&
		  revision() == rev0,
	      "an empty list: 201, nothing written");
	l = list_of(1, "env");
	json_object_del(l, "items");
	CHECK(post_list(l) == 422 && !strcmp(field(), "items"), "a list without items: 422");
	l = list_of(1, "env");
	json_object_set_new(l, "apiVersion", json_string("v1"));
	CHECK(post_list(l) == 422 && !strcmp(field(), "apiVersion"), "a list of v1: 422");
	l = list_of(1, "env");
	json_object_set_new(l, "metadata", json_pack("{s:s}", "resourceVersion", "3"));
	CHECK(post_list(l) == 201, "a list's metadata (as a GET gives it) is ignored");
	D.on_mission = NULL;
	json_decref(announced);
	json_decref(spec_x);
}

/* The list as the transport reads it: in parts, from one snapshot. */
static void test_streamed_list(void)
{
	struct api_req rq = {
	    .method = EC_GET, .path = M, .query = "", .content_type = "", .peer = "test"};
	struct api_resp rs;
	struct xg_buf b = {0};
	const char *prev = "";
	char rv[32];
	json_t *it, *snap;
	uint64_t rev0;
	size_t i, n = 0;
	bool sorted = true;
	int more;

	CHECK(call(EC_GET, M, NULL, NULL, NULL) == 200 &&
		  (n = json_array_size(items_of(res))) > 60 && parts > 20,
	      "list of %zu missions in %zu parts", n, parts);
	json_array_foreach(items_of(res), i, it)
	{
		const char *name =
		    json_string_value(json_object_get(json_object_get(it, "metadata"), "name"));

		sorted &= name && strcmp(prev, name) < 0;
		prev = name ? name : "";
	}
	CHECK(sorted, "items in name order, each once");
	CHECK(atoll(s_at("metadata", "resourceVersion")) == (long long)revision() &&
		  !strcmp(s_at("apiVersion", NULL), "edge.xgate.io/v1"),
	      "the list carries the current revision");

	/* writes while a list is being read do not show in it */
	rev0 = revision();
	api_handle(&D, &rq, &rs);
	more = rs.stream ? api_stream_next(rs.stream, &b, 1) : -1;
	CHECK(rs.code == 200 && more == 1 && strstr(b.p, "\"items\":[") && !strstr(b.p, "bulk"),
	      "the first part: the envelope");
	more = more == 1 ? api_stream_next(rs.stream, &b, 1) : -1;
	CHECK(more == 1 && strstr(b.p, "bulk-0000") && !strstr(b.p, "bulk-0001"),
	      "the next: the first mission");
	CHECK(call(EC_POST, M, NULL, J, BODY("zzz-late", "")) == 201 &&
		  call(EC_DELETE, M "/many-0059", NULL, NULL, NULL) == 200,
	      "meanwhile: a create and a delete");
	while (more > 0)
		more = api_stream_next(rs.stream, &b, 1000);
	api_stream_free(rs.stream);
	snap = more == 0 ? json_loads(b.p, 0, NULL) : NULL;
	snprintf(rv, sizeof(rv), "%llu", (unsigned long long)rev0);
	CHECK(snap && json_array_size(items_of(snap)) == n &&
		  !strcmp(json_string_value(json_object_get(json_object_get(snap, "metadata"),
							    "resourceVersion")),
			  rv),
	      "the list is the snapshot of its start: %zu items, resourceVersion %s",
	      json_array_size(items_of(snap)), rv);
	CHECK(snap && strstr(b.p, "\"many-0059\"") && !strstr(b.p, "zzz-late"),
	      "it holds the deleted mission and not the created one");
	json_decref(snap);
	free(b.p);
	CHECK(call(EC_GET, M, NULL, NULL, NULL) == 200 && json_array_size(items_of(res)) == n &&
		  exists("zzz-late") && !exists("many-0059"),
	      "the next list shows both writes");
	CHECK(call(EC_GET, M, "labelSelector=app=web", NULL, NULL) == 200 &&
		  json_array_size(items_of(res)) == 0,
	      "labelSelector on the streamed list");
}

int main(void)
{
	char dir[] = "/tmp/ec-api-XXXXXX", err[256], uid[64], rv[32], rv2[32], body[512], cmd[64];
	int code;

	if (sodium_init() < 0 || !mkdtemp(dir))
		return 1;
	snprintf(D.conf.name, sizeof(D.conf.name), "edge-a");
	snprintf(D.conf.database, sizeof(D.conf.database), "%s/api.db", dir);
	D.self_labels = json_pack("{s:s}", "zone", "east");
	D.conf.max_body = 1 << 20;
	D.conf.max_list_body = 8 << 20;
	if (ec_store_open(&D.store, D.conf.database, err, sizeof(err)) || api_self_sync(&D))
		return 1;

	CHECK(call(EC_GET, "/healthz", NULL, NULL, NULL) == 200, "healthz");
	CHECK(call(EC_POST, "/healthz", NULL, NULL, NULL) == 405, "healthz is GET only");
	CHECK(call(EC_GET, "/apis/edge.xgate.io/v1", NULL, NULL, NULL) == 200 &&
		  !strcmp(s_at("kind", NULL), "APIResourceList"),
	      "discovery");
	CHECK(call(EC_GET, "/api/v1/pods", NULL, NULL, NULL) == 404 &&
		  !strcmp(s_at("reason", NULL), "NotFound"),
	      "unknown path: 404 NotFound");
	CHECK(call(EC_GET, M "/a/b", NULL, NULL, NULL) == 404, "extra path segment: 404");

	code = call(EC_POST, M, NULL, J, BODY("m1", ",\"labels\":{\"app\":\"web\"}"));
	snprintf(uid, sizeof(uid), "%s", s_at("metadata", "uid"));
	snprintf(rv, sizeof(rv), "%s", s_at("metadata", "resourceVersion"));
	CHECK(code == 201 && strlen(uid) == 36 && atoi(rv) > 0, "create: 201, uid %s, rv %s", uid,
	      rv);
	CHECK(call(EC_POST, M, NULL, J, BODY("m1", "")) == 409 &&
		  !strcmp(s_at("reason", NULL), "AlreadyExists") &&
		  !strcmp(field(), "metadata.name"),
	      "create again: 409 AlreadyExists");
	CHECK(call(EC_POST, M, NULL, "text/plain", BODY("m2", "")) == 415, "text/plain: 415");
	CHECK(call(EC_POST, M, NULL, "", BODY("m2", "")) == 415, "no Content-Type: 415");
	CHECK(call(EC_POST, M, NULL, "application/json; charset=utf-8", BODY("m2", "")) == 201,
	      "application/json with a charset parameter is fine");
	CHECK(call(EC_POST, M, NULL, J, NULL) == 400, "no body: 400");
	CHECK(call(EC_POST, M, NULL, J, "{\"apiVersion\":") == 400 &&
		  strstr(s_at("message", NULL), "invalid JSON at line 1"),
	      "malformed JSON: 400 with the position: %s", s_at("message", NULL));
	CHECK(call(EC_POST, M, NULL, J, "{\"kind\":\"a\",\"kind\":\"b\"}") == 400,
	      "duplicate keys: 400");
	CHECK(call(EC_POST, M, NULL, J, "\"text\"") == 400, "a JSON string: 400");
	CHECK(call(EC_POST, M, NULL, J, BODY("M1", "")) == 422 &&
		  !strcmp(field(), "metadata.name") && !strcmp(s_at("reason", NULL), "Invalid"),
	      "invalid name: 422 Invalid, field metadata.name");
	CHECK(call(EC_OTHER, M, NULL, J, NULL) == 405, "other methods: 405");

	CHECK(call(EC_GET, M "/m1", NULL, NULL, NULL) == 200 &&
		  !strcmp(s_at("metadata", "uid"), uid),
	      "get");
	CHECK(call(EC_GET, M "/nope", NULL, NULL, NULL) == 404 &&
		  !strcmp(s_at("message", NULL), "missions \"nope\" not found"),
	      "get missing: 404");
	CHECK(call(EC_GET, M "/Not_A_Name", NULL, NULL, NULL) == 404, "get an invalid name: 404");
	CHECK(call(EC_GET, M "/\xff", NULL, NULL, NULL) == 404 &&
		  strstr(s_at("message", NULL), "\\xff"),
	      "get a name that is not UTF-8 (missions/%%ff): 404 quoting it: %s",
	      s_at("message", NULL));
	{
		char name[700] = "";

		for (int i = 0; i < 300; i++)
			strcat(name, "\xc3\xa9");
		CHECK(call(EC_GET, M, "labelSelector=\xff", NULL, NULL) == 400 &&
			  !strcmp(field(), "labelSelector"),
		      "a labelSelector that is not UTF-8: 400 on labelSelector: %s",
		      s_at("message", NULL));
		char path[800];

		snprintf(path, sizeof(path), M "/%s", name);
		CHECK(call(EC_GET, path, NULL, NULL, NULL) == 404 && res,
		      "a 600-byte name of two-byte characters, cut in a message: 404");
	}
	CHECK(call(EC_GET, M, NULL, NULL, NULL) == 200 &&
		  json_array_size(json_object_get(res, "items")) == 2 &&
		  !strcmp(s_at("kind", NULL), "MissionList"),
	      "list: 2");
	CHECK(call(EC_GET, M, "labelSelector=app=web", NULL, NULL) == 200 &&
		  json_array_size(json_object_get(res, "items")) == 1,
	      "list with labelSelector: 1");
	CHECK(call(EC_GET, M, "labelSelector=app=", NULL, NULL) == 200 &&
		  json_array_size(json_object_get(res, "items")) == 0,
	      "labelSelector app= (empty value): 0");
	CHECK(call(EC_GET, M, "labelSelector=a%b", NULL, NULL) == 400 &&
		  !strcmp(field(), "labelSelector"),
	      "bad labelSelector: 400");

	/* replace */
	CHECK(call(EC_PUT, M "/m1", NULL, J, BODY("m1", "")) == 422 &&
		  !strcmp(field(), "metadata.resourceVersion"),
	      "replace without resourceVersion: 422");
	snprintf(body, sizeof(body),
		 BODY("m1", ",\"resourceVersion\":\"%s\",\"labels\":{\"app\":\"web\"}"), rv);
	CHECK(call(EC_PUT, M "/m1", NULL, J, body) == 200 &&
		  !strcmp(s_at("metadata", "resourceVersion"), rv),
	      "replace with no change: 200, resourceVersion kept");
	snprintf(body, sizeof(body), BODY("m1", ",\"resourceVersion\":\"%s\""), rv);
	CHECK(call(EC_PUT, M "/m1", NULL, J, body) == 200 &&
		  strcmp(s_at("metadata", "resourceVersion"), rv) &&
		  !strcmp(s_at("metadata", "uid"), uid),
	      "replace (labels dropped): new resourceVersion, same uid");
	snprintf(rv2, sizeof(rv2), "%s", s_at("metadata", "resourceVersion"));
	CHECK(call(EC_PUT, M "/m1", NULL, J, body) == 409 &&
		  !strcmp(s_at("reason", NULL), "Conflict") &&
		  !strcmp(field(), "metadata.resourceVersion"),
	      "replace with the stale resourceVersion: 409 Conflict");
	snprintf(body, sizeof(body), BODY("m2", ",\"resourceVersion\":\"%s\""), rv2);
	CHECK(call(EC_PUT, M "/m1", NULL, J, body) == 400 && !strcmp(field(), "metadata.name"),
	      "name in the body differs from the URL: 400");
	snprintf(body, sizeof(body), BODY("m1", ",\"resourceVersion\":\"%s\",\"uid\":\"other\""),
		 rv2);
	CHECK(call(EC_PUT, M "/m1", NULL, J, body) == 409 && !strcmp(field(), "metadata.uid"),
	      "another uid: 409");
	snprintf(body, sizeof(body), BODY("m9", ",\"resourceVersion\":\"%s\""), rv2);
	CHECK(call(EC_PUT, M "/m9", NULL, J, body) == 404, "replace a missing mission: 404");

	/* delete */
	CHECK(call(EC_DELETE, M "/m1", "resourceVersion=1", NULL, NULL) == 409 &&
		  !strcmp(field(), "resourceVersion"),
	      "delete with a stale resourceVersion: 409");
	CHECK(call(EC_DELETE, M "/m1", "resourceVersion=x", NULL, NULL) == 400,
	      "delete with a bad resourceVersion: 400");
	CHECK(call(EC_DELETE, M "/m1", "resourceVersion=18446744073709551616", NULL, NULL) == 400 &&
		  !strcmp(field(), "resourceVersion"),
	      "delete with resourceVersion 2^64 (overflow): 400 on resourceVersion, not a 409");
	snprintf(cmd, sizeof(cmd), "resourceVersion=0%s", rv2);
	CHECK(call(EC_DELETE, M "/m1", cmd, NULL, NULL) == 400 &&
		  !strcmp(field(), "resourceVersion"),
	      "delete with the current resourceVersion after a 0 (%s): 400, not taken as it", cmd);
	snprintf(cmd, sizeof(cmd), "resourceVersion=%s", rv2);
	CHECK(call(EC_DELETE, M "/m1", cmd, NULL, NULL) == 200 &&
		  !strcmp(s_at("metadata", "uid"), uid),
	      "delete with the current resourceVersion: 200 and the object");
	CHECK(call(EC_DELETE, M "/m1", NULL, NULL, NULL) == 404, "delete again: 404");
	CHECK(call(EC_POST, M "/m2", NULL, J, BODY("m2", "")) == 405, "POST on an item: 405");

	/* edge clusters: this one */
	CHECK(call(EC_GET, "/apis/edge.xgate.io/v1/edgeclusters", NULL, NULL, NULL) == 200 &&
		  json_array_size(json_object_get(res, "items")) == 1,
	      "edgeclusters: this cluster");
	CHECK(call(EC_GET, "/apis/edge.xgate.io/v1/edgeclusters/edge-a", NULL, NULL, NULL) == 200 &&
		  !strcmp(s_at("state", "health"), "ok") &&
		  !strcmp(s_at("state", "path"), "edge-a") &&
		  json_array_size(json_object_get(json_object_get(res, "state"), "children")) == 0,
	      "edgecluster edge-a: health ok, path, no children");
	snprintf(uid, sizeof(uid), "%s", s_at("metadata", "uid"));
	snprintf(rv, sizeof(rv), "%s", s_at("metadata", "resourceVersion"));
	CHECK(call(EC_GET, "/apis/edge.xgate.io/v1/edgeclusters/edge-b", NULL, NULL, NULL) == 404,
	      "another cluster: 404");
	CHECK(call(EC_DELETE, "/apis/edge.xgate.io/v1/edgeclusters/edge-a", NULL, NULL, NULL) ==
		  405,
	      "edgeclusters are read-only: 405");
	CHECK(api_self_sync(&D) == 0 &&
		  call(EC_GET, "/apis/edge.xgate.io/v1/edgeclusters/edge-a", NULL, NULL, NULL) ==
		      200 &&
		  !strcmp(s_at("metadata", "resourceVersion"), rv),
	      "restart with the same config: same resourceVersion");
	json_object_set_new(D.self_labels, "tier", json_string("edge"));
	CHECK(api_self_sync(&D) == 0 &&
		  call(EC_GET, "/apis/edge.xgate.io/v1/edgeclusters/edge-a", NULL, NULL, NULL) ==
		      200 &&
		  strcmp(s_at("metadata", "resourceVersion"), rv) &&
		  !strcmp(s_at("metadata", "uid"), uid),
	      "new labels: new resourceVersion, same uid");

	test_mission_lists();
	test_streamed_list();

	json_decref(res);
	json_decref(D.self_labels);
	ec_store_close(&D.store);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		return 1;
	return unit_summary();
}
