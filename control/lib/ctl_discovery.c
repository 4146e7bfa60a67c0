// SPDX-License-Identifier: BSD-2-Clause
/* Kubernetes discovery documents from a daemon's table; see ctl_discovery.h.
 * The shapes are those of k8s.io/apimachinery's metav1 (APIVersions,
 * APIGroupList, APIGroup, APIResourceList) and version.Info, as kubectl 1.20
 * decodes them. */
#include <stdio.h>
#include <string.h>

#include "ctl_discovery.h"
#include "ctl_k8s.h"

/* A path split into at most 3 segments after the first ("/apis/G/V"); one
 * trailing slash is allowed, as the apiserver does. -1: more segments, or
 * an empty one. */
struct segs {
	int n;
	char s[4][256];
};

static int split(const char *path, struct segs *sg)
{
	const char *p = path;

	sg->n = 0;
	if (*p != '/')
		return -1;
	while (*p == '/' && p[1]) {
		const char *e = strchr(p + 1, '/');
		size_t len = e ? (size_t)(e - p - 1) : strlen(p + 1);

		if (!len || len >= sizeof(sg->s[0]) || sg->n == 4)
			return -1;
		memcpy(sg->s[sg->n], p + 1, len);
		sg->s[sg->n++][len] = 0;
		p += len + 1;
	}
	return *p && strcmp(p, "/") ? -1 : 0;
}

bool ctl_discovery_match(const char *path)
{
	struct segs sg;

	if (split(path, &sg) || !sg.n)
		return false;
	if (!strcmp(sg.s[0], "version"))
		return sg.n == 1;
	if (!strcmp(sg.s[0], "api"))
		return sg.n <= 2;
	if (!strcmp(sg.s[0], "apis"))
		return sg.n <= 3;
	return false;
}

/* A space-separated word list as a JSON array of strings. */
static json_t *words(const char *s)
{
	json_t *a = json_array();

	while (a && s && *s) {
		size_t n = strcspn(s, " ");

		if (n && json_array_append_new(a, json_stringn(s, n))) {
			json_decref(a);
			return NULL;
		}
		s += n;
		s += strspn(s, " ");
	}
	return a;
}

static json_t *gv_ref(const struct ctl_api_group_version *gv)
{
	char gvs[512];

	snprintf(gvs, sizeof(gvs), "%s/%s", gv->group, gv->version);
	return json_pack("{s:s,s:s}", "groupVersion", gvs, "version", gv->version);
}

/* The APIGroup of group name (its versions in table order, the first the
 * preferred one); NULL if the table has no such group. An item of an
 * APIGroupList has no kind and apiVersion of its own. */
static json_t *api_group(const struct ctl_discovery *d, const char *name, bool item)
{
	json_t *versions = json_array(), *pref = NULL;

	for (size_t i = 0; versions && i < d->n_gvs; i++) {
		if (strcmp(d->gvs[i].group, name))
			continue;
		json_array_append_new(versions, gv_ref(&d->gvs[i]));
		if (!pref)
			pref = gv_ref(&d->gvs[i]);
	}
	if (!pref) {
		json_decref(versions);
		return NULL;
	}
	if (item)
		return json_pack("{s:s,s:o,s:o}", "name", name, "versions", versions,
				 "preferredVersion", pref);
	return json_pack("{s:s,s:s,s:s,s:o,s:o}", "kind", "APIGroup", "apiVersion", "v1", "name",
			 name, "versions", versions, "preferredVersion", pref);
}

static json_t *group_list(const struct ctl_discovery *d)
{
	json_t *groups = json_array();

	for (size_t i = 0; groups && i < d->n_gvs; i++) {
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(d->gvs[j].group, d->gvs[i].group);
		if (!seen)
			json_array_append_new(groups, api_group(d, d->gvs[i].group, true));
	}
	return json_pack("{s:s,s:s,s:o}", "kind", "APIGroupList", "apiVersion", "v1", "groups",
			 groups);
}

static json_t *resource(const struct ctl_api_resource *r)
{
	json_t *o =
	    json_pack("{s:s,s:s,s:b,s:s,s:o}", "name", r->name, "singularName", r->singular,
		      "namespaced", r->namespaced, "kind", r->kind, "verbs", words(r->verbs));

	if (o && r->short_names && *r->short_names)
		json_object_set_new(o, "shortNames", words(r->short_names));
	return o;
}

static json_t *resource_list(const char *group_version, const struct ctl_api_resource *res,
			     size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++)
		json_array_append_new(a, resource(&res[i]));
	return json_pack("{s:s,s:s,s:s,s:o}", "kind", "APIResourceList", "apiVersion", "v1",
			 "groupVersion", group_version, "resources", a);
}

static json_t *versions(const struct ctl_discovery *d)
{
	json_t *addr = json_array();

	if (addr && d->server_address)
		json_array_append_new(addr, json_pack("{s:s,s:s}", "clientCIDR", "0.0.0.0/0",
						      "serverAddress", d->server_address));
	return json_pack("{s:s,s:[s],s:o}", "kind", "APIVersions", "versions", "v1",
			 "serverAddressByClientCIDRs", addr);
}

static json_t *version_info(const struct ctl_discovery *d)
{
	const char *gv = d->git_version ? d->git_version : CTL_DISCOVERY_VERSION;
	char major[12] = "1", minor[12] = "20";
	unsigned ma, mi;

	/* major and minor are what clients compare: from gitVersion when it
	 * reads "vMAJOR.MINOR..." */
	if (sscanf(gv, "v%u.%u", &ma, &mi) == 2) {
		snprintf(major, sizeof(major), "%u", ma);
		snprintf(minor, sizeof(minor), "%u", mi);
	}
	return json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "major", major, "minor", minor,
			 "gitVersion", gv, "gitCommit", "", "gitTreeState", "", "buildDate", "",
			 "goVersion", "", "compiler", "", "platform", "linux/amd64");
}

/* gnostic's openapi_v2.Document: swagger (1) "2.0", info (2) {title (1)
 * "xgate", version (2) "v1"}; nothing else */
const char ctl_discovery_openapi[] = "\x0a\x03"
				     "2.0"
				     "\x12\x0b\x0a\x05"
				     "xgate"
				     "\x12\x02"
				     "v1";

static int not_found(json_t **body, const char *what, const char *name)
{
	char msg[600];

	snprintf(msg, sizeof(msg), "%s \"%s\" is not served here (GET /apis lists what is)", what,
		 name);
	*body = ctl_k8s_status(404, NULL, msg, NULL);
	return 404;
}

int ctl_discovery_serve(const struct ctl_discovery *d, const char *path, json_t **body)
{
	struct segs sg;

	*body = NULL;
	if (!ctl_discovery_match(path) || split(path, &sg))
		return 0;
	if (!strcmp(sg.s[0], "version")) {
		*body = version_info(d);
		return 200;
	}
	if (!strcmp(sg.s[0], "api")) {
		if (sg.n == 1) {
			*body = versions(d);
			return 200;
		}
		if (strcmp(sg.s[1], "v1"))
			return not_found(body, "API version", sg.s[1]);
		*body = resource_list("v1", NULL, 0);
		return 200;
	}
	if (sg.n == 1) { /* /apis */
		*body = group_list(d);
		return 200;
	}
	if (sg.n == 2) {
		*body = api_group(d, sg.s[1], false);
		return *body ? 200 : not_found(body, "API group", sg.s[1]);
	}
	for (size_t i = 0; i < d->n_gvs; i++) {
		char gvs[520];

		if (strcmp(d->gvs[i].group, sg.s[1]) || strcmp(d->gvs[i].version, sg.s[2]))
			continue;
		snprintf(gvs, sizeof(gvs), "%s/%s", sg.s[1], sg.s[2]);
		*body = resource_list(gvs, d->gvs[i].resources, d->gvs[i].n_resources);
		return 200;
	}
	{
		char gvs[520];

		snprintf(gvs, sizeof(gvs), "%s/%s", sg.s[1], sg.s[2]);
		return not_found(body, "API group version", gvs);
	}
}
