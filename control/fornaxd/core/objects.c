// SPDX-License-Identifier: BSD-2-Clause
/*
 * The core's plumbing: the hash map its objects live in, the clock and
 * revisions, and the objects as the API shows them (Kubernetes-shaped,
 * with the original's field names).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "core_int.h"
#include "ctl_k8s.h"

/* ---- the map ---- */

static size_t hash(const char *s)
{
	size_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

void *fx_map_get(const struct fx_map *m, const char *key)
{
	if (!m->nb)
		return NULL;
	for (struct fx_ent *e = m->b[hash(key) & (m->nb - 1)]; e; e = e->next)
		if (!strcmp(e->key, key))
			return e->val;
	return NULL;
}

static int grow(struct fx_map *m)
{
	size_t nb = m->nb ? m->nb * 2 : 64;
	struct fx_ent **b = calloc(nb, sizeof(*b));

	if (!b)
		return -1;
	for (size_t i = 0; i < m->nb; i++)
		for (struct fx_ent *e = m->b[i], *next; e; e = next) {
			next = e->next;
			e->next = b[hash(e->key) & (nb - 1)];
			b[hash(e->key) & (nb - 1)] = e;
		}
	free(m->b);
	m->b = b;
	m->nb = nb;
	return 0;
}

int fx_map_put(struct fx_map *m, const char *key, void *val)
{
	struct fx_ent *e;

	if ((m->n + 1 > m->nb * 2 || !m->nb) && grow(m))
		return -1;
	if (!(e = malloc(sizeof(*e))))
		return -1;
	e->key = key;
	e->val = val;
	e->next = m->b[hash(key) & (m->nb - 1)];
	m->b[hash(key) & (m->nb - 1)] = e;
	m->n++;
	return 0;
}

void fx_map_del(struct fx_map *m, const char *key)
{
	if (!m->nb)
		return;
	for (struct fx_ent **p = &m->b[hash(key) & (m->nb - 1)]; *p; p = &(*p)->next)
		if (!strcmp((*p)->key, key)) {
			struct fx_ent *e = *p;

			*p = e->next;
			free(e);
			m->n--;
			return;
		}
}

void fx_map_each(struct fx_map *m, void (*fn)(void *arg, void *val), void *arg)
{
	for (size_t i = 0; i < m->nb; i++)
		for (struct fx_ent *e = m->b[i], *next; e; e = next) {
			next = e->next; /* fn may delete e */
			fn(arg, e->val);
		}
}

void fx_map_free(struct fx_map *m)
{
	for (size_t i = 0; i < m->nb; i++)
		for (struct fx_ent *e = m->b[i], *next; e; e = next) {
			next = e->next;
			free(e);
		}
	free(m->b);
	memset(m, 0, sizeof(*m));
}

/* ---- clock, revisions, events ---- */

uint64_t fx_now(struct fx_core *c)
{
	return c->h.now_ms(c->h.arg);
}

int64_t fx_wall_us(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

void fx_stamp(char out[24])
{
	ctl_k8s_timestamp(time(NULL), out);
}

/* what a standby's core still sends: the link's own messages, no command */
static bool link_msg(json_t *msg)
{
	const char *t = json_string_value(json_object_get(msg, "type"));

	return t && (!strcmp(t, "NodeConfiguration") || !strcmp(t, "NodeFullSync") ||
		     !strcmp(t, "CoreState"));
}

void fx_send(struct fx_core *c, struct fx_node *n, json_t *msg)
{
	/* a standby never commands a node: only the leader decides (a node
	 * would refuse it too, proto/fornax.md "Several cores") */
	if (!n || !n->link || !msg || (c->passive && !link_msg(msg))) {
		json_decref(msg);
		return;
	}
	c->seq++;
	c->h.send(c->h.arg, n->link, msg);
}

void fx_kick(struct fx_core *c)
{
	if (c->h.kick)
		c->h.kick(c->h.arg);
}

void fx_changed(struct fx_core *c, enum fx_kind k, const char *type, void *obj)
{
	json_t *o = NULL;
	uint64_t rv = ++c->rev;

	switch (k) {
	case FX_K_SESSION:
		((struct fx_sess *)obj)->rv = rv;
		o = fx_sess_json(obj);
		break;
	case FX_K_POD:
		((struct fx_pod *)obj)->rv = rv;
		o = fx_pod_json(obj);
		break;
	case FX_K_NODE:
		((struct fx_node *)obj)->rv = rv;
		o = fx_node_json(c, obj);
		break;
	default:
		return;
	}
	if (o && c->h.event)
		c->h.event(c->h.arg, k, type, o, rv);
	json_decref(o);
}

/* ---- the objects ---- */

static json_t *meta(const char *ns, const char *name, const char *uid, uint64_t rv,
		    const char *created)
{
	char v[24];
	json_t *m;

	snprintf(v, sizeof(v), "%" PRIu64, rv);
	m = json_pack("{s:s,s:s,s:s,s:s}", "name", name, "uid", uid, "resourceVersion", v,
		      "creationTimestamp", created);
	if (ns)
		json_object_set_new(m, "namespace", json_string(ns));
	return m;
}

static json_t *object(const char *kind, json_t *md, json_t *spec, json_t *status)
{
	return json_pack("{s:s,s:s,s:o,s:o,s:o}", "apiVersion", FX_API_VERSION, "kind", kind,
			 "metadata", md, "spec", spec, "status", status);
}

static json_t *micro_time(int64_t us)
{
	char ts[24];

	if (!us)
		return json_null();
	ctl_k8s_timestamp((time_t)(us / 1000000), ts);
	return json_string(ts);
}

json_t *fx_sess_json(struct fx_sess *s)
{
	json_t *md = meta(s->ns, s->name, s->uid, s->rv, s->created),
	       *spec = json_deep_copy(json_object_get(s->in, "spec"));
	json_t *labels = json_object_get(json_object_get(s->in, "metadata"), "labels");
	json_t *st;

	if (labels)
		json_object_set(md, "labels", labels);
	if (!spec)
		spec = json_pack("{s:s}", "applicationName", s->spec.app);
	json_object_set_new(spec, "openTimeoutSeconds", json_integer(s->spec.open_timeout_s));
	json_object_set_new(spec, "closeGracePeriodSeconds", json_integer(s->spec.close_grace_s));
	json_object_set_new(spec, "killInstanceWhenSessionClosed",
			    json_boolean(s->spec.kill_on_close));
	st = json_pack("{s:s,s:O,s:I,s:I,s:o,s:o,s:I}", "sessionStatus", fx_sess_state_name(s->st),
		       "accessEndPoints", s->endpoints, "creationTimeMicro",
		       (json_int_t)s->created_us, "availableTimeMicro", (json_int_t)s->available_us,
		       "availableTime", micro_time(s->available_us), "closeTime",
		       micro_time(s->close_us), "clientSessions", (json_int_t)s->client_sessions);
	if (s->pod_id[0])
		json_object_set_new(
		    st, "podReference",
		    json_pack("{s:s,s:s}", "name", strchr(s->pod_id, '/') + 1, "node", s->node));
	if (s->reason[0])
		json_object_set_new(st, "reason", json_string(s->reason));
	return object("ApplicationSession", md, spec, st);
}

static const char *pod_phase(const struct fx_pod *p)
{
	switch (p->state) {
	case FX_P_CREATING:
		return "Pending";
	case FX_P_TERMINATED:
		return "Succeeded";
	case FX_P_FAILED:
		return "Failed";
	default:
		return "Running";
	}
}

json_t *fx_pod_json(struct fx_pod *p)
{
	json_t *md = meta(p->ns, p->name, p->uid, p->rv, p->created), *spec, *st;
	json_t *cs =
	    p->app ? json_object_get(json_object_get(p->app->obj, "spec"), "containers") : NULL;

	json_object_set_new(md, "labels",
			    json_pack("{s:s}", "application", p->app ? p->app->name : ""));
	spec = json_pack("{s:s,s:o}", "nodeName", p->node ? p->node->name : "", "containers",
			 cs ? json_incref(cs) : json_array());
	st = json_pack("{s:s,s:s,s:s,s:[]}", "phase", pod_phase(p), "podIP", p->ip, "fornaxState",
		       fx_pod_state_name(p->state), "sessions");
	if (p->sess)
		json_array_append_new(json_object_get(st, "sessions"), json_string(p->sess->name));
	if (p->reason[0])
		json_object_set_new(st, "reason", json_string(p->reason));
	return object("Pod", md, spec, st);
}

json_t *fx_node_json(struct fx_core *c, struct fx_node *n)
{
	json_t *md = meta(NULL, n->name, n->uid, n->rv, n->created), *st, *labels;
	json_t *addr = json_array();
	const char *ip = json_string_value(json_object_get(n->info, "ip"));
	const char *pub = json_string_value(json_object_get(n->info, "publicIp"));

	(void)c;
	labels = json_object_get(n->info, "labels");
	labels = json_is_object(labels) ? json_deep_copy(labels) : json_object();
	if (n->ingress) /* as Kubernetes marks a node's role */
		json_object_set_new(labels, "node-role.kubernetes.io/ingress", json_string(""));
	json_object_set_new(md, "labels", labels);
	if (ip)
		json_array_append_new(addr,
				      json_pack("{s:s,s:s}", "type", "InternalIP", "address", ip));
	if (pub)
		json_array_append_new(addr,
				      json_pack("{s:s,s:s}", "type", "ExternalIP", "address", pub));
	st = json_pack("{s:{s:I,s:I,s:I},s:{s:I,s:I,s:I},s:o,s:[{s:s,s:s}],s:I,s:b}", "capacity",
		       "cpu", (json_int_t)n->cpu, "memory", (json_int_t)n->mem, "pods",
		       (json_int_t)n->pods_cap, "allocatable", "cpu",
		       (json_int_t)(n->cpu - n->cpu_used), "memory",
		       (json_int_t)(n->mem - n->mem_used), "pods",
		       (json_int_t)(n->pods_cap - n->n_pods), "addresses", addr, "conditions",
		       "type", "Ready", "status", n->ready && n->link ? "True" : "False",
		       "nodeRevision", (json_int_t)n->rev.cur, "linked", n->link != NULL);
	return object("Node", md, json_pack("{s:s}", "podCIDR", n->cidr), st);
}
