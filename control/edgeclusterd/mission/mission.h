/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What mission.c (the reconciler, its work queue, start and stop),
 * mission_ops.c (the operations: apply, trigger, reverse, stateCheck, and
 * the commands they run) and nodes.c share. Internal to the missions
 * module; its public side is missions.h.
 */
#ifndef ECD_MISSION_H
#define ECD_MISSION_H

#include <jansson.h>
#include <stdbool.h>

#include <libwebsockets.h>

#include "driver.h"
#include "ecd.h"
#include "htab.h"
#include "missions.h"

#define RETRY_BASE_S  30 /* a failed apply is retried after 30 s, 60 s, ... */
#define RETRY_MAX_S   3600
#define STATE_MAX     1024 /* a state value, as the design says */
#define CHECK_OUT_MAX 4096

enum mission_op { OP_NONE, OP_TRIGGER, OP_APPLY, OP_REVERSE, OP_CHECK };
enum mission_timer { T_NONE, T_RETRY, T_TRIGGER, T_CHECK };
/* what a queued mission waits for (bits; a reconcile covers a check) */
enum { Q_RECONCILE = 1, Q_RETRY = 2, Q_CHECK = 4 };

/* One mission's runtime. */
struct mission_rt {
	struct ec_run *run;
	char name[EC_MISSION_NAME_MAX + 1];
	enum mission_op op;
	int step;
	const char *what; /* the step running, for messages */
	struct ctl_job *job;
	json_t *spec;	 /* the spec of the operation in flight */
	char *spec_text; /* and as stored (what the record keeps) */
	char uid[EC_UID_LEN + 1], digest[33];
	unsigned fails;
	bool dirty;	     /* changed while busy: reconcile when the operation ends */
	bool cached;	     /* state holds our key's stored value */
	bool recorded;	     /* this apply wrote "applying" already */
	unsigned state_said; /* mission_set_state() calls: did an operation say anything? */
	char *state;
	enum mission_timer timer;
	lws_sorted_usec_list_t sul;
	lws_dll2_t q; /* in run->queue while qflags says what is owed */
	unsigned qflags;
};

struct ec_run {
	struct ecd *d;
	struct lws_context *lws;
	struct ctl_exec *x; /* the daemon's runner (main's) */
	struct ec_drv dv;
	struct htab byname;	/* every struct mission_rt */
	lws_dll2_owner_t queue; /* missions to reconcile or check, in arrival order */
	lws_sorted_usec_list_t sul_work;
	bool work_armed;
	int grouped; /* open mission_group_begin()s that did open a group */
	struct {     /* nodes.c: the kubectl driver's nodes */
		lws_sorted_usec_list_t sul;
		struct ctl_job *job;
		json_t *all; /* of the first query, until the second one ends */
		char last_error[400];
		struct ec_nodes lists; /* what the EdgeCluster shows */
	} np;
};

/* ---- nodes.c: the kubectl driver's nodes and edge nodes, into run->np.lists ---- */
void nodes_start(struct ec_run *rn);
void nodes_stop(struct ec_run *rn);

/* ---- mission.c ---- */
void mission_reconcile(struct mission_rt *m, bool retry);
void mission_arm(struct mission_rt *m, enum mission_timer t, unsigned seconds);
void mission_disarm(struct mission_rt *m);
/* This cluster's key of the mission's state (written only when it changes). */
void mission_set_state(struct mission_rt *m, const char *value);
void mission_set_statef(struct mission_rt *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Write the applied record with m's uid, digest, spec_text and fails. */
void mission_put_record(struct mission_rt *m, const char *phase);
/* The operation is over: forget its spec; reconcile if something changed meanwhile. */
void mission_finish_op(struct mission_rt *m);
/* A group of store writes (repairable) around a callback's work. */
void mission_group_begin(struct ec_run *rn);
void mission_group_end(struct ec_run *rn);
unsigned mission_seconds_at(json_t *spec, const char *obj, const char *key, unsigned dflt);
char **mission_argv_at(json_t *spec, const char *obj, const char *key);
const char *mission_content_of(json_t *spec);

/* ---- mission_ops.c ---- */
/* Apply (after the trigger, if any) spec (spec_text as stored) of incarnation uid;
 * fails: failed applies of this digest so far. */
void mission_op_start(struct mission_rt *m, const char *uid, json_t *spec, const char *spec_text,
		      const char *digest, unsigned fails);
/* Reverse what record a says was applied. */
void mission_op_reverse(struct mission_rt *m, struct ec_applied *a);
/* Run the stateCheck now (if the mission has one; else its state is "applied"). */
void mission_op_check(struct mission_rt *m);

#endif
