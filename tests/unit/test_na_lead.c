// SPDX-License-Identifier: BSD-2-Clause
/* Which core a node obeys (na_lead.h): the one that says it leads, with the
 * highest term any core said it leads with; a core that says nothing leads
 * at term 0, as a single core without an election does. */
#include "na_lead.h"
#include "unit.h"

int main(void)
{
	struct na_lead ld = {0};

	CHECK(na_lead_obeys(&ld, true, 0), "one core, no election (term 0): obeyed");
	CHECK(!na_lead_obeys(&ld, false, 0), "a core that says it is a standby: refused");
	na_lead_heard(&ld, false, 0);
	na_lead_heard(&ld, true, 5);
	CHECK(na_lead_obeys(&ld, true, 5), "the leader at term 5: obeyed");
	CHECK(!na_lead_obeys(&ld, false, 0), "the standby beside it: refused");
	CHECK(!na_lead_obeys(&ld, true, 3),
	      "a core still saying it leads at term 3 (deposed, paused past its lease): refused");
	na_lead_heard(&ld, true, 3);
	CHECK(ld.max_term == 5 && !na_lead_obeys(&ld, true, 3),
	      "and it saying so again changes nothing");
	na_lead_heard(&ld, true, 9);
	CHECK(na_lead_obeys(&ld, true, 9) && !na_lead_obeys(&ld, true, 5),
	      "a new leader at term 9: obeyed, the one at 5 no more");
	na_lead_heard(&ld, false, 12);
	CHECK(ld.max_term == 9 && na_lead_obeys(&ld, true, 9),
	      "a standby's term does not depose the leader");
	return unit_summary();
}
