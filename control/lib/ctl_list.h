/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A Kubernetes List written as it is read: the envelope (apiVersion, kind
 * KINDList, metadata.resourceVersion), then the items one at a time from a
 * source (a store snapshot), so that a daemon holds one item and one chunk,
 * never the whole list. Its ctl_list_next is what ctl_http's stream_next
 * asks for. (Watch, the next step of list-then-watch, is not here yet.)
 */
#ifndef CTL_LIST_H
#define CTL_LIST_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

struct ctl_list_source {
	/* 1 and *item (a new reference; NULL: this one is skipped, e.g. by a
	 * selector), 0 at the end, -1 on an error (errmsg says which). */
	int (*next)(void *src, json_t **item);
	const char *(*errmsg)(void *src);
	/* At the end or when the list is freed, once. */
	void (*close)(void *src);
};

struct ctl_list;

/* NULL when out of memory (then src is closed). */
struct ctl_list *ctl_list_new(const char *api_version, const char *kind, uint64_t revision,
			      const struct ctl_list_source *source, void *src);
/* Append the next part to b: at least min bytes unless the list ends
 * first. 1: more to come; 0: that was the end; -1: it cannot be completed
 * (logged): the transport must cut the answer short. */
int ctl_list_next(struct ctl_list *l, struct xg_buf *b, size_t min);
void ctl_list_free(struct ctl_list *l);

#endif
