// SPDX-License-Identifier: BSD-2-Clause
/* A List written as it is read; see ctl_list.h. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_list.h"
#include "ctl_log.h"

struct ctl_list {
	const struct ctl_list_source *source;
	void *src; /* NULL once closed */
	char kind[64];
	char *head;   /* the envelope up to and with "items":[ */
	size_t items; /* written so far */
	bool started, done;
};

static void source_close(struct ctl_list *l)
{
	if (l->src)
		l->source->close(l->src);
	l->src = NULL;
}

void ctl_list_free(struct ctl_list *l)
{
	if (!l)
		return;
	source_close(l);
	free(l->head);
	free(l);
}

struct ctl_list *ctl_list_new(const char *api_version, const char *kind, uint64_t revision,
			      const struct ctl_list_source *source, void *src)
{
	struct ctl_list *l = calloc(1, sizeof(*l));
	char rv[24], k[80];
	json_t *env;
	size_t n;

	if (!l) {
		source->close(src);
		return NULL;
	}
	l->source = source;
	l->src = src;
	snprintf(l->kind, sizeof(l->kind), "%s", kind);
	snprintf(rv, sizeof(rv), "%" PRIu64, revision);
	snprintf(k, sizeof(k), "%sList", kind);
	/* the envelope as a whole List would be written, cut before the items' "]}" */
	env = json_pack("{s:s,s:s,s:{s:s},s:[]}", "apiVersion", api_version, "kind", k, "metadata",
			"resourceVersion", rv, "items");
	l->head = env ? json_dumps(env, JSON_COMPACT) : NULL;
	json_decref(env);
	n = l->head ? strlen(l->head) : 0;
	if (n < 2 || strcmp(l->head + n - 2, "]}")) {
		ctl_list_free(l);
		return NULL;
	}
	l->head[n - 2] = 0;
	return l;
}

static int dump_cb(const char *buf, size_t size, void *data)
{
	return xg_buf_put(data, buf, size, 0);
}

int ctl_list_next(struct ctl_list *l, struct xg_buf *b, size_t min)
{
	size_t start = b->len;

	if (l->done)
		return 0;
	if (!l->started) {
		if (xg_buf_put(b, l->head, strlen(l->head), 0))
			return -1;
		l->started = true;
	}
	while (b->len - start < min) {
		json_t *item = NULL;
		int rc = l->src ? l->source->next(l->src, &item) : -1;

		if (rc == 0) {
			source_close(l); /* e.g. ends a snapshot's read transaction */
			l->done = true;
			return xg_buf_put(b, "]}", 2, 0) ? -1 : 0;
		}
		if (rc > 0 && !item)
			continue;
		if (rc < 0 || (l->items && xg_buf_put(b, ",", 1, 0)) ||
		    json_dump_callback(item, dump_cb, b, JSON_COMPACT)) {
			ctl_log("list %ss: %s after %zu items; the answer is cut short", l->kind,
				rc > 0	 ? "out of memory"
				: l->src ? l->source->errmsg(l->src)
					 : "closed",
				l->items);
			json_decref(item);
			return -1;
		}
		json_decref(item);
		l->items++;
	}
	return 1;
}
