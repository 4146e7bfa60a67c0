// SPDX-License-Identifier: BSD-2-Clause
/* gatewayd's handshakes under way: the cap on accepted ones, and the
 * deadline's watchdog shutting their sockets down (socketpairs). */
#include <errno.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "handshakes.h"
#include "unit.h"

static struct gw_hs_table t;

/* 1 if a read on fd returns EOF at once, 0 if it would block. */
static int eof_now(int fd)
{
	char c;

	return recv(fd, &c, 1, MSG_DONTWAIT) == 0 ? 1 : errno == EAGAIN ? 0 : -1;
}

int main(void)
{
	int sv[3][2], slot[3], extra, out;

	for (int i = 0; i < 3; i++)
		socketpair(AF_UNIX, SOCK_STREAM, 0, sv[i]);
	gw_hs_init(&t, 2);
	slot[0] = gw_hs_begin(&t, sv[0][0], true, 1, 1000);
	slot[1] = gw_hs_begin(&t, sv[1][0], true, 2, 3000);
	extra = gw_hs_begin(&t, sv[2][0], true, 3, 3000);
	CHECK(slot[0] >= 0 && slot[1] >= 0 && extra < 0,
	      "two accepted handshakes at once, not three");
	CHECK_EXPR(gw_hs_inbound(&t) == 2);
	out = gw_hs_begin(&t, sv[2][0], false, 0, 3000);
	CHECK(out >= 0, "a dialled one does not count against the cap");

	CHECK(gw_hs_expire(&t, 999) == 0 && !eof_now(sv[0][0]), "nothing cut before its deadline");
	CHECK(gw_hs_expire(&t, 1000) == 1, "one cut at its deadline");
	CHECK(eof_now(sv[0][0]) == 1, "its socket is shut down: its blocked read returns");
	CHECK(!eof_now(sv[1][0]) && !eof_now(sv[2][0]), "the others are untouched");
	CHECK(gw_hs_expire(&t, 2000) == 0, "a cut one is not cut again");
	CHECK(gw_hs_end(&t, slot[0]), "its end says the deadline cut it");
	CHECK(!gw_hs_end(&t, slot[1]), "one that ended in time says not");
	CHECK_EXPR(gw_hs_inbound(&t) == 0);
	slot[2] = gw_hs_begin(&t, sv[1][0], true, 2, 5000);
	CHECK(slot[2] >= 0, "ended ones free their place under the cap");
	CHECK(gw_hs_expire(&t, 4000) == 1 && gw_hs_end(&t, out),
	      "dialled ones have a deadline too");
	CHECK(!gw_hs_end(&t, -1), "no slot: nothing to end");
	gw_hs_destroy(&t);

	/* one source address gets GW_HS_PER_ADDR of the places, not all */
	gw_hs_init(&t, GW_HS_INBOUND_MAX);
	{
		int n = 0;

		for (int i = 0; i < GW_HS_PER_ADDR + 3; i++)
			n += gw_hs_begin(&t, sv[0][0], true, 7, 1000) >= 0;
		CHECK(n == GW_HS_PER_ADDR, "%d of %d from one address taken", n,
		      GW_HS_PER_ADDR + 3);
		CHECK(gw_hs_begin(&t, sv[0][0], true, 8, 1000) >= 0,
		      "another address still gets in");
	}
	gw_hs_destroy(&t);
	for (int i = 0; i < 3; i++) {
		close(sv[i][0]);
		close(sv[i][1]);
	}
	return unit_summary();
}
