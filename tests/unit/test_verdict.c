// SPDX-License-Identifier: GPL-2.0
/* verdict.c: the memory verdict from the history's samples and the trends. */
#include <string.h>
#include "analyze/verdict.h"
#include "unit.h"

#define MiB (1ull << 20)

static struct report_sample mem(double t, uint64_t live, uint64_t anon, uint64_t arena)
{
	return (struct report_sample){ .t_s = t, .live = live, .mem = true, .mem_t_s = t,
				       .mem_live = live, .rss = anon + 2 * MiB,
				       .anon = anon, .arena = arena, .arenas = arena ? 17 : 0 };
}

TEST(verdict_fragmentation_then_released)
{
	struct report_sample base = mem(0, 0, 1 * MiB, 0), s[6];
	struct report_growth flat = { .trend = TREND_STABLE };
	struct report_memory m;

	s[0] = mem(0.5, 600 * MiB, 620 * MiB, 600 * MiB);
	s[1] = mem(1.0, 102 * MiB, 1030 * MiB, 1024 * MiB);
	s[2] = mem(1.5, 102 * MiB, 1031 * MiB, 1024 * MiB);
	s[3] = mem(2.0, 102 * MiB, 1031 * MiB, 1024 * MiB);
	verdict__judge(&base, s, 4, &flat, 0, false, &m);
	ASSERT(m.verdict == VERDICT_FRAGMENTATION);
	ASSERT(!m.released && !m.attached);
	ASSERT_EQ_U64(m.reports, 4);
	ASSERT(m.worst.t_s == 1.5);	/* the first of the largest */
	ASSERT_EQ_U64(m.worst_retained, 1030 * MiB - 102 * MiB);
	ASSERT_EQ_U64(m.worst_in_heap, 1024 * MiB);
	ASSERT(m.now.t_s == 2.0);
	/* malloc_trim: RSS falls, live does not. */
	s[4] = mem(2.5, 102 * MiB, 230 * MiB, 1024 * MiB);
	s[5] = (struct report_sample){ .t_s = 2.6, .live = 102 * MiB };	/* exited: no figures */
	verdict__judge(&base, s, 6, &flat, 0, false, &m);
	ASSERT(m.verdict == VERDICT_FRAGMENTATION && m.released);
	ASSERT(m.now.t_s == 2.5 && m.now_retained == (int64_t)(229 * MiB - 102 * MiB));
	ASSERT(!strcmp(verdict__name(m.verdict), "fragmentation"));
	return true;
}

/* Three reports, 10 MiB more live each second, all of it in anonymous memory. */
static void rising(struct report_sample *s)
{
	for (int i = 0; i < 3; i++)
		s[i] = mem(i + 1, (i + 1) * 10 * MiB, ((i + 1) * 10 + 2) * MiB, 0);
}

TEST(verdict_leak_no_leak_unknown)
{
	struct report_sample base = { .t_s = 0 }, s[3];
	struct report_growth up = { .trend = TREND_GROWING }, flat = { .trend = TREND_STABLE };
	struct report_growth unknown = { .trend = TREND_UNKNOWN };
	struct report_memory m;

	rising(s);
	/* No baseline figures: the first report stands for the start. */
	verdict__judge(&base, s, 3, &up, 1, true, &m);
	ASSERT(m.verdict == VERDICT_LEAK && m.attached && m.growing == 1);
	ASSERT(m.base.t_s == 1 && m.worst_retained == 0);
	verdict__judge(&base, s, 3, &flat, 0, false, &m);
	ASSERT(m.verdict == VERDICT_NO_LEAK);
	verdict__judge(&base, s, 1, &unknown, 0, false, &m);
	ASSERT(m.verdict == VERDICT_UNKNOWN);
	s[0].mem = s[1].mem = s[2].mem = false;
	verdict__judge(&base, s, 3, &up, 1, false, &m);
	ASSERT(m.verdict == VERDICT_UNKNOWN && m.reports == 0);
	ASSERT(!strcmp(verdict__name(VERDICT_LEAK_AND_FRAGMENTATION), "leak_and_fragmentation"));
	return true;
}

/* Start-up: no verdict from the trends; a leak or fragmentation still is one. */
TEST(verdict_startup)
{
	struct report_sample base = mem(0, 0, 1 * MiB, 0), s[3];
	struct report_growth startup = { .trend = TREND_STARTUP };
	struct report_memory m;

	rising(s);
	verdict__judge(&base, s, 3, &startup, 0, false, &m);
	ASSERT(m.verdict == VERDICT_STARTUP);
	ASSERT(!strcmp(verdict__name(m.verdict), "startup"));
	verdict__judge(&base, s, 3, &startup, 1, false, &m);
	ASSERT(m.verdict == VERDICT_LEAK);
	s[2] = mem(3, 30 * MiB, 30 * MiB + 2 * VERDICT_MIN_RETAINED, 0);
	verdict__judge(&base, s, 3, &startup, 0, false, &m);
	ASSERT(m.verdict == VERDICT_FRAGMENTATION);
	return true;
}

/* A leak with fragmentation; and retention too small, or mostly live, is no verdict. */
TEST(verdict_thresholds)
{
	struct report_sample base = mem(0, 0, 1 * MiB, 0), s[2];
	struct report_growth flat = { .trend = TREND_STABLE };
	struct report_memory m;

	s[0] = mem(1, 1 * MiB, 1 * MiB + VERDICT_MIN_RETAINED, 0);
	s[1] = mem(2, 1 * MiB, VERDICT_MIN_RETAINED, 0);
	verdict__judge(&base, s, 2, &flat, 0, false, &m);
	ASSERT(m.verdict == VERDICT_NO_LEAK);	/* 15 MiB: below the minimum */
	s[1] = mem(2, 40 * MiB, 40 * MiB + 30 * MiB, 0);
	verdict__judge(&base, s, 2, &flat, 0, false, &m);
	ASSERT(m.verdict == VERDICT_NO_LEAK);	/* 29 of 69 MiB grown: mostly live */
	s[1] = mem(2, 40 * MiB, 40 * MiB + 60 * MiB, 0);
	verdict__judge(&base, s, 2, &flat, 2, false, &m);
	ASSERT(m.verdict == VERDICT_LEAK_AND_FRAGMENTATION);
	ASSERT(m.worst_in_heap == 0);	/* not glibc's heap: said so in the text */
	return true;
}
