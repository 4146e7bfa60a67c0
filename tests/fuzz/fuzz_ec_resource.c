// SPDX-License-Identifier: BSD-2-Clause
/*
 * The edge.xgate.io/v1 resource bodies (resource.c, tree.c), parsed as the
 * API and the hub parse them (duplicate keys refused). By kind:
 *   MissionList  ec_mission_list_validate (a bulk create);
 *   EdgeCluster  tree_row_from (a child's heartbeat object at a path);
 *   otherwise    ec_mission_validate, as a create and as a replace, and the
 *                placement of a valid one.
 * The Attach body's parser is static in tree.c: fuzz_ec_api reaches it
 * through PUT /attach.
 */
#include <jansson.h>

#include "fuzz.h"
#include "resource.h"
#include "tree.h"

static void mission(json_t *v)
{
	for (int op = EC_OP_CREATE; op <= EC_OP_REPLACE; op++) {
		struct ec_mission_in in;
		struct ec_verr e;

		if (ec_mission_validate(v, (enum ec_op)op, &in, &e)) {
			/* a refusal names a code the API can send and says what is wrong */
			FZ_ASSERT(e.code >= 400 && e.code < 500 && e.msg[0]);
			continue;
		}
		FZ_ASSERT(!ec_check_dns_subdomain(in.name));
		(void)ec_placement_match(in.spec, "edge-a", in.labels);
		ec_mission_in_free(&in);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *v = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL), *row;
	const char *kind = json_string_value(json_object_get(v, "kind"));

	if (!v)
		return 0;
	if (ec_is_list(v, "MissionList")) {
		struct ec_mission_in *ins = NULL;
		struct ec_verr e;
		size_t n = 0;

		if (ec_mission_list_validate(v, 64, 4096, &ins, &n, &e))
			FZ_ASSERT(e.code >= 400 && e.code < 500 && e.msg[0]);
		else
			ec_mission_list_free(ins, n);
	} else if (kind && !strcmp(kind, "EdgeCluster")) {
		const char *name =
		    json_string_value(json_object_get(json_object_get(v, "metadata"), "name"));
		char path[300];

		snprintf(path, sizeof(path), "child/%s", name ? name : "x");
		row = tree_row_from(v, path, "2025-01-31T12:00:00Z");
		json_decref(row);
	} else {
		mission(v);
	}
	json_decref(v);
	return 0;
}
