/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * edgeclusterd: what the daemon's parts share. One thread runs the lws event
 * loop and everything else from its callbacks, so nothing here is locked.
 */
#ifndef ECD_H
#define ECD_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "config.h"
#include "ctl_log.h"
#include "resource.h"
#include "store.h"

struct lws_context;
struct ec_tree;
struct ec_run;

struct ecd {
	struct ec_conf conf;
	struct ec_store store;
	struct lws_context *lws;
	volatile sig_atomic_t stop;
	json_t *self_labels;	    /* this cluster's labels as a JSON object */
	json_t *nodes, *edge_nodes; /* the kubectl driver's (nodes.c); NULL until known */
	uint64_t started_ms;

	/* ---- hooks between slice 2 (the tree) and slice 3 (missions); each may be NULL ---- */
	/* set by mission.c; called after a mission was written or deleted (API or tree sync) */
	void (*on_mission)(struct ecd *d, const char *name, bool deleted);
	/* set by uplink.c; called after this cluster's own state key of a mission changed,
	 * so that the report goes up the tree */
	void (*on_state)(struct ecd *d, const char *mission);
	/* slice 2: the tree's runtime (tree.h); NULL when the links are not running (unit tests) */
	struct ec_tree *tree;
	/* slice 3: missions applied here (mission.c); NULL when not running (unit tests) */
	struct ec_run *run;
};

/* ---- api.c: routing and handlers, no lws ---- */
enum ec_method { EC_GET, EC_POST, EC_PUT, EC_DELETE, EC_OTHER };

struct api_req {
	enum ec_method method;
	const char *method_name; /* as on the request line, for messages */
	const char *path;
	const char *query;	  /* "a=1&b=2", decoded by lws per argument; "" if none */
	const char *content_type; /* "" if absent */
	const char *body;	  /* NUL-terminated; NULL without a body */
	size_t body_len;
	const char *peer; /* for the log */
};

struct api_stream;

struct api_resp {
	int code;
	char *body; /* malloc'd */
	const char *content_type;
	const char *allow;	   /* 405: the methods that are served */
	struct api_stream *stream; /* instead of body: an answer written as it is read (lists) */
};

/* Paths answered without a token (liveness). */
bool api_is_public(const char *path);
void api_handle(struct ecd *d, const struct api_req *rq, struct api_resp *rs);
/* Fill rs with a Status error (also used by the transport for 401/411/413). */
void api_error(struct api_resp *rs, int code, const char *reason, const char *msg,
	       const char *field);
/* Ensure this cluster's own EdgeCluster row exists and matches the config. */
int api_self_sync(struct ecd *d);

/* api.c's helpers for api_list.c */
int api_respond(struct api_resp *rs, int code, json_t *v);
int api_errorf(struct api_resp *rs, int code, const char *reason, const char *field,
	       const char *fmt, ...) __attribute__((format(printf, 5, 6)));
int api_store_failed(struct ecd *d, struct api_resp *rs, const char *what);
const char *api_query(const char *q, const char *key, char *buf, size_t len);
int api_row_from_in(struct ec_row *r, const struct ec_mission_in *in);

/* ---- api_list.c: lists streamed from a snapshot, MissionList creates ---- */
#define API_LIST_ITEMS_MAX 5000 /* missions in one MissionList POST */
/* GET of the missions collection: rs->stream on success. */
int api_mission_list(struct ecd *d, const struct api_req *rq, struct api_resp *rs);
/* POST of a MissionList (body parsed): all items or none, one transaction. */
int api_mission_create_list(struct ecd *d, const struct api_req *rq, json_t *body,
			    struct api_resp *rs);
/* Append the next part of a streamed answer to b: at least min bytes unless
 * the answer ends first. 1: more to come; 0: that was the end; -1: it cannot
 * be completed (logged): the transport must cut the connection so that the
 * client sees a truncated answer, not a short list. */
int api_stream_next(struct api_stream *st, struct xg_buf *b, size_t min);
void api_stream_free(struct api_stream *st);

/* ---- http.c: the lws side ---- */
int http_start(struct ecd *d);
void http_stop(struct ecd *d);

/* ---- mission.c: applying missions here through the driver ---- */
struct ec_exec;
/* After http_start (it needs the lws context): sets d->on_mission, kills
 * commands a crashed run left behind, reconciles every stored mission.
 * x: the daemon's command runner. */
int mission_start(struct ecd *d, struct ec_exec *x);
/* Before the runner is freed (that stops running commands: what they were
 * applying is applied again at the next start); clears d->on_mission. */
void mission_stop(struct ecd *d);

#endif
