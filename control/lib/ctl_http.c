// SPDX-License-Identifier: BSD-2-Clause
/*
 * The HTTP transport of a daemon's API on libwebsockets: one context, one
 * vhost, HTTP/1.1 only (also over TLS: ALPN http/1.1). This file owns what
 * happens before a request reaches the daemon's handler (ctl_http_ops) —
 * the bearer token, Content-Length and the body limit — and writing the
 * answer back.
 *
 * A streamed answer (a list read from the store) goes out as it is read: chunked
 * transfer encoding, a chunk of about CHUNK bytes per writeable callback,
 * so the daemon never holds the whole answer. A store failure mid-list cuts
 * the connection without the last chunk: the client sees a truncated
 * answer, never a short list that looks complete.
 *
 * Answers decided from the headers alone (401, 411, 413, a bad
 * Content-Length) go out at once with "Connection: close". If the client is
 * still sending a body we then half-close and read and discard it (at most
 * DRAIN_MAX bytes, and lws's idle timeout), so the client reads our answer
 * instead of a reset; everything else keeps the connection alive.
 *
 * Every request has a deadline. lws gives the request line and headers
 * HDR_S (from the first byte) and keep-alive idle connections a few
 * seconds, and closes them without a word: a connection's first request
 * gets a 408 from us a second before that (a timer armed at the accept);
 * the body must be in within BODY_S plus a second per 64 KiB (lws
 * alone restarts its timeout at every byte, so a client dripping a body
 * held a connection for ever), and an early answer's body is discarded for
 * at most HDR_S. A CONNECT, and a request line with a method lws does not
 * know, come to us as raw sockets: one JSON answer (405, 501), a
 * half-close, then closed after HDR_S at the latest.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <libwebsockets.h>
#include <sodium.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "buf.h"
#include "ctl_http.h"
#include "ctl_k8s.h"
#include "ctl_log.h"
#include "ctl_token.h"

#define DRAIN_MAX (16u << 20)
#define CHUNK	  (16u << 10)
/* a streamed answer the client stops reading for this long is cut: it holds
 * a snapshot of the store, which keeps the WAL from being checkpointed */
#define STREAM_STALL_S 30
/* room before a streamed chunk: lws's LWS_PRE and the chunk's size line */
#define CHUNK_HEAD (LWS_PRE + 20)
#define HDR_S	   10 /* lws's header timeout (timeout_secs_ah_idle), and ours */
#define BODY_S	   10

struct conn {
	enum ctl_method method;
	const char *method_name;
	char path[1024];
	char query[4096];
	char ctype[128];
	char peer[64];
	unsigned char client[CTL_TOKEN_HASH_LEN]; /* the bearer token's digest */
	bool has_client;
	char *body;
	size_t body_len, expect;
	bool drain, body_done; /* answered early; discarding the body */
	size_t drained;
	bool close_after;
	/* a body deadline is armed (lws 4.1 cannot cancel one: a cancel fires it) */
	bool timed;
	unsigned char *out; /* LWS_PRE + response body */
	size_t out_len, out_off;
	void *stream; /* or a streamed answer (ops->stream_next), and its next chunk */
	struct xg_buf sbuf;
	struct ctl_http_later *later; /* an answer to come (ctl_http_defer) */
	struct ctl_http_resp ready;   /* it came: written when writeable */
	bool has_ready;
};

struct ctl_http_later {
	struct lws *wsi; /* NULL: the connection closed before the answer */
};

struct ctl_http {
	struct ctl_http_conf conf;
	const struct ctl_http_ops *ops;
	void *arg;
	struct lws_context *ctx;
	struct lws_protocols *protocols; /* "http", then conf.extra's */
	char iface[INET_ADDRSTRLEN];
	char realm[96]; /* Bearer realm="NAME" */
};

static void conn_free(struct ctl_http *hs, struct conn *c)
{
	if (c->later) /* the answer still comes: to nobody; its giver frees the handle */
		c->later->wsi = NULL;
	if (c->has_ready)
		free(c->ready.body);
	free(c->body);
	free(c->out);
	if (c->stream)
		hs->ops->stream_free(c->stream);
	free(c->sbuf.p);
	memset(c, 0, sizeof(*c));
}

static enum ctl_method method_of(struct lws *wsi, const char **name)
{
	static const char *const names[] = {"GET",   "POST",   "OPTIONS", "PUT",
					    "PATCH", "DELETE", "CONNECT", "HEAD"};
	char *uri;
	int len, m = lws_http_get_uri_and_method(wsi, &uri, &len);

	*name = m >= 0 && m < (int)(sizeof(names) / sizeof(names[0])) ? names[m] : "?";
	switch (m) {
	case LWSHUMETH_GET:
		return CTL_GET;
	case LWSHUMETH_POST:
		return CTL_POST;
	case LWSHUMETH_PUT:
		return CTL_PUT;
	case LWSHUMETH_DELETE:
		return CTL_DELETE;
	case LWSHUMETH_PATCH: /* lws parses it with LWS_WITH_HTTP_UNCOMMON_HEADERS */
		return CTL_PATCH;
	default:
		return CTL_OTHER;
	}
}

/* 0 valid, 1 no bearer token, 2 wrong token. Every configured token is
 * compared (digests, constant time) whichever matches. */
static int check_token(struct ctl_http *hs, struct lws *wsi, struct conn *c)
{
	char h[CTL_HTTP_TOKEN_MAX + 64], *t;
	int len = lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_AUTHORIZATION);
	bool ok;

	if (len <= 0)
		return 1;
	if (len >= (int)sizeof(h) ||
	    lws_hdr_copy(wsi, h, sizeof(h), WSI_TOKEN_HTTP_AUTHORIZATION) < 0)
		return 2;
	if (strncasecmp(h, "Bearer ", 7))
		return 1;
	for (t = h + 7; *t == ' ';)
		t++;
	ctl_token_digest(t, strlen(t), c->client);
	ok = ctl_token_match(c->client, hs->conf.tokens, hs->conf.n_tokens);
	sodium_memzero(h, sizeof(h));
	c->has_client = ok;
	return ok ? 0 : 2;
}

/* The headers of a streamed answer: no Content-Length, chunked. */
static int send_stream(struct ctl_http *hs, struct lws *wsi, struct conn *c,
		       struct ctl_http_resp *rs)
{
	unsigned char hdr[LWS_PRE + 512], *start = hdr + LWS_PRE, *p = start;
	unsigned char *end = hdr + sizeof(hdr) - 1;
	const char *ct = rs->content_type ? rs->content_type : "application/json";

	c->stream = rs->stream;
	rs->stream = NULL;
	if (hs->ops->stream_conn)
		hs->ops->stream_conn(c->stream, wsi);
	/* not lws_add_http_common_headers: without a length it adds "Connection: close" */
	if (lws_add_http_header_status(wsi, (unsigned)rs->code, &p, end) ||
	    lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CONTENT_TYPE,
					 (const unsigned char *)ct, (int)strlen(ct), &p, end) ||
	    lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING,
					 (const unsigned char *)"chunked", 7, &p, end) ||
	    lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CACHE_CONTROL,
					 (const unsigned char *)"no-store", 8, &p, end) ||
	    lws_finalize_write_http_header(wsi, start, &p, end))
		return -1;
	lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, STREAM_STALL_S);
	lws_callback_on_writable(wsi);
	return 0;
}

void ctl_http_wake(void *conn)
{
	lws_callback_on_writable(conn);
}

struct ctl_http_later *ctl_http_defer(void *conn)
{
	struct conn *c = lws_wsi_user(conn);
	struct ctl_http_later *l = c && !c->later ? calloc(1, sizeof(*l)) : NULL;

	if (l) {
		l->wsi = conn;
		c->later = l;
	}
	return l;
}

void ctl_http_answer(struct ctl_http_later *l, struct ctl_http_resp *rs)
{
	struct conn *c = l && l->wsi ? lws_wsi_user(l->wsi) : NULL;

	if (c) {
		c->later = NULL;
		c->ready = *rs;
		c->has_ready = true;
		lws_callback_on_writable(l->wsi);
	} else {
		free(rs->body);
	}
	memset(rs, 0, sizeof(*rs));
	free(l);
}

static int send_response(struct ctl_http *hs, struct lws *wsi, struct conn *c,
			 struct ctl_http_resp *rs)
{
	unsigned char hdr[LWS_PRE + 1024], *start = hdr + LWS_PRE, *p = start;
	unsigned char *end = hdr + sizeof(hdr) - 1;
	size_t n = rs->body ? strlen(rs->body) : 0;
	int rc = 0;

	if (rs->stream)
		return send_stream(hs, wsi, c, rs);

	c->out = malloc(LWS_PRE + n + 1);
	if (!c->out) {
		free(rs->body);
		return -1;
	}
	memcpy(c->out + LWS_PRE, rs->body ? rs->body : "", n);
	/* HEAD: the headers of the answer (Content-Length included), no body */
	c->out_len = strcmp(c->method_name, "HEAD") ? n : 0;
	c->out_off = 0;
	free(rs->body);
	rs->body = NULL;
	if (lws_add_http_common_headers(wsi, (unsigned)rs->code,
					rs->content_type ? rs->content_type : "application/json", n,
					&p, end) ||
	    lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CACHE_CONTROL,
					 (const unsigned char *)"no-store", 8, &p, end))
		rc = -1;
	if (!rc && rs->allow)
		rc = lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_ALLOW,
						  (const unsigned char *)rs->allow,
						  (int)strlen(rs->allow), &p, end);
	if (!rc && rs->code == 401)
		rc = lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_WWW_AUTHENTICATE,
						  (const unsigned char *)hs->realm,
						  (int)strlen(hs->realm), &p, end);
	if (!rc && c->close_after)
		rc = lws_add_http_header_by_token(wsi, WSI_TOKEN_CONNECTION,
						  (const unsigned char *)"close", 5, &p, end);
	if (rc || lws_finalize_write_http_header(wsi, start, &p, end))
		return -1;
	lws_callback_on_writable(wsi);
	return 0;
}

static void log_refusal(struct conn *c, const struct ctl_http_resp *rs)
{
	json_t *st = rs->body ? json_loads(rs->body, 0, NULL) : NULL;

	ctl_log("%s %s -> %d from %s: %s", c->method_name, c->path, rs->code, c->peer,
		st && json_is_string(json_object_get(st, "message"))
		    ? json_string_value(json_object_get(st, "message"))
		    : "");
	json_decref(st);
}

/* Answer from the headers alone, then close (discarding any body). */
static int early(struct ctl_http *hs, struct lws *wsi, struct conn *c, int code, const char *msg)
{
	struct ctl_http_resp rs = {0};

	ctl_http_error(&rs, code, NULL, msg, NULL);
	log_refusal(c, &rs);
	c->close_after = true;
	c->drain = c->expect > 0;
	c->expect = 0;
	if (c->drain) {
		lws_set_timer_usecs(wsi, (lws_usec_t)HDR_S * LWS_US_PER_SEC);
		c->timed = true;
	}
	return send_response(hs, wsi, c, &rs);
}

static int process(struct ctl_http *hs, struct lws *wsi, struct conn *c)
{
	struct ctl_http_req rq = {.method = c->method,
				  .method_name = c->method_name,
				  .path = c->path,
				  .query = c->query,
				  .content_type = c->ctype,
				  .body = c->body,
				  .body_len = c->body_len,
				  .peer = c->peer,
				  .client = c->has_client ? c->client : NULL};
	struct ctl_http_resp rs;

	rq.conn = wsi;
	memset(&rs, 0, sizeof(rs));
	hs->ops->handle(hs->arg, &rq, &rs);
	if ((c->later || c->has_ready) && !rs.code && !rs.body && !rs.stream) {
		/* deferred (maybe answered already: it is written when writeable);
		 * the wait has no deadline of ours: what it waits for has one */
		free(c->body);
		c->body = NULL;
		lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0);
		return 0;
	}
	/* a GET of a missing name is a lookup (apply does one), not an event;
	 * nor is a health check's answer (a standby's /healthz is 503) */
	if (rs.code >= 400 && !(rs.code == 404 && c->method == CTL_GET) &&
	    !(c->method == CTL_GET && !strcmp(c->path, "/healthz")))
		log_refusal(c, &rs);
	free(c->body);
	c->body = NULL;
	return send_response(hs, wsi, c, &rs);
}

/* The request line and headers are in: decide, or wait for the body. */
static int on_request(struct ctl_http *hs, struct lws *wsi, struct conn *c, const char *path)
{
	char cl[32] = "", frag[1024];
	const char *why = NULL;
	size_t qlen = 0, limit;
	bool uri_long;
	int n;

	conn_free(hs, c);
	c->method = method_of(wsi, &c->method_name);
	/* a path or query we would cut is refused: cut, it names something else */
	uri_long =
	    snprintf(c->path, sizeof(c->path), "%s", path ? path : "/") >= (int)sizeof(c->path);
	for (int i = 0; !uri_long; i++) {
		n = lws_hdr_copy_fragment(wsi, frag, sizeof(frag), WSI_TOKEN_HTTP_URI_ARGS, i);
		if (n < 0) { /* no such argument, or one over frag */
			uri_long = lws_hdr_fragment_length(wsi, WSI_TOKEN_HTTP_URI_ARGS, i) > 0;
			break;
		}
		if (!n) /* "?&a=1": an empty argument, not the end */
			continue;
		if (qlen + (size_t)n + 2 >= sizeof(c->query)) {
			uri_long = true;
			break;
		}
		qlen += (size_t)snprintf(c->query + qlen, sizeof(c->query) - qlen, "%s%s",
					 qlen ? "&" : "", frag);
	}
	if (lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_CONTENT_TYPE) >= (int)sizeof(c->ctype) ||
	    lws_hdr_copy(wsi, c->ctype, sizeof(c->ctype), WSI_TOKEN_HTTP_CONTENT_TYPE) < 0)
		snprintf(c->ctype, sizeof(c->ctype), "(too long)");
	if (lws_get_peer_simple(wsi, c->peer, sizeof(c->peer)) == NULL)
		snprintf(c->peer, sizeof(c->peer), "?");

	if (lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH) > 0) {
		char *end;

		if (lws_hdr_copy(wsi, cl, sizeof(cl), WSI_TOKEN_HTTP_CONTENT_LENGTH) < 0 ||
		    !cl[0] || cl[0] == '-' ||
		    (errno = 0, c->expect = strtoull(cl, &end, 10), errno || *end)) {
			c->expect = 1; /* whatever follows is not a request: drain it */
			return early(hs, wsi, c, 400, "invalid Content-Length");
		}
	}
	if (lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING) > 0) {
		c->expect = 1;
		return early(hs, wsi, c, 411,
			     "chunked request bodies are not supported: send Content-Length");
	}
	if (uri_long) {
		char msg[160];

		snprintf(msg, sizeof(msg),
			 "request URI too long: at most %zu bytes of path, %zu of query (an "
			 "argument at most %zu)",
			 sizeof(c->path) - 1, sizeof(c->query) - 1, sizeof(frag) - 1);
		return early(hs, wsi, c, 414, msg);
	}
	if (!hs->ops->is_public(hs->arg, c->path)) {
		int t = check_token(hs, wsi, c);

		if (t)
			return early(hs, wsi, c, 401,
				     t == 1 ? "missing bearer token (Authorization: Bearer TOKEN)"
					    : "invalid bearer token");
	}
	limit = hs->ops->body_limit(hs->arg, c->method, c->path, &why);
	if (c->expect > limit) {
		char msg[200];

		snprintf(msg, sizeof(msg),
			 "request body of %zu bytes is over the limit of %zu bytes%s%s%s",
			 c->expect, limit, why ? " (" : "", why ? why : "", why ? ")" : "");
		return early(hs, wsi, c, 413, msg);
	}
	if (!c->expect)
		return process(hs, wsi, c);
	lws_set_timer_usecs(wsi, (lws_usec_t)(BODY_S + (c->expect >> 16)) * LWS_US_PER_SEC);
	c->timed = true;
	c->body = malloc(c->expect + 1);
	if (!c->body)
		return -1;
	/* lws 4.1 does not answer "Expect: 100-continue" itself; without this
	 * curl waits a second before sending bodies over 1 MiB */
	if (lws_hdr_copy(wsi, frag, sizeof(frag), WSI_TOKEN_HTTP_EXPECT) > 0 &&
	    !strcasecmp(frag, "100-continue")) {
		static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
		unsigned char buf[LWS_PRE + sizeof(cont)];

		memcpy(buf + LWS_PRE, cont, sizeof(cont) - 1);
		if (lws_write(wsi, buf + LWS_PRE, sizeof(cont) - 1, LWS_WRITE_RAW) < 0)
			return -1;
	}
	return 0;
}

static int on_body(struct ctl_http *hs, struct lws *wsi, struct conn *c, const void *in, size_t len)
{
	/* lws calls a POST with "Content-Length: 0" an empty body (and then its
	 * completion) after on_request answered it: nothing to add */
	if (!len)
		return 0;
	if (c->drain) {
		c->drained += len;
		/* a client that ignores our answer gets a reset, not our memory */
		return c->drained > DRAIN_MAX ? -1 : 0;
	}
	if (!c->body || len > c->expect - c->body_len) {
		/* lws delivers Content-Length bytes; this is a defence, not a path */
		c->expect = 1;
		return early(hs, wsi, c, 413, "request body larger than its Content-Length");
	}
	memcpy(c->body + c->body_len, in, len);
	c->body_len += len;
	return 0;
}

/* The end of an answer: keep the connection, or close it. */
static int answered(struct lws *wsi, struct conn *c)
{
	if (c->close_after) {
		if (c->drain && !c->body_done) {
			shutdown(lws_get_socket_fd(wsi), SHUT_WR);
			return 0;
		}
		return -1;
	}
	return lws_http_transaction_completed(wsi) ? -1 : 0;
}

/* The next chunk of a streamed answer, framed as an HTTP/1.1 chunk (with the
 * last, empty chunk after the final part). */
static int write_stream(struct ctl_http *hs, struct lws *wsi, struct conn *c)
{
	static const char room[CHUNK_HEAD];
	struct xg_buf *b = &c->sbuf;
	char line[24];
	size_t n, hl;
	int more;

	b->len = 0;
	if (xg_buf_put(b, room, CHUNK_HEAD, 0) < 0)
		return -1;
	more = hs->ops->stream_next(c->stream, b, CHUNK);
	if (more < 0)
		return -1; /* no last chunk: the client knows the answer is incomplete */
	n = b->len - CHUNK_HEAD;
	if (more == CTL_HTTP_IDLE && !n) {
		/* a watch with nothing to say: open without a deadline until the
		 * stream's wake (a stuck reader is caught by the stall timeout
		 * armed at the last write) */
		lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0);
		return 0;
	}
	hl = (size_t)snprintf(line, sizeof(line), "%zx\r\n", n);
	memcpy(b->p + CHUNK_HEAD - hl, line, hl);
	if (xg_buf_put(b, "\r\n", 2, 0) || (!more && n && xg_buf_put(b, "0\r\n\r\n", 5, 0)))
		return -1;
	/* an empty part is the last chunk itself */
	if (lws_write(wsi, (unsigned char *)b->p + CHUNK_HEAD - hl, b->len - CHUNK_HEAD + hl,
		      more ? LWS_WRITE_HTTP : LWS_WRITE_HTTP_FINAL) <
	    (int)(b->len - CHUNK_HEAD + hl))
		return -1;
	if (more) {
		/* progress: the stall timeout starts again; an idle stream is
		 * asked once more, to find it idle and lift the timeout */
		lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, STREAM_STALL_S);
		lws_callback_on_writable(wsi);
		return 0;
	}
	hs->ops->stream_free(c->stream);
	c->stream = NULL;
	free(b->p);
	memset(b, 0, sizeof(*b));
	lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0);
	return answered(wsi, c);
}

static int on_writeable(struct ctl_http *hs, struct lws *wsi, struct conn *c)
{
	size_t left, n;
	bool final;

	if (c->stream)
		return write_stream(hs, wsi, c);
	if (c->has_ready) {
		struct ctl_http_resp rs = c->ready;

		c->has_ready = false;
		memset(&c->ready, 0, sizeof(c->ready));
		if (rs.code >= 400)
			log_refusal(c, &rs);
		return send_response(hs, wsi, c, &rs);
	}
	if (!c->out)
		return 0;
	left = c->out_len - c->out_off;
	n = left > CHUNK ? CHUNK : left;
	final = n == left;
	if (n && lws_write(wsi, c->out + LWS_PRE + c->out_off, n,
			   final ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) < (int)n)
		return -1;
	c->out_off += n;
	if (!final) {
		lws_callback_on_writable(wsi);
		return 0;
	}
	free(c->out);
	c->out = NULL;
	return answered(wsi, c);
}

/* A Status answer written as raw bytes (no request to answer through lws:
 * a raw socket, or headers that never ended), then "Connection: close". */
static int raw_answer(struct ctl_http *hs, struct lws *wsi, int code, const char *phrase,
		      const char *msg, const char *extra)
{
	char out[LWS_PRE + 768];
	struct ctl_http_resp rs = {0};
	size_t n;

	ctl_http_error(&rs, code, NULL, msg, NULL);
	n = (size_t)snprintf(out + LWS_PRE, sizeof(out) - LWS_PRE,
			     "HTTP/1.1 %d %s\r\nServer: %s\r\n"
			     "Content-Type: application/json\r\nContent-Length: %zu\r\n%s"
			     "Connection: close\r\n\r\n%s",
			     code, phrase, hs->conf.name, rs.body ? strlen(rs.body) : 0, extra,
			     rs.body ? rs.body : "");
	free(rs.body);
	if (n >= sizeof(out) - LWS_PRE ||
	    lws_write(wsi, (unsigned char *)out + LWS_PRE, n, LWS_WRITE_RAW) < (int)n)
		return -1;
	shutdown(lws_get_socket_fd(wsi), SHUT_WR);
	return 0;
}

/* The body did not arrive in time: 408 and close, or close a drain. The
 * first one also comes before lws's header timeout (armed at accept): a
 * connection with no request yet (no conn) gets a 408 instead of a silent
 * close, e.g. one whose header line has no colon (lws waits for one). */
static int on_deadline(struct ctl_http *hs, struct lws *wsi, struct conn *c)
{
	struct ctl_http_resp rs = {0};
	char peer[64] = "?";

	if (!c) {
		lws_get_peer_simple(wsi, peer, sizeof(peer));
		ctl_log("request headers from %s not complete in %d s: 408", peer, HDR_S - 1);
		raw_answer(hs, wsi, 408, "Request Timeout",
			   "the request line and headers did not end within 9 s (every header "
			   "line is NAME: VALUE, then an empty line)",
			   "");
		return -1;
	}
	if (!c->timed) /* armed for a request that completed in time */
		return 0;
	c->timed = false;
	if (c->drain || c->out || c->stream || !c->body)
		return -1;
	{
		char msg[120];

		snprintf(msg, sizeof(msg), "%zu of %zu body bytes arrived in %llu s", c->body_len,
			 c->expect, (unsigned long long)(BODY_S + (c->expect >> 16)));
		ctl_http_error(&rs, 408, "Timeout", msg, NULL);
	}
	log_refusal(c, &rs);
	c->close_after = true;
	/* lws's own body timeout (restarted at every byte) would cut the answer */
	lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, HDR_S);
	free(c->body);
	c->body = NULL;
	return send_response(hs, wsi, c, &rs);
}

/* A CONNECT (after its headers) or a request line with a method lws does
 * not know, handed over as a raw socket with the bytes read so far. */
static int on_raw_rx(struct ctl_http *hs, struct lws *wsi, struct conn *c, const char *in,
		     size_t len)
{
	char peer[64] = "?", msg[96];
	const char *phrase = "Bad Request";
	size_t m = 0;
	int code = 400;

	if (c->close_after || !len) { /* answered: discard until the client closes */
		c->drained += len;
		return c->drained > DRAIN_MAX ? -1 : 0;
	}
	while (m < len && m < 16 && in[m] >= 'A' && in[m] <= 'Z')
		m++;
	snprintf(msg, sizeof(msg), "a request line that is not HTTP/1.1");
	if (m && m < len && in[m] == ' ') {
		code = 501;
		phrase = "Not Implemented";
		snprintf(msg, sizeof(msg), "method %.*s is not implemented", (int)m, in);
		if (m == 7 && !memcmp(in, "CONNECT", 7)) {
			code = 405;
			phrase = "Method Not Allowed";
			snprintf(msg, sizeof(msg), "CONNECT is not served: this is not a proxy");
		}
	}
	lws_get_peer_simple(wsi, peer, sizeof(peer));
	ctl_log("%.*s -> %d from %s: %s", (int)(m ? m : 1), m ? in : "?", code, peer, msg);
	c->close_after = true;
	if (raw_answer(hs, wsi, code, phrase, msg,
		       code == 405 ? "Allow: GET, POST, PUT, PATCH, DELETE, HEAD\r\n" : ""))
		return -1;
	lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, HDR_S);
	return 0;
}

static int cb_http(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		   size_t len)
{
	struct ctl_http *hs = lws_context_user(lws_get_context(wsi));
	struct conn *c = user;

	switch (reason) {
	case LWS_CALLBACK_HTTP:
		return on_request(hs, wsi, c, in);
	case LWS_CALLBACK_HTTP_BODY:
		return on_body(hs, wsi, c, in, len);
	case LWS_CALLBACK_HTTP_BODY_COMPLETION:
		if (c->drain) {
			c->body_done = true;
			return c->out ? 0 : -1; /* answered already: close */
		}
		if (c->out || c->stream || !c->body) /* answered already (early, or no body) */
			return 0;
		c->timed = false;
		c->body[c->body_len] = 0;
		return process(hs, wsi, c);
	case LWS_CALLBACK_HTTP_WRITEABLE:
		return on_writeable(hs, wsi, c);
	case LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED:
		/* before lws's header timeout (HDR_S from the first byte) */
		lws_set_timer_usecs(wsi, (lws_usec_t)(HDR_S - 1) * LWS_US_PER_SEC);
		break;
	case LWS_CALLBACK_TIMER:
		return on_deadline(hs, wsi, c);
	case LWS_CALLBACK_RAW_ADOPT: /* a deadline even if nothing more comes */
		lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, HDR_S);
		return 0;
	case LWS_CALLBACK_RAW_RX:
		return on_raw_rx(hs, wsi, c, in, len);
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		/* a WebSocket upgrade without our subprotocol lands here: refused */
		return 1;
	case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
	case LWS_CALLBACK_CLOSED_HTTP:
		if (c && hs)
			conn_free(hs, c);
		break;
	default:
		break;
	}
	return lws_callback_http_dummy(wsi, reason, user, in, len);
}

static void lws_logger(int level, const char *line)
{
	(void)level;
	ctl_log("lws: %.*s", (int)strcspn(line, "\n"), line);
}

void ctl_http_error(struct ctl_http_resp *rs, int code, const char *reason, const char *msg,
		    const char *field)
{
	json_t *st = ctl_k8s_status(code, reason, msg, field);

	memset(rs, 0, sizeof(*rs));
	rs->code = code;
	rs->content_type = "application/json";
	rs->body = st ? json_dumps(st, JSON_COMPACT) : NULL;
	json_decref(st);
}

struct lws_context *ctl_http_context(const struct ctl_http *hs)
{
	return hs->ctx;
}

struct lws_vhost *ctl_http_vhost(const struct ctl_http *hs)
{
	return lws_get_vhost_by_name(hs->ctx, hs->conf.name);
}

struct ctl_http *ctl_http_start(const struct ctl_http_conf *conf, const struct ctl_http_ops *ops,
				void *arg)
{
	struct ctl_http *hs = calloc(1, sizeof(*hs));
	struct lws_context_creation_info info;
	size_t n = 0;

	if (!hs)
		return NULL;
	hs->conf = *conf;
	hs->ops = ops;
	hs->arg = arg;
	snprintf(hs->realm, sizeof(hs->realm), "Bearer realm=\"%s\"", conf->name);
	while (conf->extra && conf->extra[n].name)
		n++;
	hs->protocols = calloc(n + 2, sizeof(*hs->protocols));
	if (!hs->protocols) {
		free(hs);
		return NULL;
	}
	hs->protocols[0] =
	    (struct lws_protocols){"http", cb_http, sizeof(struct conn), 0, 0, NULL, 0};
	for (size_t i = 0; i < n; i++)
		hs->protocols[i + 1] = conf->extra[i];
	lws_set_log_level(LLL_ERR | LLL_WARN, lws_logger);
	memset(&info, 0, sizeof(info));
	inet_ntop(AF_INET, &conf->listen.sin_addr, hs->iface, sizeof(hs->iface));
	info.iface = hs->iface;
	info.port = ntohs(conf->listen.sin_port);
	info.protocols = hs->protocols;
	info.vhost_name = conf->name;
	info.server_string = conf->name;
	info.user = hs;
	info.alpn = "http/1.1";
	info.timeout_secs = HDR_S;
	info.timeout_secs_ah_idle = HDR_S;
	info.fd_limit_per_thread = 1024; /* lws sizes its fd tables by this: RSS */
	/* an unknown method becomes a raw socket (on_raw_rx), not lws's 403 page */
	info.options = LWS_SERVER_OPTION_DISABLE_IPV6 | LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND |
		       LWS_SERVER_OPTION_FALLBACK_TO_APPLY_LISTEN_ACCEPT_CONFIG;
	if (conf->tls_cert && conf->tls_cert[0]) {
		info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
		info.ssl_cert_filepath = conf->tls_cert;
		info.ssl_private_key_filepath = conf->tls_key;
	}
	hs->ctx = lws_create_context(&info);
	if (!hs->ctx) {
		ctl_log("cannot serve on %s:%u (address in use, or bad TLS files?)", hs->iface,
			info.port);
		free(hs->protocols);
		free(hs);
		return NULL;
	}
	ctl_log("serving %s://%s:%u", info.ssl_cert_filepath ? "https" : "http", hs->iface,
		info.port);
	return hs;
}

void ctl_http_stop(struct ctl_http *hs)
{
	if (!hs)
		return;
	lws_context_destroy(hs->ctx);
	free(hs->protocols);
	free(hs);
}
