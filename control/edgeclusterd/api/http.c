// SPDX-License-Identifier: BSD-2-Clause
/*
 * The edge.xgate.io/v1 API on the base's HTTP transport (ctl_http.h): the
 * handler table that hands requests to api.c, the body limits of
 * [API] MaxBody and MaxListBody, and the hub's WebSocket protocol on the
 * same vhost.
 */
#include <libwebsockets.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "ctl_http.h"
#include "ctl_watch.h"
#include "links.h"

#define MISSIONS "/apis/" EC_API_VERSION "/missions"

_Static_assert(CTL_GET == (int)EC_GET && CTL_POST == (int)EC_POST && CTL_PUT == (int)EC_PUT &&
		   CTL_DELETE == (int)EC_DELETE && CTL_PATCH == (int)EC_PATCH &&
		   CTL_OTHER == (int)EC_OTHER,
	       "the API's methods are the transport's");
_Static_assert(CTL_HTTP_TOKEN_MAX == EC_TOKEN_MAX, "the longest token");

_Static_assert(CTL_WATCH_IDLE == CTL_HTTP_IDLE && CTL_WATCH_MORE == 1 && CTL_WATCH_END == 0,
	       "a watcher's answers are a stream's");

struct http_server {
	struct ecd *d;
	struct ctl_http *http;
	struct ctl_http_conf conf;
	struct ec_watch *watch;
	lws_sorted_usec_list_t scan; /* the watches' scan, after the write's callback */
};

static const struct lws_protocols hub_protocols[] = {
    HUB_PROTOCOL_ENTRY, /* the WebSocket children attach to (hub.c) */
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

static bool is_public(void *arg, const char *path)
{
	(void)arg;
	return api_is_public(path);
}

static size_t body_limit(void *arg, enum ctl_method m, const char *path, const char **why)
{
	struct ecd *d = arg;

	/* a MissionList may be larger (api.c holds a single Mission to MaxBody) */
	if (m == CTL_POST && !strcmp(path, MISSIONS) && d->conf.max_list_body > d->conf.max_body) {
		*why = "MaxListBody, for a MissionList";
		return d->conf.max_list_body;
	}
	return d->conf.max_body;
}

static void handle(void *arg, const struct ctl_http_req *rq, struct ctl_http_resp *rs)
{
	struct api_req r = {.method = (enum ec_method)rq->method,
			    .method_name = rq->method_name,
			    .path = rq->path,
			    .query = rq->query,
			    .content_type = rq->content_type,
			    .body = rq->body,
			    .body_len = rq->body_len,
			    .peer = rq->peer};
	struct api_resp a = {0};

	api_handle(arg, &r, &a);
	rs->code = a.code;
	rs->body = a.body;
	rs->content_type = a.content_type;
	rs->allow = a.allow;
	rs->stream = a.stream;
}

static int stream_next(void *stream, struct xg_buf *b, size_t min)
{
	return api_stream_next(stream, b, min);
}

static void stream_free(void *stream)
{
	api_stream_free(stream);
}

static void stream_conn(void *stream, void *conn)
{
	api_stream_conn(stream, ctl_http_wake, conn);
}

static const struct ctl_http_ops ops = {
    .stream_conn = stream_conn,
    .is_public = is_public,
    .body_limit = body_limit,
    .handle = handle,
    .stream_next = stream_next,
    .stream_free = stream_free,
};

static void on_scan(lws_sorted_usec_list_t *sul)
{
	struct http_server *hs = lws_container_of(sul, struct http_server, scan);

	api_watch_scan(hs->watch);
}

/* Inside the write (ec_store_on_revision): the scan reads the store after
 * the callback that wrote, and its transaction, have ended. */
static void on_revision(void *arg)
{
	struct http_server *hs = arg;

	lws_sul_schedule(ctl_http_context(hs->http), 0, &hs->scan, on_scan, 0);
}

struct http_server *http_start(struct ecd *d)
{
	struct http_server *hs = calloc(1, sizeof(*hs));

	if (!hs)
		return NULL;
	hs->d = d;
	hs->conf = (struct ctl_http_conf){
	    .name = "edgeclusterd",
	    .listen = d->conf.listen,
	    .tls_cert = d->conf.tls_cert,
	    .tls_key = d->conf.tls_key,
	    .tokens = (const unsigned char(*)[CTL_TOKEN_HASH_LEN])d->conf.tokens,
	    .n_tokens = d->conf.n_tokens,
	    .extra = hub_protocols,
	};
	hs->http = ctl_http_start(&hs->conf, &ops, d);
	if (!hs->http) {
		free(hs);
		return NULL;
	}
	if (!(hs->watch = api_watch_new(d)) || ec_store_on_revision(&d->store, on_revision, hs)) {
		ctl_log("cannot set up the missions' watches");
		http_stop(hs);
		return NULL;
	}
	return hs;
}

struct lws_context *http_context(const struct http_server *hs)
{
	return ctl_http_context(hs->http);
}

struct ec_watch *http_watch(const struct http_server *hs)
{
	return hs->watch;
}

struct lws_vhost *http_vhost(const struct http_server *hs)
{
	return ctl_http_vhost(hs->http);
}

void http_stop(struct http_server *hs)
{
	if (!hs)
		return;
	ec_store_on_revision(&hs->d->store, NULL, hs);
	lws_sul_cancel(&hs->scan);
	/* the open watches end; their streams go with the context */
	api_watch_free(hs->watch);
	ctl_http_stop(hs->http);
	free(hs);
}
