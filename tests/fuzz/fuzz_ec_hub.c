// SPDX-License-Identifier: BSD-2-Clause
/*
 * The hub's side of the tree protocol: what a child sends up
 * (proto/edgecluster.md "Hub protocol"), one JSON message per input, parsed
 * as ctl_wslink parses it and handled by hub_on_message (tree/hub.c): a "hello" on
 * a new link (the join token "join-0123456789abcdef" and the credential
 * CRED below are good), anything else from the attached child "c1"
 * (state -> hub_reports.c hub_on_state, heartbeat -> hub_on_heartbeat, fetch,
 * leave, error). c1's credential is at half its life (a heartbeat rotates
 * it); this cluster reports up, so the outbox is written too.
 */
#include "hub_int.h"

#include "ec_fixture.h"
#include "fuzz.h"

#define JOIN "join-0123456789abcdef"
#define CRED "c1-credential-0123456789abcdefghijklmnopqrs" /* 43 characters */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *m = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	struct ec_link_state link = {.reports_up = true, .link_up = true};
	struct hub h = {0};
	struct hub_conn c = {0};
	struct ec_cred cr = {0};
	const char *t = json_string_value(json_object_get(m, "type"));
	struct ecd d;

	if (!json_is_object(m) || !t) {
		json_decref(m);
		return 0;
	}
	fz_ecd_open(&d);
	d.link = &link;
	h.d = &d;
	h.conns = &c;
	c.h = &h;
	d.conf.n_join_tokens = 1;
	ec_token_digest(JOIN, strlen(JOIN), d.conf.join_tokens[0]);
	snprintf(c.peer, sizeof(c.peer), "fuzz");
	if (strcmp(t, "hello")) { /* the child's link is up */
		c.authed = true;
		snprintf(c.name, sizeof(c.name), "c1");
	}
	snprintf(cr.name, sizeof(cr.name), "c1");
	ec_token_digest(CRED, strlen(CRED), cr.cur);
	cr.cur_expires = (int64_t)time(NULL) + 60;
	if (ec_store_cred_put(&d.store, &cr))
		abort();

	hub_on_message(&c, m);

	ctl_ws_reset(&c.l);
	json_decref(h.index);
	free(h.kids);
	fz_ecd_close(&d);
	json_decref(m);
	return 0;
}
