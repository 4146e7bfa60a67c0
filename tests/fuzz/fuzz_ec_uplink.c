// SPDX-License-Identifier: BSD-2-Clause
/*
 * The uplink's side of the tree protocol: what the parent sends down
 * (proto/edgecluster.md "Hub protocol"), one JSON message per input, handled
 * by type as uplink.c's on_message does: "missions" -> uplink_on_missions,
 * "list" -> uplink_on_list (uplink_missions.c, storing through store/tree_sync.c).
 * One mission "inh" was inherited from the parent before, so that a list
 * can drop or keep it.
 */
/* libwebsockets.h (OpenSSL's EC_GROUP) before resource.h (edgeclusterd's) */
#include "links.h"

#include "ec_fixture.h"
#include "fuzz.h"

static const char inherited[] =
    "{\"type\":\"missions\",\"seq\":1,\"delete\":[],\"upsert\":[{\"metadata\":{\"name\":\"inh\","
    "\"uid\":\"6f1d2c3b-4a59-4e8f-9d7c-1b2a3c4d5e6f\",\"resourceVersion\":\"7\","
    "\"creationTimestamp\":\"2025-01-31T12:00:00Z\",\"labels\":{}},"
    "\"spec\":{\"content\":\"x\"}}]}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *m = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL), *first;
	const char *t = json_string_value(json_object_get(m, "type"));
	struct ctl_wslink l = {0};
	int64_t ack = 0;
	struct ecd d;

	if (!json_is_object(m) || !t) {
		json_decref(m);
		return 0;
	}
	fz_ecd_open(&d);
	first = json_loads(inherited, 0, NULL);
	if (uplink_on_missions(&d, "parent", first, &ack))
		abort();
	json_decref(first);

	if (!strcmp(t, "missions"))
		uplink_on_missions(&d, "parent", m, &ack);
	else if (!strcmp(t, "list"))
		uplink_on_list(&d, "parent", &l, m, &ack);

	ctl_ws_reset(&l);
	fz_ecd_close(&d);
	json_decref(m);
	return 0;
}
