/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The node link (proto/fornax.md section 2): the WebSocket protocol
 * node.fornax.xgate.io.v1 at /apis/core.fornax-serverless.centaurusinfra.io/v1/nodeagent
 * on the API's own vhost. It authenticates NodeRegister (a join token, or
 * the node's credential, whose digest the store keeps), bounds what a node
 * may send and what is queued for it, and hands every message to the core.
 */
#ifndef FX_NODES_H
#define FX_NODES_H

#include <jansson.h>
#include <libwebsockets.h>

#include "core.h"

#define FX_NODES_PROTOCOL "node.fornax.xgate.io.v1"
#define FX_NODES_PATH	  "/apis/" FX_API_VERSION "/nodeagent"
#define FX_REGISTER_MAX	  (64 * 1024)	     /* a message before NodeRegister is accepted */
#define FX_MSG_MAX	  (16 * 1024 * 1024) /* after */
#define FX_REGISTER_SECS  10
#define FX_CREDENTIAL_LEN 43 /* 32 bytes, base64url without padding */

int fx_nodes_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		      size_t len);
struct fx_nodes_sess {
	struct fx_link *c;
};
#define FX_NODES_PROTOCOL_ENTRY                                                                    \
	{                                                                                          \
		FX_NODES_PROTOCOL, fx_nodes_callback, sizeof(struct fx_nodes_sess), 65536, 0,      \
		    NULL, 0                                                                        \
	}

struct fx_nodes_conf {
	const unsigned char (*join_tokens)[CTL_TOKEN_HASH_LEN];
	int n_join_tokens;
	size_t queue_max; /* bytes queued for one node at most */
	int max_subnets;  /* how many node subnets the pod network holds */
};

struct fx_nodes;
/* On the vhost vh (FX_NODES_PROTOCOL_ENTRY is among its protocols). NULL on
 * failure (logged). Stopped before the context goes. */
struct fx_nodes *fx_nodes_start(struct fx_core *core, struct fx_store *st,
				const struct fx_nodes_conf *cf, struct lws_vhost *vh);
void fx_nodes_stop(struct fx_nodes *ns);
/* A standby refuses a NodeRegister with a join token ("standby"): only the
 * leader writes a credential. A node with its credential links to every core. */
void fx_nodes_set_standby(struct fx_nodes *ns, bool standby);
/* The core's send hook: a message for link (takes the reference). */
void fx_nodes_send(struct fx_nodes *ns, void *link, json_t *msg);
/* Close a link (its node was deleted). */
void fx_nodes_close(struct fx_nodes *ns, void *link, const char *why);

#endif
