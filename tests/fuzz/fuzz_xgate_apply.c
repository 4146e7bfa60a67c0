// SPDX-License-Identifier: BSD-2-Clause
/*
 * `xgate apply -f FILE`: the cluster file through apply_plan_parse
 * (cmd_apply.c), the reader and checks apply runs before it opens the maps;
 * nothing is written.
 */
#include <jansson.h>

#include "cli.h"
#include "fuzz.h"

/*
 * cmd_apply.c also holds the writing half (cmd_apply), which calls the
 * operations of ops.c and the argument functions of help.c. The harness
 * links cmd_apply.c alone: these stand in for them (weak, so that a build
 * that links the real ones uses those) and are never called.
 */
#define FZ_NEVER(decl)                                                                             \
	decl __attribute__((weak));                                                                \
	decl                                                                                       \
	{                                                                                          \
		abort();                                                                           \
	}
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
FZ_NEVER(int op_vpc_put(struct xg_maps *m, const struct vpc_spec *s, bool replace))
FZ_NEVER(int op_subnet_put(struct xg_maps *m, struct subnet_spec *s, bool replace))
FZ_NEVER(int op_endpoint_put(struct xg_maps *m, struct ep_spec *s, bool replace))
FZ_NEVER(int op_host_set(struct xg_maps *m, const __u32 *ip, const __u32 *gw, const __u32 *ttl))
FZ_NEVER(bool op_vpc_exists(struct xg_maps *m, __u32 vni))
FZ_NEVER(const char *arg_value(struct args *a, const char *kw))
FZ_NEVER(int usage_error(const char *object, const char *fmt, ...))
#pragma GCC diagnostic pop

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct apply_plan p;

	(void)apply_plan_parse("fuzz.json", (const char *)data, size, &p);
	apply_plan_free(&p);
	return 0;
}
