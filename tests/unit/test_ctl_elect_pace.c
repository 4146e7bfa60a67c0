// SPDX-License-Identifier: BSD-2-Clause
/* When a standby campaigns (ctl_etcd_pace, ctl_etcd.h), on a clock of the
 * test's own: at once at the start and when the key's watch saw the key
 * go, also during a back-off (not just after a resign); not before the
 * fallback period after a lost campaign; a back-off after one etcd did not
 * answer, doubling to its cap, cleared by an answered one. Then the
 * election itself on an endpoint that refuses connections: its first step
 * campaigns, the next does not (the back-off), so no owner's loop is held
 * on every tick. */
#include <arpa/inet.h>
#include <limits.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctl_etcd.h"
#include "unit.h"

#define T0 100000u /* an arbitrary start: the clock is the test's */

static void period(void)
{
	CHECK(ctl_etcd_pace_period_ms(1) == 100, "a 1 s lease: a fallback every 100 ms");
	CHECK(ctl_etcd_pace_period_ms(4) == 400, "a 4 s lease: every 400 ms");
	CHECK(ctl_etcd_pace_period_ms(10) == 1000 && ctl_etcd_pace_period_ms(60) == 1000,
	      "10 s and longer: once a second");
	CHECK(ctl_etcd_pace_period_ms(0) == 1000 && ctl_etcd_pace_period_ms(-3) == 1000,
	      "no TTL given: once a second");
}

static void start_and_lost(void)
{
	struct ctl_etcd_pace p;

	ctl_etcd_pace_init(&p, 100);
	CHECK(ctl_etcd_pace_due(&p, 0) && ctl_etcd_pace_due(&p, T0), "due at once at the start");
	CHECK(ctl_etcd_pace_done(&p, CTL_ETCD_OK, T0) == 100,
	      "a lost campaign: the next after the period");
	CHECK(!ctl_etcd_pace_due(&p, T0) && !ctl_etcd_pace_due(&p, T0 + 99),
	      "not due before the period");
	CHECK(ctl_etcd_pace_due(&p, T0 + 100), "due once the period is over");
	ctl_etcd_pace_init(&p, 0);
	ctl_etcd_pace_done(&p, CTL_ETCD_OK, T0);
	CHECK(!ctl_etcd_pace_due(&p, T0 + 999) && ctl_etcd_pace_due(&p, T0 + 1000),
	      "period 0: once a second");
}

static void vacant(void)
{
	struct ctl_etcd_pace p;

	ctl_etcd_pace_init(&p, 100);
	ctl_etcd_pace_done(&p, CTL_ETCD_OK, T0);
	ctl_etcd_pace_vacant(&p, true);
	CHECK(ctl_etcd_pace_due(&p, T0 + 1), "the watch saw the key go: due at once");
	ctl_etcd_pace_done(&p, CTL_ETCD_OK, T0 + 1);
	CHECK(!ctl_etcd_pace_due(&p, T0 + 2), "the campaign answered the vacancy: not due again");
	ctl_etcd_pace_vacant(&p, true);
	ctl_etcd_pace_vacant(&p, false);
	CHECK(!ctl_etcd_pace_due(&p, T0 + 2),
	      "the key back (someone won) before we stepped: not due");

	/* a watch that delivers is an etcd that answers: no back-off holds it */
	ctl_etcd_pace_done(&p, CTL_ETCD_TIMEOUT, T0 + 10);
	ctl_etcd_pace_done(&p, CTL_ETCD_TIMEOUT, T0 + 20);
	ctl_etcd_pace_vacant(&p, true);
	CHECK(ctl_etcd_pace_due(&p, T0 + 21), "the key's delete is due at once during a back-off");
	CHECK(ctl_etcd_pace_done(&p, CTL_ETCD_TIMEOUT, T0 + 30) == 4000 &&
		  !ctl_etcd_pace_due(&p, T0 + 31),
	      "a failed campaign answers the vacancy too (not retried on every step)");

	/* we resigned: our own revoke deletes the key, and another goes first */
	ctl_etcd_pace_init(&p, 100);
	ctl_etcd_pace_done(&p, CTL_ETCD_OK, T0);
	ctl_etcd_pace_hold(&p, T0 + 500);
	ctl_etcd_pace_vacant(&p, true);
	CHECK(!ctl_etcd_pace_due(&p, T0 + 501) && !ctl_etcd_pace_due(&p, T0 + 1499),
	      "after a resign the key's delete is not due before the back-off");
	CHECK(ctl_etcd_pace_due(&p, T0 + 1500), "and due once it is over");
	ctl_etcd_pace_done(&p, CTL_ETCD_OK, T0 + 1500);
	ctl_etcd_pace_vacant(&p, true);
	CHECK(ctl_etcd_pace_due(&p, T0 + 1501), "the hold is once: a later delete is due at once");
}

static void backoff(void)
{
	static const int rcs[] = {CTL_ETCD_UNREACHABLE, CTL_ETCD_TIMEOUT, CTL_ETCD_NO_QUORUM,
				  CTL_ETCD_ERROR};
	static const uint64_t waits[] = {1000, 2000, 4000, 8000, 8000, 8000};
	struct ctl_etcd_pace p;
	uint64_t now = T0, w;
	bool ok = true;

	for (size_t i = 0; i < sizeof(rcs) / sizeof(rcs[0]); i++) {
		ctl_etcd_pace_init(&p, 100);
		w = ctl_etcd_pace_done(&p, rcs[i], T0);
		CHECK(w == 1000 && !ctl_etcd_pace_due(&p, T0 + 100) &&
			  !ctl_etcd_pace_due(&p, T0 + 999) && ctl_etcd_pace_due(&p, T0 + 1000),
		      "a campaign that came to %s: not on the period, 1 s later",
		      ctl_etcd_rc_name(rcs[i]));
	}
	ctl_etcd_pace_init(&p, 100);
	for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]); i++) {
		w = ctl_etcd_pace_done(&p, CTL_ETCD_TIMEOUT, now);
		ok &= w == waits[i] && !ctl_etcd_pace_due(&p, now + w - 1) &&
		      ctl_etcd_pace_due(&p, now + w);
		now += w + 500; /* the next campaign held the loop for 500 ms */
	}
	CHECK(ok, "failures in a row: 1, 2, 4, 8, 8, 8 s, counted from each campaign's end");
	CHECK(ctl_etcd_pace_backoff_ms(1000) == 8000 && ctl_etcd_pace_backoff_ms(UINT_MAX) == 8000,
	      "many failures: still the cap");
	p.failed = UINT_MAX;
	CHECK(ctl_etcd_pace_done(&p, CTL_ETCD_TIMEOUT, now) == 8000 && p.failed == UINT_MAX,
	      "the count of failures does not wrap");

	ctl_etcd_pace_done(&p, CTL_ETCD_OK, now + 8000);
	CHECK(p.failed == 0 && ctl_etcd_pace_due(&p, now + 8100),
	      "an answered campaign clears the back-off: the period again");
	CHECK(ctl_etcd_pace_done(&p, CTL_ETCD_UNREACHABLE, now + 8200) == 1000,
	      "and the next failure starts from 1 s");
}

/* the election on a port bound and not listening: connections refused */
static void election_refused(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof(a);
	char url[64], err[256] = "";
	struct ctl_etcd *e = NULL;
	struct ctl_etcd_elect *el = NULL;
	bool leader = true;
	int rc;

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(fd, (struct sockaddr *)&a, &alen)) {
		CHECK(0, "a loopback port for the refused endpoint");
		goto out;
	}
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", ntohs(a.sin_port));
	const struct ctl_etcd_conf c = {.endpoints = url, .timeout_ms = 500};
	if (!(e = ctl_etcd_new(&c, err, sizeof(err))) ||
	    !(el = ctl_etcd_elect_new(e, "/pace/leader", "a", 1))) {
		CHECK(0, "an election on %s: %s", url, err);
		goto out;
	}
	rc = ctl_etcd_elect_step(el, &leader);
	CHECK(rc == CTL_ETCD_UNREACHABLE && !leader, "the first step campaigns: %s (%s)",
	      ctl_etcd_rc_name(rc), ctl_etcd_errmsg(e));
	CHECK(!ctl_etcd_elect_poll(el), "a watch that cannot connect says nothing of the key");
	rc = ctl_etcd_elect_step(el, &leader);
	CHECK(rc == CTL_ETCD_OK && !leader,
	      "the next step, within the 1 s back-off (the period is 100 ms): no campaign (%s)",
	      ctl_etcd_rc_name(rc));
	ctl_etcd_elect_resign(el);
	CHECK(ctl_etcd_elect_step(el, &leader) == CTL_ETCD_OK && !leader,
	      "a resign without a lease asks nothing");
out:
	ctl_etcd_elect_free(el, false);
	ctl_etcd_free(e);
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	period();
	start_and_lost();
	vacant();
	backoff();
	election_refused();
	return unit_summary();
}
