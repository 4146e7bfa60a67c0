// SPDX-License-Identifier: BSD-2-Clause
/* gatewayd route table: versions make duplicates and reordering harmless,
 * conflicts and policy are refused, stale routes survive a session drop for
 * the grace time and go after it, a resync removes what the origin lost. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "unit.h"
#include "routes.h"


static struct rt_key K(uint32_t vni, const char *ip, uint8_t plen)
{
	struct rt_key k = { .vni = vni, .ip_be = inet_addr(ip), .plen = plen };

	return k;
}

static bool only_10_2(const char *origin, const struct rt_key *k, void *arg)
{
	(void)arg;
	if (strcmp(origin, "gw-b"))
		return true;
	return (ntohl(k->ip_be) >> 16) == 0x0a02; /* gw-b may only announce 10.2.0.0/16 */
}

int main(void)
{
	struct rt_table t;
	struct rt_key a = K(1, "10.2.0.0", 16), b = K(1, "10.3.0.0", 16);
	const struct route *r, *other = NULL;

	rt_init(&t);
	CHECK(rt_announce(&t, "gw-b", &a, 1, 0, only_10_2, NULL, NULL) == RT_APPLIED, "announce v1");
	CHECK(rt_announce(&t, "gw-b", &a, 1, 5, only_10_2, NULL, NULL) == RT_IGNORED, "duplicate ignored");
	CHECK(rt_withdraw(&t, "gw-b", &a, 3, 10, 1000) == RT_APPLIED, "withdraw v3");
	CHECK(rt_announce(&t, "gw-b", &a, 2, 11, only_10_2, NULL, NULL) == RT_IGNORED,
	      "older announce (v2, reordered) cannot resurrect it");
	r = rt_find(&t, "gw-b", &a);
	CHECK(r && !rt_forwarding(r) && r->version == 3, "tombstone at v3");
	CHECK(rt_announce(&t, "gw-b", &a, 4, 12, only_10_2, NULL, NULL) == RT_APPLIED, "newer announce v4");
	CHECK(rt_withdraw(&t, "gw-b", &a, 4, 13, 1000) == RT_IGNORED, "withdraw at the same version ignored");

	CHECK(rt_announce(&t, "gw-b", &b, 5, 14, only_10_2, NULL, NULL) == RT_REFUSED,
	      "prefix outside the origin's policy refused");
	CHECK(rt_announce(&t, "gw-c", &b, 1, 15, only_10_2, NULL, NULL) == RT_APPLIED, "gw-c announces 10.3/16");
	struct rt_key sub = K(1, "10.3.7.0", 24), other_vni = K(2, "10.3.0.0", 16);

	CHECK(rt_announce(&t, "gw-d", &sub, 1, 16, NULL, NULL, &other) == RT_CONFLICT &&
	      other && !strcmp(other->origin, "gw-c"), "overlap with another origin refused, names it");
	CHECK(rt_announce(&t, "gw-d", &other_vni, 1, 17, NULL, NULL, NULL) == RT_APPLIED,
	      "the same prefix in another VPC is no conflict");

	/* session of gw-c drops: stale for the grace time */
	CHECK(rt_origin_down(&t, "gw-c", 100, 5000) == 1, "gw-c's route marked stale");
	r = rt_find(&t, "gw-c", &b);
	CHECK(r && r->state == RT_STALE && rt_forwarding(r), "stale route still forwards");
	CHECK(rt_expire(&t, 5099) == 0, "not expired before the grace time");
	/* gw-c comes back and resyncs with the same version: fresh again */
	rt_sync_begin(&t, "gw-c");
	CHECK(rt_announce(&t, "gw-c", &b, 1, 5100, NULL, NULL, NULL) == RT_APPLIED, "resync refreshes");
	CHECK(rt_sync_end(&t, "gw-c") == 0, "nothing missing after resync");
	CHECK(rt_find(&t, "gw-c", &b)->state == RT_ACTIVE, "active again");

	/* gw-b drops and never comes back: gone after the grace time */
	rt_origin_down(&t, "gw-b", 6000, 5000);
	CHECK(rt_expire(&t, 11000) == 1, "grace over: route removed");
	CHECK(rt_find(&t, "gw-b", &a) == NULL, "no entry left for gw-b's prefix");
	CHECK(rt_announce(&t, "gw-b", &a, 4, 12000, only_10_2, NULL, NULL) == RT_APPLIED,
	      "a later resync brings it back at the same version");

	/* a resync that omits a prefix removes it */
	rt_sync_begin(&t, "gw-d");
	CHECK(rt_sync_end(&t, "gw-d") == 1, "prefix missing from the full sync removed");
	CHECK(rt_find(&t, "gw-d", &other_vni) == NULL, "and it is gone");

	/* tombstones are dropped after their time */
	rt_withdraw(&t, "gw-b", &a, 9, 20000, 1000);
	int before = t.n;

	rt_expire(&t, 21000);
	CHECK(t.n == before - 1, "tombstone dropped after its time");
	rt_free(&t);
	return unit_summary();
}
