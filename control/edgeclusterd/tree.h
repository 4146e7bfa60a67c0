/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * edgeclusterd slice 2, the tree: what hub.c (children attach here),
 * uplink.c (the link to the parent and the attach state machine), tree.c
 * (EdgeCluster objects, the attach API) and tree_store.c (their SQLite
 * tables) share. The wire protocol is proto/edgecluster.md "Hub protocol";
 * the design is docs/edgecluster.md "The tree".
 *
 * Paths: a cluster names itself by its name; a descendant by the path from
 * its child down ("c", "c/d"). Mission state keys use the same paths, so a
 * parent stores a child's report verbatim: every key is the child's name or
 * starts with "child/".
 */
#ifndef ECD_TREE_H
#define ECD_TREE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "ecd.h"

#define TREE_PROTOCOL	 "edge.xgate.io.v1"
#define TREE_HUB_PATH	 "/apis/" EC_API_VERSION "/hub"
#define TREE_CRED_LEN	 43 /* 32 random bytes, base64url without padding */
#define TREE_DIGEST_HEX	 64
#define TREE_HELLO_MAX	 (64u << 10)		    /* a message before authentication */
#define TREE_MSG_MAX	 ((64u << 20) + (1u << 20)) /* any other message (MaxBody <= 64M) */
#define TREE_HELLO_SECS	 10
#define TREE_BATCH_BYTES (256u << 10) /* missions/state batches are cut near this size */

/* The attach state machine of seed 003, persisted (table attach). */
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

/* The runtime both link files and the API look at (ecd->tree). */
struct ec_tree {
	bool link_up;			 /* welcomed by the parent */
	char parent_time[EC_TS_LEN + 1]; /* the parent's clock at its last heartbeat-ack */
	/* the attach record changed (API): run the state machine now */
	void (*kick)(struct ecd *d);
	/* state was put in the outbox (a child's report): send it up soon */
	void (*owe)(struct ecd *d);
	/* this cluster reports up (attached): state changes go to the outbox */
	bool reports_up;
};

/* ---- tree.c: EdgeCluster objects and the attach API (no lws) ---- */

/* Load the attach record, seed it from [Cluster] Parent/JoinToken on first
 * start, and make conf.parent follow it. Before api_self_sync. */
int tree_prepare(struct ecd *d);
/* This cluster as an EdgeCluster object (state computed now). */
json_t *tree_self_json(struct ecd *d);
/* GET /edgeclusters[/NAME]: this one first, then descendants in path order.
 * 0 and *out, EC_ST_NOTFOUND, or -1 (store). */
int tree_clusters_json(struct ecd *d, const char *name, json_t **out);
/* /attach: GET, PUT (body), DELETE. Fills the response (api.c's helpers). */
void tree_attach_api(struct ecd *d, const struct api_req *rq, struct api_resp *rs);
/* Store the record and log the transition. */
int tree_attach_set(struct ecd *d, struct ec_attach *a, enum ec_phase to, const char *why);
/* The descendants' EdgeCluster objects in path order. */
int tree_descendants_json(struct ecd *d, json_t **out);
/* One EdgeCluster object from a child's heartbeat, reduced to what a parent
 * stores at path (NULL if it is not a valid object named as path ends). */
json_t *tree_row_from(json_t *o, const char *path, const char *last_hb);
/* The missions counts of this cluster: known (= received), matched, active. */
int tree_mission_counts(struct ecd *d, int *known, int *matched, int *active);
/* A hub URL: the configured one, with TREE_HUB_PATH if it has no path. */
int tree_hub_url(const char *s, struct ctl_url *u, char *err, size_t errlen);
/* Is k the child's own key or one of its subtree's? */
bool tree_in_subtree(const char *k, const char *child);
/* "a/b/c": 1-32 DNS labels. */
bool tree_path_ok(const char *p);
/* Random credential text and its digest. */
void tree_new_credential(char out[TREE_CRED_LEN + 1]);

/* ---- tree_store.c: the tree's tables (created with the schema in store.c) ---- */

int ec_store_attach_get(struct ec_store *s, struct ec_attach *a); /* EC_ST_NOTFOUND */
int ec_store_attach_put(struct ec_store *s, const struct ec_attach *a);

/* Mission state (none of these bump the revision: state is a report, not a
 * change of the object). "owe": this cluster reports up, so every mission
 * whose map changed is also put in the outbox, in the same transaction. */
int ec_store_state_replace_subtree(struct ec_store *s, const char *mission, const char *child,
				   json_t *map);
struct ec_state_item {
	const char *mission;
	json_t *map; /* path -> string, every key in the child's subtree */
	bool found;  /* out: the mission exists here */
};
int ec_store_state_replace_batch(struct ec_store *s, const char *child, struct ec_state_item *items,
				 size_t n, bool owe);
/* Every key of the child's subtree, in every mission, to value (NULL: removed). */
int ec_store_state_mark_subtree(struct ec_store *s, const char *child, const char *value, bool owe);

/* The outbox: missions whose state this cluster owes its parent. */
int ec_store_outbox_mark(struct ec_store *s, const char *mission);
int ec_store_outbox_mark_all(struct ec_store *s);
typedef int (*ec_outbox_cb)(void *arg, const char *mission, int64_t seq);
int ec_store_outbox_list(struct ec_store *s, int64_t after, ec_outbox_cb cb, void *arg);
int ec_store_outbox_ack(struct ec_store *s, int64_t upto);
int ec_store_outbox_clear(struct ec_store *s);

/* Credentials this hub issued (digests only). */
struct ec_cred {
	char name[EC_NAME_MAX + 1];
	unsigned char cur[EC_HASH_LEN], prev[EC_HASH_LEN];
	int64_t cur_expires, prev_expires; /* 0: none */
	bool resync; /* its subtree's state was lost (marked unreachable): send it all again */
};
int ec_store_cred_get(struct ec_store *s, const char *name, struct ec_cred *c);
int ec_store_cred_put(struct ec_store *s, const struct ec_cred *c);
typedef int (*ec_cred_cb)(void *arg, const struct ec_cred *c);
int ec_store_cred_list(struct ec_store *s, ec_cred_cb cb, void *arg);

/* Descendant EdgeCluster rows. objs: EdgeCluster objects with state.path in
 * the child's subtree, already checked. Rows in the subtree that are not in
 * objs go (a cluster that left). A name used elsewhere in the tree is
 * skipped and counted in *clashes. */
int ec_store_subtree_sync(struct ec_store *s, const char *self, const char *child, json_t *objs,
			  int *clashes);
/* health of the child's row and of its descendants' (state only; desc_health
 * NULL: leave the descendants as they are). */
int ec_store_subtree_health(struct ec_store *s, const char *child, const char *child_health,
			    const char *desc_health);
/* The child left: its rows, state keys and credential go, in one transaction. */
int ec_store_subtree_drop(struct ec_store *s, const char *child, bool owe);
/* Where NAME is in this cluster's tree ("" if it is not a descendant). */
int ec_store_cluster_path(struct ec_store *s, const char *name, char *path, size_t len);

/* Missions received from the parent (child side). */
struct ec_sync_out {
	json_t *changed; /* [[name, deleted], ...]: call on_mission for each */
};
/* Apply upserts (Mission objects from the parent, validated) and deletes
 * (names) in one transaction; unchanged ones are not written. */
int ec_store_sync_apply(struct ec_store *s, json_t *upserts, json_t *deletes,
			struct ec_sync_out *out);
/* name -> {uid, rv (the parent's), ok (unchanged here since)} of the inherited missions */
int ec_store_inherited_map(struct ec_store *s, json_t **out);
int ec_store_inherited_digest(struct ec_store *s, char hex[TREE_DIGEST_HEX + 1]);
/* Detach: every inherited mission is deleted (names into out->changed). */
int ec_store_inherited_drop(struct ec_store *s, struct ec_sync_out *out);

/* Every mission's (name, uid, rv) in name order: what a hub offers. */
typedef int (*ec_index_cb)(void *arg, const char *name, const char *uid, uint64_t rv);
int ec_store_mission_index(struct ec_store *s, ec_index_cb cb, void *arg);

/* The digest both sides compute: BLAKE2b-256 over "name\nuid\nrv\n" per
 * mission in byte order of name, as hex. */
struct ec_digest {
	_Alignas(64) unsigned char st[384]; /* crypto_generichash_state, opaque here */
};
void ec_digest_init(struct ec_digest *g);
void ec_digest_add(struct ec_digest *g, const char *name, const char *uid, uint64_t rv);
void ec_digest_final(struct ec_digest *g, char hex[TREE_DIGEST_HEX + 1]);

#endif
