// SPDX-License-Identifier: BSD-2-Clause
/* Reconnect delays with jitter; see ctl_backoff.h. */
#include <sodium.h>

#include "ctl_backoff.h"

uint64_t ctl_backoff_ms(unsigned failures, uint64_t base_ms, uint64_t max_ms)
{
	uint64_t ms = base_ms << (failures < 16 ? failures : 16);

	if (ms > max_ms || ms < base_ms) /* capped; or shifted past the top */
		ms = max_ms;
	if (ms / 2 < UINT32_MAX)
		return ms / 2 + randombytes_uniform((uint32_t)(ms / 2 + 1));
	/* beyond 32 bits (a cap of weeks): the modulo's bias does not matter for jitter */
	uint64_t r;

	randombytes_buf(&r, sizeof(r));
	return ms / 2 + r % (ms / 2 + 1);
}
