/* SPDX-License-Identifier: BSD-2-Clause */
/* Minimal check helpers for the C unit tests: one line per check, and the
 * "N passed, N failed" summary line the test runner reads. */
#ifndef XG_UNIT_H
#define XG_UNIT_H

#include <stdio.h>

static int passed, failed;

#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (cond) {                                                    \
			passed++;                                              \
			printf("ok - ");                                       \
		} else {                                                       \
			failed++;                                              \
			printf("not ok (line %d) - ", __LINE__);               \
		}                                                              \
		printf(__VA_ARGS__);                                           \
		printf("\n");                                                  \
	} while (0)

/* CHECK with the expression itself as the description. */
#define CHECK_EXPR(cond) CHECK(cond, "%s", #cond)

static inline int unit_summary(void)
{
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

#endif
