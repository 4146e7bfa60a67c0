/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A growing byte buffer, kept NUL-terminated for the text it usually holds
 * (JSON, HTTP). Header only: the xgate CLI uses it without linking the
 * daemons' library.
 */
#ifndef XG_BUF_H
#define XG_BUF_H

#include <stdlib.h>
#include <string.h>

struct xg_buf {
	char *p; /* NULL until the first put */
	size_t len, cap;
};

/* Append n bytes of data: 0, or -1 when the content would pass max bytes
 * (0: no limit) or memory ran out; b is unchanged then. */
static inline int xg_buf_put(struct xg_buf *b, const void *data, size_t n, size_t max)
{
	if (max && b->len + n > max)
		return -1;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;

		while (cap < b->len + n + 1)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p)
			return -1;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = 0;
	return 0;
}

static inline void xg_buf_free(struct xg_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

#endif
