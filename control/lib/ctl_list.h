/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A Kubernetes List written as it is read: the envelope (apiVersion, kind
 * KINDList), the items one at a time from a source (a store snapshot), then
 * metadata (resourceVersion, and continue when a limit cut the list), so
 * that a daemon holds one item and one chunk, never the whole list. Its
 * ctl_list_next is what ctl_http's stream_next asks for.
 *
 * The list options every daemon serves the same way (ctl_list_opts_parse):
 * labelSelector, fieldSelector metadata.name, and limit/continue pages. A
 * page ends after limit items; its metadata.continue is an opaque token
 * (base64url of {"v","rv","start"}, as Kubernetes' own) naming the last
 * key given, and the next page lists the items after it. A source gives
 * its items in ascending order of their key, "NAMESPACE/NAME" (or "NAME"
 * for an object without a namespace). A later page is read from the state
 * as it is then, not as it was at the first page (no snapshot is kept
 * between requests): an object created meanwhile before the cursor is not
 * in it, one changed after it is seen as it is now. A cut page carries
 * remainingItemCount when the source can say how many items it has left
 * (its remaining hook) and no selector is set, as Kubernetes sends it.
 */
#ifndef CTL_LIST_H
#define CTL_LIST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "ctl_k8s.h"

struct ctl_list_source {
	/* 1 and *item (a new reference; NULL: this one is skipped, e.g. by a
	 * selector), 0 at the end, -1 on an error (errmsg says which). */
	int (*next)(void *src, json_t **item);
	const char *(*errmsg)(void *src);
	/* At the end or when the list is freed, once. */
	void (*close)(void *src);
	/* May be NULL: how many items next has not given yet, if that is known
	 * without reading them (an array in memory), else -1. */
	long long (*remaining)(void *src);
};

#define CTL_LIST_KEY_MAX 320 /* NAMESPACE (63) '/' NAME (253), NUL */

struct ctl_list_opts {
	size_t limit;		      /* 0: every item */
	char start[CTL_LIST_KEY_MAX]; /* from a continue token: the items after this key */
	struct ctl_k8s_selector sel;  /* labelSelector (n 0: any) */
	char name[254];		      /* fieldSelector metadata.name ("": any) */
};

/* The list options from a request's query values (NULL: absent): limit,
 * continue, labelSelector, fieldSelector. since: the revision the daemon's
 * state begins at (a token from before it, e.g. before a restart, is too
 * old); now: its revision. 0, or the HTTP code with err (the message) and
 * *param (the query parameter at fault): 400 for a malformed value (a
 * continue token this server did not give), 410 for a token too old, as
 * Kubernetes answers. */
int ctl_list_opts_parse(struct ctl_list_opts *o, const char *limit, const char *cont,
			const char *labels, const char *fields, uint64_t since, uint64_t now,
			char *err, size_t errlen, const char **param);
/* Does an item pass o's selectors (labelSelector, fieldSelector)? */
bool ctl_list_opts_match(const struct ctl_list_opts *o, json_t *item);

struct ctl_list;

/* NULL when out of memory (then src is closed). opts: NULL for every item
 * (copied: the caller's may go). */
struct ctl_list *ctl_list_new_opts(const char *api_version, const char *kind, uint64_t revision,
				   const struct ctl_list_opts *opts,
				   const struct ctl_list_source *source, void *src);
struct ctl_list *ctl_list_new(const char *api_version, const char *kind, uint64_t revision,
			      const struct ctl_list_source *source, void *src);
/* Append the next part to b: at least min bytes unless the list ends
 * first. 1: more to come; 0: that was the end; -1: it cannot be completed
 * (logged): the transport must cut the answer short. */
int ctl_list_next(struct ctl_list *l, struct xg_buf *b, size_t min);
void ctl_list_free(struct ctl_list *l);

#endif
