// SPDX-License-Identifier: BSD-2-Clause
/* The control base's reconnect delays: doubling from the base, the cap, the
 * jitter within the upper half, no overflow after many failures. */
#include <sodium.h>
#include <stdbool.h>

#include "ctl_backoff.h"
#include "unit.h"

/* Every draw of 200 within [lo, hi], and not all the same (jitter). */
static bool within(unsigned failures, uint64_t base, uint64_t max, uint64_t lo, uint64_t hi)
{
	uint64_t first = ctl_backoff_ms(failures, base, max);
	bool varied = false;

	for (int i = 0; i < 200; i++) {
		uint64_t ms = ctl_backoff_ms(failures, base, max);

		if (ms < lo || ms > hi)
			return false;
		varied |= ms != first;
	}
	return varied;
}

int main(void)
{
	if (sodium_init() < 0)
		return 1;
	CHECK(within(0, 500, 60000, 250, 500), "first retry: 250-500 ms");
	CHECK(within(3, 500, 60000, 2000, 4000), "after 3 failures: 2-4 s");
	CHECK(within(10, 500, 60000, 30000, 60000), "capped at the maximum: 30-60 s");
	CHECK(within(1000, 500, 60000, 30000, 60000), "many failures: still the cap");
	CHECK(within(16, 1ull << 50, 1ull << 60, 1ull << 59, 1ull << 60),
	      "a shift past the top: the cap, jitter beyond 32 bits");
	return unit_summary();
}
