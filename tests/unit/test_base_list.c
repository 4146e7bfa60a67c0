// SPDX-License-Identifier: BSD-2-Clause
/* The control base's Lists written as they are read: the envelope, items in
 * parts as small as asked, skipped items, the source closed once, and an
 * error in the middle that cuts the answer (-1); the list options: pages
 * of limit items with a continue token that the next page starts after,
 * labelSelector and fieldSelector, and the tokens refused (400 malformed
 * or forged, 410 too old). */
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

static const struct ctl_list_source source = {next, errmsg, close_src, NULL};

/* named items n1..n<n> with labels tier=web on the odd ones, in key order */
struct named {
	int i, n;
};

static int named_next(void *p, json_t **item)
{
	struct named *s = p;
	char name[16];

	if (s->i >= s->n)
		return 0;
	s->i++;
	snprintf(name, sizeof(name), "n%02d", s->i);
	*item = json_pack("{s:{s:s,s:s,s:o}}", "metadata", "name", name, "namespace", "default",
			  "labels", s->i % 2 ? json_pack("{s:s}", "tier", "web") : json_object());
	return 1;
}

static void named_close(void *p)
{
	(void)p;
}

static long long named_remaining(void *p)
{
	struct named *s = p;

	return s->n - s->i;
}

static const struct ctl_list_source named = {named_next, errmsg, named_close, named_remaining};

/* One whole answer of a list with the options: the parsed List */
static json_t *page(const struct ctl_list_opts *o, int n, uint64_t rev)
{
	struct named s = {0, n};
	struct xg_buf b = {0};
	struct ctl_list *l = ctl_list_new_opts("x.io/v1", "Thing", rev, o, &named, &s);
	json_t *j;
	int rc;

	while ((rc = ctl_list_next(l, &b, 5)) == 1)
		;
	ctl_list_free(l);
	xg_buf_put(&b, "", 1, 0);
	j = rc == 0 ? json_loads(b.p, 0, NULL) : NULL;
	xg_buf_free(&b);
	return j;
}

static const char *names(json_t *list, char *buf, size_t len)
{
	json_t *v;
	size_t i, off = 0;

	buf[0] = 0;
	json_array_foreach(json_object_get(list, "items"), i, v) off += (size_t)snprintf(
	    buf + off, len - off, "%s%s", i ? " " : "",
	    json_string_value(json_object_get(json_object_get(v, "metadata"), "name")));
	return buf;
}

static const char *cont_of(json_t *list)
{
	return json_string_value(json_object_get(json_object_get(list, "metadata"), "continue"));
}

/* metadata.remainingItemCount, or -1 when absent */
static long long remaining_of(json_t *list)
{
	json_t *r = json_object_get(json_object_get(list, "metadata"), "remainingItemCount");

	return json_is_integer(r) ? (long long)json_integer_value(r) : -1;
}

static void options(void)
{
	struct ctl_list_opts o;
	char err[400], buf[256], tok[1100];
	const char *param = NULL;
	json_t *p1, *p2, *p3;

	CHECK(!ctl_list_opts_parse(&o, "2", NULL, NULL, NULL, 10, 100, err, sizeof(err), &param) &&
		  o.limit == 2,
	      "limit=2 (%s)", err);
	p1 = page(&o, 5, 100);
	CHECK(p1 && !strcmp(names(p1, buf, sizeof(buf)), "n01 n02") && cont_of(p1) &&
		  !strcmp(json_string_value(
			      json_object_get(json_object_get(p1, "metadata"), "resourceVersion")),
			  "100"),
	      "the first page: 2 items, a continue token, the revision (%s)", buf);
	snprintf(tok, sizeof(tok), "%s", cont_of(p1) ? cont_of(p1) : "");
	CHECK(!ctl_list_opts_parse(&o, "2", tok, NULL, NULL, 10, 100, err, sizeof(err), &param) &&
		  !strcmp(o.start, "default/n02"),
	      "its token starts after default/n02 (%s)", err);
	CHECK(remaining_of(p1) == 3, "and remainingItemCount 3, the items after it (%lld)",
	      remaining_of(p1));
	p2 = page(&o, 5, 100);
	CHECK(p2 && !strcmp(names(p2, buf, sizeof(buf)), "n03 n04") && cont_of(p2) &&
		  remaining_of(p2) == 1,
	      "the second page, one item after it (%s; %lld)", buf, remaining_of(p2));
	ctl_list_opts_parse(&o, "2", cont_of(p2), NULL, NULL, 10, 100, err, sizeof(err), &param);
	p3 = page(&o, 5, 100);
	CHECK(p3 && !strcmp(names(p3, buf, sizeof(buf)), "n05") && !cont_of(p3) &&
		  remaining_of(p3) == -1,
	      "the last page: the rest, no continue, no remainingItemCount (%s)", buf);
	json_decref(p2);
	json_decref(p3);
	ctl_list_opts_parse(&o, "5", NULL, NULL, NULL, 10, 100, err, sizeof(err), &param);
	p2 = page(&o, 5, 100);
	CHECK(p2 && !cont_of(p2) && json_array_size(json_object_get(p2, "items")) == 5,
	      "a limit the list just fills: no continue");
	json_decref(p2);

	CHECK(!ctl_list_opts_parse(&o, "2", NULL, "tier=web", NULL, 10, 100, err, sizeof(err),
				   &param),
	      "limit with labelSelector tier=web");
	p2 = page(&o, 6, 100);
	CHECK(p2 && !strcmp(names(p2, buf, sizeof(buf)), "n01 n03") && cont_of(p2),
	      "a page counts the selected items only (%s)", buf);
	CHECK(remaining_of(p2) == -1,
	      "with a selector, no remainingItemCount: the rest is not read to count it");
	ctl_list_opts_parse(&o, "2", cont_of(p2), "tier=web", NULL, 10, 100, err, sizeof(err),
			    &param);
	p3 = page(&o, 6, 100);
	CHECK(p3 && !strcmp(names(p3, buf, sizeof(buf)), "n05") && !cont_of(p3),
	      "and the next page the rest of them (%s)", buf);
	json_decref(p2);
	json_decref(p3);
	ctl_list_opts_parse(&o, NULL, NULL, "!tier", "metadata.name=n04", 10, 100, err, sizeof(err),
			    &param);
	p2 = page(&o, 6, 100);
	CHECK(p2 && !strcmp(names(p2, buf, sizeof(buf)), "n04"), "!tier and a fieldSelector (%s)",
	      buf);
	json_decref(p2);

	CHECK(ctl_list_opts_parse(&o, "-1", NULL, NULL, NULL, 10, 100, err, sizeof(err), &param) ==
		      400 &&
		  !strcmp(param, "limit") && strstr(err, "'-1'"),
	      "limit -1: 400 quoting it (%s)", err);
	CHECK(ctl_list_opts_parse(&o, "2", "garbage!", NULL, NULL, 10, 100, err, sizeof(err),
				  &param) == 400 &&
		  !strcmp(param, "continue") && strstr(err, "garbage!"),
	      "a token that is not one: 400 (%s)", err);
	CHECK(ctl_list_opts_parse(&o, "2", tok, NULL, NULL, 101, 200, err, sizeof(err), &param) ==
		      410 &&
		  !strcmp(param, "continue") && strstr(err, "too old"),
	      "a token older than the daemon's floor: 410 (%s)", err);
	CHECK(ctl_list_opts_parse(&o, "2", tok, NULL, NULL, 10, 99, err, sizeof(err), &param) ==
		  400,
	      "a token from a revision not reached yet (another server's): 400 (%s)", err);
	/* base64url of {"v":"meta.k8s.io/v1","rv":50} (no start) */
	CHECK(ctl_list_opts_parse(&o, "2", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NTB9", NULL, NULL,
				  10, 100, err, sizeof(err), &param) == 400,
	      "a token without its start: 400 (%s)", err);
	CHECK(ctl_list_opts_parse(&o, NULL, NULL, "a b=c", NULL, 10, 100, err, sizeof(err),
				  &param) == 400 &&
		  !strcmp(param, "labelSelector"),
	      "a bad labelSelector: 400 (%s)", err);
	json_decref(p1);
}

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
	options();
	return unit_summary();
}
