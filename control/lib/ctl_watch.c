// SPDX-License-Identifier: BSD-2-Clause
/*
 * Watches of a collection: a ring of the latest events, each serialized once,
 * and the open watchers, each with a bounded buffer of bytes its client has
 * not read yet. One thread (the daemon's loop) calls everything here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_k8s.h"
#include "ctl_watch.h"

struct event {
	uint64_t rv;
	char *line; /* the event and its newline */
	size_t len;
	size_t obj_off; /* where ,"object": starts (another type put before it) */
	char *name;	/* the object's metadata.name (NULL: none), for named watchers */
	json_t *labels; /* the object's labels now, and before the change (NULL: */
	json_t *prev;	/* not known), for watchers with a labelSelector */
};

struct ctl_watcher {
	struct ctl_watch *w; /* NULL once the watch is freed */
	struct ctl_watcher *next, *prev;
	uint64_t from;		      /* events after this only */
	char *name;		      /* of this object only (a fieldSelector); NULL: all */
	struct ctl_k8s_selector *sel; /* of the objects it selects only; NULL: all */
	struct xg_buf buf;	      /* pending bytes from off */
	size_t off;
	const char *ended;
	bool idle; /* answered CTL_WATCH_IDLE: wake when something comes */
	void (*wake)(void *arg);
	void *arg;
};

struct ctl_watch {
	struct event *ring;
	size_t cap, head, n; /* the oldest at head */
	uint64_t floor;	     /* a start older than this is Expired */
	uint64_t latest;
	size_t buf_max;
	struct ctl_watcher *watchers;
	json_t *labels; /* "NS/NAME" -> its labels at its last event (or as made known) */
};

struct ctl_watch *ctl_watch_new(uint64_t since, size_t ring, size_t buf_max)
{
	struct ctl_watch *w = calloc(1, sizeof(*w));

	if (!w || !(w->ring = calloc(ring ? ring : 1, sizeof(*w->ring)))) {
		free(w);
		return NULL;
	}
	if (!(w->labels = json_object())) {
		free(w->ring);
		free(w);
		return NULL;
	}
	w->cap = ring ? ring : 1;
	w->floor = w->latest = since;
	w->buf_max = buf_max;
	return w;
}

static void end(struct ctl_watcher *wr, const char *why)
{
	if (wr->ended)
		return;
	wr->ended = why;
	/* unread events are dropped: the client re-lists anyway */
	xg_buf_free(&wr->buf);
	wr->off = 0;
	if (wr->wake)
		wr->wake(wr->arg);
}

static void unlink_watcher(struct ctl_watcher *wr)
{
	if (!wr->w)
		return;
	if (wr->prev)
		wr->prev->next = wr->next;
	else
		wr->w->watchers = wr->next;
	if (wr->next)
		wr->next->prev = wr->prev;
	wr->w = NULL;
	wr->next = wr->prev = NULL;
}

static void event_clear(struct event *e)
{
	free(e->line);
	free(e->name);
	json_decref(e->labels);
	json_decref(e->prev);
	memset(e, 0, sizeof(*e));
}

void ctl_watch_free(struct ctl_watch *w)
{
	if (!w)
		return;
	while (w->watchers) {
		struct ctl_watcher *wr = w->watchers;

		unlink_watcher(wr);
		end(wr, "closed");
	}
	for (size_t i = 0; i < w->n; i++)
		event_clear(&w->ring[(w->head + i) % w->cap]);
	json_decref(w->labels);
	free(w->ring);
	free(w);
}

uint64_t ctl_watch_revision(const struct ctl_watch *w)
{
	return w->latest;
}

uint64_t ctl_watch_floor(const struct ctl_watch *w)
{
	return w->floor;
}

/* "NS/NAME" or "NAME": what the labels are kept under */
static bool key_of(json_t *object, char *key, size_t len)
{
	json_t *md = json_object_get(object, "metadata");
	const char *ns = json_string_value(json_object_get(md, "namespace"));
	const char *name = json_string_value(json_object_get(md, "name"));

	if (!name)
		return false;
	snprintf(key, len, "%s%s%s", ns ? ns : "", ns ? "/" : "", name);
	return true;
}

static json_t *labels_of(json_t *object)
{
	json_t *l = json_object_get(json_object_get(object, "metadata"), "labels");

	return json_is_object(l) ? json_deep_copy(l) : json_object();
}

int ctl_watch_known(struct ctl_watch *w, json_t *object)
{
	char key[400];

	return key_of(object, key, sizeof(key))
		   ? json_object_set_new(w->labels, key, labels_of(object))
		   : 0;
}

/* What a watcher with a selector sees of a change, as Kubernetes' watch
 * cache answers: the event as it is while the object is selected before
 * and after; ADDED when it comes into the selection, DELETED when it
 * leaves it; nothing while it is outside. NULL: nothing; else the type. */
static const char *selected(const struct ctl_watcher *wr, const struct event *e, const char *type)
{
	bool now, before;

	if (!wr->sel)
		return type;
	now = ctl_k8s_selector_match(wr->sel, e->labels);
	before = e->prev ? ctl_k8s_selector_match(wr->sel, e->prev) : now;
	if (now && before)
		return type;
	if (now)
		return "ADDED";
	if (before)
		return "DELETED";
	return NULL;
}

/* Append an event's bytes; a watcher that would pass buf_max is ended. */
static void deliver(struct ctl_watch *w, struct ctl_watcher *wr, const struct event *e)
{
	const char *line = e->line, *type;
	size_t len = e->len;
	char head[32] = "";

	if (wr->ended || e->rv <= wr->from || (wr->name && (!e->name || strcmp(wr->name, e->name))))
		return;
	if (wr->sel) {
		/* the line's own type sits between its first '"' pairs at 9 */
		char own[16];

		snprintf(own, sizeof(own), "%.*s", (int)(e->obj_off - 10), e->line + 9);
		if (!(type = selected(wr, e, own)))
			return;
		if (strcmp(type, own)) { /* the same line under another type */
			snprintf(head, sizeof(head), "{\"type\":\"%s\"", type);
			line = e->line + e->obj_off;
			len = e->len - e->obj_off;
		}
	}
	if (wr->off && wr->off == wr->buf.len)
		wr->buf.len = wr->off = 0; /* all read: start the buffer again */
	if (wr->buf.len - wr->off + strlen(head) + len > w->buf_max) {
		end(wr, "too far behind");
		return;
	}
	if (wr->off > wr->buf.len / 2) { /* reuse the read half before growing */
		memmove(wr->buf.p, wr->buf.p + wr->off, wr->buf.len - wr->off);
		wr->buf.len -= wr->off;
		wr->off = 0;
	}
	if (xg_buf_put(&wr->buf, head, strlen(head), 0) || xg_buf_put(&wr->buf, line, len, 0)) {
		end(wr, "too far behind");
		return;
	}
	if (wr->idle && wr->wake) {
		wr->idle = false;
		wr->wake(wr->arg);
	}
}

int ctl_watch_event(struct ctl_watch *w, uint64_t rv, const char *type, json_t *object)
{
	json_t *ev = json_pack("{s:s,s:O}", "type", type, "object", object);
	char *text = ev ? json_dumps(ev, JSON_COMPACT) : NULL, *line, *name = NULL, key[400];
	json_t *name_v = json_object_get(json_object_get(object, "metadata"), "name");
	json_t *labels = labels_of(object), *prev = NULL;
	size_t obj_off = 9 + strlen(type) + 1; /* {"type":"TYPE" */
	struct event *e;
	size_t len;

	json_decref(ev);
	if (!json_is_string(name_v))
		name_v = NULL;
	if (key_of(object, key, sizeof(key))) {
		/* the labels before this change, for the watchers with selectors */
		prev = json_incref(json_object_get(w->labels, key));
		if (!strcmp(type, "DELETED"))
			json_object_del(w->labels, key);
		else if (labels)
			json_object_set(w->labels, key, labels);
	}
	if (!text || !labels || strncmp(text + obj_off, ",\"object\":", 10)) {
		free(text);
		json_decref(labels);
		json_decref(prev);
		for (struct ctl_watcher *wr = w->watchers; wr; wr = wr->next)
			end(wr, "too far behind");
		w->floor = w->latest = rv; /* the ring misses this one */
		return -1;
	}
	len = strlen(text);
	if (w->n == w->cap) { /* the oldest goes: starts before it are Expired now */
		e = &w->ring[w->head];
		w->floor = e->rv;
		event_clear(e);
		w->head = (w->head + 1) % w->cap;
		w->n--;
	}
	line = realloc(text, len + 2);
	if (!line || (name_v && !(name = strdup(json_string_value(name_v))))) {
		free(line ? line : text);
		json_decref(labels);
		json_decref(prev);
		for (struct ctl_watcher *wr = w->watchers; wr; wr = wr->next)
			end(wr, "too far behind");
		w->floor = w->latest = rv; /* the ring misses this one */
		return -1;
	}
	e = &w->ring[(w->head + w->n) % w->cap];
	e->rv = rv;
	e->line = line;
	e->line[len] = '\n';
	e->line[len + 1] = 0;
	e->len = len + 1;
	e->obj_off = obj_off;
	e->name = name;
	e->labels = labels;
	e->prev = prev;
	w->n++;
	if (rv > w->latest)
		w->latest = rv;
	for (struct ctl_watcher *wr = w->watchers; wr; wr = wr->next)
		deliver(w, wr, e);
	return 0;
}

static int expired_event(struct ctl_watcher *wr, uint64_t from, uint64_t floor)
{
	char msg[128];
	json_t *st, *ev;
	char *text;
	int rc;

	snprintf(msg, sizeof(msg), "too old resource version: %llu (%llu)",
		 (unsigned long long)from, (unsigned long long)floor);
	st = ctl_k8s_status(410, "Expired", msg, NULL);
	ev = st ? json_pack("{s:s,s:o}", "type", "ERROR", "object", st) : NULL;
	text = ev ? json_dumps(ev, JSON_COMPACT) : NULL;
	json_decref(ev);
	rc =
	    !text || xg_buf_put(&wr->buf, text, strlen(text), 0) || xg_buf_put(&wr->buf, "\n", 1, 0)
		? -1
		: 0;
	free(text);
	return rc;
}

struct ctl_watcher *ctl_watch_open(struct ctl_watch *w, uint64_t from, void (*wake)(void *arg),
				   void *arg, bool *expired)
{
	return ctl_watch_open_sel(w, from, NULL, NULL, wake, arg, expired);
}

struct ctl_watcher *ctl_watch_open_name(struct ctl_watch *w, uint64_t from, const char *name,
					void (*wake)(void *arg), void *arg, bool *expired)
{
	return ctl_watch_open_sel(w, from, name, NULL, wake, arg, expired);
}

struct ctl_watcher *ctl_watch_open_sel(struct ctl_watch *w, uint64_t from, const char *name,
				       const struct ctl_k8s_selector *sel, void (*wake)(void *arg),
				       void *arg, bool *expired)
{
	struct ctl_watcher *wr = calloc(1, sizeof(*wr));

	*expired = false;
	if (!wr)
		return NULL;
	if ((name && !(wr->name = strdup(name))) ||
	    (sel && sel->n && !(wr->sel = malloc(sizeof(*sel))))) {
		free(wr->name);
		free(wr);
		return NULL;
	}
	if (wr->sel)
		*wr->sel = *sel;
	wr->wake = wake;
	wr->arg = arg;
	if (!from)
		from = w->latest;
	/* a start ahead of the events published yet (a list read before they
	 * were) skips those up to it when they come */
	wr->from = from;
	if (from < w->floor) {
		*expired = true;
		if (expired_event(wr, from, w->floor)) {
			ctl_watcher_free(wr);
			return NULL;
		}
		wr->ended = "expired"; /* after its one event */
		return wr;
	}
	for (size_t i = 0; i < w->n; i++) {
		struct event *e = &w->ring[(w->head + i) % w->cap];

		deliver(w, wr, e);
	}
	wr->w = w;
	wr->next = w->watchers;
	if (wr->next)
		wr->next->prev = wr;
	w->watchers = wr;
	return wr;
}

int ctl_watcher_add(struct ctl_watcher *wr, const char *type, json_t *object)
{
	json_t *ev, *md = json_object_get(object, "metadata");
	const char *name = json_string_value(json_object_get(md, "name"));
	char *text;
	int rc;

	if ((wr->name && (!name || strcmp(name, wr->name))) ||
	    (wr->sel && !ctl_k8s_selector_match(wr->sel, json_object_get(md, "labels"))))
		return 0; /* not what it watches */
	ev = json_pack("{s:s,s:O}", "type", type, "object", object);
	text = ev ? json_dumps(ev, JSON_COMPACT) : NULL;
	rc =
	    !text || xg_buf_put(&wr->buf, text, strlen(text), 0) || xg_buf_put(&wr->buf, "\n", 1, 0)
		? -1
		: 0;

	json_decref(ev);
	free(text);
	return rc;
}

int ctl_watcher_next(struct ctl_watcher *wr, struct xg_buf *b, size_t max)
{
	size_t n = wr->buf.len - wr->off;

	if (n > max)
		n = max;
	if (n && xg_buf_put(b, wr->buf.p + wr->off, n, 0))
		return -1;
	wr->off += n;
	if (wr->off < wr->buf.len)
		return CTL_WATCH_MORE;
	wr->buf.len = wr->off = 0;
	if (wr->ended)
		return CTL_WATCH_END;
	wr->idle = true;
	return CTL_WATCH_IDLE;
}

const char *ctl_watcher_ended(const struct ctl_watcher *wr)
{
	return wr->ended;
}

void ctl_watcher_free(struct ctl_watcher *wr)
{
	if (!wr)
		return;
	unlink_watcher(wr);
	xg_buf_free(&wr->buf);
	free(wr->name);
	free(wr->sel);
	free(wr);
}
