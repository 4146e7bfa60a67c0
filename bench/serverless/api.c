// SPDX-License-Identifier: BSD-2-Clause
/*
 * fx_probe's API client on the probe's lws context: any number of requests
 * in flight, each on a connection of its own (plain HTTP on loopback: the
 * bench runs fornaxd there), and watches whose events (one JSON object a
 * line) are handed over as they arrive, not when the answer ends.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_hclient.h"
#include "fx_probe.h"

#define RESP_MAX (64u << 20)

/* Whole lines of a watch's answer so far, each an event. */
static void watch_lines(struct fx *fx)
{
	struct xg_buf *b = &fx->events;
	size_t off = 0;

	for (;;) {
		char *nl = memchr(b->p + off, '\n', b->len - off);
		json_t *ev;

		if (!nl)
			break;
		*nl = 0;
		ev = json_loads(b->p + off, 0, NULL);
		if (ev) {
			fx_on_event(fx, ev);
			json_decref(ev);
		} else if (nl > b->p + off) {
			fx_fail(fx, "a watch event that is not JSON: %.80s", b->p + off);
		}
		off = (size_t)(nl - b->p) + 1;
	}
	memmove(b->p, b->p + off, b->len - off);
	b->len -= off;
}

static void req_end(struct fx_req *r)
{
	r->fx->ended++;
	if (r->done)
		r->done(r);
	r->fx->in_flight -= !r->watch;
	xg_buf_free(&r->resp);
	free(r->body ? r->body - LWS_PRE : NULL);
	free(r);
}

static int cb(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
	struct fx_req *r = user;

	switch (reason) {
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
		if (!r)
			return 0;
		fx_fail(r->fx, "%s %s: %s", r->method, r->path,
			in ? (const char *)in : "no answer");
		r->status = -1;
		lws_set_wsi_user(wsi, NULL);
		req_end(r);
		return 0;
	case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER: {
		unsigned char **p = in;

		return ctl_hclient_headers(wsi, r->fx->token, r->body, r->body_len, p, *p + len);
	}
	case LWS_CALLBACK_CLIENT_HTTP_WRITEABLE:
		if (!r->body)
			return 0;
		if (lws_write(wsi, r->body, r->body_len, LWS_WRITE_HTTP_FINAL) < (int)r->body_len)
			return -1;
		lws_client_http_body_pending(wsi, 0);
		return 0;
	case LWS_CALLBACK_ESTABLISHED_CLIENT_HTTP:
		r->status = (int)lws_http_client_http_response(wsi);
		return 0;
	case LWS_CALLBACK_RECEIVE_CLIENT_HTTP_READ:
		if (r->watch && r->status == 200) {
			if (xg_buf_put(&r->fx->events, in, len, RESP_MAX))
				return -1;
			watch_lines(r->fx);
			return 0;
		}
		return xg_buf_put(&r->resp, in, len, RESP_MAX) ? -1 : 0;
	case LWS_CALLBACK_RECEIVE_CLIENT_HTTP: {
		char buf[LWS_PRE + 16384], *px = buf + LWS_PRE;
		int lenx = sizeof(buf) - LWS_PRE;

		return lws_http_client_read(wsi, &px, &lenx) < 0 ? -1 : 0;
	}
	case LWS_CALLBACK_COMPLETED_CLIENT_HTTP:
	case LWS_CALLBACK_CLOSED_CLIENT_HTTP:
		if (r) {
			lws_set_wsi_user(wsi, NULL);
			req_end(r);
		}
		return reason == LWS_CALLBACK_COMPLETED_CLIENT_HTTP ? -1 : 0;
	default:
		break;
	}
	return lws_callback_http_dummy(wsi, reason, user, in, len);
}

const struct lws_protocols fx_api_protocol = {"fx-api", cb, 0, 0, 0, NULL, 0};

int fx_request(struct fx *fx, const char *method, const char *path, const char *body,
	       void (*done)(struct fx_req *r), void *arg, bool watch)
{
	struct fx_req *r = calloc(1, sizeof(*r));
	struct lws_client_connect_info ci;
	unsigned long ended;

	if (!r)
		return -1;
	r->fx = fx;
	r->done = done;
	r->arg = arg;
	r->watch = watch;
	snprintf(r->method, sizeof(r->method), "%s", method);
	snprintf(r->path, sizeof(r->path), "%s", path);
	if (body) {
		unsigned char *b = malloc(LWS_PRE + strlen(body) + 1);

		if (!b) {
			free(r);
			return -1;
		}
		r->body = b + LWS_PRE;
		r->body_len = strlen(body);
		memcpy(r->body, body, r->body_len + 1);
	}
	memset(&ci, 0, sizeof(ci));
	ci.context = fx->ctx;
	ci.address = fx->host;
	ci.port = fx->port;
	ci.path = r->path;
	ci.host = fx->host;
	ci.origin = fx->host;
	ci.method = r->method;
	ci.alpn = "http/1.1";
	ci.ssl_connection = fx->tls ? LCCSCF_USE_SSL : 0;
	ci.protocol = fx_api_protocol.name;
	ci.local_protocol_name = fx_api_protocol.name;
	ci.userdata = r;
	fx->in_flight += !watch;
	ended = fx->ended;
	/* a connection that fails at once may or may not have been ended by
	 * the callback already */
	if (!lws_client_connect_via_info(&ci) && fx->ended == ended) {
		fx_fail(fx, "%s %s: cannot connect", method, path);
		r->status = -1;
		req_end(r);
	}
	return 0;
}
