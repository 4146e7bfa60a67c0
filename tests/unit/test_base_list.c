// SPDX-License-Identifier: BSD-2-Clause
/* The control base's Lists written as they are read: the envelope, items in
 * parts as small as asked, skipped items, the source closed once, and an
 * error in the middle that cuts the answer (-1). */
#include <string.h>

#include "ctl_list.h"
#include "unit.h"

struct src {
	int i, n, fail_at, closed;
};

static int next(void *p, json_t **item)
{
	struct src *s = p;

	if (s->i == s->fail_at)
		return -1;
	if (s->i >= s->n)
		return 0;
	s->i++;
	*item = s->i == 2 ? NULL /* skipped */ : json_pack("{s:i}", "n", s->i);
	return 1;
}

static const char *errmsg(void *p)
{
	(void)p;
	return "the source failed";
}

static void close_src(void *p)
{
	((struct src *)p)->closed++;
}

static const struct ctl_list_source source = {next, errmsg, close_src};

int main(void)
{
	struct src s = {.n = 4, .fail_at = -1};
	struct xg_buf b = {0};
	struct ctl_list *l = ctl_list_new("x.io/v1", "Thing", 42, &source, &s);
	json_t *all, *want;
	int parts = 0, rc;

	CHECK(l != NULL, "a list");
	while ((rc = ctl_list_next(l, &b, 1)) == 1)
		parts++;
	CHECK(rc == 0 && s.closed == 1, "it ends, the source closed once at the end");
	CHECK(xg_buf_put(&b, "", 1, 0) == 0, "(NUL)");
	all = json_loads(b.p, 0, NULL);
	want = json_pack("{s:s,s:s,s:{s:s},s:[{s:i},{s:i},{s:i}]}", "apiVersion", "x.io/v1", "kind",
			 "ThingList", "metadata", "resourceVersion", "42", "items", "n", 1, "n", 3,
			 "n", 4);
	CHECK(all && json_equal(all, want), "one List, the skipped item left out: %s", b.p);
	CHECK(parts >= 3, "written in parts (%d)", parts);
	json_decref(all);
	json_decref(want);
	ctl_list_free(l);
	CHECK(s.closed == 1, "freeing does not close it again");

	memset(&s, 0, sizeof(s));
	s.n = 5;
	s.fail_at = 3;
	b.len = 0;
	l = ctl_list_new("x.io/v1", "Thing", 1, &source, &s);
	while ((rc = ctl_list_next(l, &b, 1)) == 1)
		;
	CHECK(rc == -1 && !s.closed, "an error in the middle: -1 (the answer is cut)");
	ctl_list_free(l);
	CHECK(s.closed == 1, "then freed: closed once");
	xg_buf_free(&b);
	return unit_summary();
}
