/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The links to fornaxd (proto/fornax.md "The node link"): one to every
 * core of [Core] URL, each a client WebSocket: NodeRegister with the stored credential (or the join
 * token), NodeConfiguration, NodeFullSync answered with NodeState, NodeReady once the agent's pod
 * network is in place, then the core's commands to the agent and the agent's reports to the core, a
 * NodeState every stateSeconds; reconnects with backoff and jitter. Reports go to every core;
 * commands are obeyed only from the one leading (na_lead.h).
 */
#ifndef NA_LINK_H
#define NA_LINK_H

#include <jansson.h>
#include <stdbool.h>

#include "na_agent.h"

#define NA_PROTOCOL  "node.fornax.xgate.io.v1"
#define NA_LINK_PATH "/apis/core.fornax-serverless.centaurusinfra.io/v1/nodeagent"

struct lws_context;
struct na_link;

struct na_link *na_link_start(const struct na_config *conf, struct na_store *store,
			      struct lws_context *lws);
/* The agent the commands go to (set once it is started). */
void na_link_set_agent(struct na_link *l, struct na_agent *a);
/* The agent's events: wire these into na_agent_events. */
void na_link_report(void *link, json_t *msg);
void na_link_ready(void *link);
void na_link_stop(struct na_link *l);

#endif
