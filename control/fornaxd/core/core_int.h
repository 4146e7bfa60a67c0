/* SPDX-License-Identifier: BSD-2-Clause */
/* What core.c (applications, sessions, pools, the tick) and core_nodes.c
 * (the nodes' reports) share; nothing outside the core includes it. */
#ifndef FX_CORE_INT_H
#define FX_CORE_INT_H

#include "core.h"
#include "ctl_token.h"

/* ---- a string-keyed hash map; the key lives in the value ---- */
struct fx_ent {
	struct fx_ent *next;
	const char *key;
	void *val;
};
struct fx_map {
	struct fx_ent **b;
	size_t nb, n;
};
void *fx_map_get(const struct fx_map *m, const char *key);
int fx_map_put(struct fx_map *m, const char *key, void *val);
void fx_map_del(struct fx_map *m, const char *key);
void fx_map_free(struct fx_map *m);
/* every value, in no order; fn may delete the one it is given */
void fx_map_each(struct fx_map *m, void (*fn)(void *arg, void *val), void *arg);

enum fx_pool { FX_POOL_PENDING, FX_POOL_IDLE, FX_POOL_ALLOC, FX_POOL_DELETING };
enum fx_ing_st { FX_ING_NONE, FX_ING_OPENING, FX_ING_OPEN, FX_ING_CLOSED };

struct fx_sess;
struct fx_pod;

struct fx_app {
	char ns[FX_NS_MAX + 1], name[FX_NAME_MAX + 1], id[FX_ID_MAX + 1];
	json_t *obj; /* as stored (metadata with uid, resourceVersion; spec) */
	struct fx_app_spec spec;
	uint64_t rv;
	struct fx_pod *pods;		 /* its pods (pod->app_next) */
	struct fx_sess *q_head, *q_tail; /* pending sessions, oldest first */
	int n[4];			 /* pods per pool */
	int n_queued;
	int desired;
	uint64_t next_round_ms;
	json_t *history; /* the latest entries, oldest first */
};

struct fx_node {
	char name[FX_NS_MAX + 1];
	void *link; /* NULL: not linked */
	bool ready;
	struct fx_rev rev;
	json_t *info; /* NodeRegister's node: ip, publicIp, role, labels, capacity */
	bool ingress; /* role ingress: no pods, form 2 endpoints */
	int n_ing;    /* sessions whose entries it holds (or is asked to) */
	int64_t cpu, mem, pods_cap, cpu_used, mem_used;
	int n_pods, subnet;
	char cidr[20], gateway[16], created[24], uid[40];
	uint64_t rv, fullsync_seq;
	uint64_t unlinked_ms; /* when its link went */
	/* a standby met a pod of an application its watch has not brought yet:
	 * the node's full sync is asked again once it has (fx_nodes_resync) */
	bool resync;
};

struct fx_pod {
	char id[FX_ID_MAX + 1], ns[FX_NS_MAX + 1], name[FX_NAME_MAX + 1], created[24], uid[40];
	struct fx_app *app;
	struct fx_node *node;
	struct fx_pod *app_next, **app_prev;
	enum fx_pool pool;
	enum fx_pod_state state;
	char ip[48], reason[64];
	struct fx_sess *sess;
	int64_t cpu, mem;
	uint64_t rv, create_seq;
};

struct fx_sess {
	char id[FX_ID_MAX + 1], ns[FX_NS_MAX + 1], name[FX_NAME_MAX + 1], created[24], uid[40];
	struct fx_app *app; /* NULL once its application is deleted */
	struct fx_session_spec spec;
	json_t *in; /* metadata.labels and spec as created */
	enum fx_sess_state st;
	struct fx_pod *pod;
	char pod_id[FX_ID_MAX + 1], node[FX_NS_MAX + 1], reason[64];
	json_t *endpoints;
	int64_t client_sessions;
	/* who created it (fx_owner_id of its token's digest), as the node keeps
	 * it; "": nobody's (created without a client, or rebuilt from a node of
	 * an older release that does not keep it) */
	char owner[FX_OWNER_LEN + 1];
	struct fx_sess_clock clk;
	int64_t created_us, available_us, close_us;
	uint64_t rv, open_seq;
	struct fx_sess *q_next, *q_prev; /* in its application's pending queue */
	bool queued;
	/* form 2: the ingress host holding its public half */
	char ing[FX_NS_MAX + 1];
	enum fx_ing_st ing_st;
	uint64_t ing_seq; /* IngressOpen's sequence number (full syncs tell by it) */
};

/* An application write (writes.c), from its turn to its answer. */
struct fx_write {
	enum fx_wop op;
	char ns[FX_NS_MAX + 1], name[FX_NAME_MAX + 1];
	uint64_t rv; /* taken when its turn comes */
	json_t *obj; /* as written (a delete: as it was) */
	struct fx_app_spec spec;
};

struct fx_wq; /* a write waiting for its turn, or in flight */

struct fx_core {
	struct fx_store *st;
	struct fx_core_conf cf;
	struct fx_core_hooks h;
	uint64_t rev, seq;
	struct fx_map apps, nodes, pods, sessions;
	uint64_t started_ms;
	/* a standby's core: it follows the nodes' reports and commands none of
	 * them (fx_send passes only the link's own messages) */
	bool passive;
	int64_t term; /* the lead's term, told to the nodes */
	/* application writes, one at a time in arrival order (writes.c) */
	struct fx_wq *wq_head, *wq_tail, *wq_cur; /* waiting; in flight */
	bool wq_turning, wq_stopped;
	uint64_t wq_rv; /* the revision the write in flight took, 0: none */
};

/* A write's turn: 0 (the store to write w->obj at w->rv), 1 (nothing to
 * write: *out), -1 (refused: e). */
int fx_write_prepare(struct fx_core *c, struct fx_write *w, json_t *body, json_t **out,
		     struct fx_err *e);
/* The store's answer rc: the core changes when the write is durable; 0 and
 * *out, or -1 and e. */
int fx_write_apply(struct fx_core *c, struct fx_write *w, int rc, json_t **out, struct fx_err *e);
void fx_writes_free(struct fx_core *c);

uint64_t fx_now(struct fx_core *c);
int64_t fx_wall_us(void);
void fx_stamp(char out[24]);
/* The next revision, and the event of the object as it is now. */
void fx_changed(struct fx_core *c, enum fx_kind k, const char *type, void *obj);
void fx_send(struct fx_core *c, struct fx_node *n, json_t *msg);
json_t *fx_node_json(struct fx_core *c, struct fx_node *n);
json_t *fx_pod_json(struct fx_pod *p);
json_t *fx_sess_json(struct fx_sess *s);

/* pools and sessions (core.c), used by the nodes' reports */
struct fx_pod *fx_pod_new(struct fx_core *c, struct fx_app *a, struct fx_node *n, const char *name,
			  enum fx_pool pool, enum fx_pod_state st);
void fx_pod_set_pool(struct fx_pod *p, enum fx_pool pool);
/* the pod is gone (the node said so, or the node is gone): its session closes */
void fx_pod_remove(struct fx_core *c, struct fx_pod *p, const char *reason);
void fx_pod_terminate(struct fx_core *c, struct fx_pod *p);
/* a final state for s: the pod is given back or killed */
void fx_sess_end(struct fx_core *c, struct fx_sess *s, enum fx_sess_state st, const char *reason);
struct fx_sess *fx_sess_new(struct fx_core *c, struct fx_app *a, const char *ns, const char *name);
void fx_serve_queue(struct fx_core *c, struct fx_app *a);
void fx_kick(struct fx_core *c);
/* core_nodes.c's part of the tick: nodes away for FX_STALE_NODE_MS lose their pods */
void fx_nodes_tick(struct fx_core *c);
/* a standby learned an application: the nodes that reported pods of one it
 * did not know send their full state again */
void fx_nodes_resync(struct fx_core *c);
void fx_id(char *out, size_t len, const char *ns, const char *name);
struct fx_app *fx_app_find(struct fx_core *c, const char *ns, const char *name);
void fx_sess_free(void *arg, void *v);
/* metadata.labels of a validated body, a new reference ({} if absent) */
json_t *fx_labels_of(json_t *body);
/* fx_map_each's function over the sessions: what their clocks say is due */
void fx_sess_tick(void *arg, void *c);
/* SessionOpen to the pod's node (ingress: form 2's {host, accessEndPoints},
 * taken; NULL for form 1) */
void fx_sess_send_open(struct fx_core *c, struct fx_sess *s, json_t *ingress);

/* form 2 (ingress.c) */
bool fx_form2(const struct fx_core *c, const struct fx_app *a);
struct fx_node *fx_ing_pick(struct fx_core *c);
/* IngressOpen for s (its pod assigned) to ih */
void fx_ing_open(struct fx_core *c, struct fx_sess *s, struct fx_node *ih);
/* IngressClose for s if its entry is open or asked for */
void fx_ing_close(struct fx_core *c, struct fx_sess *s);
/* An IngressState's entry, and a full sync's (those missing are gone) */
void fx_ing_apply(struct fx_core *c, struct fx_node *n, const struct fx_link_ing *g);
void fx_ing_full(struct fx_core *c, struct fx_node *n, const struct fx_link_ing *g, size_t ng);
/* n is gone (away too long, deleted): the sessions through it close */
void fx_ing_host_lost(struct fx_core *c, struct fx_node *n, const char *reason);
/* an ingress host is ready: the queues waiting for one are served */
void fx_ing_ready(struct fx_core *c);

#endif
