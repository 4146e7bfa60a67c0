/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The lws side of the tree: hub.c (the WebSocket protocol children attach
 * to, on the API's vhost) and uplink.c (the client link to the parent and
 * the attach state machine), with the base's WebSocket link (ctl_wslink.h) under both.
 */
#ifndef ECD_LINKS_H
#define ECD_LINKS_H

#include <libwebsockets.h>

#include "ctl_wslink.h"
#include "tree.h"

/* The hub's entry in http.c's protocol list (per-session data: a pointer). */
int hub_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		 size_t len);
struct hub_sess {
	struct hub_conn *c;
};
#define HUB_PROTOCOL_ENTRY                                                                         \
	{                                                                                          \
		TREE_PROTOCOL, hub_callback, sizeof(struct hub_sess), 65536, 0, NULL, 0            \
	}

struct hub;
struct uplink;
struct ctl_exec;
struct lws_vhost;

/* The hub on the API's vhost vh (its protocol is HUB_PROTOCOL_ENTRY there).
 * NULL on failure (logged). Stopped before the context goes. */
struct hub *hub_start(struct ecd *d, struct lws_context *lws, struct lws_vhost *vh);
void hub_stop(struct hub *h);
/* A standby root that now leads: the children the leader knew are loaded,
 * disconnected until they link here (within HeartbeatTimeout). */
int hub_lead(struct hub *h);

/* The link to the parent and the attach state machine, on a client vhost
 * of its own; x: the daemon's command runner (the attach scripts run on
 * it). NULL on failure (logged). Stopped before the runner and the context go. */
struct uplink *uplink_start(struct ecd *d, struct lws_context *lws, struct ctl_exec *x);
void uplink_stop(struct uplink *u);
/* The attach record changed (the API): run the state machine now. */
void uplink_kick(struct uplink *u);
/* State was put in the outbox (a child's report): send it up soon. */
void uplink_owe(struct uplink *u);
/* This cluster's own state key of a mission changed: owe it, if attached. */
void uplink_state_changed(struct uplink *u, const char *mission);
/* What the EdgeCluster and the Attach resource show of the link. */
const struct ec_link_state *uplink_link_state(const struct uplink *u);

/* ---- uplink_missions.c: missions from the parent (uplink.c's messages) ---- */
struct ctl_wslink;
/* "missions": store the batch, tell the missions (on_mission); *ack = its seq. 0, or -1 if
 * the store failed (not acknowledged: the digest brings them again). */
int uplink_on_missions(struct ecd *d, const char *parent, json_t *m, int64_t *ack);
/* Tell the missions (on_mission) what a sync wrote or deleted (o->changed is released). */
void uplink_notify(struct ecd *d, const char *parent, struct ec_sync_out *o);
/* "list": drop what the parent no longer has, ask (on l) for what differs. */
int uplink_on_list(struct ecd *d, const char *parent, struct ctl_wslink *l, json_t *m,
		   int64_t *ack);

/* ---- script.c: the attach install/uninstall script (one at a time) ---- */
/* status: the exit code (128 + the signal, 1 when it did not run or timed
 * out); what: how it ended, for the attach record */
typedef void (*script_done_fn)(void *arg, int status, const char *what);
struct ctl_exec;
struct ctl_job;
struct attach_script {
	struct ctl_exec *x; /* the daemon's runner */
	unsigned timeout_ms;
	struct ctl_job *job; /* while one runs */
	script_done_fn done;
	void *arg;
	char what[300]; /* "PATH install", for the log */
};
/* Run argv (argv[0] a path); done(arg, status, what) comes from the loop
 * later, or at once if it cannot be queued (then -1). */
int script_run(struct attach_script *s, char *const argv[], script_done_fn done, void *arg);
bool script_running(const struct attach_script *s);
/* The daemon stops: no callback; the runner stops the script's process
 * group (SIGTERM, SIGKILL after its grace) at the latest when it is freed. */
void script_stop(struct attach_script *s);

#endif
