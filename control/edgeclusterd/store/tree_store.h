/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The tree's tables (tree_store.c, tree_sync.c; created with the schema in
 * store.c): the attach record, mission state maps, the outbox, the
 * credentials this hub issued, descendants' EdgeCluster rows, the missions
 * inherited from the parent and their digest.
 */
#ifndef ECD_TREE_STORE_H
#define ECD_TREE_STORE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"
#include "tree_model.h"

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

/* A mission's map as the parent stores it: self's own key stays, a
 * descendant's gets self in front ("c/d" -> "b/c/d"); NULL if the mission
 * is gone. *bytes grows by about the size of what was added. */
json_t *ec_store_state_report(struct ec_store *s, const char *self, const char *mission,
			      size_t *bytes);
/* This cluster's mission counts: known (= received), matched (its placement
 * matches self and labels), active (this cluster's own state key, self, says
 * applied and checked). */
int ec_store_mission_counts(struct ec_store *s, const char *self, json_t *labels, int *known,
			    int *matched, int *active);

#endif
