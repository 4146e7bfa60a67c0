/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fornaxd's core keeps counts beside its objects (pods per pool, queued
 * sessions, node usage); the unit test's storm and the core's fuzz harness
 * check after every step that they still agree with the objects.
 */
#ifndef FX_BOOKS_H
#define FX_BOOKS_H

#include <stdbool.h>
#include <string.h>

#include "core_int.h"

/* Every application's pool counts match its pods, no node's use goes below
 * zero, every session's pod points back at it. */
static inline bool fx_books_balance(struct fx_core *c)
{
	for (size_t i = 0; i < c->apps.nb; i++)
		for (struct fx_ent *e = c->apps.b[i]; e; e = e->next) {
			struct fx_app *a = e->val;
			int n[4] = {0}, q = 0;

			for (struct fx_pod *p = a->pods; p; p = p->app_next)
				n[p->pool]++;
			for (struct fx_sess *s = a->q_head; s; s = s->q_next)
				q++;
			if (memcmp(n, a->n, sizeof(n)) || q != a->n_queued)
				return false;
		}
	for (size_t i = 0; i < c->nodes.nb; i++)
		for (struct fx_ent *e = c->nodes.b[i]; e; e = e->next) {
			struct fx_node *n = e->val;

			if (n->cpu_used < 0 || n->mem_used < 0 || n->n_pods < 0)
				return false;
		}
	for (size_t i = 0; i < c->sessions.nb; i++)
		for (struct fx_ent *e = c->sessions.b[i]; e; e = e->next) {
			struct fx_sess *s = e->val;

			if (s->pod && s->pod->sess != s)
				return false;
		}
	return true;
}

#endif
