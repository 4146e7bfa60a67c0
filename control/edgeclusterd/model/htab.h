/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A small hash table of pointers found by a string key that lives inside
 * each element (open addressing, linear probing, FNV-1a). mission.c finds
 * a mission's runtime by name with it once per reconcile: a list walk was
 * O(missions) per lookup, a quarter of a leaf's CPU time at 1000 missions.
 * Not thread-safe; elements are owned by the caller.
 */
#ifndef ECD_HTAB_H
#define ECD_HTAB_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct htab {
	void **slot;			   /* NULL: never used; &htab_gone: deleted */
	size_t cap;			   /* a power of 2, or 0 before the first add */
	size_t used;			   /* slots not NULL (live and deleted) */
	size_t live;			   /* elements */
	const char *(*key)(const void *e); /* the element's key */
};

static char htab_gone; /* the mark of a deleted slot: probing goes on past it */

static inline uint64_t htab_hash(const char *k)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*k)
		h = (h ^ (unsigned char)*k++) * 0x100000001b3ull;
	return h;
}

/* The slot holding key, or the empty one where it would go (NULL when the
 * table has no slots yet). */
static inline void **htab_where(struct htab *t, const char *key)
{
	void **tomb = NULL;

	if (!t->cap)
		return NULL;
	for (size_t i = htab_hash(key) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		void *e = t->slot[i];

		if (!e)
			return tomb ? tomb : &t->slot[i];
		if (e == &htab_gone) {
			if (!tomb)
				tomb = &t->slot[i];
		} else if (!strcmp(t->key(e), key)) {
			return &t->slot[i];
		}
	}
}

static inline void *htab_find(struct htab *t, const char *key)
{
	void **s = htab_where(t, key);

	return s && *s != &htab_gone ? *s : NULL;
}

/* Rehash into cap slots (deleted marks are dropped): 0, or -1 out of memory. */
static inline int htab_resize(struct htab *t, size_t cap)
{
	struct htab n = {calloc(cap, sizeof(void *)), cap, 0, 0, t->key};

	if (!n.slot)
		return -1;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slot[i] && t->slot[i] != &htab_gone) {
			*htab_where(&n, t->key(t->slot[i])) = t->slot[i];
			n.used++;
			n.live++;
		}
	free(t->slot);
	*t = n;
	return 0;
}

/* Add e, whose key is not in the table yet: 0, or -1 out of memory. */
static inline int htab_add(struct htab *t, void *e)
{
	void **s;

	/* at most 3/4 of the slots used, deleted ones included: probes stay short */
	if ((t->used + 1) * 4 > t->cap * 3 &&
	    htab_resize(t, t->live * 2 + 2 > t->cap / 2 ? (t->cap ? t->cap * 2 : 16) : t->cap))
		return -1;
	s = htab_where(t, t->key(e));
	if (!*s)
		t->used++;
	*s = e;
	t->live++;
	return 0;
}

static inline void htab_del(struct htab *t, const void *e)
{
	void **s = htab_where(t, t->key(e));

	if (s && *s == e) {
		*s = &htab_gone;
		t->live--;
	}
}

/* Each element: for (size_t i = 0; (e = htab_next(t, &i));) -- no add or del meanwhile. */
static inline void *htab_next(struct htab *t, size_t *i)
{
	while (*i < t->cap) {
		void *e = t->slot[(*i)++];

		if (e && e != &htab_gone)
			return e;
	}
	return NULL;
}

static inline void htab_free(struct htab *t)
{
	free(t->slot);
	t->slot = NULL;
	t->cap = t->used = t->live = 0;
}

#endif
