// SPDX-License-Identifier: BSD-2-Clause
/*
 * sess_churn: add and remove sessions through libxgate (what the serverless
 * daemons will do), as fast as it goes, while the e2e test's traffic runs.
 * Every add and delete must succeed; the sessions it made are all gone at
 * the end. Prints the rates (reported, never asserted).
 *
 *   sess_churn INSTANCE PUBLIC_IP VNI POD_IP FIRST_PORT COUNT ROUNDS [host|via HOST]
 * Round r adds COUNT UDP sessions PUBLIC_IP:FIRST_PORT+i -> POD_IP:FIRST_PORT+i,
 * then deletes them. With host or via, the sessions are the dedicated-gateway
 * form's, as `xgate ingress add ... host|via HOST` makes them.
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

int main(int argc, char **argv)
{
	__u32 pub, pod, vni, first, count, rounds, host = 0;
	__u16 flags = 0;
	struct xg_sess_maps s;
	struct xg_maps m;
	double t_add = 0, t_del = 0;
	int rc;

	if (argc == 10 && (!strcmp(argv[8], "host") || !strcmp(argv[8], "via"))) {
		flags = !strcmp(argv[8], "host") ? XG_SESS_FORM_GATEWAY : XG_SESS_POD_SIDE;
		if (xg_parse_ip(argv[9], &host))
			return XG_EUSAGE;
	}
	if ((argc != 8 && !flags) || xg_parse_ip(argv[2], &pub) || xg_parse_vni(argv[3], &vni) ||
	    xg_parse_ip(argv[4], &pod) || xg_parse_u32("first port", argv[5], 1, 65535, &first) ||
	    xg_parse_u32("count", argv[6], 1, 65535, &count) ||
	    xg_parse_u32("rounds", argv[7], 1, 1000, &rounds) || first + count - 1 > 65535) {
		fprintf(stderr, "usage: sess_churn INSTANCE PUBLIC_IP VNI POD_IP FIRST_PORT COUNT "
				"ROUNDS [host|via HOST]\n");
		return XG_EUSAGE;
	}
	rc = xg_maps_open(argv[1], false, &m);
	if (rc)
		return rc;
	rc = xg_sess_open(&m, &s);
	if (rc) {
		xg_maps_close(&m);
		return rc;
	}
	for (__u32 r = 0; r < rounds && !rc; r++) {
		double t0 = now_s();

		for (__u32 i = 0; i < count && !rc; i++) {
			struct xg_sess_key k = {.ip_be = pub,
						.port_be = htons((__u16)(first + i)),
						.proto = IPPROTO_UDP};
			struct xg_sess v = {.vni = vni,
					    .pod_ip_be = pod,
					    .pod_port_be = htons((__u16)(first + i)),
					    .flags = flags,
					    .host_be = host};

			rc = xg_sess_add(&m, &s, &k, &v);
		}
		t_add += now_s() - t0;
		t0 = now_s();
		for (__u32 i = 0; i < count && !rc; i++) {
			struct xg_sess_key k = {.ip_be = pub,
						.port_be = htons((__u16)(first + i)),
						.proto = IPPROTO_UDP};

			rc = xg_sess_del(&s, &k);
		}
		t_del += now_s() - t0;
	}
	xg_sess_close(&s);
	xg_maps_close(&m);
	if (rc)
		return rc;
	printf("sess_churn: %u sessions x %u rounds: %.0f adds/s, %.0f deletes/s\n", count, rounds,
	       count * rounds / (t_add > 0 ? t_add : 1e-9),
	       count * rounds / (t_del > 0 ? t_del : 1e-9));
	return 0;
}
