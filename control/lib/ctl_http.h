/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A daemon's HTTP/JSON API transport on libwebsockets (ctl_http.c): the
 * listening context, request limits and deadlines, the bearer-token check
 * (ctl_token's constant-time compare against the configured digests),
 * Status answers for what is refused before the handler, and answers
 * written back whole or streamed (chunked, a part per writable callback).
 * The daemon gives its handler as ctl_http_ops; the transport never looks
 * inside a body.
 */
#ifndef CTL_HTTP_H
#define CTL_HTTP_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "ctl_token.h"

struct lws_context;
struct lws_vhost;
struct lws_protocols;
struct ctl_http;

#define CTL_HTTP_TOKEN_MAX 256 /* a longer Authorization header is refused */

enum ctl_method { CTL_GET, CTL_POST, CTL_PUT, CTL_DELETE, CTL_PATCH, CTL_OTHER };

struct ctl_http_req {
	enum ctl_method method;
	const char *method_name;  /* as on the request line, for messages */
	const char *path;	  /* decoded */
	const char *query;	  /* "a=1&b=2", decoded per argument; "" if none */
	const char *content_type; /* "" if absent */
	const char *body;	  /* NUL-terminated; NULL without a body */
	size_t body_len;
	const char *peer; /* for the log */
	/* who asks: the digest of the bearer token it passed (a token is a
	 * client's identity, e.g. for per-client limits); NULL on a public path */
	const unsigned char *client;
	void *conn; /* the connection (ctl_http_defer) */
};

struct ctl_http_resp {
	int code;
	char *body; /* malloc'd; the transport frees it */
	const char *content_type;
	const char *allow; /* 405: the methods that are served */
	void *stream;	   /* instead of body: an answer written as it is read */
};

struct ctl_http_ops {
	/* Paths answered without a token (liveness). */
	bool (*is_public)(void *arg, const char *path);
	/* The largest body this request may carry; *why names a larger limit
	 * that applies (for the 413 message), else stays NULL. */
	size_t (*body_limit)(void *arg, enum ctl_method m, const char *path, const char **why);
	/* Fill rs (zeroed): a body, or a stream. */
	void (*handle)(void *arg, const struct ctl_http_req *rq, struct ctl_http_resp *rs);
	/* Append the next part of a stream to b: at least min bytes unless it
	 * ends first. 1: more to come; 0: the end; -1: it cannot be completed:
	 * the connection is cut, so that the client sees a truncated answer;
	 * CTL_HTTP_IDLE (a watch): nothing more now, the connection stays open
	 * and the stream is asked again after ctl_http_wake. */
	int (*stream_next)(void *stream, struct xg_buf *b, size_t min);
	void (*stream_free)(void *stream);
	/* Optional: the stream is now written on conn, the handle that
	 * ctl_http_wake takes (valid until stream_free). */
	void (*stream_conn)(void *stream, void *conn);
};

#define CTL_HTTP_IDLE 2

/* An answer given later, when what the request waits for is done (a
 * write to a remote store): the handler calls ctl_http_defer(rq->conn)
 * and leaves rs zeroed (NULL: out of memory, answer now); the loop goes on
 * serving. ctl_http_answer gives the answer (rs's body taken over, rs
 * zeroed) exactly once per defer, also when the client has gone meanwhile
 * (then it is dropped): either way the handle is freed. */
struct ctl_http_later;
struct ctl_http_later *ctl_http_defer(void *conn);
void ctl_http_answer(struct ctl_http_later *l, struct ctl_http_resp *rs);

/* A stream that answered CTL_HTTP_IDLE has more to write (or has ended). */
void ctl_http_wake(void *conn);

struct ctl_http_conf {
	const char *name; /* the Server header, the bearer realm, the vhost's name */
	struct sockaddr_in listen;
	const char *tls_cert, *tls_key; /* NULL or "": plain HTTP */
	const unsigned char (*tokens)[CTL_TOKEN_HASH_LEN];
	int n_tokens;
	/* more protocols on the vhost (WebSocket endpoints), ended by one
	 * without a name; NULL: none */
	const struct lws_protocols *extra;
};

/* Serve in a new lws context (the daemon's loop); conf's strings and
 * arrays must outlive it. NULL on failure (logged). */
struct ctl_http *ctl_http_start(const struct ctl_http_conf *conf, const struct ctl_http_ops *ops,
				void *arg);
struct lws_context *ctl_http_context(const struct ctl_http *hs);
struct lws_vhost *ctl_http_vhost(const struct ctl_http *hs);
/* Last: destroys the context (what lives in it must be stopped first). */
void ctl_http_stop(struct ctl_http *hs);

/* rs (overwritten) as a Status error with a field path (ctl_k8s_status). */
void ctl_http_error(struct ctl_http_resp *rs, int code, const char *reason, const char *msg,
		    const char *field);

#endif
