/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * gatewayd's table of VPC subnets by origin gateway. Each origin numbers
 * its changes with one increasing version, so duplicates and reordering are
 * harmless: a change older than what we hold for that (origin, prefix) is
 * ignored, and a withdrawal leaves a tombstone so an older announcement
 * cannot resurrect the route.
 */
#ifndef GWD_ROUTES_H
#define GWD_ROUTES_H

#include <stdbool.h>
#include <stdint.h>

#define RT_ORIGIN_MAX 33

struct rt_key {
	uint32_t vni;
	uint32_t ip_be;
	uint8_t plen;
};

enum rt_state { RT_ACTIVE, RT_STALE, RT_WITHDRAWN };

struct route {
	struct rt_key key;
	char origin[RT_ORIGIN_MAX];
	uint64_t version;
	enum rt_state state;
	uint64_t since_ms;   /* last change */
	uint64_t expires_ms; /* RT_STALE: removed then; RT_WITHDRAWN: tombstone dropped then */
	bool seen_in_sync;   /* during a full resync from its origin */
};

struct rt_table {
	struct route *r;
	int n, cap;
};

enum rt_result {
	RT_APPLIED,   /* the table changed */
	RT_IGNORED,   /* duplicate or older than what we hold */
	RT_CONFLICT,  /* overlaps a prefix of another origin */
	RT_REFUSED,   /* outside the origin's policy */
};

/* Policy hook: may this origin announce this prefix? */
typedef bool (*rt_policy)(const char *origin, const struct rt_key *k, void *arg);

void rt_init(struct rt_table *t);
void rt_free(struct rt_table *t);
enum rt_result rt_announce(struct rt_table *t, const char *origin, const struct rt_key *k,
			   uint64_t version, uint64_t now_ms, rt_policy pol, void *arg,
			   const struct route **other);
enum rt_result rt_withdraw(struct rt_table *t, const char *origin, const struct rt_key *k,
			   uint64_t version, uint64_t now_ms, uint64_t tombstone_ms);
/* The origin's session dropped: its routes stay, stale, for grace_ms. */
int rt_origin_down(struct rt_table *t, const char *origin, uint64_t now_ms, uint64_t grace_ms);
/* Full resync from an origin: begin clears marks; end removes what the
 * origin did not announce again (returns how many). */
void rt_sync_begin(struct rt_table *t, const char *origin);
int rt_sync_end(struct rt_table *t, const char *origin);
/* Drop stale routes and tombstones past their time; returns routes removed
 * from forwarding (stale ones), tombstones are dropped silently. */
int rt_expire(struct rt_table *t, uint64_t now_ms);
const struct route *rt_find(const struct rt_table *t, const char *origin, const struct rt_key *k);
bool rt_overlap(const struct rt_key *a, const struct rt_key *b);
/* Forwarding view: active or stale (traffic keeps flowing while stale). */
static inline bool rt_forwarding(const struct route *r)
{
	return r->state != RT_WITHDRAWN;
}

#endif
