// SPDX-License-Identifier: BSD-2-Clause
/*
 * fornaxd's API on the base's HTTP transport (ctl_http.h): the ops that
 * hand requests to api.c, the body limit, and the node link's WebSocket
 * protocol on the same vhost (nodes.h).
 */
#include <libwebsockets.h>
#include <stdlib.h>

#include "api.h"
#include "ctl_watch.h"
#include "nodes.h"

_Static_assert(CTL_WATCH_IDLE == CTL_HTTP_IDLE && CTL_WATCH_MORE == 1 && CTL_WATCH_END == 0,
	       "a watcher's answers are a stream's");

struct fx_http {
	struct ctl_http *http;
	struct fx_http_conf cf;
	struct fx_api *api;
};

static const struct lws_protocols node_protocols[] = {
    FX_NODES_PROTOCOL_ENTRY,
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

static bool is_public(void *arg, const char *path)
{
	(void)arg;
	return fx_api_is_public(path);
}

static size_t body_limit(void *arg, enum ctl_method m, const char *path, const char **why)
{
	struct fx_http *hs = arg;

	(void)m, (void)path, (void)why;
	return hs->cf.max_body;
}

static void handle(void *arg, const struct ctl_http_req *rq, struct ctl_http_resp *rs)
{
	struct fx_http *hs = arg;

	fx_api_handle(hs->api, rq, rs);
}

static int stream_next(void *stream, struct xg_buf *b, size_t min)
{
	return fx_stream_next(stream, b, min);
}

static void stream_free(void *stream)
{
	fx_stream_free(stream);
}

static void stream_conn(void *stream, void *conn)
{
	fx_stream_conn(stream, ctl_http_wake, conn);
}

static const struct ctl_http_ops ops = {
    .is_public = is_public,
    .body_limit = body_limit,
    .handle = handle,
    .stream_next = stream_next,
    .stream_free = stream_free,
    .stream_conn = stream_conn,
};

struct fx_http *fx_http_start(struct fx_api *a, const struct fx_http_conf *cf)
{
	struct fx_http *hs = calloc(1, sizeof(*hs));

	if (!hs)
		return NULL;
	hs->api = a;
	hs->cf = *cf;
	hs->cf.http.name = "fornaxd";
	hs->cf.http.extra = node_protocols;
	if (!(hs->http = ctl_http_start(&hs->cf.http, &ops, hs))) {
		free(hs);
		return NULL;
	}
	return hs;
}

struct lws_context *fx_http_context(const struct fx_http *hs)
{
	return ctl_http_context(hs->http);
}

struct lws_vhost *fx_http_vhost(const struct fx_http *hs)
{
	return ctl_http_vhost(hs->http);
}

void fx_http_stop(struct fx_http *hs)
{
	if (!hs)
		return;
	ctl_http_stop(hs->http);
	free(hs);
}
