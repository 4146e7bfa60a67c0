/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The edge.xgate.io/v1 API: routing and handlers without lws (api.c,
 * api_list.c, attach.c: the unit tests drive them), and the transport that
 * serves them (http.c). The top of the daemon's layers: it reads and writes
 * through the store and the tree, and reports writes through the context's
 * callbacks (ecd.h) that main wires to the missions and the uplink.
 */
#ifndef ECD_API_H
#define ECD_API_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "ecd.h"
#include "tree.h"

/* ---- api.c: routing and handlers, no lws ---- */
enum ec_method { EC_GET, EC_POST, EC_PUT, EC_DELETE, EC_PATCH, EC_OTHER };

struct api_req {
	enum ec_method method;
	const char *method_name; /* as on the request line, for messages */
	const char *path;
	const char *query;	  /* "a=1&b=2", decoded by lws per argument; "" if none */
	const char *content_type; /* "" if absent */
	const char *body;	  /* NUL-terminated; NULL without a body */
	size_t body_len;
	const char *peer; /* for the log */
};

struct api_stream;

struct api_resp {
	int code;
	char *body; /* malloc'd */
	const char *content_type;
	const char *allow;	   /* 405: the methods that are served */
	struct api_stream *stream; /* instead of body: an answer written as it is read (lists) */
};

/* Paths answered without a token (liveness). */
bool api_is_public(const char *path);
void api_handle(struct ecd *d, const struct api_req *rq, struct api_resp *rs);
/* Fill rs with a Status error (also used by the transport for 401/411/413). */
void api_error(struct api_resp *rs, int code, const char *reason, const char *msg,
	       const char *field);
/* Ensure this cluster's own EdgeCluster row exists and matches the config
 * (the tree's, under the name the API's callers know). */
static inline int api_self_sync(struct ecd *d)
{
	return tree_self_sync(d);
}
/* /attach: GET, PUT (body), DELETE (attach.c). */
void api_attach(struct ecd *d, const struct api_req *rq, struct api_resp *rs);

/* api.c's building blocks for api_list.c and attach.c */
int api_respond(struct api_resp *rs, int code, json_t *v);
int api_errorf(struct api_resp *rs, int code, const char *reason, const char *field,
	       const char *fmt, ...) __attribute__((format(printf, 5, 6)));
int api_store_failed(struct ecd *d, struct api_resp *rs, const char *what);
const char *api_query(const char *q, const char *key, char *buf, size_t len);
int api_row_from_in(struct ec_row *r, const struct ec_mission_in *in);

/* ---- api_list.c: lists streamed from a snapshot, MissionList creates ---- */
#define API_LIST_ITEMS_MAX 5000 /* missions in one MissionList POST */
/* GET of the missions collection: rs->stream on success. */
int api_mission_list(struct ecd *d, const struct api_req *rq, struct api_resp *rs);
/* POST of a MissionList (body parsed): all items or none, one transaction. */
int api_mission_create_list(struct ecd *d, const struct api_req *rq, json_t *body,
			    struct api_resp *rs);
/* Append the next part of a streamed answer to b: at least min bytes unless
 * the answer ends first. 1: more to come; 0: that was the end; -1: it cannot
 * be completed (logged): the transport must cut the connection so that the
 * client sees a truncated answer, not a short list. */
int api_stream_next(struct api_stream *st, struct xg_buf *b, size_t min);
void api_stream_free(struct api_stream *st);
/* The transport writes st on conn; wake(conn) when an idle watch has more. */
void api_stream_conn(struct api_stream *st, void (*wake)(void *conn), void *conn);

/* ---- api_watch.c: watches of the missions (on ctl_watch) ---- */
struct ctl_watch;
/* The missions as the store has them now; NULL when it cannot be read. */
struct ec_watch *api_watch_new(struct ecd *d);
void api_watch_free(struct ec_watch *aw);
/* Publish what changed in the store since the last scan: after the
 * callback that wrote (not inside a write). 0 or -1 (logged). */
int api_watch_scan(struct ec_watch *aw);
/* The oldest revision a watch can start from (a list's continue token
 * older than it is too old). */
uint64_t api_watch_floor(const struct ec_watch *aw);
/* GET .../missions?watch=1[&resourceVersion=N][&fieldSelector=metadata.name=M]:
 * rs->stream on success, a watch of the changes after N (absent: from now;
 * 0: ADDED for every current mission, then the changes from now), of
 * mission M only if given, of the missions a labelSelector selects. */
int api_mission_watch(struct ecd *d, const struct api_req *rq, struct api_resp *rs);
/* api_list.c: a stream of a watcher from `from` (*expired: an ERROR event
 * and the end), of the mission name only unless name is NULL, of what sel
 * selects (NULL: all). NULL when out of memory. */
struct ctl_k8s_selector;
struct api_stream *api_stream_watch(struct ctl_watch *w, uint64_t from, const char *name,
				    const struct ctl_k8s_selector *sel, bool *expired);

/* api_list.c: an ADDED event of object for this watch alone, ahead of the
 * rest (a watch from resourceVersion 0 starts with the current objects). */
int api_stream_added(struct api_stream *st, json_t *object);

/* ---- http.c: the lws side (the daemon only) ---- */
struct http_server;
struct lws_context;
struct lws_vhost;
/* Serve the API on [API] Listen, in a new lws context (the daemon's loop).
 * NULL on failure (logged). */
struct http_server *http_start(struct ecd *d);
struct lws_context *http_context(const struct http_server *hs);
/* The API's vhost (the hub's protocol is on it). */
struct lws_vhost *http_vhost(const struct http_server *hs);
/* The missions' watches the server keeps (main sets d->watch to it). */
struct ec_watch *http_watch(const struct http_server *hs);
/* Last: destroys the context (what lives in it must be stopped first). */
void http_stop(struct http_server *hs);

#endif
