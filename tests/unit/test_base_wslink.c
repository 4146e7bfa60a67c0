// SPDX-License-Identifier: BSD-2-Clause
/* The control base's WebSocket link, its queue without a socket: whole
 * messages in order, the byte count, the bound (a message that does not
 * fit closes the link, unless the queue is empty), the error message that
 * ends a link, and the reset. (Reassembly needs a live socket: edge_tree
 * and edge_hubqueue drive it.) */
#include <string.h>

#include "ctl_wslink.h"
#include "unit.h"

static size_t text_len(const struct ctl_ws_out *o)
{
	return o ? o->len : 0;
}

int main(void)
{
	struct ctl_wslink l = {0};
	json_t *m = json_pack("{s:s}", "type", "hello"), *none = json_object();

	CHECK(!strcmp(ctl_ws_type(m), "hello") && !ctl_ws_type(none), "a message's type, or NULL");
	json_decref(m);
	json_decref(none);
	CHECK(!ctl_ws_send(&l, json_pack("{s:s}", "type", "a")) &&
		  !ctl_ws_send(&l, json_pack("{s:s}", "type", "bb")) && l.head && l.tail &&
		  l.head != l.tail && l.queued == text_len(l.head) + text_len(l.tail) &&
		  !memcmp(l.head->buf + LWS_PRE, "{\"type\":\"a\"}", l.head->len),
	      "two messages queued in order, compact, counted (%zu bytes)", l.queued);
	CHECK(ctl_ws_send(&l, NULL) == -1 && l.head->next == l.tail,
	      "no message: -1, nothing queued");
	ctl_ws_reset(&l);
	CHECK(!l.head && !l.queued, "reset empties the queue");

	l.max_queued = 20;
	CHECK(!ctl_ws_send(&l, json_pack("{s:s}", "type", "0123456789012345678901234567890")),
	      "over the bound into an empty queue: taken (one message always goes)");
	CHECK(ctl_ws_send(&l, json_pack("{s:s}", "type", "x")) == -1 && l.overflowed,
	      "then one more over the bound: refused, the link marked overflowed");
	CHECK(ctl_ws_send(&l, json_pack("{s:s}", "type", "y")) == -1,
	      "and everything after (the link goes)");
	ctl_ws_reset(&l);
	CHECK(!l.overflowed && !l.max_queued, "reset clears the mark");

	ctl_ws_fail(&l, 1008, "unauthorized", "join token refused");
	CHECK(l.close_after && l.close_code == 1008 && l.head &&
		  strstr((const char *)l.head->buf + LWS_PRE, "\"type\":\"error\"") &&
		  strstr((const char *)l.head->buf + LWS_PRE, "join token refused"),
	      "fail: an error message queued, the close after it");
	ctl_ws_fail(&l, 1011, "internal", "second");
	CHECK(l.head == l.tail && l.close_code == 1008, "a second fail adds nothing");
	ctl_ws_reset(&l);
	return unit_summary();
}
