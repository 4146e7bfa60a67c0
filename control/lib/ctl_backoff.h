/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Reconnect delays: exponential from base_ms, capped at max_ms, with jitter
 * (a uniform draw from the upper half), so that the children of a parent
 * that comes back do not all knock at once.
 */
#ifndef CTL_BACKOFF_H
#define CTL_BACKOFF_H

#include <stdint.h>

/* The delay before attempt number failures + 1 (failures: in a row so far):
 * d = min(base_ms * 2^failures, max_ms), drawn from [d/2, d]. */
uint64_t ctl_backoff_ms(unsigned failures, uint64_t base_ms, uint64_t max_ms);

#endif
