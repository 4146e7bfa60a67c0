/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The tree's vocabulary, pure functions only (no store, no lws): the
 * protocol's constants, the attach phases and record, paths of
 * descendants, hub URLs, credentials, and the EdgeCluster object a parent
 * keeps of a child's heartbeat. The wire protocol is proto/edgecluster.md
 * "Hub protocol"; the design is docs/edgecluster.md "The tree".
 *
 * Paths: a cluster names itself by its name; a descendant by the path from
 * its child down ("c", "c/d"). Mission state keys use the same paths, so a
 * parent stores a child's report verbatim: every key is the child's name or
 * starts with "child/".
 */
#ifndef ECD_TREE_MODEL_H
#define ECD_TREE_MODEL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "ctl_url.h"
#include "resource.h"

#define TREE_PROTOCOL	 "edge.xgate.io.v1"
#define TREE_HUB_PATH	 "/apis/" EC_API_VERSION "/hub"
#define TREE_CRED_LEN	 43 /* 32 random bytes, base64url without padding */
#define TREE_DIGEST_HEX	 64
#define TREE_HELLO_MAX	 (64u << 10)		    /* a message before authentication */
#define TREE_MSG_MAX	 ((64u << 20) + (1u << 20)) /* any other message (MaxBody <= 64M) */
#define TREE_HELLO_SECS	 10
#define TREE_BATCH_BYTES (256u << 10) /* missions/state batches are cut near this size */

/* The attach state machine (docs/edgecluster.md "Attach"), persisted (table attach). */
enum ec_phase {
	PH_INACTIVE,
	PH_REGISTERING,
	PH_INSTALLING, /* install_in_progress */
	PH_ACTIVE,
	PH_DEREGISTERING,
	PH_UNINSTALLING, /* uninstall_in_progress */
};
const char *tree_phase_name(enum ec_phase p);

struct ec_attach {
	enum ec_phase phase;
	char parent[EC_PATH_MAX];	    /* the parent's hub URL */
	char token[EC_TOKEN_MAX + 1];	    /* the join token, kept only until registered */
	char credential[TREE_CRED_LEN + 1]; /* what the parent issued */
	int64_t cred_expires;		    /* unix seconds */
	char since[EC_TS_LEN + 1];	    /* when phase was entered */
	char last_error[256];
	char parent_name[EC_NAME_MAX + 1];
};

/* A hub URL: the configured one, with TREE_HUB_PATH if it has no path. */
int tree_hub_url(const char *s, struct ctl_url *u, char *err, size_t errlen);
/* A parent is one URL or several separated by commas (roots on etcd, one
 * leading): how many, and the i-th (0 .. count-1) into out; -1 if none or
 * it does not fit. */
unsigned tree_parent_count(const char *list);
int tree_parent_at(const char *list, unsigned i, char *out, size_t len);
/* Is k the child's own key or one of its subtree's? */
bool tree_in_subtree(const char *k, const char *child);
/* "a/b/c": 1-32 DNS labels. */
bool tree_path_ok(const char *p);
/* Random credential text (its digest is what a hub keeps). */
void tree_new_credential(char out[TREE_CRED_LEN + 1]);
/* One EdgeCluster object from a child's heartbeat, reduced to what a parent
 * stores at path (NULL if it is not a valid object named as path ends). */
json_t *tree_row_from(json_t *o, const char *path, const char *last_hb);

#endif
