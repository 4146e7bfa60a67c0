/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One WebSocket carrying JSON messages, either end (a hub's child, an
 * uplink): an outgoing queue of whole messages (one per writable callback:
 * lws buffers what the socket does not take and holds the next writable
 * back until it is out, so a large batch never blocks the loop), and
 * reassembly of incoming fragments with a hard size limit (a server sets a
 * small one until the peer authenticated). Reconnecting is the client's:
 * ctl_backoff.h gives its delays.
 */
#ifndef CTL_WSLINK_H
#define CTL_WSLINK_H

#include <jansson.h>
#include <libwebsockets.h>
#include <stdbool.h>
#include <stddef.h>

#include "buf.h"

struct ctl_ws_out {
	struct ctl_ws_out *next;
	size_t len;
	unsigned char buf[]; /* LWS_PRE + len */
};
struct ctl_wslink {
	struct lws *wsi;
	struct ctl_ws_out *head, *tail;
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
int ctl_ws_send(struct ctl_wslink *l, json_t *msg);
/* Queue {"type":"error",...} and close with code after writing it. */
void ctl_ws_fail(struct ctl_wslink *l, int close_code, const char *code, const char *message);
/* On writable: write the next message. -1: close now. */
int ctl_ws_writable(struct ctl_wslink *l);
/* Add a received fragment; 1 and *msg when a whole message is in, 0 for
 * more, -1 with why (and a close code) when the input is refused. */
int ctl_ws_receive(struct ctl_wslink *l, const void *in, size_t len, size_t max, json_t **msg,
		   const char **why, int *close_code);
void ctl_ws_reset(struct ctl_wslink *l);
const char *ctl_ws_type(json_t *msg);

#endif
