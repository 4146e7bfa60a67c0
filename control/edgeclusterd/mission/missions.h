/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The missions module: every stored mission whose placement matches this
 * cluster is applied here through the driver, reversed when it goes, and
 * its stateCheck run; this cluster's state key of each is written to the
 * store and reported through the context's on_state. Below the tree and
 * the API: they tell it about written missions through mission_changed
 * (main wires the context's on_mission to it).
 */
#ifndef ECD_MISSIONS_H
#define ECD_MISSIONS_H

#include <stdbool.h>

#include "ecd.h"

struct lws_context;
struct ctl_exec;
struct ec_run;

/* Kills commands a crashed run left behind, reconciles every stored
 * mission. lws: the loop's context; x: the daemon's command runner. NULL
 * on failure (logged). */
struct ec_run *mission_start(struct ecd *d, struct lws_context *lws, struct ctl_exec *x);
/* Before the runner is freed (that stops running commands: what they were
 * applying is applied again at the next start). */
void mission_stop(struct ec_run *rn);
/* A mission was written or deleted: reconcile it (soon, from the loop). */
void mission_changed(struct ec_run *rn, const char *name, bool deleted);
/* The kubectl driver's nodes, for this cluster's EdgeCluster. */
const struct ec_nodes *mission_nodes(const struct ec_run *rn);

#endif
