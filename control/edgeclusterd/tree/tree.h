/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The tree: what hub.c (children attach here), uplink.c (the link to the
 * parent and the attach state machine) and tree.c (EdgeCluster objects and
 * the attach record, without lws) share. The vocabulary is tree_model.h,
 * the tables tree_store.h.
 */
#ifndef ECD_TREE_H
#define ECD_TREE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "ecd.h"
#include "tree_model.h"
#include "tree_store.h"

/* ---- tree.c: EdgeCluster objects and the attach record (no lws) ---- */

/* Load the attach record, fill it from [Cluster] Parent/JoinToken on first
 * start, and make the live parent (d->parent) follow it. Before tree_self_sync. */
int tree_prepare(struct ecd *d);
/* Ensure this cluster's own EdgeCluster row exists and matches the config. */
int tree_self_sync(struct ecd *d);
/* This cluster as an EdgeCluster object (state computed now). */
json_t *tree_self_json(struct ecd *d);
/* GET /edgeclusters[/NAME]: this one first, then descendants in path order.
 * 0 and *out, EC_ST_NOTFOUND, or -1 (store). */
int tree_clusters_json(struct ecd *d, const char *name, json_t **out);
/* Store the record and log the transition. */
int tree_attach_set(struct ecd *d, struct ec_attach *a, enum ec_phase to, const char *why);
/* The descendants' EdgeCluster objects in path order. */
int tree_descendants_json(struct ecd *d, json_t **out);
/* The missions counts of this cluster: known (= received), matched, active. */
int tree_mission_counts(struct ecd *d, int *known, int *matched, int *active);

#endif
