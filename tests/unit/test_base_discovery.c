// SPDX-License-Identifier: BSD-2-Clause
/* The control base's discovery documents: what kubectl reads before it can
 * map "get missions" to a URL, from a table of two groups (one with two
 * versions), cluster-scoped and namespaced resources; 404s that name the
 * group or version that is not there; paths that are not discovery. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_discovery.h"
#include "unit.h"

static const struct ctl_api_resource edge_res[] = {
    {"missions", "mission", "Mission", false, "get list watch create update patch delete", "ms"},
    {"edgeclusters", "edgecluster", "EdgeCluster", false, "get list", NULL},
};
static const struct ctl_api_resource apps_v1[] = {
    {"applications", "application", "Application", true, "get list", "app"},
};
static const struct ctl_api_resource apps_v2[] = {
    {"applicationsessions", "applicationsession", "ApplicationSession", true,
     "get list create delete", "session as"},
};
static const struct ctl_api_group_version gvs[] = {
    {"edge.xgate.io", "v1", edge_res, 2},
    {"apps.example", "v2", apps_v2, 1},
    {"apps.example", "v1", apps_v1, 1},
};
static const struct ctl_discovery disc = {gvs, 3, NULL, "127.0.0.1:8450"};

static json_t *get(const char *path, int want)
{
	json_t *b = NULL;
	int code = ctl_discovery_serve(&disc, path, &b);

	if (code != want) {
		CHECK(0, "%s: %d, not %d", path, code, want);
		json_decref(b);
		return NULL;
	}
	return b;
}

static const char *str(json_t *o, const char *path)
{
	/* "a.b.0.c": members and array indexes */
	char buf[256], *save, *tok;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, ".", &save); o && tok; tok = strtok_r(NULL, ".", &save))
		o = json_is_array(o) ? json_array_get(o, (size_t)atoi(tok))
				     : json_object_get(o, tok);
	return json_is_string(o)  ? json_string_value(o)
	       : json_is_true(o)  ? "true"
	       : json_is_false(o) ? "false"
				  : "";
}

static size_t count(json_t *o, const char *key)
{
	return json_array_size(json_object_get(o, key));
}

int main(void)
{
	json_t *b;

	b = get("/api", 200);
	CHECK(b && !strcmp(str(b, "kind"), "APIVersions") && !strcmp(str(b, "versions.0"), "v1") &&
		  !strcmp(str(b, "serverAddressByClientCIDRs.0.serverAddress"), "127.0.0.1:8450"),
	      "/api: APIVersions v1 and the server's address");
	json_decref(b);
	b = get("/api/v1", 200);
	CHECK(b && !strcmp(str(b, "kind"), "APIResourceList") &&
		  !strcmp(str(b, "groupVersion"), "v1") &&
		  json_is_array(json_object_get(b, "resources")) && !count(b, "resources"),
	      "/api/v1: the core group, no resources");
	json_decref(b);
	b = get("/apis", 200);
	CHECK(b && !strcmp(str(b, "kind"), "APIGroupList") && count(b, "groups") == 2 &&
		  !strcmp(str(b, "groups.0.name"), "edge.xgate.io") &&
		  !strcmp(str(b, "groups.0.preferredVersion.groupVersion"), "edge.xgate.io/v1") &&
		  !strcmp(str(b, "groups.1.name"), "apps.example") &&
		  json_array_size(json_object_get(json_array_get(json_object_get(b, "groups"), 1),
						  "versions")) == 2 &&
		  !strcmp(str(b, "groups.1.versions.1.groupVersion"), "apps.example/v1") &&
		  !strcmp(str(b, "groups.1.preferredVersion.version"), "v2") &&
		  !json_object_get(json_array_get(json_object_get(b, "groups"), 0), "kind"),
	      "/apis: one entry per group, its versions, the first preferred");
	json_decref(b);
	b = get("/apis/", 200);
	CHECK(b && !strcmp(str(b, "kind"), "APIGroupList"), "/apis/: a trailing slash is taken");
	json_decref(b);
	b = get("/apis/apps.example", 200);
	CHECK(b && !strcmp(str(b, "kind"), "APIGroup") && !strcmp(str(b, "name"), "apps.example") &&
		  count(b, "versions") == 2 && !strcmp(str(b, "preferredVersion.version"), "v2"),
	      "/apis/GROUP: APIGroup");
	json_decref(b);
	b = get("/apis/edge.xgate.io/v1", 200);
	CHECK(
	    b && !strcmp(str(b, "kind"), "APIResourceList") &&
		!strcmp(str(b, "groupVersion"), "edge.xgate.io/v1") && count(b, "resources") == 2 &&
		!strcmp(str(b, "resources.0.name"), "missions") &&
		!strcmp(str(b, "resources.0.singularName"), "mission") &&
		!strcmp(str(b, "resources.0.kind"), "Mission") &&
		!strcmp(str(b, "resources.0.namespaced"), "false") &&
		json_array_size(json_object_get(json_array_get(json_object_get(b, "resources"), 0),
						"verbs")) == 7 &&
		!strcmp(str(b, "resources.0.verbs.5"), "patch") &&
		!strcmp(str(b, "resources.0.shortNames.0"), "ms") &&
		!json_object_get(json_array_get(json_object_get(b, "resources"), 1), "shortNames"),
	    "/apis/GROUP/VERSION: name, singularName, kind, scope, verbs, shortNames");
	json_decref(b);
	b = get("/apis/apps.example/v2", 200);
	CHECK(b && !strcmp(str(b, "resources.0.namespaced"), "true") &&
		  !strcmp(str(b, "resources.0.shortNames.1"), "as") &&
		  !strcmp(str(b, "resources.0.verbs.3"), "delete"),
	      "a namespaced resource, two short names");
	json_decref(b);
	b = get("/version", 200);
	CHECK(b && !strcmp(str(b, "major"), "1") && !strcmp(str(b, "minor"), "20") &&
		  !strcmp(str(b, "gitVersion"), CTL_DISCOVERY_VERSION),
	      "/version: 1.20");
	json_decref(b);

	b = get("/apis/nosuch.io", 404);
	CHECK(b && !strcmp(str(b, "kind"), "Status") && strstr(str(b, "message"), "nosuch.io"),
	      "an unknown group: 404 naming it (%s)", b ? str(b, "message") : "");
	json_decref(b);
	b = get("/apis/edge.xgate.io/v2", 404);
	CHECK(b && strstr(str(b, "message"), "edge.xgate.io/v2"),
	      "an unknown version of a known group: 404 naming it");
	json_decref(b);
	b = get("/api/v2", 404);
	CHECK(b && strstr(str(b, "message"), "\"v2\""), "/api/v2: 404");
	json_decref(b);

	CHECK(!ctl_discovery_match("/apis/edge.xgate.io/v1/missions") &&
		  !ctl_discovery_match("/apis/edge.xgate.io/v1/missions/m1") &&
		  !ctl_discovery_match("/healthz") && !ctl_discovery_match("/") &&
		  !ctl_discovery_match("/version/x") && !ctl_discovery_match("/apis//v1") &&
		  !ctl_discovery_match("/apisx") && !ctl_discovery_match("/api/v1/namespaces"),
	      "resources and other paths are not discovery");
	b = get("/apis/edge.xgate.io/v1/missions", 0);
	CHECK(!b, "not discovery: 0, no body");
	{
		static const struct ctl_discovery v = {gvs, 1, "v1.21.3-x", NULL};
		json_t *vb = NULL;

		CHECK(ctl_discovery_serve(&v, "/version", &vb) == 200 &&
			  !strcmp(str(vb, "minor"), "21") &&
			  !strcmp(str(vb, "gitVersion"), "v1.21.3-x"),
		      "/version: major and minor from the daemon's gitVersion");
		json_decref(vb);
		CHECK(ctl_discovery_serve(&v, "/api", &vb) == 200 &&
			  !count(vb, "serverAddressByClientCIDRs"),
		      "no server address: none listed");
		json_decref(vb);
	}
	CHECK(strlen(ctl_discovery_openapi) == 18 && !memcmp(ctl_discovery_openapi,
							     "\x0a\x03"
							     "2.0\x12\x0b",
							     7),
	      "/openapi/v2: swagger 2.0 and an info, 18 bytes of protobuf without a NUL");
	return unit_summary();
}
