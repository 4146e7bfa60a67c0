// SPDX-License-Identifier: BSD-2-Clause
/* edgeclusterd's API handlers without sockets: routing, codes, Status
 * bodies with field paths, optimistic concurrency, no-op replaces, the
 * cluster's own EdgeCluster. (tests/edge/api.sh does the same over HTTP.) */
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "ecd.h"

void ecd_log(const char *fmt, ...)
{
	(void)fmt;
}

static struct ecd D;
static json_t *res;

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

int main(void)
{
	char dir[] = "/tmp/ec-api-XXXXXX", err[256], uid[64], rv[32], rv2[32], body[512], cmd[64];
	int code;

	if (sodium_init() < 0 || !mkdtemp(dir))
		return 1;
	snprintf(D.conf.name, sizeof(D.conf.name), "edge-a");
	snprintf(D.conf.database, sizeof(D.conf.database), "%s/api.db", dir);
	D.self_labels = json_pack("{s:s}", "zone", "east");
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

	json_decref(res);
	json_decref(D.self_labels);
	ec_store_close(&D.store);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		return 1;
	return unit_summary();
}
