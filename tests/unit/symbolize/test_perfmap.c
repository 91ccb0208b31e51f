// SPDX-License-Identifier: GPL-2.0
/* perfmap.c's parser and lookup, on text. */
#include <stdlib.h>
#include "symbolize/perfmap.h"
#include "unit.h"

static const char *name_at(const struct perfmap *pm, uint64_t addr)
{
	const struct perfmap_entry *e = perfmap__find(pm, addr);

	return e ? e->name : "(none)";
}

TEST(perfmap_parse_and_find)
{
	struct perfmap *pm = NULL;

	ASSERT_EQ_U64(perfmap__parse("1000 100 py::main:app.py\n"
				     "0x2000 0x20 with 0x prefixes\n"
				     "not a line\n"
				     "3000 zz bad size\n"
				     "4000 0 empty\n"
				     "5000 10\n"
				     "6000 10 crlf\r\n"
				     "\n"
				     "7000\t8\ttabs\n", &pm), 0);
	ASSERT_EQ_U64(perfmap__nr(pm), 4);
	ASSERT_EQ_STR(name_at(pm, 0x1000), "py::main:app.py");
	ASSERT_EQ_STR(name_at(pm, 0x10ff), "py::main:app.py");
	ASSERT_EQ_STR(name_at(pm, 0x1100), "(none)");
	ASSERT_EQ_STR(name_at(pm, 0xfff), "(none)");
	ASSERT_EQ_STR(name_at(pm, 0x201f), "with 0x prefixes");
	ASSERT_EQ_STR(name_at(pm, 0x3000), "(none)");
	ASSERT_EQ_STR(name_at(pm, 0x4000), "(none)");
	ASSERT_EQ_STR(name_at(pm, 0x6004), "crlf");
	ASSERT_EQ_STR(name_at(pm, 0x7007), "tabs");
	perfmap__free(pm);
	return true;
}

/* JITs reuse memory: the line written last names the code there now. */
TEST(perfmap_later_line_wins)
{
	struct perfmap *pm = NULL;

	ASSERT_EQ_U64(perfmap__parse("1000 1000 big_old\n"
				     "1800 100 newer_inside\n"
				     "1000 10 newest_at_start\n"
				     "900 800 overlapping_below\n", &pm), 0);
	ASSERT_EQ_STR(name_at(pm, 0x1004), "overlapping_below");
	ASSERT_EQ_STR(name_at(pm, 0x10ff), "overlapping_below");
	ASSERT_EQ_STR(name_at(pm, 0x1100), "big_old");
	ASSERT_EQ_STR(name_at(pm, 0x1800), "newer_inside");
	ASSERT_EQ_STR(name_at(pm, 0x1900), "big_old");
	ASSERT_EQ_STR(name_at(pm, 0x1fff), "big_old");
	ASSERT_EQ_STR(name_at(pm, 0x2000), "(none)");
	ASSERT_EQ_STR(name_at(pm, 0x900), "overlapping_below");
	perfmap__free(pm);
	return true;
}

/* A line still being written is not read: its name may be cut. */
TEST(perfmap_unterminated_line)
{
	struct perfmap *pm = NULL;

	ASSERT_EQ_U64(perfmap__parse("1000 10 whole\n2000 10 half_writ", &pm), 0);
	ASSERT_EQ_U64(perfmap__nr(pm), 1);
	ASSERT_EQ_STR(name_at(pm, 0x2000), "(none)");
	perfmap__free(pm);
	ASSERT_EQ_U64(perfmap__parse("", &pm), 0);
	ASSERT_EQ_U64(perfmap__nr(pm), 0);
	ASSERT_EQ_STR(name_at(pm, 0), "(none)");
	perfmap__free(pm);
	ASSERT_EQ_STR(name_at(NULL, 0x1000), "(none)");
	return true;
}

/* A huge size does not wrap around to cover low addresses. */
TEST(perfmap_size_clamped)
{
	struct perfmap *pm = NULL;

	ASSERT_EQ_U64(perfmap__parse("ffffffffffff0000 ffffffffffffffff top\n", &pm), 0);
	ASSERT_EQ_STR(name_at(pm, 0xfffffffffffffff0ull), "top");
	ASSERT_EQ_STR(name_at(pm, 0x10), "(none)");
	perfmap__free(pm);
	return true;
}
