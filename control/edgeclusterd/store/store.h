/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * edgeclusterd's state in SQLite (WAL, synchronous=FULL): missions, clusters
 * (this one and its descendants) and the revision counter that
 * every write bumps and that becomes the written object's resourceVersion.
 *
 * Every write below is one transaction (BEGIN IMMEDIATE .. COMMIT) and the
 * API acknowledges only after COMMIT returned: with synchronous=FULL the
 * WAL is fsync'ed by then, so an acknowledged write survives kill -9 and
 * power loss; an interrupted one is rolled back as a whole on next open.
 *
 * Results: 0 done, EC_ST_NOTFOUND, EC_ST_EXISTS, EC_ST_CONFLICT (the stored
 * resourceVersion is not the expected one), -1 database error (nothing was
 * written; the message is in ec_store_errmsg).
 */
#ifndef ECD_STORE_H
#define ECD_STORE_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl_db.h"
#include "resource.h"

enum { EC_ST_NOTFOUND = 1, EC_ST_EXISTS = 2, EC_ST_CONFLICT = 3 };
enum ec_table { EC_T_MISSIONS, EC_T_CLUSTERS };
#define EC_STORE_HOOKS 4 /* revision listeners: the hub, the API's watches */

/* A mission's state map as JSON text, from its rows in table mstate (one per
 * key, in key order), in a SELECT ... FROM missions. */
#define EC_MISSION_STATE_SQL                                                                       \
	"COALESCE((SELECT json_group_object(path, value) FROM mstate"                              \
	" WHERE mstate.mission=missions.name), '{}')"
/* A mission row's columns as every read returns them (ROW_COLS' order). */
#define EC_MISSION_COLS                                                                            \
	"name, uid, rv, created, labels, spec, " EC_MISSION_STATE_SQL ", annotations"

/* Moved, not copied: two copies in use would each keep statements of the
 * same connection, and ec_store_close finalizes only its own. */
struct ec_store {
	union {
		struct ctl_db sql; /* the connection, its kept statements, the open group */
		/* ctl_db's first members by their own names (its common initial
		 * sequence): what the store's unit test reads of the open group */
		struct {
			sqlite3 *db;
			int tx_depth;
			bool tx_normal;
		};
	};
	/* the outbox's counter (tree_store.c): handed out from memory, written
	 * to table meta once per commit rather than once per entry */
	int64_t outbox_seq;
	bool outbox_loaded, outbox_dirty;
	struct { /* ec_store_on_revision */
		void (*fn)(void *arg);
		void *arg;
	} on_revision[EC_STORE_HOOKS];
	/* The store on etcd (store_etcd.h): at the end of the outermost group,
	 * before COMMIT (rc 0) or ROLLBACK, what the group changed goes to etcd
	 * first; returns the rc to go on with. NULL: SQLite alone. */
	int (*commit_hook)(void *arg, int rc);
	void *commit_arg;
	/* why the hook refused the last commit (ec_store_errmsg says it), and
	 * whether etcd may still have applied it (the outcome is unknown) */
	char hook_err[320];
	bool maybe_applied;
};

int ec_store_open(struct ec_store *s, const char *path, char *err, size_t errlen);
void ec_store_close(struct ec_store *s);
const char *ec_store_errmsg(struct ec_store *s);
/* The last write failed in etcd without an answer: it may still be applied. */
bool ec_store_maybe_applied(const struct ec_store *s);
/* The revision listeners, for a writer that bypasses the groups (store_etcd.c
 * applying what the leader wrote). */
void ec_store_notify(struct ec_store *s);
/* The current revision (0 for a new database). */
int ec_store_revision(struct ec_store *s, uint64_t *rev);
/* fn(arg) at every write that bumps the revision, whoever made it (this
 * process's API or sync); fn NULL: arg's listener is removed. Called inside
 * the write: fn must not touch the store (it schedules what reads it).
 * -1 when EC_STORE_HOOKS listen already. */
int ec_store_on_revision(struct ec_store *s, void (*fn)(void *arg), void *arg);

/* ---- groups of writes ----
 * Every write function below may also run between ec_store_tx_begin() and
 * ec_store_tx_end(): then all of them commit together (one fsync instead of
 * one each) and a failing one undoes only itself (a savepoint). Pairs nest.
 * Flags of the outermost begin count: EC_TX_REPAIRABLE commits with
 * synchronous=NORMAL (survives a crash of the process, not always a power
 * loss) -- only for what the parent sends again or what is re-derived. */
enum { EC_TX_REPAIRABLE = 1 };
int ec_store_tx_begin(struct ec_store *s, unsigned flags);
/* rc 0 commits (the outermost pair) or releases (a nested one); nonzero rolls
 * back to the matching begin. Returns rc, or -1 when a commit failed. */
int ec_store_tx_end(struct ec_store *s, int rc);
/* For a write of one statement (atomic on its own: a failing one undoes
 * itself): inside a group it joins it without a savepoint of its own (two
 * statements fewer per write; a reconcile turn makes a few per mission),
 * outside one it opens a transaction. Returns 1 (opened), 0 (joined) or -1;
 * pass that to ec_store_one_end with the write's result. */
int ec_store_one_begin(struct ec_store *s, unsigned flags);
int ec_store_one_end(struct ec_store *s, int opened, int rc);

/* ---- statements, for the stores of the other parts (tree_store.c, tree_sync.c) ---- */
/* The kept statement of sql (a string that lives as long as the store: a
 * literal), prepared on first use; NULL if it does not prepare. Give it back
 * with ec_store_release once its rows are read: that resets it (its column
 * texts go) and clears its bindings. */
sqlite3_stmt *ec_store_stmt(struct ec_store *s, const char *sql);
void ec_store_release(struct ec_store *s, sqlite3_stmt *st); /* st may be NULL */
/* The next outbox seq, inside a transaction (group) only: it is written to
 * table meta when the outermost group commits; -1 outside one or on an error.
 * A rolled-back seq is never handed out again (seqs only need to grow). */
int64_t ec_store_outbox_next(struct ec_store *s);
/* Bump the revision counter and read the new value. */
int ec_store_bump(struct ec_store *s, uint64_t *rev);
/* Fill out (a struct of the caller's) from the row st is on; 0 or -1. */
typedef int (*ec_from_fn)(sqlite3_stmt *st, void *out);
/* Bind name to ?1 and step st once: from()'s result on a row, else
 * EC_ST_NOTFOUND or -1 (also when st is NULL: its prepare failed).
 * Releases st. */
int ec_store_one(struct ec_store *s, sqlite3_stmt *st, const char *name, ec_from_fn from,
		 void *out);
/* Step st through its rows, row(arg, st) for each; the first nonzero result
 * stops it and is the result. 0 at the end, -1 on an error (also when st is
 * NULL). Releases st. */
typedef int (*ec_each_fn)(void *arg, sqlite3_stmt *st);
int ec_store_each(struct ec_store *s, sqlite3_stmt *st, ec_each_fn row, void *arg);

/* Read one row; the row owns its strings (ec_row_free). */
int ec_store_get(struct ec_store *s, enum ec_table t, const char *name, struct ec_row *r);
/* A mission's row with state {}: for readers that do not need its state
 * (putting the map together is a query over its rows). */
int ec_store_mission_bare(struct ec_store *s, const char *name, struct ec_row *r);
/* Every row in name order; cb returns nonzero to stop (then that is the result). */
typedef int (*ec_row_cb)(void *arg, struct ec_row *r);
int ec_store_list(struct ec_store *s, enum ec_table t, ec_row_cb cb, void *arg);

/* A snapshot of every mission in name order, for a list written as it is
 * read (store_snapshot.c): the revision and the rows as of one commit,
 * while the store's writes go on. NULL with err on failure. */
struct ec_snapshot;
struct ec_snapshot *ec_store_snapshot_missions(struct ec_store *s, uint64_t *rev, char *err,
					       size_t errlen);
/* 1 and the next row in r (its texts borrowed until the next call: not
 * for ec_row_free), 0 at the end, -1 on an error (ec_snapshot_errmsg). */
int ec_snapshot_next(struct ec_snapshot *sn, struct ec_row *r);
const char *ec_snapshot_errmsg(const struct ec_snapshot *sn);
void ec_snapshot_close(struct ec_snapshot *sn); /* NULL: nothing */

/* Insert r (name, uid, created, labels, spec, state); sets r->rv. */
int ec_store_create(struct ec_store *s, enum ec_table t, struct ec_row *r);
/* Replace labels and spec (state, uid and created are kept) if the stored
 * rv is expect_rv; sets r->rv and fills r's uid/created from the store. */
int ec_store_replace(struct ec_store *s, enum ec_table t, struct ec_row *r, uint64_t expect_rv);
/* Delete if expect_rv is 0 or the stored rv; the deleted row goes to *old. */
int ec_store_delete(struct ec_store *s, enum ec_table t, const char *name, uint64_t expect_rv,
		    struct ec_row *old);

/* ---- the missions module: this cluster's state key, and what it applied ---- */

/* Set (value NULL: remove) one key of a mission's state map, in one
 * transaction (or as one statement of a group). It does NOT bump the revision or the mission's
 * resourceVersion: state is a report, not a change of the object, and a
 * client that read the mission must still be able to replace it with that
 * resourceVersion while state checks keep reporting. EC_ST_NOTFOUND if the
 * mission is gone. */
int ec_store_state_put(struct ec_store *s, const char *mission, const char *key, const char *value);
/* One key of a mission's map into *value (malloc'd): 0, EC_ST_NOTFOUND (no
 * such key, or mission) or -1. */
int ec_store_state_get(struct ec_store *s, const char *mission, const char *key, char **value);
/* The same without the check that the mission exists and without a group of
 * its own (a caller's group, or autocommit): one statement. */
int ec_store_state_key(struct ec_store *s, const char *mission, const char *key, const char *value);
/* 0 if mission NAME exists, EC_ST_NOTFOUND, or -1. */
int ec_store_mission_exists(struct ec_store *s, const char *name);

/* What this cluster applied for a mission, kept apart from the mission row
 * so that a deleted mission can still be reversed, and a restart knows what
 * is already applied (nothing runs twice). phase: "applying" is written
 * before the first command runs, so a crash mid-apply applies again. */
struct ec_applied {
	char name[EC_MISSION_NAME_MAX + 1];
	char uid[EC_UID_LEN + 1];
	char digest[33];	   /* of uid and spec: what "the same spec" means */
	char phase[16];		   /* applying | applied | failed | reversing */
	char *spec;		   /* the spec applied (JSON): the reverse runs from it */
	int pgid;		   /* the running command's process group, 0 if none */
	unsigned long long pstart; /* its start time, to tell a reused pid apart */
	unsigned fails;		   /* failed applies in a row (retry backoff) */
};
void ec_applied_free(struct ec_applied *a);
int ec_store_applied_get(struct ec_store *s, const char *name, struct ec_applied *a);
/* Insert or replace the whole record (one statement, one transaction). */
int ec_store_applied_put(struct ec_store *s, const struct ec_applied *a);
int ec_store_applied_proc(struct ec_store *s, const char *name, int pgid,
			  unsigned long long pstart);
int ec_store_applied_delete(struct ec_store *s, const char *name);
typedef int (*ec_applied_cb)(void *arg, struct ec_applied *a);
int ec_store_applied_list(struct ec_store *s, ec_applied_cb cb, void *arg);

#endif
