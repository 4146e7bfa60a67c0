// SPDX-License-Identifier: BSD-2-Clause
/* A WebSocket carrying JSON messages: its queue and reassembly; see
 * ctl_wslink.h. */
#include <stdlib.h>
#include <string.h>

#include "ctl_wslink.h"

int ctl_ws_send(struct ctl_wslink *l, json_t *msg)
{
	char *text = msg ? json_dumps(msg, JSON_COMPACT) : NULL;
	struct ctl_ws_out *o;
	size_t n;

	json_decref(msg);
	if (!text)
		return -1;
	n = strlen(text);
	if (l->overflowed || (l->max_queued && l->head && l->queued + n > l->max_queued)) {
		/* a peer that does not read would grow our memory without end: it
		 * goes, and catches up when it comes back (hub: by digest) */
		free(text);
		if (!l->overflowed && l->wsi)
			lws_set_timeout(l->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
		l->overflowed = true;
		return -1;
	}
	o = malloc(sizeof(*o) + LWS_PRE + n);
	if (!o) {
		free(text);
		return -1;
	}
	o->next = NULL;
	o->len = n;
	memcpy(o->buf + LWS_PRE, text, n);
	free(text);
	if (l->tail)
		l->tail->next = o;
	else
		l->head = o;
	l->tail = o;
	l->queued += n;
	if (l->wsi)
		lws_callback_on_writable(l->wsi);
	return 0;
}

void ctl_ws_fail(struct ctl_wslink *l, int close_code, const char *code, const char *message)
{
	if (l->close_after)
		return;
	ctl_ws_send(l,
		    json_pack("{s:s,s:s,s:s}", "type", "error", "code", code, "message", message));
	l->close_after = true;
	l->close_code = close_code;
}

int ctl_ws_writable(struct ctl_wslink *l)
{
	struct ctl_ws_out *o = l->head;

	if (!o) {
		if (l->close_after) {
			lws_close_reason(l->wsi, (enum lws_close_status)l->close_code, NULL, 0);
			return -1;
		}
		return 0;
	}
	l->head = o->next;
	if (!l->head)
		l->tail = NULL;
	l->queued -= o->len;
	if (lws_write(l->wsi, o->buf + LWS_PRE, o->len, LWS_WRITE_TEXT) < (int)o->len) {
		free(o);
		return -1;
	}
	free(o);
	/* after the last message of a failing link: one more turn closes it */
	if (l->head || l->close_after)
		lws_callback_on_writable(l->wsi);
	return 0;
}

int ctl_ws_receive(struct ctl_wslink *l, const void *in, size_t len, size_t max, json_t **msg,
		   const char **why, int *close_code)
{
	json_error_t je;

	*msg = NULL;
	if (lws_frame_is_binary(l->wsi)) {
		*why = "binary frame (the hub protocol is JSON text)";
		*close_code = LWS_CLOSE_STATUS_UNACCEPTABLE_OPCODE;
		return -1;
	}
	if (l->in.len + len > max) {
		*why = "message over the size limit";
		*close_code = LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE;
		return -1;
	}
	if (xg_buf_put(&l->in, in, len, 0)) {
		*why = "out of memory";
		*close_code = LWS_CLOSE_STATUS_UNEXPECTED_CONDITION;
		return -1;
	}
	if (!lws_is_final_fragment(l->wsi) || lws_remaining_packet_payload(l->wsi))
		return 0;
	*msg = json_loadb(l->in.p, l->in.len, JSON_REJECT_DUPLICATES, &je);
	l->in.len = 0;
	if (l->in.cap > (1u << 20)) /* do not keep a big buffer per link */
		xg_buf_free(&l->in);
	if (!json_is_object(*msg) || !ctl_ws_type(*msg)) {
		json_decref(*msg);
		*msg = NULL;
		*why = "not a JSON object with a \"type\"";
		*close_code = LWS_CLOSE_STATUS_PROTOCOL_ERR;
		return -1;
	}
	return 1;
}

void ctl_ws_reset(struct ctl_wslink *l)
{
	while (l->head) {
		struct ctl_ws_out *o = l->head;

		l->head = o->next;
		free(o);
	}
	xg_buf_free(&l->in);
	memset(l, 0, sizeof(*l));
}

const char *ctl_ws_type(json_t *msg)
{
	return json_string_value(json_object_get(msg, "type"));
}
