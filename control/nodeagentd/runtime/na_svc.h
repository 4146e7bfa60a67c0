/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The node side of the session service (proto/session-service.md): a pod
 * that uses it listens on a Unix socket; nodeagentd connects (again after
 * a restart: the pod's state outlives the daemon) and exchanges JSON
 * lines. The socket is adopted into the lws loop; what the pod says comes
 * as whole lines, parsed.
 */
#ifndef NA_SVC_H
#define NA_SVC_H

#include <jansson.h>
#include <stddef.h>

struct lws_context;
struct na_svcs;
struct na_svc;

typedef void (*na_svc_msg_fn)(void *arg, json_t *msg);
typedef void (*na_svc_closed_fn)(void *arg);

/* The connections' vhost in ctx: NULL on failure. */
struct na_svcs *na_svcs_new(struct lws_context *ctx);
void na_svcs_free(struct na_svcs *v);

/* Connect to path: NULL with err (no listener yet: "Connection refused"
 * or "No such file"). msg gets each line as an object; closed comes once,
 * when the pod closed it, and the connection is freed right after it. */
struct na_svc *na_svc_connect(struct na_svcs *v, const char *path, na_svc_msg_fn msg,
			      na_svc_closed_fn closed, void *arg, char *err, size_t errlen);
/* Send one line (takes the reference): 0, or -1 (the connection is gone or full). */
int na_svc_send(struct na_svc *c, json_t *msg);
/* Send a ping (the next seq). Pongs are taken here, not passed on: any
 * pong shows the pod reads and answers. Returns how many pings are now
 * without an answer since the last pong, this one included (a ping the
 * full socket refused counts as unanswered). */
unsigned na_svc_ping(struct na_svc *c);
/* Forget the unanswered pings (the pod was frozen: it could not answer). */
void na_svc_ping_reset(struct na_svc *c);
/* Close it; no callback comes after. c may be NULL. */
void na_svc_free(struct na_svc *c);

#endif
