// SPDX-License-Identifier: BSD-2-Clause
/*
 * Application writes without waiting for the store (core.h
 * fx_core_app_write). They are taken one at a time in arrival order: each
 * is checked when its turn comes, against what the writes before it left
 * (a second create of a name is a 409, an update with an old
 * resourceVersion too), takes its revision then, and the core changes only
 * when the store says the write is durable. One at a time also keeps the
 * applications' events in revision order: a list answered while a write is
 * in flight says it is as of the revision before the write's, so a watch
 * started from it sees the write's event.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_int.h"
#include "ctl_log.h"

struct fx_wq {
	struct fx_wq *next;
	struct fx_core *c;
	struct fx_write w;
	json_t *body;
	fx_core_done done;
	void *arg;
};

static void wq_free(struct fx_wq *q)
{
	json_decref(q->w.obj);
	json_decref(q->body);
	free(q);
}

/* done takes out (a new reference) on success */
static void answer(struct fx_wq *q, int rc, json_t *out, const struct fx_err *e)
{
	if (q->done && !rc) {
		q->done(q->arg, out, NULL);
		return;
	}
	if (q->done) /* NULL: answered already (fx_core_writes_stop) */
		q->done(q->arg, NULL, e);
	json_decref(out);
}

static void turn(struct fx_core *c);

static void stored(void *arg, int rc, const char *err)
{
	struct fx_wq *q = arg;
	struct fx_core *c = q->c;
	json_t *out = NULL;
	struct fx_err e;

	(void)err; /* the store's errmsg says it too (fx_write_apply logs it) */
	rc = fx_write_apply(c, &q->w, rc, &out, &e);
	c->wq_cur = NULL;
	c->wq_rv = 0;
	answer(q, rc, out, &e);
	wq_free(q);
	if (!c->wq_turning)
		turn(c);
}

/* the next writes, until one is in flight */
static void turn(struct fx_core *c)
{
	c->wq_turning = true;
	while (!c->wq_cur && c->wq_head) {
		struct fx_wq *q = c->wq_head;
		json_t *out = NULL;
		struct fx_err e;
		char *text = NULL;
		int rc;

		if (!(c->wq_head = q->next))
			c->wq_tail = NULL;
		rc = fx_write_prepare(c, &q->w, q->body, &out, &e);
		if (rc) {
			answer(q, rc < 0 ? -1 : 0, out, &e);
			wq_free(q);
			continue;
		}
		c->wq_cur = q;
		c->wq_rv = q->w.rv;
		if (q->w.op == FX_W_DELETE)
			rc = c->st->ops->app_del_async(c->st, q->w.ns, q->w.name, q->w.rv, stored,
						       q);
		else
			rc = (text = json_dumps(q->w.obj, JSON_COMPACT))
				 ? c->st->ops->app_put_async(c->st, q->w.ns, q->w.name, q->w.rv,
							     text, stored, q)
				 : -1;
		free(text);
		if (rc)
			stored(q, -1, NULL); /* not sent: nothing written */
	}
	c->wq_turning = false;
}

void fx_core_app_write(struct fx_core *c, enum fx_wop op, const char *ns, const char *name,
		       json_t *body, fx_core_done done, void *arg)
{
	struct fx_wq *q = calloc(1, sizeof(*q));
	struct fx_err e;

	if (!q || c->wq_stopped) {
		free(q);
		if (c->wq_stopped)
			fx_errf(&e, 503, NULL, "fornaxd is stopping; nothing was written");
		else
			fx_errf(&e, 500, NULL, "out of memory");
		done(arg, NULL, &e);
		return;
	}
	q->c = c;
	q->w.op = op;
	snprintf(q->w.ns, sizeof(q->w.ns), "%s", ns);
	snprintf(q->w.name, sizeof(q->w.name), "%s", name ? name : "");
	q->body = json_incref(body);
	q->done = done;
	q->arg = arg;
	if (c->wq_tail)
		c->wq_tail->next = q;
	else
		c->wq_head = q;
	c->wq_tail = q;
	if (!c->wq_turning)
		turn(c);
}

void fx_core_writes_stop(struct fx_core *c)
{
	struct fx_err e;

	c->wq_stopped = true;
	if (c->wq_cur && c->wq_cur->done) {
		/* it stays in flight (the store still holds it); only answered now */
		fx_errf(&e, 504, NULL,
			"fornaxd stopped before the store answered: the write may still be "
			"applied; read the application back before you retry");
		c->wq_cur->done(c->wq_cur->arg, NULL, &e);
		c->wq_cur->done = NULL;
	}
	fx_errf(&e, 503, NULL, "fornaxd is stopping; nothing was written");
	while (c->wq_head) {
		struct fx_wq *q = c->wq_head;

		c->wq_head = q->next;
		q->done(q->arg, NULL, &e);
		wq_free(q);
	}
	c->wq_tail = NULL;
}

/* What the store still has in flight is dropped with it (it never calls
 * back once the loop has stopped). */
void fx_writes_free(struct fx_core *c)
{
	fx_core_writes_stop(c);
	if (c->wq_cur)
		wq_free(c->wq_cur);
	c->wq_cur = NULL;
}
