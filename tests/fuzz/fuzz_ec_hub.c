// SPDX-License-Identifier: BSD-2-Clause
/*
 * The hub's side of the tree protocol: what a child that attached sends up
 * (proto/edgecluster.md "Hub protocol"), one JSON message per input, parsed
 * as wslink.c parses it, then handled by type as hub.c's on_message does:
 * "state" -> hub_on_state, "heartbeat" -> hub_on_heartbeat (hub_up.c).
 * The child "c1" holds a credential at half its life (a heartbeat rotates
 * it); this cluster reports up, so the outbox is written too.
 */
/* libwebsockets.h (OpenSSL's EC_GROUP) before resource.h (edgeclusterd's) */
#include "hub_int.h"

#include "ec_fixture.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *m = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	struct ec_tree tree = {.reports_up = true, .link_up = true};
	struct hub_conn c = {.authed = true};
	struct ec_cred cr = {0};
	const char *t = json_string_value(json_object_get(m, "type"));
	struct ecd d;

	if (!json_is_object(m) || !t) {
		json_decref(m);
		return 0;
	}
	fz_ecd_open(&d);
	d.tree = &tree;
	memset(&H, 0, sizeof(H));
	H.d = &d;
	H.conns = &c;
	snprintf(c.name, sizeof(c.name), "c1");
	snprintf(c.peer, sizeof(c.peer), "fuzz");
	snprintf(cr.name, sizeof(cr.name), "c1");
	cr.cur_expires = (int64_t)time(NULL) + 60;
	if (ec_store_cred_put(&d.store, &cr))
		abort();

	if (!strcmp(t, "state"))
		hub_on_state(&c, m);
	else if (!strcmp(t, "heartbeat"))
		hub_on_heartbeat(&c, m);

	ws_reset(&c.l);
	json_decref(H.index);
	free(H.kids);
	memset(&H, 0, sizeof(H));
	fz_ecd_close(&d);
	json_decref(m);
	return 0;
}
