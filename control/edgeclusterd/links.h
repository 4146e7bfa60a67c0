/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The lws side of the tree: hub.c (the WebSocket protocol children attach
 * to, on the API's vhost) and uplink.c (the client link to the parent and
 * the attach state machine), with wslink.c's message queue under both.
 */
#ifndef ECD_LINKS_H
#define ECD_LINKS_H

#include <libwebsockets.h>

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

/* After http_start / before http_stop. */
int links_start(struct ecd *d);
void links_stop(struct ecd *d);
/* hub.c's part of links_start/stop and of the tick */
int hub_start(struct ecd *d);
void hub_stop(struct ecd *d);
int uplink_start(struct ecd *d);
void uplink_stop(struct ecd *d);

/* ---- uplink_down.c: missions from the parent (uplink.c's messages) ---- */
struct wslink;
/* "missions": store the batch, tell mission.c; *ack = its seq. 0, or -1 if
 * the store failed (not acknowledged: the digest brings them again). */
int uplink_on_missions(struct ecd *d, const char *parent, json_t *m, int64_t *ack);
/* Tell mission.c what a sync wrote or deleted (o->changed is released). */
void uplink_notify(struct ecd *d, const char *parent, struct ec_sync_out *o);
/* "list": drop what the parent no longer has, ask (on l) for what differs. */
int uplink_on_list(struct ecd *d, const char *parent, struct wslink *l, json_t *m, int64_t *ack);

/* ---- script.c: the attach install/uninstall script (one at a time) ---- */
typedef void (*script_done_fn)(int status, const char *what);
/* Spawn argv (argv[0] a path); done(status, what) comes from the loop later,
 * or at once if it cannot be spawned (then -1). */
int script_run(struct ecd *d, char *const argv[], script_done_fn done);
bool script_running(void);
/* SIGTERM to its process group and reap it (the daemon stops). */
void script_stop(void);

/* ---- wslink.c: one WebSocket's outgoing queue and incoming reassembly ---- */
struct ws_out {
	struct ws_out *next;
	size_t len;
	unsigned char buf[]; /* LWS_PRE + len */
};
struct wslink {
	struct lws *wsi;
	struct ws_out *head, *tail;
	size_t queued;	  /* bytes */
	struct xg_buf in; /* the message being reassembled */
	bool close_after; /* the queue ends with an error: close once it is written */
	int close_code;
	/* 0, or the bytes the queue may hold: a message that does not fit (unless
	 * the queue is empty) closes the link instead, and sets overflowed */
	size_t max_queued;
	bool overflowed;
};
/* Queue a JSON message (takes the reference) and ask for a writable callback. */
int ws_send(struct wslink *l, json_t *msg);
/* Queue {"type":"error",...} and close with code after writing it. */
void ws_fail(struct wslink *l, int close_code, const char *code, const char *message);
/* On writable: write the next message. -1: close now. */
int ws_writable(struct wslink *l);
/* Add a received fragment; 1 and *msg when a whole message is in, 0 for
 * more, -1 with why (and a close code) when the input is refused. */
int ws_receive(struct wslink *l, const void *in, size_t len, size_t max, json_t **msg,
	       const char **why, int *close_code);
void ws_reset(struct wslink *l);
const char *ws_type(json_t *msg);

#endif
