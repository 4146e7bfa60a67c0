/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fornaxd's HTTP API (proto/fornax.md section 1): the handlers without lws
 * (api.c: the unit tests drive them) and their transport on the base's
 * ctl_http (http.c). Requests go through a table of resources (name, kind,
 * scope, verbs and the operation of each), so that discovery documents and
 * PATCH plug into the same table.
 */
#ifndef FX_API_H
#define FX_API_H

#include <jansson.h>
#include <stdbool.h>

#include "buf.h"
#include "core.h"
#include "ctl_http.h"

struct fx_api;
struct fx_stream;

struct fx_api_hooks {
	void *arg;
	/* close a node's link (its node was deleted) */
	void (*close_link)(void *arg, void *link);
};

struct fx_api *fx_api_new(struct fx_core *core, struct fx_store *st, const struct fx_api_hooks *h);
void fx_api_free(struct fx_api *a);
/* The core's event hook: every watch of the kind sees it. */
void fx_api_event(struct fx_api *a, enum fx_kind k, const char *type, json_t *obj, uint64_t rv);

/* A standby serves reads (get, list, watch) and answers writes 503 with a
 * Status naming the leader (its election id: its URL); /healthz is 503 too.
 * leader: as the election key says, or NULL. */
void fx_api_set_standby(struct fx_api *a, bool standby, const char *leader);
bool fx_api_is_public(const char *path);
void fx_api_handle(struct fx_api *a, const struct ctl_http_req *rq, struct ctl_http_resp *rs);
/* The APIResourceList of the group's version (what discovery serves). */
json_t *fx_api_resource_list(void);

/* A streamed answer (a list or a watch), as ctl_http's stream ops take it. */
int fx_stream_next(struct fx_stream *st, struct xg_buf *b, size_t min);
void fx_stream_free(struct fx_stream *st);
void fx_stream_conn(struct fx_stream *st, void (*wake)(void *conn), void *conn);

/* ---- http.c: the transport (the daemon only) ---- */
struct fx_http;
struct fx_http_conf {
	struct ctl_http_conf http; /* listen, TLS, tokens, extra protocols */
	size_t max_body;
};
struct fx_http *fx_http_start(struct fx_api *a, const struct fx_http_conf *cf);
struct lws_context *fx_http_context(const struct fx_http *hs);
struct lws_vhost *fx_http_vhost(const struct fx_http *hs);
void fx_http_stop(struct fx_http *hs);

#endif
