/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nodeagentd's SQLite store (WAL, synchronous=NORMAL: it survives a crash
 * of the daemon, which is what adoption after kill -9 needs; a power loss
 * takes the node's pods with it anyway). It holds the pods, the sessions,
 * the node's revision and its credential. A write that reports a change
 * to the core bumps the revision in the same transaction, so the
 * revision on disk always counts exactly the changes on disk.
 */
#ifndef NA_STORE_H
#define NA_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl_db.h"
#include "na_model.h"

/* Checkpoints (the WAL copied into the database: two fdatasyncs, 5-20 ms
 * on a VM's disk, and a third on the write after) are kept off the writes
 * that report a change, which would stall an open behind them: a commit
 * checkpoints only past NA_WAL_BACKSTOP frames (SQLite's own is 1,000,
 * about every 65 opens); the agent calls na_store_checkpoint when the node
 * is quiet. */
#define NA_WAL_BACKSTOP	 10000 /* frames (4 KB each) */
#define NA_WAL_QUIET_MIN 64    /* na_store_checkpoint leaves fewer alone */

struct na_store {
	struct ctl_db sql;
	int64_t rev;
	int wal_frames; /* in the WAL after the last commit */
	char err[256];
};

int na_store_open(struct na_store *s, const char *path, char *err, size_t errlen);
void na_store_close(struct na_store *s);
const char *na_store_errmsg(struct na_store *s);

/* The WAL into the database and started again (the write that restarts it
 * made here too): 1, 0 with fewer than NA_WAL_QUIET_MIN frames to copy, or
 * -1 (na_store_errmsg). */
int na_store_checkpoint(struct na_store *s);

/* The node's revision: what the last reported change was stamped with. */
int64_t na_store_revision(const struct na_store *s);
/* Small values: "credential", "node". 0, 1 (absent: buf ""), -1. */
int na_store_meta_get(struct na_store *s, const char *key, char *buf, size_t len);
int na_store_meta_put(struct na_store *s, const char *key, const char *val);

/* Write a pod (insert or replace); with bump the revision goes up by one
 * in the same transaction and *rev gets it. 0 or -1 (nothing changed).
 * Without p->spec the stored spec stays (a new pod needs one). */
int na_store_pod_put(struct na_store *s, const struct na_pod *p, bool bump, int64_t *rev);
int na_store_pod_del(struct na_store *s, const char *id);
int na_store_sess_put(struct na_store *s, const struct na_sess *x, bool bump, int64_t *rev);
int na_store_sess_del(struct na_store *s, const char *id);

/* Every pod, then every session, handed over (the callee owns the
 * record's allocations: p->spec, x->data). */
typedef int (*na_pod_fn)(void *arg, struct na_pod *p);
typedef int (*na_sess_fn)(void *arg, struct na_sess *x);
int na_store_load(struct na_store *s, na_pod_fn pf, na_sess_fn sf, void *arg);

/* A change reported without a row (a command refused): the revision + 1. */
int na_store_bump(struct na_store *s, int64_t *rev);

/* A node that lost its pods (its store was not there): revision 0 and
 * nothing else. */
int na_store_reset(struct na_store *s);

#endif
