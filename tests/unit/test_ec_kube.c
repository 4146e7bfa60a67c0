// SPDX-License-Identifier: BSD-2-Clause
/* What kubectl needs of edgeclusterd's API, without sockets: the discovery
 * documents and /openapi/v2, annotations kept (kubectl apply's
 * last-applied configuration), PATCH with a JSON merge patch (the rules of
 * a PUT on the result), fieldSelector metadata.name on lists and watches,
 * and a watch from resourceVersion 0 starting with the current objects.
 * (tests/edge/kubectl.sh drives the same with kubectl itself.) */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "unit.h"

void ecd_log(const char *fmt, ...)
{
	(void)fmt;
}

#define M   "/apis/edge.xgate.io/v1/missions"
#define J   "application/json"
#define MP  "application/merge-patch+json"
#define LAC "kubectl.kubernetes.io/last-applied-configuration"
#define MISSION(name, meta)                                                                        \
	"{\"apiVersion\":\"edge.xgate.io/v1\",\"kind\":\"Mission\",\"metadata\":{\"name\":\"" name \
	"\"" meta "},\"spec\":{\"content\":\"x\",\"placement\":{\"clusters\":[\"other\"]}}}"

static struct ecd D;
static json_t *res;
static const char *ctype;

static int call(enum ec_method m, const char *path, const char *query, const char *ct,
		const char *body)
{
	struct api_req rq = {.method = m,
			     .method_name = "X",
			     .path = path,
			     .query = query ? query : "",
			     .content_type = ct ? ct : "",
			     .body = body,
			     .body_len = body ? strlen(body) : 0,
			     .peer = "test"};
	struct api_resp rs;

	api_handle(&D, &rq, &rs);
	if (rs.stream) { /* a list: to its end */
		struct xg_buf b = {0};

		while (api_stream_next(rs.stream, &b, 4096) == 1)
			;
		api_stream_free(rs.stream);
		rs.body = b.p;
	}
	json_decref(res);
	res = rs.body ? json_loads(rs.body, 0, NULL) : NULL;
	ctype = rs.content_type;
	free(rs.body);
	api_watch_scan(D.watch); /* as the daemon does after every write */
	return rs.code;
}

/* A watch's stream, kept open (NULL when the request was refused). */
static struct api_stream *watch(const char *query)
{
	struct api_req rq = {.method = EC_GET,
			     .method_name = "GET",
			     .path = "/apis/edge.xgate.io/v1/missions",
			     .query = query,
			     .content_type = "",
			     .peer = "test"};
	struct api_resp rs;

	api_handle(&D, &rq, &rs);
	free(rs.body);
	return rs.stream;
}

/* The events a watch has now: "TYPE name" each, space-separated. */
static void events(struct api_stream *st, char *out, size_t len)
{
	struct xg_buf b = {0};
	size_t o = 0;

	out[0] = 0;
	api_watch_scan(D.watch);
	while (api_stream_next(st, &b, 1 << 20) == 1)
		;
	for (char *line = b.p, *nl; line && (nl = strchr(line, '\n')); line = nl + 1) {
		json_t *ev;

		*nl = 0;
		ev = json_loads(line, 0, NULL);
		o += (size_t)snprintf(
		    out + o, len - o, "%s%s %s", o ? " " : "",
		    json_string_value(json_object_get(ev, "type")),
		    json_string_value(json_object_get(
			json_object_get(json_object_get(ev, "object"), "metadata"), "name")));
		json_decref(ev);
	}
	free(b.p);
}

/* kubectl's annotation in res */
static const char *lac(void)
{
	json_t *a = json_object_get(json_object_get(res, "metadata"), "annotations");

	return json_string_value(json_object_get(a, LAC))
		   ? json_string_value(json_object_get(a, LAC))
		   : "";
}

static const char *s(const char *path)
{
	/* "a.b.c" in res */
	char buf[256], *save, *tok;
	json_t *o = res;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, ".", &save); o && tok; tok = strtok_r(NULL, ".", &save))
		o = json_is_array(o) ? json_array_get(o, (size_t)atoi(tok))
				     : json_object_get(o, tok);
	return json_is_string(o) ? json_string_value(o) : json_is_false(o) ? "false" : "";
}

static void discovery(void)
{
	CHECK(call(EC_GET, "/api", NULL, NULL, NULL) == 200 && !strcmp(s("kind"), "APIVersions"),
	      "/api");
	CHECK(call(EC_GET, "/apis", NULL, NULL, NULL) == 200 &&
		  !strcmp(s("groups.0.name"), "edge.xgate.io") &&
		  !strcmp(s("groups.0.preferredVersion.groupVersion"), "edge.xgate.io/v1"),
	      "/apis: the group");
	CHECK(call(EC_GET, "/apis/edge.xgate.io", NULL, NULL, NULL) == 200 &&
		  !strcmp(s("kind"), "APIGroup"),
	      "/apis/edge.xgate.io");
	CHECK(call(EC_GET, "/apis/edge.xgate.io/v1", NULL, NULL, NULL) == 200 &&
		  !strcmp(s("resources.0.name"), "missions") &&
		  !strcmp(s("resources.0.kind"), "Mission") &&
		  !strcmp(s("resources.0.namespaced"), "false") &&
		  !strcmp(s("resources.1.name"), "edgeclusters") &&
		  !strcmp(s("resources.1.namespaced"), "false"),
	      "/apis/edge.xgate.io/v1: missions and edgeclusters, cluster-scoped");
	{
		json_t *verbs =
		    json_object_get(json_array_get(json_object_get(res, "resources"), 0), "verbs");
		bool patch = false, watch = false;
		size_t i;
		json_t *v;

		json_array_foreach(verbs, i, v)
		{
			patch |= !strcmp(json_string_value(v), "patch");
			watch |= !strcmp(json_string_value(v), "watch");
		}
		CHECK(patch && watch, "missions: patch and watch among the verbs");
	}
	CHECK(call(EC_GET, "/version", NULL, NULL, NULL) == 200 && !strcmp(s("major"), "1") &&
		  !strcmp(s("minor"), "20"),
	      "/version");
	CHECK(call(EC_GET, "/openapi/v2", NULL, NULL, NULL) == 200 &&
		  !strcmp(ctype, "application/octet-stream"),
	      "/openapi/v2: a protobuf document");
	CHECK(call(EC_POST, "/apis", NULL, J, "{}") == 405, "discovery is GET only");
	CHECK(call(EC_GET, "/apis/other.io/v1", NULL, NULL, NULL) == 404, "another group: 404");
}

static void annotations(void)
{
	CHECK(call(EC_POST, M, NULL, J,
		   MISSION("m1", ",\"annotations\":{\"" LAC "\":\"{\\\"a\\\":1}\\n\"}")) == 201 &&
		  !strcmp(lac(), "{\"a\":1}\n"),
	      "create with kubectl's annotation: kept");
	CHECK(call(EC_GET, M "/m1", NULL, NULL, NULL) == 200 && !strcmp(lac(), "{\"a\":1}\n"),
	      "get: the annotation is stored");
	CHECK(call(EC_POST, M, NULL, J, MISSION("m2", "")) == 201 &&
		  !json_object_get(json_object_get(res, "metadata"), "annotations"),
	      "no annotations: no member");
	CHECK(call(EC_POST, M, NULL, J, MISSION("m3", ",\"annotations\":{\"Bad_/x\":\"v\"}")) ==
		      422 &&
		  !strcmp(s("details.field"), "metadata.annotations.Bad_/x"),
	      "a bad annotation key: 422 naming it");
	CHECK(call(EC_POST, M, NULL, J, MISSION("m3", ",\"annotations\":{\"a\":1}")) == 422 &&
		  !strcmp(s("details.field"), "metadata.annotations.a"),
	      "an annotation that is not a string: 422");
	CHECK(call(EC_POST, M, NULL, J, MISSION("m3", ",\"annotations\":[]")) == 422 &&
		  !strcmp(s("details.field"), "metadata.annotations"),
	      "annotations not an object: 422");
}

static void patches(void)
{
	char rv[32], body[256];

	call(EC_GET, M "/m1", NULL, NULL, NULL);
	snprintf(rv, sizeof(rv), "%s", s("metadata.resourceVersion"));
	CHECK(call(EC_PATCH, M "/m1", NULL, MP,
		   "{\"metadata\":{\"labels\":{\"app\":\"web\"}},\"spec\":{\"content\":\"y\"}}") ==
		      200 &&
		  !strcmp(s("spec.content"), "y") && !strcmp(s("metadata.labels.app"), "web") &&
		  !strcmp(s("spec.placement.clusters.0"), "other") &&
		  !strcmp(lac(), "{\"a\":1}\n") && strcmp(s("metadata.resourceVersion"), rv),
	      "merge patch: labels and content changed, the rest kept, a new resourceVersion");
	CHECK(call(EC_GET, M "/m1", NULL, NULL, NULL) == 200 && !strcmp(s("spec.content"), "y"),
	      "the patch is stored");
	snprintf(rv, sizeof(rv), "%s", s("metadata.resourceVersion"));
	CHECK(call(EC_PATCH, M "/m1", NULL, MP, "{\"spec\":{\"content\":\"y\"}}") == 200 &&
		  !strcmp(s("metadata.resourceVersion"), rv),
	      "a patch that changes nothing: no write, the same resourceVersion");
	CHECK(call(EC_PATCH, M "/m1", NULL, MP,
		   "{\"metadata\":{\"labels\":{\"app\":null},\"annotations\":null}}") == 200 &&
		  !json_object_size(json_object_get(json_object_get(res, "metadata"), "labels")) &&
		  !json_object_get(json_object_get(res, "metadata"), "annotations"),
	      "null removes a label and the annotations");
	snprintf(body, sizeof(body), "{\"metadata\":{\"resourceVersion\":\"%s\"}}", rv);
	CHECK(call(EC_PATCH, M "/m1", NULL, MP, body) == 409 &&
		  !strcmp(s("details.field"), "metadata.resourceVersion"),
	      "a patch with an old resourceVersion: 409 (a precondition, as in Kubernetes)");
	CHECK(call(EC_PATCH, M "/m1", NULL, MP, "{\"spec\":{\"content\":5}}") == 422 &&
		  !strcmp(s("details.field"), "spec.content"),
	      "a patch that makes the mission invalid: 422 with the field");
	CHECK(call(EC_PATCH, M "/m1", NULL, MP, "{\"metadata\":{\"name\":\"m9\"}}") == 400 &&
		  !strcmp(s("details.field"), "metadata.name"),
	      "a patch of the name: 400");
	CHECK(call(EC_PATCH, M "/m1", NULL, J, "{}") == 415 && strstr(s("message"), "merge-patch"),
	      "PATCH with application/json: 415 naming the type served");
	CHECK(call(EC_PATCH, M "/m1", NULL, "application/strategic-merge-patch+json", "{}") == 415,
	      "a strategic merge patch: 415");
	CHECK(call(EC_PATCH, M "/m1", NULL, MP, "{\"spec\":") == 400, "malformed JSON: 400");
	CHECK(call(EC_PATCH, M "/m1", NULL, MP, "[1]") == 400 && strstr(s("message"), "object"),
	      "a patch that is not an object: 400");
	CHECK(call(EC_PATCH, M "/m1", NULL, MP, NULL) == 400, "no body: 400");
	CHECK(call(EC_PATCH, M "/nosuch", NULL, MP, "{}") == 404, "a missing mission: 404");
	CHECK(call(EC_PATCH, M, NULL, MP, "{}") == 405, "PATCH of the collection: 405");
}

static void selectors(void)
{
	char ev[512];
	struct api_stream *st;

	CHECK(call(EC_GET, M, "fieldSelector=metadata.name=m2", NULL, NULL) == 200 &&
		  json_array_size(json_object_get(res, "items")) == 1 &&
		  !strcmp(s("items.0.metadata.name"), "m2"),
	      "list with fieldSelector metadata.name=m2: m2 only");
	CHECK(call(EC_GET, M, "fieldSelector=metadata.name==m1", NULL, NULL) == 200 &&
		  json_array_size(json_object_get(res, "items")) == 1,
	      "metadata.name==m1 too");
	CHECK(call(EC_GET, M, "fieldSelector=metadata.name=gone", NULL, NULL) == 200 &&
		  json_array_size(json_object_get(res, "items")) == 0,
	      "a name that is not there: an empty list (kubectl delete's wait ends on it)");
	CHECK(call(EC_GET, M, "fieldSelector=spec.content=x", NULL, NULL) == 400 &&
		  !strcmp(s("details.field"), "fieldSelector") &&
		  strstr(s("message"), "spec.content=x"),
	      "another field: 400 quoting it");
	CHECK(call(EC_GET, M, "watch=1&fieldSelector=status.x=1", NULL, NULL) == 400,
	      "a watch with another field: 400");

	st = watch("watch=true&resourceVersion=0");
	events(st, ev, sizeof(ev));
	CHECK(!strcmp(ev, "ADDED m1 ADDED m2"),
	      "a watch from resourceVersion 0 starts with the current missions: %s", ev);
	api_stream_free(st);
	st = watch("watch=true&resourceVersion=0&fieldSelector=metadata.name=m2");
	events(st, ev, sizeof(ev));
	CHECK(st && !strcmp(ev, "ADDED m2"), "of m2 only: %s", ev);
	call(EC_PATCH, M "/m1", NULL, MP, "{\"spec\":{\"content\":\"z\"}}");
	call(EC_PATCH, M "/m2", NULL, MP, "{\"spec\":{\"content\":\"z\"}}");
	call(EC_DELETE, M "/m1", NULL, NULL, NULL);
	call(EC_DELETE, M "/m2", NULL, NULL, NULL);
	events(st, ev, sizeof(ev));
	CHECK(!strcmp(ev, "MODIFIED m2 DELETED m2"), "then the changes of m2 only: %s", ev);
	api_stream_free(st);
	st = watch("watch=1");
	events(st, ev, sizeof(ev));
	CHECK(st && !ev[0], "resourceVersion absent: from now, nothing yet");
	api_stream_free(st);
}

int main(void)
{
	char dir[] = "/tmp/ec-kube-XXXXXX", err[256], cmd[64];

	if (sodium_init() < 0 || !mkdtemp(dir))
		return 1;
	snprintf(D.conf.name, sizeof(D.conf.name), "edge-a");
	snprintf(D.conf.database, sizeof(D.conf.database), "%s/api.db", dir);
	D.self_labels = json_object();
	D.conf.max_body = 1 << 20;
	D.conf.max_list_body = 8 << 20;
	if (ec_store_open(&D.store, D.conf.database, err, sizeof(err)) || api_self_sync(&D) ||
	    !(D.watch = api_watch_new(&D)))
		return 1;
	discovery();
	annotations();
	patches();
	selectors();
	api_watch_free(D.watch);
	json_decref(res);
	json_decref(D.self_labels);
	ec_store_close(&D.store);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		return 1;
	return unit_summary();
}
