// SPDX-License-Identifier: BSD-2-Clause
/*
 * The hub, up: state reports replace the child's subtree keys in one
 * transaction and are acknowledged after the commit; heartbeats rewrite
 * its subtree's EdgeCluster rows, rotate its credential at half-life and
 * carry the digest that triggers a full list (proto/edgecluster.md).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hub_int.h"

/* Keep only keys in the child's subtree with string values; count the rest. */
static int clean_map(struct hub_conn *c, json_t *map, int *dropped)
{
	const char *k;
	json_t *v;
	void *tmp;

	if (!json_is_object(map))
		return -1;
	json_object_foreach_safe(map, tmp, k, v)
	{
		if (!tree_in_subtree(k, c->name) || !tree_path_ok(k) || !json_is_string(v) ||
		    strlen(json_string_value(v)) > 8192) {
			json_object_del(map, k);
			(*dropped)++;
		}
	}
	return 0;
}

int hub_on_state(struct hub_conn *c, json_t *m)
{
	struct hub *h = c->h;
	json_t *items = json_object_get(m, "items"), *it;
	json_t *seq = json_object_get(m, "seq");
	struct ec_state_item *v;
	int dropped = 0, rc;
	size_t i, n = json_array_size(items);

	if (!json_is_integer(seq) || !json_is_array(items))
		return hub_refuse(c, LWS_CLOSE_STATUS_PROTOCOL_ERR, "protocol",
				  "state: needs seq (integer) and items (array)");
	v = calloc(n + 1, sizeof(*v));
	if (!v)
		return hub_refuse(c, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION, "internal",
				  "out of memory");
	json_array_foreach(items, i, it)
	{
		v[i].mission = json_string_value(json_object_get(it, "mission"));
		v[i].map = json_object_get(it, "state");
		if (!v[i].mission || ec_check_dns_subdomain(v[i].mission) ||
		    clean_map(c, v[i].map, &dropped)) {
			free(v);
			return hub_refuse(
			    c, LWS_CLOSE_STATUS_PROTOCOL_ERR, "protocol",
			    "state.items[]: needs mission (a name) and state (object)");
		}
	}
	if (dropped)
		hub_log(c, "state: %d key(s) outside its subtree or not strings dropped", dropped);
	rc = ec_store_state_replace_batch(&h->d->store, c->name, v, n, hub_owes_up(h));
	free(v);
	if (rc)
		return hub_refuse(c, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION, "internal",
				  "the store failed");
	ctl_ws_send(&c->l, json_pack("{s:s,s:O}", "type", "state-ack", "seq", seq));
	if (hub_owes_up(h))
		hub_owe_kick(h);
	return 0;
}

int hub_on_heartbeat(struct hub_conn *c, json_t *m)
{
	struct hub *h = c->h;
	json_t *self = json_object_get(m, "cluster"), *desc = json_object_get(m, "descendants");
	json_t *objs = json_array(), *o, *ack, *cred_json = NULL;
	const char *digest = json_string_value(json_object_get(m, "digest"));
	char now[EC_TS_LEN + 1];
	struct ec_cred cr;
	struct hub_child *k = hub_child_find(h, c->name);
	int bad = 0, clashes = 0;
	size_t i;

	ec_timestamp(time(NULL), now);
	if (!json_is_object(self) || (desc && !json_is_array(desc)) ||
	    !(o = tree_row_from(self, c->name, now))) {
		json_decref(objs);
		return hub_refuse(c, LWS_CLOSE_STATUS_PROTOCOL_ERR, "protocol",
				  "heartbeat.cluster: needs this child's EdgeCluster object");
	}
	json_object_set_new(json_object_get(o, "state"), "health",
			    json_string(strcmp(json_string_value(json_object_get(
						   json_object_get(self, "state"), "health"))
						   ?: "",
					       "degraded")
					    ? "ok"
					    : "degraded"));
	json_array_append_new(objs, o);
	json_array_foreach(desc, i, o)
	{
		const char *p =
		    json_string_value(json_object_get(json_object_get(o, "state"), "path"));
		json_t *row =
		    p && tree_path_ok(p) && strcmp(p, c->name) && tree_in_subtree(p, c->name)
			? tree_row_from(o, p, NULL)
			: NULL;

		if (row)
			json_array_append_new(objs, row);
		else
			bad++;
	}
	if (ec_store_subtree_sync(&h->d->store, h->d->conf.name, c->name, objs, &clashes)) {
		json_decref(objs);
		return hub_refuse(c, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION, "internal",
				  "the store failed");
	}
	json_decref(objs);
	if (k && (bad || clashes) &&
	    k->clashes != bad + clashes) /* once per change, not per beat */
		hub_log(c,
			"heartbeat: %d descendant(s) refused (bad path or object), %d name(s) "
			"already elsewhere in the tree",
			bad, clashes);
	if (k)
		k->clashes = bad + clashes;
	/* rotate the credential at half its life; the child stores the new one */
	if (!ec_store_cred_get(&h->d->store, c->name, &cr) &&
	    cr.cur_expires - (int64_t)time(NULL) < (int64_t)h->d->conf.credential_s / 2) {
		hub_issue(h, &cr, &cred_json, true);
		if (ec_store_cred_put(&h->d->store, &cr)) {
			json_decref(cred_json);
			cred_json = NULL;
		}
	}
	ack = json_pack("{s:s,s:s}", "type", "heartbeat-ack", "time", now);
	if (cred_json)
		json_object_set_new(ack, "credential", cred_json);
	ctl_ws_send(&c->l, ack);
	/* anti-entropy: once it applied all we sent, its digest must be ours */
	hub_scan_now(h);
	if (json_integer_value(json_object_get(m, "ack")) == c->sent_seq && !c->fetch &&
	    (!digest || strcmp(digest, h->digest))) {
		hub_log(c, "mission digest differs: sending the full list");
		hub_send_list(c);
	}
	return 0;
}
