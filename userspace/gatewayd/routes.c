// SPDX-License-Identifier: BSD-2-Clause
/* Route table with per-origin versions; see routes.h. Linear scans: the
 * table holds a few thousand prefixes at most and changes rarely. */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "routes.h"

void rt_init(struct rt_table *t)
{
	memset(t, 0, sizeof(*t));
}

void rt_free(struct rt_table *t)
{
	free(t->r);
	rt_init(t);
}

static bool key_eq(const struct rt_key *a, const struct rt_key *b)
{
	return a->vni == b->vni && a->ip_be == b->ip_be && a->plen == b->plen;
}

bool rt_overlap(const struct rt_key *a, const struct rt_key *b)
{
	uint8_t plen = a->plen < b->plen ? a->plen : b->plen;
	uint32_t mask = plen ? htonl(~0u << (32 - plen)) : 0;

	return a->vni == b->vni && (a->ip_be & mask) == (b->ip_be & mask);
}

const struct route *rt_find(const struct rt_table *t, const char *origin, const struct rt_key *k)
{
	for (int i = 0; i < t->n; i++)
		if (key_eq(&t->r[i].key, k) && !strcmp(t->r[i].origin, origin))
			return &t->r[i];
	return NULL;
}

static struct route *slot(struct rt_table *t, const char *origin, const struct rt_key *k)
{
	struct route *r = (struct route *)rt_find(t, origin, k);

	if (r)
		return r;
	if (t->n == t->cap) {
		int cap = t->cap ? t->cap * 2 : 64;
		struct route *nr = realloc(t->r, sizeof(*nr) * cap);

		if (!nr)
			return NULL;
		t->r = nr;
		t->cap = cap;
	}
	r = &t->r[t->n++];
	memset(r, 0, sizeof(*r));
	r->key = *k;
	strncpy(r->origin, origin, RT_ORIGIN_MAX - 1);
	r->state = RT_WITHDRAWN;
	return r;
}

static void drop(struct rt_table *t, int i)
{
	t->r[i] = t->r[--t->n];
}

enum rt_result rt_announce(struct rt_table *t, const char *origin, const struct rt_key *k,
			   uint64_t version, uint64_t now_ms, rt_policy pol, void *arg,
			   const struct route **other)
{
	const struct route *cur = rt_find(t, origin, k);
	struct route *r;

	if (cur && version <= cur->version) {
		if (cur->state == RT_STALE && version == cur->version) {
			/* the origin is back and still has it: fresh again */
			r = (struct route *)cur;
			r->state = RT_ACTIVE;
			r->seen_in_sync = true;
			return RT_APPLIED;
		}
		if (cur->state != RT_WITHDRAWN)
			((struct route *)cur)->seen_in_sync = true;
		return RT_IGNORED;
	}
	if (pol && !pol(origin, k, arg))
		return RT_REFUSED;
	for (int i = 0; i < t->n; i++) {
		const struct route *o = &t->r[i];

		if (strcmp(o->origin, origin) && rt_forwarding(o) && rt_overlap(&o->key, k)) {
			if (other)
				*other = o;
			return RT_CONFLICT;
		}
	}
	r = slot(t, origin, k);
	if (!r)
		return RT_REFUSED;
	r->version = version;
	r->state = RT_ACTIVE;
	r->since_ms = now_ms;
	r->expires_ms = 0;
	r->seen_in_sync = true;
	return RT_APPLIED;
}

enum rt_result rt_withdraw(struct rt_table *t, const char *origin, const struct rt_key *k,
			   uint64_t version, uint64_t now_ms, uint64_t tombstone_ms)
{
	const struct route *cur = rt_find(t, origin, k);
	struct route *r;

	if (cur && version <= cur->version)
		return RT_IGNORED;
	r = slot(t, origin, k);
	if (!r)
		return RT_REFUSED;
	bool was = cur && rt_forwarding(cur);

	r->version = version;
	r->state = RT_WITHDRAWN;
	r->since_ms = now_ms;
	r->expires_ms = now_ms + tombstone_ms;
	return was ? RT_APPLIED : RT_IGNORED;
}

int rt_origin_down(struct rt_table *t, const char *origin, uint64_t now_ms, uint64_t grace_ms)
{
	int n = 0;

	for (int i = 0; i < t->n; i++) {
		struct route *r = &t->r[i];

		if (r->state == RT_ACTIVE && !strcmp(r->origin, origin)) {
			r->state = RT_STALE;
			r->expires_ms = now_ms + grace_ms;
			n++;
		}
	}
	return n;
}

void rt_sync_begin(struct rt_table *t, const char *origin)
{
	for (int i = 0; i < t->n; i++)
		if (!strcmp(t->r[i].origin, origin))
			t->r[i].seen_in_sync = false;
}

/* Routes removed by our own decision (resync, grace over) leave no
 * tombstone: the origin's next full sync is authoritative and must be able
 * to bring them back at the same version. */
int rt_sync_end(struct rt_table *t, const char *origin)
{
	int n = 0;

	for (int i = 0; i < t->n;) {
		struct route *r = &t->r[i];

		if (!strcmp(r->origin, origin) && !r->seen_in_sync && rt_forwarding(r)) {
			drop(t, i); /* the origin no longer has it */
			n++;
		} else {
			i++;
		}
	}
	return n;
}

int rt_expire(struct rt_table *t, uint64_t now_ms)
{
	int n = 0;

	for (int i = 0; i < t->n;) {
		struct route *r = &t->r[i];

		if (r->state == RT_STALE && now_ms >= r->expires_ms) {
			drop(t, i); /* grace over without a resync */
			n++;
		} else if (r->state == RT_WITHDRAWN && now_ms >= r->expires_ms) {
			drop(t, i);
		} else {
			i++;
		}
	}
	return n;
}
