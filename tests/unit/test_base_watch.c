// SPDX-License-Identifier: BSD-2-Clause
/* The control base's watches: an event reaches every open watcher once, in
 * order, as one line; a start in the recent past replays the ring; a start
 * older than the ring gets one ERROR event (Status 410 Expired) and the
 * end; a watcher that falls too far behind is ended, its memory bounded;
 * wake comes only to an idle watcher, and when it ends; a watcher of one
 * name sees that object's events only; a watcher with a labelSelector
 * sees the selected objects' events, an object coming into the selection
 * as ADDED and leaving it as DELETED (against labels made known at the start too). */
#include <string.h>

#include "ctl_watch.h"
#include "unit.h"

struct waker {
	int n;
};

static void wake(void *arg)
{
	((struct waker *)arg)->n++;
}

/* Everything pending, as text; the last answer in *rc. */
static char *drain(struct ctl_watcher *wr, struct xg_buf *b, int *rc)
{
	b->len = 0;
	if (b->p)
		*b->p = 0;
	do
		*rc = ctl_watcher_next(wr, b, 7); /* small parts: the loop is exercised */
	while (*rc == CTL_WATCH_MORE);
	return b->p ? b->p : "";
}

static int lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

int main(void)
{
	struct ctl_watch *w = ctl_watch_new(10, 3, 300);
	struct waker wa = {0}, wb = {0}, wc = {0};
	struct xg_buf b = {0};
	struct ctl_watcher *a, *c, *x, *slow;
	bool expired;
	json_t *o = json_pack("{s:s}", "name", "m1");
	char *t;
	int rc, n = 0;

	CHECK(w && ctl_watch_revision(w) == 10, "a new watch knows up to its start revision");
	a = ctl_watch_open(w, 0, wake, &wa, &expired);
	CHECK(a && !expired, "from 0: from now");
	t = drain(a, &b, &rc);
	CHECK(rc == CTL_WATCH_IDLE && !*t, "nothing yet: idle");

	CHECK(!ctl_watch_event(w, 11, "ADDED", o), "event 11");
	CHECK(wa.n == 1, "the idle watcher is woken once");
	CHECK(!ctl_watch_event(w, 12, "MODIFIED", o), "event 12");
	CHECK(wa.n == 1, "not woken again before it reads");
	t = drain(a, &b, &rc);
	CHECK(rc == CTL_WATCH_IDLE && lines(t) == 2 &&
		  !strncmp(t, "{\"type\":\"ADDED\",\"object\":{\"name\":\"m1\"}}\n", 40) &&
		  strstr(t, "\n{\"type\":\"MODIFIED\""),
	      "both events, in order, one line each: %s", t);

	/* fan-out, and a start in the recent past */
	x = ctl_watch_open(w, 11, wake, &wb, &expired);
	t = drain(x, &b, &rc);
	CHECK(x && !expired && lines(t) == 1 && strstr(t, "MODIFIED"),
	      "from 11: the ring replays 12 only");
	CHECK(!ctl_watch_event(w, 13, "DELETED", o), "event 13");
	t = drain(a, &b, &rc);
	CHECK(lines(t) == 1 && strstr(t, "DELETED"), "watcher 1 has 13");
	t = drain(x, &b, &rc);
	CHECK(lines(t) == 1 && strstr(t, "DELETED"), "watcher 2 has 13 too");

	/* the ring holds 3: after 14, 11 is gone and a start at 10 is Expired */
	CHECK(!ctl_watch_event(w, 14, "ADDED", o), "event 14");
	c = ctl_watch_open(w, 11, wake, &wc, &expired);
	CHECK(c && !expired, "from 11 still served (12..14 kept)");
	ctl_watcher_free(c);
	c = ctl_watch_open(w, 10, wake, &wc, &expired);
	t = drain(c, &b, &rc);
	CHECK(c && expired && rc == CTL_WATCH_END && lines(t) == 1 &&
		  strstr(t, "\"type\":\"ERROR\"") && strstr(t, "\"code\":410") &&
		  strstr(t, "\"reason\":\"Expired\""),
	      "from 10: one ERROR event (410 Expired), then the end: %s", t);
	CHECK(ctl_watcher_ended(c) && !strcmp(ctl_watcher_ended(c), "expired"), "ended: expired");
	ctl_watcher_free(c);

	/* a watcher that does not read: ended at 300 bytes pending, not grown */
	slow = ctl_watch_open(w, 0, wake, &wc, &expired);
	wc.n = 0;
	drain(a, &b, &rc);
	for (uint64_t rv = 15; rv < 40; rv++) {
		ctl_watch_event(w, rv, "MODIFIED", o);
		t = drain(a, &b, &rc); /* this one reads as they come */
		n += lines(t);
	}
	CHECK(ctl_watcher_ended(slow) && !strcmp(ctl_watcher_ended(slow), "too far behind"),
	      "the slow watcher is ended");
	CHECK(wc.n == 1, "and woken once, to end its stream");
	t = drain(slow, &b, &rc);
	CHECK(rc == CTL_WATCH_END && !*t, "its unread events are dropped: the end at once");
	CHECK(rc == CTL_WATCH_END && !ctl_watcher_ended(a) && n == 25,
	      "a watcher that reads is not affected (15..39: %d lines)", n);

	/* freeing the watch ends the open watchers; each is freed by its owner */
	wa.n = 0;
	ctl_watch_free(w);
	CHECK(wa.n == 1 && !strcmp(ctl_watcher_ended(a), "closed"), "watch freed: ended, woken");
	t = drain(a, &b, &rc);
	CHECK(rc == CTL_WATCH_END, "and its stream ends");
	ctl_watcher_free(a);
	ctl_watcher_free(x);
	ctl_watcher_free(slow);

	/* a start ahead of what was published (a list read before its events
	 * were): those up to it are skipped when they come */
	w = ctl_watch_new(5, 4, 1000);
	a = ctl_watch_open(w, 7, wake, &wa, &expired);
	ctl_watch_event(w, 6, "ADDED", o);
	ctl_watch_event(w, 7, "MODIFIED", o);
	ctl_watch_event(w, 8, "DELETED", o);
	t = drain(a, &b, &rc);
	CHECK(a && !expired && lines(t) == 1 && strstr(t, "DELETED"), "from 7: only 8: %s", t);
	ctl_watcher_free(a);
	ctl_watch_free(w);

	/* a watcher of one name (fieldSelector metadata.name): its events only,
	 * from the ring and as they come; events added for it alone come first */
	{
		json_t *m1 = json_pack("{s:{s:s}}", "metadata", "name", "m1");
		json_t *m2 = json_pack("{s:{s:s}}", "metadata", "name", "m2");

		w = ctl_watch_new(0, 8, 1000);
		ctl_watch_event(w, 1, "ADDED", m1);
		ctl_watch_event(w, 2, "ADDED", m2);
		a = ctl_watch_open_name(w, 0, "m2", wake, &wa, &expired);
		c = ctl_watch_open_name(w, 1, "m2", wake, &wc, &expired);
		CHECK(a && c && !ctl_watcher_add(a, "ADDED", m2),
		      "named watchers, one with an event of its own");
		ctl_watch_event(w, 3, "MODIFIED", m1);
		ctl_watch_event(w, 4, "DELETED", m2);
		t = drain(a, &b, &rc);
		CHECK(lines(t) == 2 && strstr(t, "{\"type\":\"ADDED\"") == t &&
			  strstr(t, "DELETED") && !strstr(t, "MODIFIED"),
		      "of m2 from now: its own ADDED first, then m2's deletion only: %s", t);
		t = drain(c, &b, &rc);
		CHECK(lines(t) == 2 && strstr(t, "ADDED") && strstr(t, "DELETED") &&
			  !strstr(t, "MODIFIED"),
		      "of m2 from 1: m2's events from the ring and after, none of m1's: %s", t);
		ctl_watcher_free(a);
		ctl_watcher_free(c);
		ctl_watch_free(w);
		json_decref(m1);
		json_decref(m2);
	}
	/* a watcher with a labelSelector app=x */
	{
		json_t *x1 = json_pack("{s:{s:s,s:s,s:{s:s}}}", "metadata", "name", "p1",
				       "namespace", "d", "labels", "app", "x");
		json_t *y1 = json_pack("{s:{s:s,s:s,s:{s:s}}}", "metadata", "name", "p1",
				       "namespace", "d", "labels", "app", "y");
		json_t *y2 = json_pack("{s:{s:s,s:s,s:{s:s}}}", "metadata", "name", "p2",
				       "namespace", "d", "labels", "app", "y");
		json_t *x2 = json_pack("{s:{s:s,s:s,s:{s:s}}}", "metadata", "name", "p2",
				       "namespace", "d", "labels", "app", "x");
		struct ctl_k8s_selector sel;
		char err[200];

		w = ctl_watch_new(0, 16, 4000);
		CHECK(!ctl_k8s_selector_parse("app=x", &sel, err, sizeof(err)) &&
			  !ctl_watch_known(w, y2),
		      "selector app=x; p2 known with app=y (an object from before the watch)");
		a = ctl_watch_open_sel(w, 0, NULL, &sel, wake, &wa, &expired);
		CHECK(a && !ctl_watcher_add(a, "ADDED", y2) && !ctl_watcher_add(a, "ADDED", x1),
		      "a watcher, its own ADDED of p2 (not selected) and p1");
		ctl_watch_event(w, 1, "MODIFIED", x1); /* p1 unknown to the watch: judged as now */
		ctl_watch_event(w, 2, "MODIFIED", y1); /* p1 leaves */
		ctl_watch_event(w, 3, "MODIFIED", y1); /* outside: nothing */
		ctl_watch_event(w, 4, "MODIFIED", x2); /* p2 comes in (known as app=y) */
		ctl_watch_event(w, 5, "DELETED", x2);
		ctl_watch_event(w, 6, "ADDED", y1);
		t = drain(a, &b, &rc);
		CHECK(lines(t) == 5, "5 events of 7: %s", t);
		{
			char want[5][64] = {
			    "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"p1\"",
			    "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"p1\"",
			    "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"p1\"",
			    "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"p2\"",
			    "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"p2\""};
			const char *l = t;
			int okn = 0;

			for (int i = 0; i < 5 && l; i++) {
				okn += !strncmp(l, want[i], strlen(want[i]));
				l = strchr(l, '\n');
				l = l ? l + 1 : NULL;
			}
			CHECK(okn == 5,
			      "p1 ADDED (own), MODIFIED, DELETED when it leaves; p2 ADDED when it "
			      "comes in, DELETED: %s",
			      t);
		}
		c = ctl_watch_open_sel(w, 0, NULL, &sel, wake, &wc, &expired);
		x = ctl_watch_open_sel(w, 2, NULL, &sel, wake, &wc, &expired);
		t = drain(x, &b, &rc);
		CHECK(lines(t) == 2 && strstr(t, "\"ADDED\"") && strstr(t, "\"DELETED\""),
		      "from the ring (after 2): p2 in and out: %s", t);
		ctl_watcher_free(a);
		ctl_watcher_free(c);
		ctl_watcher_free(x);
		ctl_watch_free(w);
		json_decref(x1);
		json_decref(y1);
		json_decref(x2);
		json_decref(y2);
	}
	json_decref(o);
	xg_buf_free(&b);
	return unit_summary();
}
