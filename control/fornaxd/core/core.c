// SPDX-License-Identifier: BSD-2-Clause
/*
 * Applications and their pools (sessions are in sessions.c, the nodes'
 * reports in core_nodes.c).
 *
 * An application is written to the store before the client is told; its
 * pods and sessions are memory only. A session is served from an idle
 * standby pod at once if there is one (the warm path: no disk, no round),
 * else it waits in its application's queue, oldest first, and the round
 * that sees it asks for a pod; the pod's Standby report serves the queue.
 * A round that wants to change pods is followed by the next one no sooner
 * than FX_ROUND_MS later (one with nothing to change holds nothing back); it
 * changes at most `burst` pods (fx_scale_round); it only removes
 * unallocated pods.
 */
#include <inttypes.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_int.h"
#include "ctl_k8s.h"
#include "ctl_log.h"

#define HISTORY_MAX 10

void fx_id(char *out, size_t len, const char *ns, const char *name)
{
	snprintf(out, len, "%s/%s", ns, name);
}

/* ---- applications ---- */

/* metadata.labels of a (validated) body, a new reference; {} if absent */
json_t *fx_labels_of(json_t *body)
{
	json_t *l = json_object_get(json_object_get(body, "metadata"), "labels");

	return json_is_object(l) ? json_incref(l) : json_object();
}

/* Set metadata.annotations of obj from a (validated) body's: kept as
 * given (kubectl apply's last applied configuration), absent if none. */
static void annotations_from(json_t *obj, json_t *body)
{
	json_t *an = json_object_get(json_object_get(body, "metadata"), "annotations");
	json_t *md = json_object_get(obj, "metadata");

	if (json_is_object(an) && json_object_size(an))
		json_object_set(md, "annotations", an);
	else
		json_object_del(md, "annotations");
}

static json_t *app_json(struct fx_app *a)
{
	json_t *o = json_deep_copy(a->obj);

	json_object_set_new(
	    o, "status",
	    json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:O,s:O}", "desiredInstances", a->desired,
		      "totalInstances",
		      a->n[FX_POOL_PENDING] + a->n[FX_POOL_IDLE] + a->n[FX_POOL_ALLOC],
		      "pendingInstances", a->n[FX_POOL_PENDING], "deletingInstances",
		      a->n[FX_POOL_DELETING], "allocatedInstances", a->n[FX_POOL_ALLOC],
		      "idleInstances", a->n[FX_POOL_IDLE], "latestHistory",
		      json_array_size(a->history)
			  ? json_array_get(a->history, json_array_size(a->history) - 1)
			  : json_null(),
		      "history", a->history));
	return o;
}

static void app_event(struct fx_core *c, struct fx_app *a, const char *type)
{
	json_t *o = app_json(a);

	if (c->h.event)
		c->h.event(c->h.arg, FX_K_APP, type, o, a->rv);
	json_decref(o);
}

static void history(struct fx_app *a, const char *action, const char *status, const char *fmt,
		    int n)
{
	char ts[24], msg[200];

	json_t *last = json_array_get(a->history, json_array_size(a->history) - 1);

	fx_stamp(ts);
	snprintf(msg, sizeof(msg), fmt, n);
	if (last && !strcmp(json_string_value(json_object_get(last, "message")), msg) &&
	    !strcmp(json_string_value(json_object_get(last, "action")), action)) {
		/* the same again (a node short every round): one entry, its latest time */
		json_object_set_new(last, "updateTime", json_string(ts));
		return;
	}
	json_array_append_new(a->history, json_pack("{s:s,s:s,s:s,s:s,s:s}", "action", action,
						    "updateTime", ts, "reason", "Scaling",
						    "message", msg, "deploymentStatus", status));
	while (json_array_size(a->history) > HISTORY_MAX)
		json_array_remove(a->history, 0);
}

static void app_free(struct fx_app *a)
{
	json_decref(a->obj);
	json_decref(a->history);
	free(a);
}

/* obj: validated; takes the reference */
static struct fx_app *app_add(struct fx_core *c, json_t *obj, const struct fx_app_spec *sp,
			      uint64_t rv)
{
	json_t *md = json_object_get(obj, "metadata");
	struct fx_app *a = calloc(1, sizeof(*a));

	if (!a) {
		json_decref(obj);
		return NULL;
	}
	snprintf(a->ns, sizeof(a->ns), "%s", json_string_value(json_object_get(md, "namespace")));
	snprintf(a->name, sizeof(a->name), "%s", json_string_value(json_object_get(md, "name")));
	fx_id(a->id, sizeof(a->id), a->ns, a->name);
	a->obj = obj;
	a->spec = *sp;
	a->rv = rv;
	a->history = json_array();
	if (fx_map_put(&c->apps, a->id, a)) {
		app_free(a);
		return NULL;
	}
	return a;
}

static int load_app(void *arg, const char *text, uint64_t rv)
{
	struct fx_core *c = arg;
	json_t *o = json_loads(text, 0, NULL);
	struct fx_app_spec sp;
	struct fx_err e;

	if (!o || fx_app_validate(o, NULL, &sp, &e)) {
		ctl_log("store: an application does not load (%s); skipped",
			o ? e.msg : "not JSON");
		json_decref(o);
		return 0;
	}
	return app_add(c, o, &sp, rv) ? 0 : -1;
}

struct fx_core *fx_core_new(struct fx_store *st, const struct fx_core_conf *cf,
			    const struct fx_core_hooks *h, uint64_t rev0, char *err, size_t errlen)
{
	struct fx_core *c = calloc(1, sizeof(*c));
	uint64_t rev = 0;

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->st = st;
	c->cf = *cf;
	c->h = *h;
	c->started_ms = fx_now(c);
	if (st->ops->revision(st, &rev) || st->ops->app_each(st, load_app, c)) {
		snprintf(err, errlen, "%s", st->ops->errmsg(st));
		fx_core_free(c);
		return NULL;
	}
	c->rev = rev > rev0 ? rev : rev0;
	return c;
}

static void free_app(void *arg, void *v)
{
	(void)arg;
	app_free(v);
}

static void free_node(void *arg, void *v)
{
	struct fx_node *n = v;

	(void)arg;
	json_decref(n->info);
	free(n);
}

void fx_sess_free(void *arg, void *v)
{
	struct fx_sess *s = v;

	(void)arg;
	json_decref(s->in);
	json_decref(s->endpoints);
	free(s);
}

void fx_core_free(struct fx_core *c)
{
	if (!c)
		return;
	fx_writes_free(c);
	fx_map_each(&c->sessions, fx_sess_free, NULL);
	for (size_t i = 0; i < c->pods.nb; i++)
		for (struct fx_ent *e = c->pods.b[i]; e; e = e->next)
			free(e->val);
	fx_map_each(&c->nodes, free_node, NULL);
	fx_map_each(&c->apps, free_app, NULL);
	fx_map_free(&c->sessions);
	fx_map_free(&c->pods);
	fx_map_free(&c->nodes);
	fx_map_free(&c->apps);
	free(c);
}

uint64_t fx_core_revision(const struct fx_core *c)
{
	return c->rev;
}

static void app_remove(struct fx_core *c, struct fx_app *a, uint64_t rv, json_t **out);

static void set_rv(json_t *obj, uint64_t rv)
{
	char v[24];

	snprintf(v, sizeof(v), "%" PRIu64, rv);
	json_object_set_new(json_object_get(obj, "metadata"), "resourceVersion", json_string(v));
}

/* a create: the object to write, checked against what is there now */
static int prep_create(struct fx_core *c, const char *ns, json_t *body, struct fx_write *w,
		       struct fx_err *e)
{
	json_t *md;
	char id[FX_ID_MAX + 1], uid[CTL_K8S_UID_LEN + 1], ts[24];
	const char *name;

	if (fx_app_validate(body, ns, &w->spec, e))
		return -1;
	name = json_string_value(json_object_get(json_object_get(body, "metadata"), "name"));
	fx_id(id, sizeof(id), ns, name);
	if (fx_map_get(&c->apps, id))
		return fx_errf(e, 409, "metadata.name",
			       "applications \"%s\" already exists in namespace %s", name, ns);
	w->obj = json_pack("{s:s,s:s,s:{s:s,s:s},s:O}", "apiVersion", FX_API_VERSION, "kind",
			   "Application", "metadata", "name", name, "namespace", ns, "spec",
			   json_object_get(body, "spec"));
	md = json_object_get(w->obj, "metadata");
	ctl_k8s_uuid4(uid);
	fx_stamp(ts);
	json_object_set_new(md, "uid", json_string(uid));
	json_object_set_new(md, "creationTimestamp", json_string(ts));
	json_object_set_new(md, "labels", fx_labels_of(body));
	annotations_from(w->obj, body);
	snprintf(w->name, sizeof(w->name), "%s", name);
	return 0;
}

struct fx_app *fx_app_find(struct fx_core *c, const char *ns, const char *name)
{
	char id[FX_ID_MAX + 1];

	fx_id(id, sizeof(id), ns, name);
	return fx_map_get(&c->apps, id);
}

/* an update: 1 and *out when it changes nothing */
static int prep_update(struct fx_app *a, json_t *body, struct fx_write *w, json_t **out,
		       struct fx_err *e)
{
	const char *bname, *brv;
	json_t *labels;

	if (fx_app_validate(body, w->ns, &w->spec, e))
		return -1;
	bname = json_string_value(json_object_get(json_object_get(body, "metadata"), "name"));
	if (strcmp(bname, w->name))
		return fx_errf(e, 400, "metadata.name",
			       "metadata.name '%s' does not match the path's '%s'", bname, w->name);
	brv = json_string_value(
	    json_object_get(json_object_get(body, "metadata"), "resourceVersion"));
	if (brv && *brv && strtoull(brv, NULL, 10) != a->rv)
		return fx_errf(e, 409, "metadata.resourceVersion",
			       "metadata.resourceVersion %s: the application is at %" PRIu64
			       " (read it again)",
			       brv, a->rv);
	if (fx_app_update_check(json_object_get(a->obj, "spec"), json_object_get(body, "spec"), e))
		return -1;
	w->obj = json_deep_copy(a->obj);
	json_object_set(json_object_get(w->obj, "spec"), "scalingPolicy",
			json_object_get(json_object_get(body, "spec"), "scalingPolicy"));
	labels = json_object_get(json_object_get(body, "metadata"), "labels");
	json_object_set_new(json_object_get(w->obj, "metadata"), "labels",
			    json_is_object(labels) ? json_incref(labels) : json_object());
	annotations_from(w->obj, body);
	/* what changes nothing is not a change: no write, no event, the same
	 * resourceVersion (a client that applies a file again sees "unchanged") */
	if (json_equal(json_object_get(w->obj, "spec"), json_object_get(a->obj, "spec")) &&
	    json_equal(json_object_get(w->obj, "metadata"), json_object_get(a->obj, "metadata"))) {
		json_decref(w->obj);
		w->obj = NULL;
		*out = app_json(a);
		return 1;
	}
	return 0;
}

int fx_write_prepare(struct fx_core *c, struct fx_write *w, json_t *body, json_t **out,
		     struct fx_err *e)
{
	struct fx_app *a = w->op == FX_W_CREATE ? NULL : fx_app_find(c, w->ns, w->name);
	json_t *cur, *merged = NULL;
	int rc;

	if (w->op != FX_W_CREATE && !a)
		return fx_errf(e, 404, NULL, "applications \"%s\" not found in namespace %s",
			       w->name, w->ns);
	switch (w->op) {
	case FX_W_CREATE:
		rc = prep_create(c, w->ns, body, w, e);
		break;
	case FX_W_PATCH:
		/* RFC 7386 on the object as it is when the write's turn comes */
		cur = app_json(a);
		merged = cur ? ctl_k8s_merge_patch(cur, body) : NULL;
		json_decref(cur);
		if (!merged)
			return fx_errf(e, 500, NULL, "out of memory");
		json_object_del(merged, "status");
		body = merged;
		/* fallthrough */
	case FX_W_UPDATE:
		rc = prep_update(a, body, w, out, e);
		json_decref(merged);
		break;
	default: /* the delete's answer is the object as it was */
		w->obj = app_json(a);
		rc = 0;
		break;
	}
	if (rc)
		return rc;
	/* taken now, so that nothing else is published at it meanwhile */
	w->rv = ++c->rev;
	set_rv(w->obj, w->rv);
	return 0;
}

int fx_write_apply(struct fx_core *c, struct fx_write *w, int rc, json_t **out, struct fx_err *e)
{
	struct fx_app *a = fx_app_find(c, w->ns, w->name);
	const char *what = w->op == FX_W_DELETE ? "delete" : "write";

	if (rc < 0) {
		ctl_log("store: %s application %s/%s: %s", what, w->ns, w->name,
			c->st->ops->errmsg(c->st));
		/* what etcd applies later comes back through the watch of the applications */
		if (rc == FX_STORE_UNKNOWN)
			return fx_errf(e, 504, NULL,
				       "the store did not confirm the %s in time: it may still "
				       "be applied; read the application back before you retry",
				       what);
		return fx_errf(e, 500, NULL, "the store failed; nothing was %s",
			       w->op == FX_W_DELETE ? "deleted" : "written");
	}
	if (a && a->rv >= w->rv && w->op != FX_W_DELETE) {
		/* the store's watch brought it back before the answer came */
		*out = app_json(a);
		return 0;
	}
	if (w->op == FX_W_DELETE) {
		if (a)
			app_remove(c, a, w->rv, out);
		else /* gone already: the watch saw the delete first */
			*out = json_incref(w->obj);
		return 0;
	}
	if (!a) {
		if (!(a = app_add(c, json_incref(w->obj), &w->spec, w->rv)))
			return fx_errf(e, 500, NULL, "out of memory");
		ctl_log("application %s created (rv %" PRIu64 ")", a->id, w->rv);
		app_event(c, a, "ADDED");
	} else {
		json_decref(a->obj);
		a->obj = json_incref(w->obj);
		a->spec = w->spec;
		a->rv = w->rv;
		a->next_round_ms = 0; /* the new policy applies at once */
		ctl_log("application %s updated (rv %" PRIu64 ")", a->id, w->rv);
		app_event(c, a, "MODIFIED");
	}
	fx_kick(c);
	*out = app_json(a);
	return 0;
}

/* the waiting form (no loop: the unit tests) */
static int write_now(struct fx_core *c, enum fx_wop op, const char *ns, const char *name,
		     json_t *body, json_t **out, struct fx_err *e)
{
	struct fx_write w = {.op = op};
	char *text = NULL;
	int rc;

	snprintf(w.ns, sizeof(w.ns), "%s", ns);
	snprintf(w.name, sizeof(w.name), "%s", name ? name : "");
	rc = fx_write_prepare(c, &w, body, out, e);
	if (rc)
		return rc < 0 ? -1 : 0;
	if (op == FX_W_DELETE)
		rc = c->st->ops->app_del(c->st, ns, w.name, w.rv);
	else
		rc = (text = json_dumps(w.obj, JSON_COMPACT))
			 ? c->st->ops->app_put(c->st, ns, w.name, w.rv, text)
			 : -1;
	free(text);
	rc = fx_write_apply(c, &w, rc, out, e);
	json_decref(w.obj);
	return rc;
}

int fx_core_app_create(struct fx_core *c, const char *ns, json_t *body, json_t **out,
		       struct fx_err *e)
{
	return write_now(c, FX_W_CREATE, ns, NULL, body, out, e);
}

int fx_core_app_update(struct fx_core *c, const char *ns, const char *name, json_t *body,
		       json_t **out, struct fx_err *e)
{
	return write_now(c, FX_W_UPDATE, ns, name, body, out, e);
}

int fx_core_app_delete(struct fx_core *c, const char *ns, const char *name, json_t **out,
		       struct fx_err *e)
{
	return write_now(c, FX_W_DELETE, ns, name, NULL, out, e);
}

/* its sessions close, its pods go, its watchers see it DELETED at rv */
static void app_remove(struct fx_core *c, struct fx_app *a, uint64_t rv, json_t **out)
{
	for (size_t i = 0; i < c->sessions.nb; i++)
		for (struct fx_ent *en = c->sessions.b[i]; en; en = en->next) {
			struct fx_sess *s = en->val;

			if (s->app != a)
				continue;
			if (!fx_sess_final(s->st))
				fx_sess_end(c, s, FX_S_CLOSED, "ApplicationDeleted");
			s->app = NULL;
		}
	while (a->pods) {
		struct fx_pod *p = a->pods;

		if (p->pool != FX_POOL_DELETING)
			fx_pod_terminate(c, p);
		fx_pod_remove(c, p, "ApplicationDeleted");
	}
	a->rv = rv;
	set_rv(a->obj, rv);
	if (out)
		*out = app_json(a);
	app_event(c, a, "DELETED");
	fx_map_del(&c->apps, a->id);
	ctl_log("application %s deleted", a->id);
	app_free(a);
}

int fx_core_app_stored(struct fx_core *c, const char *ns, const char *name, uint64_t rv,
		       const char *text)
{
	struct fx_app *a = fx_app_find(c, ns, name);
	json_t *o;
	struct fx_app_spec sp;
	struct fx_err e;

	if (a && a->rv >= rv)
		return 0; /* our own write coming back, or older than what we hold */
	if (!(o = json_loads(text, 0, NULL)) || fx_app_validate(o, NULL, &sp, &e)) {
		ctl_log("store: application %s/%s does not load (%s); skipped", ns, name,
			o ? e.msg : "not JSON");
		json_decref(o);
		return -1;
	}
	if (rv > c->rev)
		c->rev = rv;
	if (!a) {
		if (!(a = app_add(c, o, &sp, rv)))
			return -1;
		ctl_log("application %s stored elsewhere (rv %" PRIu64 ")", a->id, rv);
		app_event(c, a, "ADDED");
		fx_nodes_resync(c);
	} else {
		json_decref(a->obj);
		a->obj = o;
		a->spec = sp;
		a->rv = rv;
		a->next_round_ms = 0;
		app_event(c, a, "MODIFIED");
	}
	fx_kick(c);
	return 0;
}

void fx_core_app_unstored(struct fx_core *c, const char *ns, const char *name)
{
	struct fx_app *a = fx_app_find(c, ns, name);

	if (a)
		app_remove(c, a, ++c->rev, NULL);
}

/* ---- pods ---- */

static const char alnum[] = "bcdfghjklmnpqrstvwxz2456789";

struct fx_pod *fx_pod_new(struct fx_core *c, struct fx_app *a, struct fx_node *n, const char *name,
			  enum fx_pool pool, enum fx_pod_state st)
{
	struct fx_pod *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	snprintf(p->ns, sizeof(p->ns), "%s", a->ns);
	if (name) {
		snprintf(p->name, sizeof(p->name), "%s", name);
	} else {
		do {
			char sfx[6];

			for (int i = 0; i < 5; i++)
				sfx[i] = alnum[randombytes_uniform(sizeof(alnum) - 1)];
			sfx[5] = 0;
			snprintf(p->name, sizeof(p->name), "%.200s-%s", a->name, sfx);
			fx_id(p->id, sizeof(p->id), p->ns, p->name);
		} while (fx_map_get(&c->pods, p->id));
	}
	fx_id(p->id, sizeof(p->id), p->ns, p->name);
	fx_stamp(p->created);
	ctl_k8s_uuid4(p->uid);
	p->app = a;
	p->node = n;
	p->pool = pool;
	p->state = st;
	p->cpu = a->spec.cpu_req;
	p->mem = a->spec.mem_req;
	p->create_seq = c->seq + 1;
	if (fx_map_put(&c->pods, p->id, p)) {
		free(p);
		return NULL;
	}
	p->app_next = a->pods;
	if (a->pods)
		a->pods->app_prev = &p->app_next;
	a->pods = p;
	p->app_prev = &a->pods;
	a->n[pool]++;
	n->cpu_used += p->cpu;
	n->mem_used += p->mem;
	n->n_pods++;
	return p;
}

void fx_pod_set_pool(struct fx_pod *p, enum fx_pool pool)
{
	if (p->app) {
		p->app->n[p->pool]--;
		p->app->n[pool]++;
	}
	p->pool = pool;
}

void fx_pod_remove(struct fx_core *c, struct fx_pod *p, const char *reason)
{
	struct fx_app *a = p->app;

	snprintf(p->reason, sizeof(p->reason), "%s", reason);
	if (p->sess) {
		struct fx_sess *s = p->sess;

		p->sess = NULL;
		s->pod = NULL;
		if (!fx_sess_final(s->st))
			fx_sess_end(c, s, FX_S_CLOSED, reason);
	}
	if (a) {
		a->n[p->pool]--;
		*p->app_prev = p->app_next;
		if (p->app_next)
			p->app_next->app_prev = p->app_prev;
	}
	if (p->node) {
		p->node->cpu_used -= p->cpu;
		p->node->mem_used -= p->mem;
		p->node->n_pods--;
	}
	fx_changed(c, FX_K_POD, "DELETED", p);
	fx_map_del(&c->pods, p->id);
	free(p);
	fx_kick(c);
}

void fx_pod_terminate(struct fx_core *c, struct fx_pod *p)
{
	fx_pod_set_pool(p, FX_POOL_DELETING);
	fx_send(c, p->node,
		json_pack("{s:s,s:s,s:i}", "type", "PodTerminate", "podIdentifier", p->id,
			  "gracePeriodSeconds", 0));
	fx_changed(c, FX_K_POD, "MODIFIED", p);
}

/* the ready node with room for a's requests and the most free memory */
static struct fx_node *place(struct fx_core *c, struct fx_app *a)
{
	struct fx_node *best = NULL;

	for (size_t i = 0; i < c->nodes.nb; i++)
		for (struct fx_ent *e = c->nodes.b[i]; e; e = e->next) {
			struct fx_node *n = e->val;

			if (!n->ready || !n->link || n->ingress || n->n_pods >= n->pods_cap ||
			    n->cpu - n->cpu_used < a->spec.cpu_req ||
			    n->mem - n->mem_used < a->spec.mem_req)
				continue;
			if (!best || n->mem - n->mem_used > best->mem - best->mem_used)
				best = n;
		}
	return best;
}

static void pod_create(struct fx_core *c, struct fx_app *a, struct fx_node *n)
{
	struct fx_pod *p = fx_pod_new(c, a, n, NULL, FX_POOL_PENDING, FX_P_CREATING);
	json_t *spec = json_object_get(a->obj, "spec"), *empty = json_object();

	if (!p) {
		json_decref(empty);
		return;
	}
	fx_send(c, n,
		json_pack("{s:s,s:s,s:{s:s,s:s,s:s,s:O,s:O,s:b,s:o},s:b}", "type", "PodCreate",
			  "podIdentifier", p->id, "pod", "podIdentifier", p->id, "application",
			  a->id, "state", "Creating", "containers",
			  json_object_get(spec, "containers"), "configData",
			  json_object_get(spec, "configData") ?: empty, "usingNodeSessionService",
			  a->spec.session_service, "ports", fx_app_ports(spec), "standby", 1));
	json_decref(empty);
	fx_changed(c, FX_K_POD, "ADDED", p);
}

static void round_app(struct fx_core *c, struct fx_app *a)
{
	struct fx_pool_counts pc = {0, 0, a->n[FX_POOL_ALLOC], a->n_queued};
	struct fx_scale s;
	int made = 0, removed = 0;

	/* a pod on a node that is gone serves nobody: the pool is made up elsewhere, and
	 * trimmed again if the node comes back */
	for (struct fx_pod *p = a->pods; p; p = p->app_next)
		if (p->node && p->node->link && p->pool == FX_POOL_PENDING)
			pc.pending++;
		else if (p->node && p->node->link && p->pool == FX_POOL_IDLE)
			pc.idle++;
	s = fx_scale_round(&a->spec.policy, &pc);

	a->desired = s.desired;
	for (; made < s.create; made++) {
		struct fx_node *n = place(c, a);

		if (!n)
			break;
		pod_create(c, a, n);
	}
	if (s.create && made < s.create)
		history(a, "CreateInstance", made ? "PartialSuccess" : "Failure",
			"no ready node has room for %d more pod(s)", s.create - made);
	else if (made)
		history(a, "CreateInstance", "Success", "%d pod(s) created", made);
	/* pods not standby yet first: the standby ones are what opens fast */
	for (int pass = 0; pass < 2 && removed < s.remove; pass++)
		for (struct fx_pod *p = a->pods, *next; p && removed < s.remove; p = next) {
			next = p->app_next;
			if (p->pool == (pass ? FX_POOL_IDLE : FX_POOL_PENDING) && p->node &&
			    p->node->link) {
				fx_pod_terminate(c, p);
				removed++;
			}
		}
	if (removed)
		history(a, "DeleteInstance", "Success", "%d pod(s) removed", removed);
	/* a round with nothing to change does not hold the next one back: a
	 * session that finds no pod gets its round at once (the kick), not up
	 * to FX_ROUND_MS after the last idle tick; one that wanted a change
	 * (made or not: no node had room, or none is back yet) does */
	if (s.create || s.remove)
		a->next_round_ms = fx_now(c) + FX_ROUND_MS;
}

/* ---- the tick ---- */

static void tick_app(void *arg, void *v)
{
	struct fx_core *c = arg;
	struct fx_app *a = v;

	if (fx_now(c) >= a->next_round_ms)
		round_app(c, a);
}

void fx_core_tick(struct fx_core *c)
{
	fx_map_each(&c->sessions, fx_sess_tick, c);
	fx_nodes_tick(c);
	if (!c->passive) /* the leader places the pods; a standby learns them */
		fx_map_each(&c->apps, tick_app, c);
}

/* ---- reads ---- */

json_t *fx_core_get(struct fx_core *c, enum fx_kind k, const char *ns, const char *name)
{
	char id[FX_ID_MAX + 1];
	void *v;

	if (k == FX_K_NODE)
		return (v = fx_map_get(&c->nodes, name)) ? fx_node_json(c, v) : NULL;
	fx_id(id, sizeof(id), ns, name);
	switch (k) {
	case FX_K_APP:
		return (v = fx_map_get(&c->apps, id)) ? app_json(v) : NULL;
	case FX_K_SESSION:
		return (v = fx_map_get(&c->sessions, id)) ? fx_sess_json(v) : NULL;
	case FX_K_POD:
		return (v = fx_map_get(&c->pods, id)) ? fx_pod_json(v) : NULL;
	default:
		return NULL;
	}
}

json_t *fx_core_list(struct fx_core *c, enum fx_kind k, const char *ns, uint64_t *rev)
{
	struct fx_map *m = k == FX_K_APP       ? &c->apps
			   : k == FX_K_SESSION ? &c->sessions
			   : k == FX_K_POD     ? &c->pods
					       : &c->nodes;
	json_t *items = json_array();

	/* an application write in flight publishes at the revision it took:
	 * a watch from this list's must still see it */
	*rev = k == FX_K_APP && c->wq_rv ? c->wq_rv - 1 : c->rev;
	for (size_t i = 0; i < m->nb; i++)
		for (struct fx_ent *e = m->b[i]; e; e = e->next) {
			const char *slash = strchr(e->key, '/');
			json_t *o;

			if (ns && k != FX_K_NODE &&
			    (!slash || (size_t)(slash - e->key) != strlen(ns) ||
			     strncmp(e->key, ns, strlen(ns))))
				continue;
			o = k == FX_K_APP	? app_json(e->val)
			    : k == FX_K_SESSION ? fx_sess_json(e->val)
			    : k == FX_K_POD	? fx_pod_json(e->val)
						: fx_node_json(c, e->val);
			json_array_append_new(items, o);
		}
	return items;
}
