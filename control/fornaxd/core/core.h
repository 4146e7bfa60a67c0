/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fornaxd's core: applications (loaded from the store, written through
 * it), and in memory only the nodes, pods and sessions. It keeps each
 * application's standby pool within its policy, places pods on ready nodes
 * by free resources, serves pending sessions first come first served from
 * idle standby pods, times sessions out and closes them, and applies the
 * nodes' reports under the revision rules of proto/fornax.md.
 *
 * No lws and no clock of its own: the hooks give the time, carry messages
 * to a node's link and tell of changed objects (the API's watches), so the
 * unit tests drive it whole with a fake clock and a fake link.
 */
#ifndef FX_CORE_H
#define FX_CORE_H

#include <jansson.h>
#include <stdint.h>

#include "model.h"
#include "store.h"

enum fx_kind { FX_K_APP, FX_K_SESSION, FX_K_POD, FX_K_NODE, FX_K_COUNT };

#define FX_ROUND_MS 100 /* an application's pool is resized at most once per round */
/* A node away this long: its pods are forgotten (their sessions closed); when
 * it comes back, its full sync is told to close and stop what it still runs. */
#define FX_STALE_NODE_MS 120000

struct fx_core_hooks {
	void *arg;
	uint64_t (*now_ms)(void *arg); /* monotonic */
	/* a message for the link a node registered on (takes the reference) */
	void (*send)(void *arg, void *link, json_t *msg);
	/* an object changed at rv: "ADDED", "MODIFIED", "DELETED" (obj borrowed) */
	void (*event)(void *arg, enum fx_kind k, const char *type, json_t *obj, uint64_t rv);
	/* something is due now: call fx_core_tick soon (from the loop) */
	void (*kick)(void *arg);
};

struct fx_core_conf {
	uint32_t pod_net; /* host order */
	int pod_net_bits, node_bits;
	uint32_t vni;
	unsigned port_lo, port_hi, state_s;
	int form; /* the sessions' endpoints unless their application says: 1 or 2 */
	unsigned max_sess_client; /* 0: no limit */
};

struct fx_core;
struct fx_node;

/* Load the applications; revisions continue from max(the store's, rev0)
 * (rev0: the wall clock in microseconds, so that a restarted core never
 * hands out a resourceVersion a watcher already saw). NULL with err. */
struct fx_core *fx_core_new(struct fx_store *st, const struct fx_core_conf *cf,
			    const struct fx_core_hooks *h, uint64_t rev0, char *err, size_t errlen);
void fx_core_free(struct fx_core *c);
uint64_t fx_core_revision(const struct fx_core *c);
/* Timeouts, closes, forgotten sessions, and each application's round. */
void fx_core_tick(struct fx_core *c);

/* ---- the API's operations: 0 and *out (a new reference), or -1 and e ---- */
int fx_core_app_create(struct fx_core *c, const char *ns, json_t *body, json_t **out,
		       struct fx_err *e);
int fx_core_app_update(struct fx_core *c, const char *ns, const char *name, json_t *body,
		       json_t **out, struct fx_err *e);
int fx_core_app_delete(struct fx_core *c, const char *ns, const char *name, json_t **out,
		       struct fx_err *e);
/* The same without waiting for the store (the daemon's loop): done(arg,
 * out, e) is called exactly once, with out (a new reference) when the
 * write is durable and the core has it, else e (the codes above; 504: it
 * may still be applied). Writes are taken one at a time in arrival order,
 * each checked (409s) against the state the ones before it left; the core
 * changes only when the store has answered. done may be called before
 * this returns (SQLite writes at once). PATCH: body a merge patch (RFC
 * 7386), applied to the object as it is when the write's turn comes. */
enum fx_wop { FX_W_CREATE, FX_W_UPDATE, FX_W_PATCH, FX_W_DELETE };
typedef void (*fx_core_done)(void *arg, json_t *out, const struct fx_err *e);
void fx_core_app_write(struct fx_core *c, enum fx_wop op, const char *ns, const char *name,
		       json_t *body, fx_core_done done, void *arg);
/* The daemon stops: the write in flight is answered 504 (its outcome is
 * not known; it stays in the store's hands, and the core still applies
 * it if the store answers), those waiting 503 (nothing written), and new
 * ones 503 at once. */
void fx_core_writes_stop(struct fx_core *c);

/* client: who creates it (the digest of its token, CTL_TOKEN_HASH_LEN
 * bytes) for the per-client limit; NULL: nobody's, not limited */
int fx_core_session_create(struct fx_core *c, const char *ns, json_t *body,
			   const unsigned char *client, json_t **out, struct fx_err *e);
int fx_core_session_delete(struct fx_core *c, const char *ns, const char *name, json_t **out,
			   struct fx_err *e);
/* Forget a node and its pods (their sessions close); *link: the node's
 * link if it has one (the caller closes it). */
int fx_core_node_delete(struct fx_core *c, const char *name, json_t **out, void **link,
			struct fx_err *e);
/* One object (NULL: none); ns NULL for nodes. */
json_t *fx_core_get(struct fx_core *c, enum fx_kind k, const char *ns, const char *name);
/* Every object of a kind (ns NULL: all namespaces), as an array; *rev the
 * revision it is as of. */
json_t *fx_core_list(struct fx_core *c, enum fx_kind k, const char *ns, uint64_t *rev);

/* ---- the store's view (a standby's watch; a leader's write whose outcome
 * it did not learn) ---- */
/* The application as the store holds it at rv: added, or replaced when
 * older than rv (our own writes coming back change nothing). */
int fx_core_app_stored(struct fx_core *c, const char *ns, const char *name, uint64_t rv,
		       const char *json);
/* It is gone from the store: as a delete (its sessions close, pods go). */
void fx_core_app_unstored(struct fx_core *c, const char *ns, const char *name);

/* ---- the node link (nodes/): messages already authenticated ---- */
/* A NodeRegister accepted for its name on link: *old the link it had (to
 * close; NULL if none). Sends NodeConfiguration (extra's fields merged in:
 * the credential) and NodeFullSync. -1 with e on a bad message. */
int fx_core_node_register(struct fx_core *c, void *link, json_t *msg, int subnet, json_t *extra,
			  void **old, struct fx_err *e);
/* Any later message from the node name on link: 0; -1 with e (400
 * bad-message, naming the field); 1: link is not the node's any more
 * (replaced, or the node deleted): close it. */
int fx_core_node_message(struct fx_core *c, const char *name, void *link, json_t *msg,
			 struct fx_err *e);
/* The node of a name, or NULL. */
struct fx_node *fx_core_node_find(struct fx_core *c, const char *name);
/* The link is gone (only if it is still the node's). */
void fx_core_node_unlinked(struct fx_core *c, const char *name, void *link);
/* Lead (the default) or follow as a standby. A standby's core applies the
 * nodes' reports and sends them no command; it places no pod and times no
 * session out. term: the lead's (the election key's create_revision; 0
 * without an election), told to every node, which obeys the core leading
 * with the highest term it has seen. Taking the lead tells every linked
 * node so and asks it for a full sync. */
void fx_core_set_lead(struct fx_core *c, bool leading, int64_t term);

#endif
