// SPDX-License-Identifier: BSD-2-Clause
/*
 * Leader election on etcd (ctl_etcd.h): a lease and a create-if-absent
 * txn on the election key, instead of the gateway's /v3/election/campaign,
 * which blocks until elected (a request that hangs for as long as another
 * leader lives does not fit a loop that must keep serving, nor our
 * deadlines).
 *
 * A standby also watches the key: it campaigns as soon as the key is
 * deleted (the leader's lease expired, or it resigned), not on the
 * fallback period, which is for a watch that is down. The watch's stream
 * is opened by the owner's first poll, so an owner that never polls it
 * pays nothing. The same watch says who leads (the key's value), so an
 * owner names the leader without a read of its own: a read is synchronous,
 * and would hold a standby's loop for up to Timeout per member exactly
 * when etcd is in trouble and the standby should keep answering.
 *
 * When a campaign is due is decided here (struct ctl_etcd_pace), for
 * every owner alike: a campaign is a synchronous request, so one etcd
 * cannot answer holds the owner's loop for up to its Timeout, and an owner
 * that campaigned on every fallback period would serve almost nothing
 * while etcd has no quorum. After such a campaign the next waits a
 * back-off: 1 s, doubling with each one in a row up to 8 s. 1 s first, so
 * that a blip (an etcd leader election) costs a standby at most a second;
 * 8 s at most, because the cap is how late a standby whose watch is down
 * finds etcd back, and by then the loop is held at most Timeout in every
 * Timeout + 8 s (Timeout is at most ElectionTTL/3). The back-off never
 * delays a failover: the key's delete, seen by the watch, is due at once
 * whatever the back-off (a watch that delivers is etcd answering), and a
 * campaign etcd answers, lost or won, clears it.
 *
 * Our own view of the lease is kept pessimistic: the lease is counted from
 * before the keepalive that renewed it was sent, and when a renewal cannot
 * be made and that time has passed we stop calling ourselves leader. That
 * is only courtesy: correctness is the fence, checked by etcd in the same
 * txn as the write.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl_etcd.h"
#include "ctl_log.h"

struct ctl_etcd_elect {
	struct ctl_etcd *e;
	char *key, *id;
	int64_t ttl_s;
	int64_t lease;		      /* ours, or 0 */
	int64_t fence;		      /* our key's create_revision while we lead, else 0 */
	long long renew_at;	      /* when the lease is renewed next (monotonic ms) */
	long long expires;	      /* the lease's end as we must assume it */
	struct ctl_etcd_watch *watch; /* the key, for its delete and who leads */
	struct ctl_etcd_pace pace;    /* when a campaign is due */
	char *seen;		      /* the key's value as the watch last had it, or NULL */
	bool read;		      /* the watch has read the key (its first snapshot) */
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- when a campaign is due ---- */

uint64_t ctl_etcd_pace_period_ms(int64_t ttl_s)
{
	/* often enough next to the lease not to double the failover while
	 * the watch is down, and a campaign is a request: not every tick */
	if (ttl_s <= 0 || ttl_s >= 10)
		return 1000;
	return (uint64_t)ttl_s * 100;
}

void ctl_etcd_pace_init(struct ctl_etcd_pace *p, uint64_t period_ms)
{
	*p = (struct ctl_etcd_pace){.period_ms = period_ms ? period_ms : 1000};
}

bool ctl_etcd_pace_due(const struct ctl_etcd_pace *p, uint64_t now_ms)
{
	if (now_ms < p->hold_ms)
		return false;
	return p->vacant || now_ms >= p->due_ms;
}

void ctl_etcd_pace_vacant(struct ctl_etcd_pace *p, bool vacant)
{
	p->vacant = vacant;
}

uint64_t ctl_etcd_pace_backoff_ms(unsigned failed)
{
	uint64_t ms = CTL_ETCD_PACE_BACKOFF_MS;

	for (unsigned i = 1; i < failed && ms < CTL_ETCD_PACE_BACKOFF_MAX_MS; i++)
		ms *= 2;
	return ms < CTL_ETCD_PACE_BACKOFF_MAX_MS ? ms : CTL_ETCD_PACE_BACKOFF_MAX_MS;
}

uint64_t ctl_etcd_pace_done(struct ctl_etcd_pace *p, int rc, uint64_t now_ms)
{
	uint64_t wait;

	/* what the watch said is answered by this campaign, whatever came of
	 * it: the watch tells a key absent once, so a vacancy kept after a
	 * campaign etcd did not answer would campaign on every step */
	p->vacant = false;
	if (rc == CTL_ETCD_OK) {
		p->failed = 0;
		wait = p->period_ms;
	} else {
		if (p->failed < UINT_MAX)
			p->failed++;
		wait = ctl_etcd_pace_backoff_ms(p->failed);
	}
	p->due_ms = now_ms + wait;
	return wait;
}

void ctl_etcd_pace_hold(struct ctl_etcd_pace *p, uint64_t now_ms)
{
	ctl_etcd_pace_done(p, CTL_ETCD_ERROR, now_ms);
	p->hold_ms = p->due_ms;
}

/* ---- the election ---- */

static void lost(struct ctl_etcd_elect *el, const char *why)
{
	if (el->fence)
		ctl_log("election %s: no longer the leader (%s)", el->key, why);
	el->fence = 0;
	el->lease = 0;
}

/* keep the lease: renew it when due */
static int renew(struct ctl_etcd_elect *el)
{
	long long sent = now_ms();
	int64_t ttl = 0;
	int rc;

	if (!el->lease || sent < el->renew_at)
		return CTL_ETCD_OK;
	rc = ctl_etcd_lease_keepalive(el->e, el->lease, &ttl);
	if (rc && !el->fence) {
		/* a standby's lease serves only its next campaign, which grants
		 * another: dropped, rather than tried again on every step while
		 * etcd does not answer; the campaign waits the back-off */
		uint64_t wait = ctl_etcd_pace_done(&el->pace, rc, (uint64_t)now_ms());

		ctl_log("election %s: the standby's lease was not renewed (%s: %s): the next "
			"campaign in %llu ms, or when the key goes",
			el->key, ctl_etcd_rc_name(rc), ctl_etcd_errmsg(el->e),
			(unsigned long long)wait);
		el->lease = 0;
		return rc;
	}
	if (rc) {
		if (now_ms() >= el->expires)
			lost(el, "the lease could not be renewed in time");
		return rc;
	}
	if (ttl <= 0) {
		lost(el, "the lease expired");
		return CTL_ETCD_OK;
	}
	el->expires = sent + ttl * 1000;
	el->renew_at = sent + ttl * 1000 / 3;
	return CTL_ETCD_OK;
}

static int campaign(struct ctl_etcd_elect *el)
{
	struct ctl_etcd_txn *t;
	long long sent = now_ms();
	int64_t rev = 0;
	bool won = false;
	int rc;

	if (!el->lease) {
		if ((rc = ctl_etcd_lease_grant(el->e, el->ttl_s, &el->lease)))
			return rc;
		el->expires = sent + el->ttl_s * 1000;
		el->renew_at = sent + el->ttl_s * 1000 / 3;
	}
	if (!(t = ctl_etcd_txn_new()))
		return CTL_ETCD_ERROR;
	ctl_etcd_txn_cmp(t, el->key, CTL_ETCD_CREATE, CTL_ETCD_EQUAL, 0);
	ctl_etcd_txn_put(t, true, el->key, el->id, strlen(el->id), el->lease);
	rc = ctl_etcd_txn_commit(el->e, t, &won, &rev, NULL);
	ctl_etcd_txn_free(t);
	if (!rc && won) {
		/* the txn wrote one key: its revision is the key's create_revision */
		el->fence = rev;
	} else if (!rc) {
		/* ours already, if an earlier campaign's answer was lost: then
		 * nobody else could ever lead while we renew the lease */
		struct ctl_etcd_kvs r;

		if ((rc = ctl_etcd_get(el->e, el->key, false, false, &r)))
			return rc;
		if (r.n && r.kv[0].lease == el->lease)
			el->fence = r.kv[0].create_rev;
		ctl_etcd_kvs_free(&r);
	}
	if (el->fence)
		ctl_log("election %s: leader as %s (fence %lld)", el->key, el->id,
			(long long)el->fence);
	return rc;
}

int ctl_etcd_elect_step(struct ctl_etcd_elect *el, bool *leader)
{
	int rc = renew(el);

	if (!rc && !el->fence && ctl_etcd_pace_due(&el->pace, (uint64_t)now_ms())) {
		uint64_t wait;

		rc = campaign(el);
		/* counted from the campaign's end: a loop it held gets the whole
		 * back-off to serve */
		wait = ctl_etcd_pace_done(&el->pace, rc, (uint64_t)now_ms());
		if (rc)
			ctl_log(
			    "election %s: campaign: %s: %s; the next in %llu ms, or when the key "
			    "goes",
			    el->key, ctl_etcd_rc_name(rc), ctl_etcd_errmsg(el->e),
			    (unsigned long long)wait);
	}
	*leader = el->fence != 0;
	return rc;
}

void ctl_etcd_elect_resign(struct ctl_etcd_elect *el)
{
	int rc;

	if (el->lease && (rc = ctl_etcd_lease_revoke(el->e, el->lease)))
		ctl_log("election %s: resign: %s (the lease ends by itself within its TTL)",
			el->key, ctl_etcd_errmsg(el->e));
	lost(el, "resigned");
	/* another campaigner first (our watch sees our own key go), and an
	 * etcd that failed its owner rests */
	ctl_etcd_pace_hold(&el->pace, (uint64_t)now_ms());
}

/* who leads as the watch says: kv the key as it is now, NULL gone */
static void saw(struct ctl_etcd_elect *el, const struct ctl_etcd_kv *kv)
{
	free(el->seen);
	el->seen = kv ? strndup(kv->value, kv->value_len) : NULL;
	ctl_etcd_pace_vacant(&el->pace, !kv);
}

/* the watch's prefix is the key: only the key itself counts. A snapshot
 * replaces what we knew (the first, and the reread after a compaction
 * made the events in between unreadable). */
static void w_snapshot(void *arg, const struct ctl_etcd_kvs *all)
{
	struct ctl_etcd_elect *el = arg;
	const struct ctl_etcd_kv *there = NULL;

	for (size_t i = 0; i < all->n; i++)
		if (!strcmp(all->kv[i].key, el->key))
			there = &all->kv[i];
	saw(el, there);
	el->read = true;
}

static void w_events(void *arg, const struct ctl_etcd_event *ev, size_t n)
{
	struct ctl_etcd_elect *el = arg;

	for (size_t i = 0; i < n; i++)
		if (!strcmp(ev[i].kv.key, el->key))
			saw(el, ev[i].type == CTL_ETCD_DELETE ? NULL : &ev[i].kv);
}

bool ctl_etcd_elect_poll(struct ctl_etcd_elect *el)
{
	ctl_etcd_watch_poll(el->watch, 0);
	return el->pace.vacant;
}

bool ctl_etcd_elect_wait(struct ctl_etcd_elect *el)
{
	long long until = now_ms() + ctl_etcd_timeout_ms(el->e), left;

	while (!el->read && (left = until - now_ms()) > 0)
		ctl_etcd_watch_poll(el->watch, left > 100 ? 100 : (int)left);
	return el->read;
}

int ctl_etcd_elect_fd(const struct ctl_etcd_elect *el)
{
	return ctl_etcd_watch_fd(el->watch);
}

int ctl_etcd_elect_next_ms(const struct ctl_etcd_elect *el)
{
	return ctl_etcd_watch_next_ms(el->watch);
}

const char *ctl_etcd_elect_leader(const struct ctl_etcd_elect *el)
{
	/* while we lead, the watch may not have shown our own put yet */
	if (el->fence)
		return el->id;
	return el->seen ? el->seen : "";
}

int64_t ctl_etcd_elect_revision(const struct ctl_etcd_elect *el)
{
	return el->fence;
}

int ctl_etcd_elect_fence(const struct ctl_etcd_elect *el, struct ctl_etcd_txn *t)
{
	/* not leading: a compare that never holds (no key is created at -1) */
	return ctl_etcd_txn_cmp(t, el->key, CTL_ETCD_CREATE, CTL_ETCD_EQUAL,
				el->fence ? el->fence : -1);
}

struct ctl_etcd_elect *ctl_etcd_elect_new(struct ctl_etcd *e, const char *key, const char *id,
					  int64_t ttl_s)
{
	struct ctl_etcd_elect *el = calloc(1, sizeof(*el));
	const struct ctl_etcd_watch_hooks h = {el, w_snapshot, w_events, NULL};

	if (!el || !(el->key = strdup(key)) || !(el->id = strdup(id)) ||
	    !(el->watch = ctl_etcd_watch_start(e, key, 0, &h))) {
		if (el) {
			free(el->key);
			free(el->id);
		}
		free(el);
		return NULL;
	}
	el->e = e;
	el->ttl_s = ttl_s > 0 ? ttl_s : 10;
	ctl_etcd_pace_init(&el->pace, ctl_etcd_pace_period_ms(el->ttl_s));
	return el;
}

void ctl_etcd_elect_free(struct ctl_etcd_elect *el, bool resign)
{
	if (!el)
		return;
	if (resign && el->lease && ctl_etcd_lease_revoke(el->e, el->lease))
		ctl_log("election %s: resign: %s", el->key, ctl_etcd_errmsg(el->e));
	ctl_etcd_watch_stop(el->watch);
	free(el->key);
	free(el->id);
	free(el->seen);
	free(el);
}
