/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The Kubernetes discovery documents a daemon's API serves so that kubectl
 * (and any client-go client) can map "kubectl get missions" to a URL:
 * /api, /api/v1, /apis, /apis/GROUP, /apis/GROUP/VERSION and /version,
 * built from a table the daemon passes (its groups, versions and
 * resources). The core group ("" in /api/v1) has no resources here: every
 * resource of ours is in a named group. Pure functions of the table (no
 * I/O), unit-tested directly; the daemon routes the paths to it.
 */
#ifndef CTL_DISCOVERY_H
#define CTL_DISCOVERY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct ctl_api_resource {
	const char *name;	 /* the plural, the path segment: "missions" */
	const char *singular;	 /* "mission" */
	const char *kind;	 /* "Mission" */
	bool namespaced;	 /* false: cluster-scoped */
	const char *verbs;	 /* space-separated: "get list watch create update patch delete" */
	const char *short_names; /* space-separated; NULL or "": none */
};

struct ctl_api_group_version {
	const char *group;   /* "edge.xgate.io" */
	const char *version; /* "v1" */
	const struct ctl_api_resource *resources;
	size_t n_resources;
};

struct ctl_discovery {
	/* the group/versions, a group's preferred version first */
	const struct ctl_api_group_version *gvs;
	size_t n_gvs;
	/* /version's gitVersion; NULL: CTL_DISCOVERY_VERSION */
	const char *git_version;
	/* /api's serverAddressByClientCIDRs (host:port); NULL: none listed */
	const char *server_address;
};

/* The Kubernetes release whose discovery is served (what kubectl 1.20
 * checks against its own version: within one minor release). */
#define CTL_DISCOVERY_VERSION "v1.20.0-xgate"

/* Is path one of the discovery documents (served or, under /apis/, a
 * group or version that is not there: a 404 of ours)? Paths of resources
 * (/apis/GROUP/VERSION/RES...) are not. */
bool ctl_discovery_match(const char *path);

/* The answer for a path ctl_discovery_match takes: 200 and the document,
 * or 404 and a Status naming what is not there; *body a new reference
 * (NULL when out of memory). 0 (and *body NULL) for any other path. */
int ctl_discovery_serve(const struct ctl_discovery *d, const char *path, json_t **body);

/* GET /openapi/v2, which kubectl reads to validate what it sends (without
 * it, create and apply fail unless given --validate=false): an OpenAPI v2
 * document with no definitions, in the protobuf encoding kubectl asks for.
 * kubectl skips the validation of a kind the document does not define, so
 * the server's own checks (422 with the field path) are what applies.
 * Without NUL bytes: the transport sends a body up to its first NUL. */
#define CTL_DISCOVERY_OPENAPI_PATH "/openapi/v2"
/* as the apiserver labels it: the '@' of the type kubectl asks for
 * (application/com.github.proto-openapi.spec.v2@v1.0+protobuf) is not
 * valid in a Content-Type, and client-go refuses the answer with it */
#define CTL_DISCOVERY_OPENAPI_TYPE "application/octet-stream"
extern const char ctl_discovery_openapi[];

#endif
