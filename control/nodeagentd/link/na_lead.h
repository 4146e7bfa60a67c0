/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Which core a node obeys (proto/fornax.md "Several cores"). A node links
 * to every core it is given and reports to all of them; it takes commands
 * only from the one that says it leads, with the highest term any core has
 * said it leads with. The term is the election key's create_revision, so a
 * later leader's is higher: a deposed leader that still thinks it leads
 * (paused past its lease, then continued) is refused once its successor has
 * spoken. A core that says nothing (no election, or a core from before
 * terms) leads at term 0.
 */
#ifndef NA_LEAD_H
#define NA_LEAD_H

#include <stdbool.h>
#include <stdint.h>

struct na_lead {
	int64_t max_term; /* the highest term a core said it leads with */
};

/* A core said whether it leads, and its term. */
static inline void na_lead_heard(struct na_lead *ld, bool leader, int64_t term)
{
	if (leader && term > ld->max_term)
		ld->max_term = term;
}

/* Whether a command from a core that last said (leader, term) is obeyed. */
static inline bool na_lead_obeys(const struct na_lead *ld, bool leader, int64_t term)
{
	return leader && term >= ld->max_term;
}

#endif
