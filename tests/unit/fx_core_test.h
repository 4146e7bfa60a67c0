/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The core the unit tests drive: pod network 10.244.0.0/16 in /24s per
 * node, VNI 7, ports 30000-30100, form 1 endpoints, revisions from 1000.
 */
#ifndef FX_CORE_TEST_H
#define FX_CORE_TEST_H

#include <stdio.h>

#include "core.h"

static inline struct fx_core *fx_test_core_new(struct fx_store *st, const struct fx_core_hooks *h)
{
	const struct fx_core_conf cf = {.pod_net = 0x0af40000,
					.pod_net_bits = 16,
					.node_bits = 24,
					.vni = 7,
					.port_lo = 30000,
					.port_hi = 30100,
					.state_s = 60,
					.form = 1};
	char err[256];
	struct fx_core *c = fx_core_new(st, &cf, h, 1000, err, sizeof(err));

	if (!c)
		printf("# core: %s\n", err);
	return c;
}

#endif
