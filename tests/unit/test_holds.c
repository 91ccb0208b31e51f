// SPDX-License-Identifier: GPL-2.0
/* target/holds.c: the stops, their total, the longest and what it was for. */
#include "target/holds.h"
#include "unit.h"

TEST(holds_keep_the_longest_and_the_total)
{
	struct holds h = { 0 };

	holds__add(&h, 0, "ld.so");		/* the first is the longest so far, even at 0 */
	ASSERT_EQ_STR(h.max_what, "ld.so");
	holds__add(&h, 12.5, "libtorch_cpu.so");
	holds__add(&h, 12.5, "libc10.so");	/* a tie keeps the first */
	holds__add(&h, 3, "libm.so.6");
	ASSERT_EQ_U64(h.stops, 4);
	ASSERT(h.max_ms == 12.5 && h.total_ms == 28);
	ASSERT_EQ_STR(h.max_what, "libtorch_cpu.so");
	return true;
}

TEST(holds_cut_a_long_name)
{
	struct holds h = { 0 };
	char name[200];

	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	holds__add(&h, 1, name);
	ASSERT_EQ_U64(strlen(h.max_what), HOLD_WHAT_LEN - 1);
	return true;
}
