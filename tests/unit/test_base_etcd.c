// SPDX-License-Identifier: BSD-2-Clause
/* The etcd client against a real three-member cluster on loopback, started
 * by tests/etcd.sh (XGATE_ETCD_MEMBERS="pid=url ..."): reads, writes,
 * deletes, transactions with compares, leases; a standby that campaigns
 * when its watch sees the leader's key deleted, and names the leader from
 * that watch; a list-and-watch that resumes from its revision on another
 * member after its member is killed, and rereads everything when that
 * revision was compacted (the election's watch too); then, with two
 * members gone, a write fails as "no quorum" while a serializable read
 * still answers, a standby whose lease renewal fails drops the lease and
 * backs off instead of asking again on its next step, a paused member
 * gives "timeout", a dead one "unreachable". */
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl_etcd.h"
#include "etcd_test.h"
#include "unit.h"

#define MEMBERS 3

static struct etcd_test_members m;

struct seen {
	int snapshots, events, puts, deletes;
	size_t snap_n;
	char snap_keys[512]; /* the last snapshot's keys, space-separated */
	char ev_keys[512];   /* every event since the last snapshot: +key or -key */
	int troubles;
};

static void on_snapshot(void *arg, const struct ctl_etcd_kvs *all)
{
	struct seen *s = arg;

	s->snapshots++;
	s->snap_n = all->n;
	s->snap_keys[0] = s->ev_keys[0] = 0;
	for (size_t i = 0; i < all->n; i++)
		snprintf(s->snap_keys + strlen(s->snap_keys),
			 sizeof(s->snap_keys) - strlen(s->snap_keys), "%s%s", i ? " " : "",
			 all->kv[i].key);
}

static void on_events(void *arg, const struct ctl_etcd_event *ev, size_t n)
{
	struct seen *s = arg;

	for (size_t i = 0; i < n; i++) {
		s->events++;
		ev[i].type == CTL_ETCD_PUT ? s->puts++ : s->deletes++;
		snprintf(s->ev_keys + strlen(s->ev_keys), sizeof(s->ev_keys) - strlen(s->ev_keys),
			 "%s%c%s", s->ev_keys[0] ? " " : "", ev[i].type == CTL_ETCD_PUT ? '+' : '-',
			 ev[i].kv.key);
	}
}

static void on_trouble(void *arg, int rc, const char *msg)
{
	struct seen *s = arg;

	s->troubles++;
	printf("# watch: %s: %s\n", ctl_etcd_rc_name(rc), msg);
}

/* poll until cond holds (at most ~20 s: a reconnect and an election) */
#define POLL_UNTIL(w, cond)                                                                        \
	do {                                                                                       \
		for (int i_ = 0; i_ < 400 && !(cond); i_++)                                        \
			ctl_etcd_watch_poll(w, 50);                                                \
	} while (0)

static void kill_member(int i)
{
	etcd_test_signal(m.pid[i], SIGKILL, ") Z ");
}

static void kv_and_txn(struct ctl_etcd *e)
{
	struct ctl_etcd_kvs r;
	struct ctl_etcd_txn *t;
	int64_t rev = 0, n = 0;
	bool ok = false;

	CHECK(!ctl_etcd_put(e, "/t/a", "1", 1, 0, &rev) && rev > 0, "put /t/a (rev %lld)",
	      (long long)rev);
	CHECK(!ctl_etcd_put(e, "/t/b", "two", 3, 0, NULL) &&
		  !ctl_etcd_put(e, "/u/c", "", 0, 0, NULL),
	      "put /t/b and /u/c (an empty value)");
	CHECK(!ctl_etcd_get(e, "/t/", true, false, &r) && r.n == 2 &&
		  !strcmp(r.kv[0].key, "/t/a") && !strcmp(r.kv[1].value, "two") &&
		  r.kv[1].value_len == 3 && r.revision > rev,
	      "the prefix /t/ reads 2 keys in order, values intact (%zu)", r.n);
	ctl_etcd_kvs_free(&r);
	CHECK(!ctl_etcd_get(e, "/u/c", false, true, &r) && r.n == 1 && r.kv[0].value_len == 0,
	      "a serializable read of one key with an empty value");
	ctl_etcd_kvs_free(&r);
	CHECK(!ctl_etcd_get(e, "/t/zz", false, false, &r) && r.n == 0, "an absent key reads empty");
	ctl_etcd_kvs_free(&r);

	/* create-if-absent: the compare every fence and counter here is built on */
	t = ctl_etcd_txn_new();
	ctl_etcd_txn_cmp(t, "/t/k", CTL_ETCD_CREATE, CTL_ETCD_EQUAL, 0);
	ctl_etcd_txn_put(t, true, "/t/k", "first", 5, 0);
	ctl_etcd_txn_put(t, false, "/t/lost", "x", 1, 0);
	CHECK(!ctl_etcd_txn_commit(e, t, &ok, NULL, NULL) && ok, "txn: /t/k absent, so created");
	CHECK(!ctl_etcd_txn_commit(e, t, &ok, NULL, NULL) && !ok,
	      "the same txn again: compare fails");
	ctl_etcd_txn_free(t);
	CHECK(!ctl_etcd_get(e, "/t/", true, false, &r) && r.n == 4 &&
		  !strcmp(r.kv[2].value, "first") && !strcmp(r.kv[3].key, "/t/lost"),
	      "the success branch ran once, the failure branch once (%zu keys)", r.n);
	ctl_etcd_kvs_free(&r);

	/* values compare as bytes: zero-padded numbers compare as numbers */
	ctl_etcd_put(e, "/t/rev", "00000000000000000005", 20, 0, NULL);
	t = ctl_etcd_txn_new();
	ctl_etcd_txn_cmp_value(t, "/t/rev", CTL_ETCD_LESS, "00000000000000000012", 20);
	ctl_etcd_txn_put(t, true, "/t/rev", "00000000000000000012", 20, 0);
	ctl_etcd_txn_delete(t, false, "/t/a", false);
	CHECK(!ctl_etcd_txn_commit(e, t, &ok, NULL, &n) && ok && n == 0,
	      "txn: 5 < 12, so moved to 12");
	CHECK(!ctl_etcd_txn_commit(e, t, &ok, NULL, &n) && !ok && n == 1,
	      "again: 12 < 12 fails, the failure branch deleted /t/a (%lld)", (long long)n);
	ctl_etcd_txn_free(t);
	CHECK(!ctl_etcd_delete(e, "/t/", true, &n) && n == 4,
	      "delete the prefix /t/: 4 keys (%lld)", (long long)n);
	CHECK(!ctl_etcd_delete(e, "/t/", true, &n) && n == 0, "again: none");
}

static void leases(struct ctl_etcd *e)
{
	struct ctl_etcd_kvs r;
	int64_t id = 0, ttl = 0;
	bool ok = false;
	struct ctl_etcd_txn *t;

	CHECK(!ctl_etcd_lease_grant(e, 30, &id) && id, "grant a 30 s lease");
	CHECK(!ctl_etcd_put(e, "/l/x", "v", 1, id, NULL), "put /l/x on it");
	CHECK(!ctl_etcd_lease_keepalive(e, id, &ttl) && ttl > 20 && ttl <= 30,
	      "keepalive: the lease is back at its TTL (%lld)", (long long)ttl);
	CHECK(!ctl_etcd_lease_keepalive(e, id, &ttl) && ttl > 20, "a second keepalive works too");
	CHECK(!ctl_etcd_get(e, "/l/x", false, false, &r) && r.n == 1 && r.kv[0].lease == id,
	      "the key carries the lease");
	ctl_etcd_kvs_free(&r);
	t = ctl_etcd_txn_new();
	ctl_etcd_txn_cmp(t, "/l/x", CTL_ETCD_LEASE, CTL_ETCD_EQUAL, id);
	ctl_etcd_txn_put(t, true, "/l/fenced", "w", 1, 0);
	CHECK(!ctl_etcd_txn_commit(e, t, &ok, NULL, NULL) && ok,
	      "a txn fenced on the lease passes");
	CHECK(!ctl_etcd_lease_revoke(e, id), "revoke it");
	CHECK(!ctl_etcd_get(e, "/l/x", false, false, &r) && r.n == 0, "its key went with it");
	ctl_etcd_kvs_free(&r);
	CHECK(!ctl_etcd_txn_commit(e, t, &ok, NULL, NULL) && !ok,
	      "the same fenced txn fails once the lease is gone");
	ctl_etcd_txn_free(t);
	CHECK(!ctl_etcd_lease_keepalive(e, id, &ttl) && ttl == 0,
	      "a keepalive of the revoked lease says TTL 0");
	CHECK(ctl_etcd_lease_revoke(e, id) == CTL_ETCD_ERROR && strstr(ctl_etcd_errmsg(e), "lease"),
	      "revoking it again: etcd's error, quoted: %s", ctl_etcd_errmsg(e));
	ctl_etcd_delete(e, "/l/", true, NULL);
}

/* an event loop's use: it waits on the watch's fd and its next deadline
 * only, and steps the watch when either comes; an event arrives that way,
 * woken by the fd (curl's socket in the watch's epoll set) */
static void in_a_loop(struct ctl_etcd *e)
{
	struct seen s = {0};
	const struct ctl_etcd_watch_hooks h = {&s, on_snapshot, on_events, on_trouble};
	struct ctl_etcd_watch *w = ctl_etcd_watch_start(e, "/fd/", 0, &h);
	struct pollfd p = {.fd = w ? ctl_etcd_watch_fd(w) : -1, .events = POLLIN};
	int by_fd = 0, put_at = -1;

	if (!w)
		return;
	for (int i = 0; i < 400 && !s.events; i++) {
		int r = poll(&p, 1, ctl_etcd_watch_next_ms(w) < 0 ? 50 : ctl_etcd_watch_next_ms(w));

		if (s.snapshots && r > 0)
			by_fd++;
		ctl_etcd_watch_poll(w, 0);
		/* the snapshot's read is answered in some later turn: the put
		 * comes a while after it, on a stream that is open by then */
		if (s.snapshots == 1 && put_at < 0)
			put_at = i + 20;
		if (i == put_at)
			ctl_etcd_put(e, "/fd/a", "1", 1, 0, NULL);
	}
	CHECK(s.snapshots == 1 && !strcmp(s.ev_keys, "+/fd/a") && by_fd > 0,
	      "a loop on the watch's fd and deadline gets the event (%s), woken by the fd %d times",
	      s.ev_keys, by_fd);
	ctl_etcd_watch_stop(w);
	ctl_etcd_delete(e, "/fd/", true, NULL);
}

/* one turn of an owner's loop: wait on the watch's fd and the writes' fd
 * and their deadlines (10 ms at most), and step both */
static void turn(struct ctl_etcd_watch *w, struct ctl_etcd_async *as)
{
	struct pollfd p[2] = {{.fd = ctl_etcd_watch_fd(w), .events = POLLIN},
			      {.fd = as ? ctl_etcd_async_fd(as) : -1, .events = POLLIN}};
	int ms = ctl_etcd_watch_next_ms(w), a = as ? ctl_etcd_async_next_ms(as) : -1;

	if (a >= 0 && (ms < 0 || a < ms))
		ms = a;
	poll(p, 2, ms < 0 || ms > 10 ? 10 : ms);
	ctl_etcd_watch_poll(w, 0);
	if (as)
		ctl_etcd_async_poll(as);
}

struct writes {
	int sent, answered, failed;
};

static void written(void *arg, const struct ctl_etcd_result *r)
{
	struct writes *wr = arg;

	wr->answered++;
	if (r->rc)
		wr->failed++;
}

/* The watch's reads never hold its owner's loop: its opening read sent to
 * a paused member, the loop goes on answering (here: its own writes,
 * committed by the other two members, one after the other) until the
 * member resumes and the read is answered; its reread after a compaction
 * on a member without a quorum, the loop goes on turning. Either way the
 * snapshot holds every write made meanwhile and the events follow it from
 * its revision + 1: none lost, none twice. */
static void reads_in_a_loop(struct ctl_etcd *e)
{
	char two[2 * 130];
	struct seen s = {0}, s2 = {0};
	const struct ctl_etcd_watch_hooks h = {&s, on_snapshot, on_events, on_trouble};
	const struct ctl_etcd_watch_hooks h2 = {&s2, on_snapshot, on_events, on_trouble};
	/* the watch's client knows member 2 only, with a long Timeout: its
	 * read waits on that member (a third of it per attempt), where the
	 * loop could be held */
	struct ctl_etcd *ew = etcd_test_client(m.url[2], 30000), *e01;
	struct ctl_etcd_async *as;
	struct ctl_etcd_watch *w;
	struct writes wr = {0};
	int64_t old = 0, rev = 0;
	int turns = 0, quiet = 0;

	snprintf(two, sizeof(two), "%s,%s", m.url[0], m.url[1]);
	e01 = etcd_test_client(two, 3000);
	as = e01 ? ctl_etcd_async_new(e01) : NULL;
	if (!ew || !as)
		return;
	ctl_etcd_put(e, "/p/a", "1", 1, 0, &old);

	/* the opening read, on a paused member */
	etcd_test_signal(m.pid[2], SIGSTOP, ") T ");
	w = ctl_etcd_watch_start(ew, "/p/", 0, &h);
	for (; w && turns < 2000 && wr.answered < 3; turns++) {
		if (wr.sent == wr.answered) {
			struct ctl_etcd_txn *t = ctl_etcd_txn_new();
			char k[16];

			snprintf(k, sizeof(k), "/p/w%d", ++wr.sent);
			ctl_etcd_txn_put(t, true, k, "w", 1, 0);
			if (ctl_etcd_txn_commit_async(as, t, written, &wr))
				wr.sent--;
			ctl_etcd_txn_free(t);
		}
		turn(w, as);
	}
	CHECK(w && wr.answered == 3 && !wr.failed && !s.snapshots && !s.troubles,
	      "the watch's read waits on a paused member while its loop answers 3 writes one "
	      "after the other (%d turns; snapshots %d, troubles %d)",
	      turns, s.snapshots, s.troubles);
	kill(m.pid[2], SIGCONT);
	for (int i = 0; w && i < 2000 && !s.snapshots; i++)
		turn(w, NULL);
	CHECK(s.snapshots == 1 && !strcmp(s.snap_keys, "/p/a /p/w1 /p/w2 /p/w3") && !s.events,
	      "the member resumed: the snapshot arrives, with the writes made meanwhile (%s)",
	      s.snap_keys);
	ctl_etcd_put(e, "/p/b", "2", 1, 0, &rev);
	for (int i = 0; w && i < 2000 && !s.events; i++)
		turn(w, NULL);
	CHECK(!strcmp(s.ev_keys, "+/p/b") && s.snapshots == 1 && ctl_etcd_watch_revision(w) == rev,
	      "then the events from its revision + 1: the next write once (%s)", s.ev_keys);
	ctl_etcd_watch_stop(w);

	/* a watch resumed from before a compaction, on a member without a
	 * quorum: its stream is cancelled (compacted), its reread waits */
	CHECK(!ctl_etcd_compact(ew, rev), "compacted up to %lld on member 2", (long long)rev);
	etcd_test_signal(m.pid[0], SIGSTOP, ") T ");
	etcd_test_signal(m.pid[1], SIGSTOP, ") T ");
	w = ctl_etcd_watch_start(ew, "/p/", old + 1, &h2);
	for (turns = 0; w && turns < 50; turns++) {
		turn(w, NULL);
		quiet += !s2.snapshots && !s2.troubles && !s2.events;
	}
	CHECK(quiet == 50,
	      "its loop turns 50 times while the reread waits for a quorum (%d quiet; snapshots "
	      "%d, troubles %d)",
	      quiet, s2.snapshots, s2.troubles);
	kill(m.pid[0], SIGCONT);
	kill(m.pid[1], SIGCONT);
	for (int i = 0; w && i < 4000 && !s2.snapshots; i++)
		turn(w, NULL);
	CHECK(s2.snapshots == 1 && !strcmp(s2.snap_keys, "/p/a /p/b /p/w1 /p/w2 /p/w3") &&
		  !s2.events,
	      "the quorum back, the reread arrives with the compacted gap's writes, not as "
	      "events (%s)",
	      s2.snap_keys);
	for (int i = 0; i < 100 && ctl_etcd_put(e, "/p/c", "3", 1, 0, &rev); i++)
		usleep(100 * 1000); /* the members may still be electing a leader */
	for (int i = 0; w && i < 2000 && !s2.events; i++)
		turn(w, NULL);
	CHECK(!strcmp(s2.ev_keys, "+/p/c") && ctl_etcd_watch_revision(w) == rev,
	      "then the next write, once (%s)", s2.ev_keys);
	ctl_etcd_watch_stop(w);
	ctl_etcd_async_free(as);
	ctl_etcd_free(e01);
	ctl_etcd_free(ew);
	ctl_etcd_delete(e, "/p/", true, NULL);
}

/* wait on the election's fd and deadline, as a loop does, stepping its
 * watch, for at most n turns; whether it said "campaign now" */
static bool elect_wait(struct ctl_etcd_elect *el, int n)
{
	bool now = false;

	for (int i = 0; i < n && !now; i++) {
		struct pollfd p = {.fd = ctl_etcd_elect_fd(el), .events = POLLIN};
		int ms = ctl_etcd_elect_next_ms(el);

		poll(&p, 1, ms < 0 || ms > 50 ? 50 : ms);
		now = ctl_etcd_elect_poll(el);
	}
	return now;
}

/* step the election's watch as a loop does until it names want as the
 * leader, for at most n turns; whether it did */
static bool elect_names(struct ctl_etcd_elect *el, const char *want, int n)
{
	for (int i = 0; i < n && strcmp(ctl_etcd_elect_leader(el), want); i++)
		elect_wait(el, 1);
	return !strcmp(ctl_etcd_elect_leader(el), want);
}

/* A standby learns from its watch that the leader's key was deleted and
 * campaigns then, instead of on a timer: here nothing steps it but its
 * watch, so it can only win if the watch told it. A key that merely
 * starts with the election key is not it. Who leads comes from the same
 * watch: the key's value from its first read, each put, and a delete. */
static void election_on_delete(struct ctl_etcd *e)
{
	struct ctl_etcd_elect *a = ctl_etcd_elect_new(e, "/el/leader", "a", 30);
	struct ctl_etcd_elect *b = ctl_etcd_elect_new(e, "/el/leader", "b", 30);
	struct ctl_etcd_elect *c = ctl_etcd_elect_new(e, "/el/leader", "http://c:1", 30);
	bool la = false, lb = false, lc = false;

	if (!a || !b || !c)
		return;
	CHECK(!ctl_etcd_elect_step(a, &la) && la, "a campaigns first and leads");
	CHECK(!strcmp(ctl_etcd_elect_leader(a), "a"),
	      "a names itself as the leader before its watch has read the key (%s)",
	      ctl_etcd_elect_leader(a));
	CHECK(!ctl_etcd_elect_step(b, &lb) && !lb, "b campaigns and loses");
	CHECK(!strcmp(ctl_etcd_elect_leader(b), ""),
	      "b's watch has not read the key yet: b names nobody (%s)", ctl_etcd_elect_leader(b));
	CHECK(elect_names(b, "a", 400), "b's watch opens with the key: a leads (%s)",
	      ctl_etcd_elect_leader(b));
	ctl_etcd_put(e, "/el/leaderboard", "x", 1, 0, NULL);
	CHECK(!elect_wait(b, 20), "while a leads, b's watch never says campaign");
	CHECK(!strcmp(ctl_etcd_elect_leader(b), "a"),
	      "nor names another leader for a key under the same prefix (%s)",
	      ctl_etcd_elect_leader(b));
	ctl_etcd_delete(e, "/el/leaderboard", false, NULL);
	CHECK(!elect_wait(b, 10), "nor when another key under the same prefix is deleted");
	ctl_etcd_elect_free(a, true); /* resigns: the key goes with the lease */
	CHECK(elect_wait(b, 400), "once a's key is deleted, b's watch says campaign");
	CHECK(!strcmp(ctl_etcd_elect_leader(b), ""), "and names nobody as the leader (%s)",
	      ctl_etcd_elect_leader(b));
	/* c is first: b's watch tells it of c's key, a put of another value */
	CHECK(!ctl_etcd_elect_step(c, &lc) && lc, "c campaigns before b and leads");
	CHECK(elect_names(b, "http://c:1", 400), "b's watch names c as the leader now (%s)",
	      ctl_etcd_elect_leader(b));
	CHECK(!ctl_etcd_elect_step(b, &lb) && !lb, "b's campaign loses to c");
	ctl_etcd_elect_free(c, true);
	CHECK(elect_wait(b, 400), "c resigns: b's watch says campaign");
	CHECK(!ctl_etcd_elect_step(b, &lb) && lb && ctl_etcd_elect_revision(b) > 0,
	      "b's campaign then wins (fence %lld)", (long long)ctl_etcd_elect_revision(b));
	CHECK(!strcmp(ctl_etcd_elect_leader(b), "b"), "b names itself (%s)",
	      ctl_etcd_elect_leader(b));
	CHECK(!elect_wait(b, 10), "its campaign answered it: the watch says no more");
	CHECK(!strcmp(ctl_etcd_elect_leader(b), "b"), "its own key seen by its watch: still b (%s)",
	      ctl_etcd_elect_leader(b));
	ctl_etcd_elect_free(b, true);
	ctl_etcd_delete(e, "/el/", true, NULL);
}

int main(void)
{
	char all[3 * 130], err[256];
	const struct ctl_etcd_conf bad = {.endpoints = "ftp://127.0.0.1:1"};
	struct seen sa = {0}, sb = {0};
	struct ctl_etcd_watch_hooks ha = {&sa, on_snapshot, on_events, on_trouble};
	struct ctl_etcd_watch_hooks hb = {&sb, on_snapshot, on_events, on_trouble};
	struct ctl_etcd *e, *one, *es;
	struct ctl_etcd_watch *wa, *wb;
	struct ctl_etcd_elect *ea, *eb, *ex, *ey, *s;
	bool la = false, lb = true;
	struct ctl_etcd_kvs r;
	int64_t rev = 0;
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0); /* every line out, even if a sanitizer ends it */
	if (etcd_test_members(&m) != MEMBERS) {
		printf("not ok - XGATE_ETCD_MEMBERS is not 3 \"pid=url\" (run under tests/etcd.sh "
		       "3)\n");
		return 1;
	}
	CHECK(!ctl_etcd_new(&bad, err, sizeof(err)) && strstr(err, "'ftp://127.0.0.1:1'"),
	      "a non-HTTP endpoint is refused, quoted: %s", err);
	snprintf(all, sizeof(all), "%s,%s/,%s", m.url[0], m.url[1], m.url[2]);
	if (!(e = etcd_test_client(all, 3000)))
		return 1;
	kv_and_txn(e);
	leases(e);
	in_a_loop(e);
	election_on_delete(e);
	reads_in_a_loop(e);

	/* two watches on /w/ from the start, both on member 0 (the first endpoint) */
	ctl_etcd_put(e, "/w/a", "1", 1, 0, NULL);
	wa = ctl_etcd_watch_start(e, "/w/", 0, &ha);
	wb = ctl_etcd_watch_start(e, "/w/", 0, &hb);
	POLL_UNTIL(wa, sa.snapshots);
	POLL_UNTIL(wb, sb.snapshots);
	CHECK(sa.snapshots == 1 && !strcmp(sa.snap_keys, "/w/a") && sb.snapshots == 1,
	      "a watch from 0 starts with a snapshot (%s)", sa.snap_keys);
	ctl_etcd_put(e, "/w/b", "2", 1, 0, NULL);
	ctl_etcd_delete(e, "/w/a", false, NULL);
	POLL_UNTIL(wa, sa.events >= 2);
	POLL_UNTIL(wb, sb.events >= 2);
	CHECK(!strcmp(sa.ev_keys, "+/w/b -/w/a") && !strcmp(sb.ev_keys, "+/w/b -/w/a"),
	      "then the events in order (%s)", sa.ev_keys);
	/* an onlooker of the election /cl/leader, its watch on member 0 too (a
	 * client of its own, at the first endpoint); it never campaigns */
	es = etcd_test_client(all, 3000);
	s = es ? ctl_etcd_elect_new(es, "/cl/leader", "s", 30) : NULL;
	ex = ctl_etcd_elect_new(e, "/cl/leader", "x", 30);
	CHECK(s && ex && !ctl_etcd_elect_step(ex, &la) && la && elect_names(s, "x", 400),
	      "x leads /cl/leader, and the onlooker's watch names it (%s)",
	      s ? ctl_etcd_elect_leader(s) : "?");

	/* member 0 dies under both streams; writes go on elsewhere */
	kill_member(0);
	rc = ctl_etcd_put(e, "/w/c", "3", 1, 0, NULL);
	CHECK(!rc, "a write moves on to another member (%s)", rc ? ctl_etcd_errmsg(e) : "ok");
	POLL_UNTIL(wb, sb.events >= 3);
	CHECK(sb.snapshots == 1 && !strcmp(sb.ev_keys, "+/w/b -/w/a +/w/c"),
	      "watch B resumed from its revision on another member: /w/c once, no reread (%s)",
	      sb.ev_keys);
	/* while the onlooker's stream is broken, x hands over to y, who goes
	 * too: then the compaction below leaves it only a reread to learn it */
	ctl_etcd_elect_free(ex, true);
	ey = ctl_etcd_elect_new(e, "/cl/leader", "y", 30);
	CHECK(ey && !ctl_etcd_elect_step(ey, &la) && la, "y leads /cl/leader after x");
	ctl_etcd_elect_free(ey, true);
	ctl_etcd_put(e, "/w/d", "4", 1, 0, &rev);
	CHECK(!ctl_etcd_compact(e, rev), "compact everything up to %lld", (long long)rev);
	POLL_UNTIL(wa, sa.snapshots >= 2);
	CHECK(sa.snapshots == 2 && !strcmp(sa.snap_keys, "/w/b /w/c /w/d"),
	      "watch A resumed into a compacted revision: a full reread (%s)", sa.snap_keys);
	CHECK(s && elect_names(s, "", 400),
	      "the onlooker's watch resumed into it too: its reread finds the key gone, nobody "
	      "leads (%s)",
	      s ? ctl_etcd_elect_leader(s) : "?");
	ctl_etcd_elect_free(s, false);
	ctl_etcd_free(es);
	ctl_etcd_put(e, "/w/e", "5", 1, 0, NULL);
	POLL_UNTIL(wa, sa.events >= 3);
	POLL_UNTIL(wb, sb.events >= 5);
	CHECK(!strcmp(sa.ev_keys, "+/w/e") && !strcmp(sb.ev_keys, "+/w/b -/w/a +/w/c +/w/d +/w/e"),
	      "both watch on after it (A: %s; B: %s)", sa.ev_keys, sb.ev_keys);
	CHECK(ctl_etcd_watch_revision(wa) == ctl_etcd_watch_revision(wb) &&
		  ctl_etcd_watch_revision(wa) > rev,
	      "both at the same revision");
	ctl_etcd_watch_stop(wa);
	wb = (ctl_etcd_watch_stop(wb), NULL);

	/* a watch resumed from a revision compacted away: the reread, at once */
	memset(&sa, 0, sizeof(sa));
	wa = ctl_etcd_watch_start(e, "/w/", 2, &ha);
	POLL_UNTIL(wa, sa.snapshots);
	CHECK(sa.snapshots == 1 && sa.events == 0 && sa.snap_n == 4,
	      "a watch started at a compacted revision begins with a snapshot (%zu keys)",
	      sa.snap_n);
	ctl_etcd_watch_stop(wa);

	/* a leader and a standby on a 1 s lease (renewed every 333 ms) */
	ea = ctl_etcd_elect_new(e, "/nq/leader", "a", 1);
	eb = ctl_etcd_elect_new(e, "/nq/leader", "b", 1);
	CHECK(ea && eb && !ctl_etcd_elect_step(ea, &la) && la && !ctl_etcd_elect_step(eb, &lb) &&
		  !lb,
	      "a leads on a 1 s lease, b stands by with a lease of its own");

	/* member 1 goes too: one of three left, no quorum */
	kill_member(1);
	rc = ctl_etcd_put(e, "/w/f", "6", 1, 0, NULL);
	CHECK(rc == CTL_ETCD_NO_QUORUM && strstr(ctl_etcd_errmsg(e), "quorum"),
	      "a write without a quorum: %s: %s", ctl_etcd_rc_name(rc), ctl_etcd_errmsg(e));
	rc = ctl_etcd_get(e, "/w/", true, true, &r);
	CHECK(!rc && r.n == 4, "a serializable read still answers what is known (%zu keys)", r.n);
	ctl_etcd_kvs_free(&r);
	rc = ctl_etcd_get(e, "/w/", true, false, &r);
	CHECK(rc == CTL_ETCD_NO_QUORUM, "a linearizable read cannot: %s", ctl_etcd_rc_name(rc));
	ctl_etcd_kvs_free(&r);
	usleep(400 * 1000); /* past b's renewal time (what is checked is what happens then) */
	rc = ctl_etcd_elect_step(eb, &lb);
	CHECK(rc && !lb, "b's renewal without a quorum fails: %s", ctl_etcd_rc_name(rc));
	rc = ctl_etcd_elect_step(eb, &lb);
	CHECK(!rc && !lb,
	      "b's next step asks nothing (%s): its lease dropped, its campaign 1 s off, not "
	      "the renewal again on every step",
	      ctl_etcd_rc_name(rc));
	ctl_etcd_elect_free(eb, false);
	ctl_etcd_elect_free(ea, false); /* the lease goes with the test's etcd */

	/* the last member paused: it takes the connection and never answers */
	etcd_test_signal(m.pid[2], SIGSTOP, ") T ");
	one = etcd_test_client(m.url[2], 1000);
	rc = ctl_etcd_get(one, "/w/", true, true, &r);
	CHECK(rc == CTL_ETCD_TIMEOUT && strstr(ctl_etcd_errmsg(one), m.url[2]),
	      "a paused member: %s: %s", ctl_etcd_rc_name(rc), ctl_etcd_errmsg(one));
	ctl_etcd_kvs_free(&r);
	kill(m.pid[2], SIGCONT);
	ctl_etcd_free(one);
	one = etcd_test_client(m.url[0], 1000);
	rc = ctl_etcd_get(one, "/w/", true, true, &r);
	CHECK(rc == CTL_ETCD_UNREACHABLE && strstr(ctl_etcd_errmsg(one), m.url[0]),
	      "a dead member: %s: %s", ctl_etcd_rc_name(rc), ctl_etcd_errmsg(one));
	ctl_etcd_kvs_free(&r);
	ctl_etcd_free(one);
	ctl_etcd_free(e);
	return unit_summary();
}
