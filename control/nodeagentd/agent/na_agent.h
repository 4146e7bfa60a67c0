/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The node: its pods and sessions, their states and the revision that
 * counts their changes, the pod network and the ingress entries. It acts
 * on the core's commands (given as the link's JSON messages) and reports
 * through one callback; it knows nothing of the link itself.
 */
#ifndef NA_AGENT_H
#define NA_AGENT_H

#include <jansson.h>
#include <stdbool.h>

#include "na_config.h"
#include "na_store.h"

struct lws_context;
struct ctl_exec;
struct na_agent;

struct na_agent_events {
	/* a PodState or SessionState to send (takes the reference); dropped
	 * by the link when it is not up: the next full sync carries it */
	void (*report)(void *arg, json_t *msg);
	/* the pod network is in place: NodeReady may go */
	void (*ready)(void *arg);
	void *arg;
};

/* Load the store, adopt the pods that still run (their sessions with
 * them), report the rest failed. NULL on failure (logged). */
struct na_agent *na_agent_start(const struct na_config *conf, struct na_store *store,
				struct lws_context *lws, struct ctl_exec *x,
				const struct na_agent_events *ev);
void na_agent_stop(struct na_agent *a);

/* NodeConfiguration: -1 with the field in err when it is not one. */
int na_agent_configure(struct na_agent *a, json_t *m, char *err, size_t errlen);
bool na_agent_ready(const struct na_agent *a);
/* The node for NodeRegister/NodeState: {name, ip, publicIp, labels, capacity}. */
json_t *na_agent_node_json(const struct na_agent *a);
/* {type, nodeRevision, node, pods, sessions}. */
json_t *na_agent_state_msg(const struct na_agent *a, const char *type);

/* Commands: -1 with err naming the field when the message is malformed
 * (the link refuses it: bad-message); anything else is answered by a
 * report. */
int na_agent_pod_create(struct na_agent *a, json_t *m, char *err, size_t errlen);
int na_agent_pod_terminate(struct na_agent *a, json_t *m, char *err, size_t errlen);
int na_agent_session_open(struct na_agent *a, json_t *m, char *err, size_t errlen);
int na_agent_session_close(struct na_agent *a, json_t *m, char *err, size_t errlen);
/* The ingress role's commands (proto/fornax.md "Form 2"); a node of the
 * pod role answers them Closed, reason NotIngressHost. */
int na_agent_ingress_open(struct na_agent *a, json_t *m, char *err, size_t errlen);
int na_agent_ingress_close(struct na_agent *a, json_t *m, char *err, size_t errlen);

#endif
