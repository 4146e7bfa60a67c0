/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The core the unit tests drive: pod network 10.244.0.0/16 in /24s per
 * node, VNI 7, ports 30000-30100, form 1 endpoints, revisions from 1000.
 */
#ifndef FX_CORE_TEST_H
#define FX_CORE_TEST_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core.h"

static inline struct fx_core_conf fx_test_core_conf(void)
{
	return (struct fx_core_conf){.pod_net = 0x0af40000,
				     .pod_net_bits = 16,
				     .node_bits = 24,
				     .vni = 7,
				     .port_lo = 30000,
				     .port_hi = 30100,
				     .state_s = 60,
				     .form = 1};
}

static inline struct fx_core *fx_test_core_open(struct fx_store *st, const struct fx_core_conf *cf,
						const struct fx_core_hooks *h)
{
	char err[256];
	struct fx_core *c = fx_core_new(st, cf, h, 1000, err, sizeof(err));

	if (!c)
		printf("# core: %s\n", err);
	return c;
}

static inline struct fx_core *fx_test_core_new(struct fx_store *st, const struct fx_core_hooks *h)
{
	const struct fx_core_conf cf = fx_test_core_conf();

	return fx_test_core_open(st, &cf, h);
}

/* The messages of a type (NULL: any) in sent since *from, moved past
 * them; *last (if not NULL) the last of them. */
static inline int fx_test_count(json_t *sent, const char *type, size_t *from, json_t **last)
{
	int n = 0;

	for (; *from < json_array_size(sent); (*from)++) {
		json_t *m = json_array_get(sent, *from);

		if (!type || !strcmp(json_string_value(json_object_get(m, "type")), type)) {
			n++;
			if (last)
				*last = m;
		}
	}
	return n;
}

/* A node's message, printf-formatted JSON, from node on link: the core's
 * answer (its refusal in *err), or -9 for JSON the test got wrong. */
static inline int fx_test_node_vmsg(struct fx_core *c, const char *node, void *link,
				    struct fx_err *err, const char *fmt, va_list ap)
{
	char buf[4096];
	json_t *m;
	int rc;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	if (!(m = json_loads(buf, 0, NULL))) {
		printf("# bad test JSON: %s\n", buf);
		return -9;
	}
	rc = fx_core_node_message(c, node, link, m, err);
	json_decref(m);
	return rc;
}

#endif
