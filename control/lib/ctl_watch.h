/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Kubernetes-style watches of one collection (ctl_watch.c): the open
 * watches, and a ring of the latest events so that a watch can start from
 * a resourceVersion a little in the past. An event is one line of JSON,
 * {"type":"ADDED"|"MODIFIED"|"DELETED","object":{...}}, serialized once and
 * copied to every watcher's buffer. A watcher's buffer is bounded: one that
 * falls further behind is ended (its client re-lists and watches again), so
 * a client that stops reading cannot grow the daemon's memory. A watch from
 * older than the ring holds gets one ERROR event (a Status 410 Expired) and
 * ends, as Kubernetes answers. No lws: the daemon's transport pulls a
 * watcher's bytes (ctl_watcher_next) when its wake function says there are
 * some.
 */
#ifndef CTL_WATCH_H
#define CTL_WATCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "ctl_k8s.h"

struct ctl_watch;
struct ctl_watcher;

/* ctl_watcher_next's answers, as ctl_http's stream_next takes them */
enum { CTL_WATCH_END = 0, CTL_WATCH_MORE = 1, CTL_WATCH_IDLE = 2 };

/* Watches of a collection whose changes up to revision since are not known
 * (a daemon's revision at start): watching from before it is Expired. ring:
 * the events kept for late starters; buf_max: the bytes a watcher may have
 * pending. NULL when out of memory. */
struct ctl_watch *ctl_watch_new(uint64_t since, size_t ring, size_t buf_max);
/* The open watchers are ended (each still freed by its owner). */
void ctl_watch_free(struct ctl_watch *w);

/* A change at revision rv (increasing): type "ADDED", "MODIFIED" or
 * "DELETED", object as it is now (for DELETED: as it was). Kept in the ring
 * and copied to every watcher whose start is older. 0, or -1 when out of
 * memory (then every watcher is ended: none may miss an event). */
int ctl_watch_event(struct ctl_watch *w, uint64_t rv, const char *type, json_t *object);
/* The latest revision an event was published at (or since). */
uint64_t ctl_watch_revision(const struct ctl_watch *w);

/* A watcher of the changes after from (from 0: from the latest revision;
 * a from ahead of it: events up to from are skipped when they come).
 * wake(arg) is called when bytes become pending for a watcher that answered
 * CTL_WATCH_IDLE, or when it has ended. A start older than the ring (or
 * than since) gives a watcher holding the ERROR event; *expired tells. NULL
 * when out of memory. */
struct ctl_watcher *ctl_watch_open(struct ctl_watch *w, uint64_t from, void (*wake)(void *arg),
				   void *arg, bool *expired);
/* The same, of the events of one object only: those whose object's
 * metadata.name is name (a fieldSelector metadata.name=NAME). */
struct ctl_watcher *ctl_watch_open_name(struct ctl_watch *w, uint64_t from, const char *name,
					void (*wake)(void *arg), void *arg, bool *expired);
/* The same, of the objects a labelSelector selects (sel NULL or empty: all;
 * copied): an object that comes into the selection by a change is ADDED
 * to this watcher, one that leaves it DELETED (carrying the object as it
 * is now), as Kubernetes' watches with a labelSelector answer. name NULL:
 * every name. */
struct ctl_watcher *ctl_watch_open_sel(struct ctl_watch *w, uint64_t from, const char *name,
				       const struct ctl_k8s_selector *sel, void (*wake)(void *arg),
				       void *arg, bool *expired);
/* For those changes the watch keeps every object's labels as of its last
 * event; an object that had none since the watch was made is made known with
 * this (its labels now; 0, or -1 when out of memory). Otherwise the first
 * change of an object is judged on its new labels alone. */
int ctl_watch_known(struct ctl_watch *w, json_t *object);
/* The oldest revision a watch can start from now (older: Expired). */
uint64_t ctl_watch_floor(const struct ctl_watch *w);
/* An event for this watcher alone, ahead of what the watch publishes after
 * it: the synthetic ADDED events of the current objects that a watch from
 * resourceVersion 0 starts with, as Kubernetes sends them (call right after
 * the open); an object its name or selector does not take is left out. Not held to buf_max: the
 * current state is as large as a list. 0, or -1 when out of memory. */
int ctl_watcher_add(struct ctl_watcher *wr, const char *type, json_t *object);
/* Move pending bytes to b (at most about max): CTL_WATCH_MORE (call again),
 * CTL_WATCH_IDLE (nothing pending now; wake comes when there is), or
 * CTL_WATCH_END (ended: expired, too far behind, or the watch freed). */
int ctl_watcher_next(struct ctl_watcher *wr, struct xg_buf *b, size_t max);
/* Why it ended: NULL while open, else "expired", "too far behind", "closed". */
const char *ctl_watcher_ended(const struct ctl_watcher *wr);
void ctl_watcher_free(struct ctl_watcher *wr);

#endif
