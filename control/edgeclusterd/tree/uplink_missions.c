// SPDX-License-Identifier: BSD-2-Clause
/*
 * Missions from the parent, on the uplink (proto/edgecluster.md "Hub
 * protocol"): a "missions" batch is checked as the API checks a mission and
 * stored in one transaction (tree_sync.c); a full "list" drops what the
 * parent no longer has and fetches what differs. Whatever was written goes
 * to the missions through d->on_mission. Kept apart from uplink.c, which owns
 * the link and the attach state machine.
 */
#include <stdio.h>
#include <string.h>

#include "links.h"

void uplink_notify(struct ecd *d, const char *parent, struct ec_sync_out *o)
{
	json_t *v;
	size_t i, w = 0, del = 0;

	json_array_foreach(o->changed, i, v)
	{
		bool deleted = json_is_true(json_array_get(v, 1));

		deleted ? del++ : w++;
		if (d->on_mission)
			d->on_mission(d, json_string_value(json_array_get(v, 0)), deleted);
	}
	if (w || del)
		ctl_log("uplink: from %s: %zu mission(s) written, %zu deleted", parent, w, del);
	json_decref(o->changed);
}

/* A mission from the parent, checked as the API checks one; NULL if bad. */
static json_t *clean_mission(json_t *o)
{
	json_t *md = json_object_get(o, "metadata"), *body, *out = NULL;
	const char *uid = json_string_value(json_object_get(md, "uid"));
	const char *rv = json_string_value(json_object_get(md, "resourceVersion"));
	const char *created = json_string_value(json_object_get(md, "creationTimestamp"));
	struct ec_mission_in in;
	struct ec_verr e;

	body = json_pack("{s:s,s:s,s:{s:O?,s:O?},s:O?}", "apiVersion", EC_API_VERSION, "kind",
			 "Mission", "metadata", "name", json_object_get(md, "name"), "labels",
			 json_object_get(md, "labels"), "spec", json_object_get(o, "spec"));
	if (!body || !uid || strlen(uid) != EC_UID_LEN || !rv || !*rv ||
	    strspn(rv, "0123456789") != strlen(rv)) {
		ctl_log("uplink: the parent sent a mission without uid/resourceVersion: skipped");
		json_decref(body);
		return NULL;
	}
	if (ec_mission_validate(body, EC_OP_CREATE, &in, &e)) {
		ctl_log("uplink: the parent sent an invalid mission: %s: skipped", e.msg);
	} else {
		out = json_pack("{s:{s:s,s:s,s:s,s:s,s:O},s:O}", "metadata", "name", in.name, "uid",
				uid, "resourceVersion", rv, "creationTimestamp",
				created ? created : "", "labels", in.labels, "spec", in.spec);
		ec_mission_in_free(&in);
	}
	json_decref(body);
	return out;
}

int uplink_on_missions(struct ecd *d, const char *parent, json_t *m, int64_t *ack)
{
	json_t *up = json_object_get(m, "upsert"), *del = json_object_get(m, "delete");
	json_t *ups = json_array(), *dels = json_array(), *v;
	struct ec_sync_out out;
	size_t i;
	int rc;

	json_array_foreach(up, i, v)
	{
		json_t *c = clean_mission(v);

		if (c)
			json_array_append_new(ups, c);
	}
	json_array_foreach(del, i, v)
	{
		const char *n = json_string_value(json_object_get(v, "name"));

		if (n && !ec_check_dns_subdomain(n))
			json_array_append_new(dels, json_string(n));
	}
	rc = ec_store_sync_apply(&d->store, ups, dels, &out);
	json_decref(ups);
	json_decref(dels);
	if (rc) {
		ctl_log("uplink: applying missions from the parent: %s",
			ec_store_errmsg(&d->store));
		json_decref(out.changed);
		return -1; /* not acknowledged: the digest check brings them again */
	}
	uplink_notify(d, parent, &out);
	*ack = json_integer_value(json_object_get(m, "seq"));
	return 0;
}

/* The full list: drop what the parent no longer has, fetch what differs. */
int uplink_on_list(struct ecd *d, const char *parent, struct ctl_wslink *l, json_t *m, int64_t *ack)
{
	json_t *items = json_object_get(m, "items"), *inh, *want = json_object(),
	       *fetch = json_array();
	json_t *dels = json_array(), *v, *h;
	struct ec_sync_out out;
	const char *name;
	size_t i;
	int rc = ec_store_inherited_map(&d->store, &inh);

	json_array_foreach(items, i, v)
	{
		const char *n = json_string_value(json_object_get(v, "name"));
		const char *uid = json_string_value(json_object_get(v, "uid"));
		const char *rv = json_string_value(json_object_get(v, "rv"));

		if (!n || !uid || !rv || ec_check_dns_subdomain(n))
			continue;
		json_object_set_new(want, n, json_true());
		h = json_object_get(inh, n);
		if (!h || strcmp(json_string_value(json_object_get(h, "uid")), uid) ||
		    strcmp(json_string_value(json_object_get(h, "rv")), rv) ||
		    !json_is_true(json_object_get(h, "ok")))
			json_array_append_new(fetch, json_string(n));
	}
	json_object_foreach(inh, name, v) if (!json_object_get(want, name))
	    json_array_append_new(dels, json_string(name));
	if (!rc && json_array_size(dels)) {
		rc = ec_store_sync_apply(&d->store, NULL, dels, &out);
		if (!rc)
			uplink_notify(d, parent, &out);
		else
			json_decref(out.changed);
	}
	if (!rc) {
		ctl_log("uplink: mission list from %s: %zu to fetch, %zu to remove", parent,
			json_array_size(fetch), json_array_size(dels));
		if (json_array_size(fetch))
			ctl_ws_send(l, json_pack("{s:s,s:O}", "type", "fetch", "names", fetch));
		*ack = json_integer_value(json_object_get(m, "seq"));
	}
	json_decref(inh);
	json_decref(want);
	json_decref(fetch);
	json_decref(dels);
	return rc;
}
