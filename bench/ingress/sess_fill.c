// SPDX-License-Identifier: BSD-2-Clause
/*
 * sess_fill: put N sessions into an instance through libxgate (what the
 * serverless daemons will call), for bench/ingress.sh's lookup-cost and
 * churn rows, and take them out again.
 *
 *   sess_fill INSTANCE VNI add N    N UDP sessions: public 198.18.0.0/15
 *                                   (address i / 60000, port 1024 + i % 60000)
 *                                   -> pod 10.64.0.0/10 (the same split)
 *   sess_fill INSTANCE VNI del N    the same N removed
 *
 * Prints "sess_fill: add N in S s: R/s" (timed, never asserted). Every call
 * must succeed; the first failure stops it (exit status: libxgate's code).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xg.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void nth(__u32 i, __u32 vni, struct xg_sess_key *k, struct xg_sess *v)
{
	__u32 a = i / 60000, port = 1024 + i % 60000;

	memset(k, 0, sizeof(*k));
	memset(v, 0, sizeof(*v));
	k->ip_be = htonl((198u << 24 | 18u << 16) + a);
	k->port_be = htons((__u16)port);
	k->proto = IPPROTO_UDP;
	v->vni = vni;
	v->pod_ip_be = htonl((10u << 24 | 64u << 16) + a);
	v->pod_port_be = htons((__u16)port);
}

int main(int argc, char **argv)
{
	struct xg_sess_maps s;
	struct xg_maps m;
	__u32 vni, n;
	int rc, add;
	double t0, dt;

	if (argc != 5 || xg_parse_vni(argv[2], &vni) ||
	    (strcmp(argv[3], "add") && strcmp(argv[3], "del")) ||
	    xg_parse_u32("count", argv[4], 1, 4000000, &n)) {
		fprintf(stderr, "usage: sess_fill INSTANCE VNI add|del N\n");
		return XG_EUSAGE;
	}
	add = !strcmp(argv[3], "add");
	rc = xg_maps_open(argv[1], false, &m);
	if (rc)
		return rc;
	rc = xg_sess_open(&m, &s);
	if (rc) {
		xg_maps_close(&m);
		return rc;
	}
	t0 = now_s();
	for (__u32 i = 0; i < n && !rc; i++) {
		struct xg_sess_key k;
		struct xg_sess v;

		nth(i, vni, &k, &v);
		rc = add ? xg_sess_add(&m, &s, &k, &v) : xg_sess_del(&s, &k);
	}
	dt = now_s() - t0;
	xg_sess_close(&s);
	xg_maps_close(&m);
	if (rc)
		return rc;
	printf("sess_fill: %s %u in %.3f s: %.0f/s\n", argv[3], n, dt, n / (dt > 0 ? dt : 1e-9));
	return 0;
}
