/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * edgeclusterd's context: this cluster's configuration and store, and what
 * the layers above report to. Every module from the missions up reads it;
 * only main writes the callbacks and the read-only views below (wiring),
 * so no module reaches into another through it. One thread runs the lws
 * event loop and everything else from its callbacks, so nothing here is
 * locked.
 */
#ifndef ECD_H
#define ECD_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "ctl_log.h"
#include "resource.h"
#include "store.h"

/* The kubectl driver's nodes (the missions' runtime keeps them). */
struct ec_nodes {
	json_t *all, *edge; /* arrays of names; NULL until known */
};

/* The link to the parent as the uplink keeps it. */
struct ec_link_state {
	bool link_up;			 /* welcomed by the parent */
	char parent_time[EC_TS_LEN + 1]; /* the parent's clock at its last heartbeat-ack */
	/* this cluster reports up (attached): state changes go to the outbox */
	bool reports_up;
};

/* The parent this cluster is attached to now. The attach record decides it
 * (the config's Parent only fills the record on first start), so it lives
 * here and not in the configuration; tree.c keeps it in step with the record. */
struct ec_parent {
	char url[EC_PATH_MAX]; /* as in the record; "" when not attached */
	struct ctl_url hub;    /* url parsed, with the hub's path */
};

struct ec_watch;

struct ecd {
	struct ec_conf conf; /* as loaded, never written afterwards */
	struct ec_parent parent;
	struct ec_store store;
	json_t *self_labels; /* this cluster's labels as a JSON object */
	uint64_t started_ms;

	/* ---- views main sets; NULL when that part is not running (unit tests) ---- */
	const struct ec_nodes *nodes;
	const struct ec_link_state *link;
	/* the missions' watches (api/api_watch.c), kept by the API's transport */
	struct ec_watch *watch;
	/* [Store] Backend = etcd: this root is a standby (it serves reads, refuses
	 * writes and children); leader() names who leads ("" unknown) */
	bool standby;
	const char *(*leader)(struct ecd *d);

	/* ---- events, wired by main; each may be NULL ---- */
	/* a mission was written or deleted (API or tree sync): the missions apply it */
	void (*on_mission)(struct ecd *d, const char *name, bool deleted);
	/* this cluster's own state key of a mission changed: the report goes up the tree */
	void (*on_state)(struct ecd *d, const char *mission);
	/* the attach record changed (API): the attach state machine runs now */
	void (*on_attach)(struct ecd *d);
	/* state was put in the outbox (a child's report): the uplink sends it soon */
	void (*on_owed)(struct ecd *d);
};

#endif
