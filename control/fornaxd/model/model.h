/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fornaxd's model: pure functions, no I/O and no clock of their own (the
 * caller passes the time), so the unit tests drive every rule directly.
 *  - Application and ApplicationSession: JSON in, validated into C with the
 *    field path of the first error (proto/fornax.md section 1);
 *  - Kubernetes quantities (cpu in millicores, memory in bytes);
 *  - the scaling policy: how many standby pods to add or remove this round;
 *  - the session state machine: legal transitions, open timeout, close grace;
 *  - the node revision rules (proto/fornax.md "Revisions");
 *  - the node link's Pod and Session objects, checked field by field.
 */
#ifndef FX_MODEL_H
#define FX_MODEL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl_token.h"

#define FX_GROUP	    "core.fornax-serverless.centaurusinfra.io"
#define FX_API_VERSION	    FX_GROUP "/v1"
#define FX_NAME_MAX	    253				  /* object names: DNS-1123 subdomains */
#define FX_NS_MAX	    63				  /* namespaces: DNS-1123 labels */
#define FX_ID_MAX	    (FX_NS_MAX + 1 + FX_NAME_MAX) /* "NS/NAME" */
#define FX_SESSION_DATA_MAX (16 * 1024)			  /* decoded bytes */
#define FX_ANNOTATIONS_MAX                                                                         \
	(256u * 1024)	       /* an object's annotations, keys and values (as Kubernetes) */
#define FX_FINAL_KEEP_MS 60000 /* a Closed/Timeout session stays readable */

/* A refusal: the HTTP code, the field path, a message quoting the value. */
struct fx_err {
	int code; /* 400, 404, 409, 422, 500 */
	char field[160];
	char msg[400];
};
int fx_errf(struct fx_err *e, int code, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ---- quantities ---- */
/* "100m", "0.5", "2" -> millicores; "64Mi", "1G", "1e3", "512" -> bytes.
 * -1 if s is not a quantity (or is negative, or overflows). */
int64_t fx_cpu_milli(const char *s);
int64_t fx_mem_bytes(const char *s);

/* ---- Application ---- */
enum fx_policy_type { FX_IDLE_NUMBER, FX_IDLE_PERCENT };

struct fx_policy {
	int min, max, burst;
	enum fx_policy_type type;
	int high, low; /* of the type's threshold */
};

struct fx_app_spec {
	struct fx_policy policy;
	int64_t cpu_req, mem_req; /* requests: what placement counts */
	bool session_service;
	int form; /* FX_FORM_ANNOTATION: 1 or 2; 0: the cluster's [Nodes] EndpointForm */
};
/* An application's endpoint form, when it is not the cluster's */
#define FX_FORM_ANNOTATION "fornax.xgate.io/endpoint-form"

/* Validate an Application as sent (POST, PUT): metadata (name, namespace
 * ns_path if given: the path's), labels, spec. 0, or -1 with e filled. */
int fx_app_validate(json_t *obj, const char *ns_path, struct fx_app_spec *out, struct fx_err *e);
/* The pod's ports: those of all the containers of a valid spec, in order
 * (a new array). */
json_t *fx_app_ports(json_t *spec);
/* A PUT may change spec.scalingPolicy and metadata.labels only: -1 (422 on
 * the field) if spec differs elsewhere from old's. */
int fx_app_update_check(json_t *old_spec, json_t *new_spec, struct fx_err *e);
/* The policy of a (validated) spec.scalingPolicy, defaults filled. */
int fx_policy_parse(json_t *sp, struct fx_policy *p, struct fx_err *e);

/* ---- the scaling policy ---- */
struct fx_pool_counts {
	int pending;   /* pods asked for, not standby yet */
	int idle;      /* standby, no session */
	int allocated; /* holding a session */
	int pending_sessions;
};
struct fx_scale {
	int desired; /* the pool's total (pending + idle + allocated) after this round */
	int create;  /* pods to create this round (<= burst) */
	int remove;  /* unallocated pods to remove this round (<= burst) */
};
/*
 * Idle capacity is what is not allocated (pending + idle) less the
 * sessions waiting for a pod. idle_session_number keeps it within
 * [low, high]; idle_session_percent keeps it within [low%, high%] of the
 * allocated pods (rounded up and down: the original compared the count
 * with the raw percentage). The total is then clamped to [min, max], and a
 * round changes at most burst pods. Only unallocated pods are removed.
 */
struct fx_scale fx_scale_round(const struct fx_policy *p, const struct fx_pool_counts *c);

/* ---- ApplicationSession ---- */
struct fx_session_spec {
	char app[FX_NAME_MAX + 1];
	unsigned open_timeout_s; /* default 10, 1..3600 */
	unsigned close_grace_s;	 /* default 60, 0..3600 */
	bool kill_on_close;	 /* default true */
};
int fx_session_validate(json_t *obj, const char *ns_path, struct fx_session_spec *out,
			struct fx_err *e);

enum fx_sess_state {
	FX_S_PENDING,
	FX_S_STARTING,
	FX_S_AVAILABLE,
	FX_S_INUSE,
	FX_S_CLOSING,
	FX_S_CLOSED,
	FX_S_TIMEOUT,
	FX_S_COUNT
};
const char *fx_sess_state_name(enum fx_sess_state s);
/* -1 if not a state name */
int fx_sess_state_parse(const char *s);
bool fx_sess_final(enum fx_sess_state s);
/* Is from -> to a legal change (a same-state report is not a change)? */
bool fx_sess_can(enum fx_sess_state from, enum fx_sess_state to);

/* The session's clock: what the state machine needs to decide by itself. */
struct fx_sess_clock {
	uint64_t created_ms, closing_ms, final_ms;
	unsigned open_timeout_s, close_grace_s;
};
/* Slack after the close grace before the core stops waiting for the node. */
#define FX_CLOSE_SLACK_MS 5000
enum fx_sess_due {
	FX_DUE_NONE,
	FX_DUE_TIMEOUT, /* Pending/Starting past openTimeoutSeconds since creation */
	FX_DUE_CLOSED,	/* Closing past the grace period (+ slack): Closed without the node */
	FX_DUE_FORGET,	/* final for FX_FINAL_KEEP_MS: the object goes */
};
/* What is due at now for a session in state s; *next_ms (if not NULL) is
 * when the next thing becomes due (UINT64_MAX: never). */
enum fx_sess_due fx_sess_due(enum fx_sess_state s, const struct fx_sess_clock *c, uint64_t now,
			     uint64_t *next_ms);

/* ---- node revisions ---- */
struct fx_rev {
	int64_t cur;	    /* -1: nothing known of the node (a restarted core) */
	int64_t reg_rev;    /* the revision its last NodeRegister carried */
	bool awaiting_full; /* a NodeFullSync is out: deltas are dropped until the NodeState */
	bool low_ok;	    /* the full sync after a register may go below cur (a lost store) */
};
enum fx_rev_verdict { FX_REV_APPLY, FX_REV_DROP, FX_REV_FULLSYNC };
void fx_rev_register(struct fx_rev *r, int64_t rev); /* a NodeRegister: a full sync follows */
/* A PodState/SessionState at rev: apply (cur moves), drop, or ask for a
 * full sync (the caller sends NodeFullSync; awaiting_full is set). */
enum fx_rev_verdict fx_rev_delta(struct fx_rev *r, int64_t rev);
/* A NodeState/NodeReady at rev: apply (cur = rev) or drop. */
enum fx_rev_verdict fx_rev_full(struct fx_rev *r, int64_t rev);

/* ---- the node link's objects ---- */
enum fx_pod_state {
	FX_P_CREATING,
	FX_P_STANDBY,
	FX_P_ACTIVATING,
	FX_P_RUNNING,
	FX_P_EVACUATING,
	FX_P_TERMINATING,
	FX_P_TERMINATED,
	FX_P_FAILED,
	FX_P_COUNT
};
const char *fx_pod_state_name(enum fx_pod_state s);

struct fx_link_pod {
	const char *id, *app; /* "NS/NAME", borrowed from the message */
	enum fx_pod_state state;
	const char *ip, *reason, *message; /* "" if absent */
};
struct fx_link_sess {
	const char *id, *pod;
	enum fx_sess_state state;
	json_t *endpoints; /* borrowed; an array (maybe empty) */
	const char *reason;
	const char *owner; /* FX_OWNER_LEN hex digits, or "" (a node of an older release) */
	int64_t client_sessions;
};
/* An ingress host's entry (IngressState, NodeState.ingress): Open or Closed. */
struct fx_link_ing {
	const char *id, *pod;
	bool open;
	json_t *endpoints; /* borrowed; an array when open */
	const char *reason;
};
/* A session's owner as the node keeps it (proto/fornax.md "Session owner"):
 * BLAKE2b-128 of a fixed label and the creating token's digest, in hex.
 * One-way, so the node holds nothing it could authenticate with; the same
 * for every core and across restarts, so a core that rebuilds the session
 * from the node's report counts it for the same client. */
#define FX_OWNER_BYTES 16
#define FX_OWNER_LEN   (2 * FX_OWNER_BYTES)
void fx_owner_id(const unsigned char digest[CTL_TOKEN_HASH_LEN], char out[FX_OWNER_LEN + 1]);
/* An owner id as the link carries it: NULL, or what is wrong. */
const char *fx_check_owner(const char *s);

/* Check one object of a message; field is the path of the object in the
 * message ("pod", "pods[3]"): e->field names the bad one. */
int fx_link_pod_parse(json_t *o, const char *field, struct fx_link_pod *p, struct fx_err *e);
int fx_link_sess_parse(json_t *o, const char *field, struct fx_link_sess *s, struct fx_err *e);
int fx_link_ing_parse(json_t *o, const char *field, struct fx_link_ing *g, struct fx_err *e);
/* A NodeRegister's fields other than auth (checked before any credential
 * is issued, so that a refused one leaves nothing behind). */
int fx_link_register_check(json_t *m, struct fx_err *e);
/* "NS/NAME" with a DNS label and a DNS subdomain: NULL, or what is wrong. */
const char *fx_check_id(const char *id);

#endif
