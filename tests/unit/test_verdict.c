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

/* Retained, then the live blocks grow into it: reused, not given back (RSS did not fall). */
TEST(verdict_fragmentation_then_reused)
{
	struct report_sample base = mem(0, 0, 1 * MiB, 0), s[4];
	struct report_growth flat = { .trend = TREND_STABLE };
	struct report_memory m;

	s[0] = mem(1.0, 100 * MiB, 400 * MiB, 0);
	s[1] = mem(1.5, 100 * MiB, 401 * MiB, 0);
	s[2] = mem(2.0, 380 * MiB, 420 * MiB, 0);	/* anonymous rose a little; live took the rest */
	verdict__judge(&base, s, 3, &flat, 0, false, &m);
	ASSERT(m.verdict == VERDICT_FRAGMENTATION);
	ASSERT(m.reused && !m.released);
	ASSERT(m.now_retained == (int64_t)(39 * MiB) && m.worst_retained == (int64_t)(300 * MiB));
	/* Half the drop went back as anonymous memory that fell: given back. */
	s[3] = mem(2.5, 230 * MiB, 250 * MiB, 0);
	verdict__judge(&base, s, 4, &flat, 0, false, &m);
	ASSERT(m.released && !m.reused);
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

/*
 * Drops: allocations untracked in most intervals count as growth, a leak
 * with no growing stack; retention is no verdict while blocks go
 * untracked (theirs is in the anonymous memory); no "no leak" then.
 */
TEST(verdict_drops)
{
	struct report_sample base = mem(0, 0, 1 * MiB, 0), s[4];
	struct report_growth flat = { .trend = TREND_STABLE };
	struct report_memory m;

	for (int i = 0; i < 4; i++) {
		s[i] = mem(i + 1, 7 * MiB, (8 + 20 * i) * MiB, 0);
		s[i].untracked = s[i].drops = 50000 * (uint64_t)i;
	}
	verdict__judge(&base, s, 4, &flat, 0, false, &m);
	ASSERT(m.verdict == VERDICT_LEAK && m.incomplete && !m.trend_known);
	ASSERT(m.untracked_growing && m.untracked_rose == 3 && m.untracked_intervals == 3);
	ASSERT_EQ_U64(m.untracked, 150000);
	ASSERT(!verdict__retained(&m) && verdict__unexplained(&m));
	/* Once, then no more: not growth, but no "no leak" nor fragmentation either. */
	for (int i = 1; i < 4; i++)
		s[i].untracked = s[i].drops = 50000;
	verdict__judge(&base, s, 4, &flat, 0, false, &m);
	ASSERT(m.verdict == VERDICT_INCOMPLETE && !m.untracked_growing);
	ASSERT(m.untracked_rose == 1 && m.untracked_intervals == 3);
	ASSERT(!strcmp(verdict__name(m.verdict), "incomplete"));
	/* Stacks lost, every block tracked: retention stands, "not a leak" does not. */
	for (int i = 0; i < 4; i++)
		s[i].untracked = 0;
	verdict__judge(&base, s, 4, &flat, 0, false, &m);
	ASSERT(m.verdict == VERDICT_FRAGMENTATION && m.incomplete && !m.trend_known);
	ASSERT(verdict__retained(&m) && !verdict__unexplained(&m));
	return true;
}

/* Fragmentation before the trend is known: measured, but not "not a leak". */
TEST(verdict_trend_known)
{
	struct report_sample base = mem(0, 0, 1 * MiB, 0), s[3];
	struct report_growth unknown = { .trend = TREND_UNKNOWN }, flat = { .trend = TREND_STABLE };
	struct report_growth startup = { .trend = TREND_STARTUP };
	struct report_memory m;

	s[0] = mem(1, 100 * MiB, 1000 * MiB, 900 * MiB);
	s[1] = mem(2, 100 * MiB, 1000 * MiB, 900 * MiB);
	s[2] = mem(3, 100 * MiB, 1000 * MiB, 900 * MiB);
	verdict__judge(&base, s, 1, &unknown, 0, false, &m);
	ASSERT(m.verdict == VERDICT_FRAGMENTATION && !m.trend_known);
	verdict__judge(&base, s, 2, &startup, 0, false, &m);
	ASSERT(m.verdict == VERDICT_FRAGMENTATION && !m.trend_known);
	verdict__judge(&base, s, 3, &flat, 0, false, &m);
	ASSERT(m.verdict == VERDICT_FRAGMENTATION && m.trend_known && !m.incomplete);
	return true;
}

/* The live total grows with no stack growing: neither "no leak" nor a leak's sites. */
TEST(verdict_growth_without_stack)
{
	struct report_sample base = mem(0, 0, 1 * MiB, 0), s[3];
	struct report_growth up = { .trend = TREND_GROWING, .slope = 10 * MiB, .r2 = 1 };
	struct report_memory m;

	rising(s);
	verdict__judge(&base, s, 3, &up, 0, false, &m);
	ASSERT(m.verdict == VERDICT_GROWTH && m.trend_known);
	ASSERT(!strcmp(verdict__name(m.verdict), "growing"));
	return true;
}

/* --max-allocs for every block that may have been live: tracked and dropped, a power of two. */
TEST(verdict_max_allocs_hint)
{
	struct report_totals t = { .outstanding_allocs = 114688 };

	ASSERT_EQ_U64(verdict__max_allocs_hint(&t), 0);
	t.counters[CNT_ALLOCS_MAP_FULL] = 285312;
	ASSERT_EQ_U64(verdict__max_allocs_hint(&t), 524288);
	t.counters[CNT_ALLOCS_MAP_FULL] = 262144 - 114688;
	ASSERT_EQ_U64(verdict__max_allocs_hint(&t), 262144);
	return true;
}

/* A leak an earlier report named, none now: said, not forgotten. */
TEST(verdict_leak_that_stopped)
{
	struct report_grew g = { .stacks = 3, .from_s = 2.0, .to_s = 4.5, .slope = 40960,
				 .live = 34 * MiB }, none = { 0 };
	struct report_memory m = { .verdict = VERDICT_NO_LEAK };

	verdict__stopped(&m, &none);
	ASSERT(m.verdict == VERDICT_NO_LEAK && !m.grew.stacks);
	verdict__stopped(&m, &g);
	ASSERT(m.verdict == VERDICT_STOPPED && m.grew.stacks == 3 && m.grew.to_s == 4.5);
	ASSERT(!strcmp(verdict__name(m.verdict), "stopped"));
	/* Fragmentation keeps its verdict, and knows what grew (no "not a leak"). */
	m = (struct report_memory){ .verdict = VERDICT_FRAGMENTATION };
	verdict__stopped(&m, &g);
	ASSERT(m.verdict == VERDICT_FRAGMENTATION && m.grew.live == 34 * MiB);
	/* A leak, growth of the total, start-up, incomplete figures: theirs says more. */
	for (enum report_verdict v = VERDICT_UNKNOWN; v <= VERDICT_GROWTH; v++) {
		if (v == VERDICT_NO_LEAK || v == VERDICT_FRAGMENTATION)
			continue;
		m = (struct report_memory){ .verdict = v };
		verdict__stopped(&m, &g);
		ASSERT(m.verdict == v && !m.grew.stacks);
	}
	return true;
}

/* jq's run of 0.7 s: one report, every block freed by its exit: no leak, not "too early". */
TEST(verdict_all_freed_at_exit)
{
	struct report_memory m = { .verdict = VERDICT_UNKNOWN, .exited = true };

	verdict__all_freed(&m, 0);
	ASSERT(m.verdict == VERDICT_NO_LEAK && m.all_freed);
	/* Blocks left, still running, attached, dropped or untracked: not told. */
	m = (struct report_memory){ .verdict = VERDICT_UNKNOWN, .exited = true };
	verdict__all_freed(&m, 1);
	ASSERT(m.verdict == VERDICT_UNKNOWN && !m.all_freed);
	m = (struct report_memory){ .verdict = VERDICT_UNKNOWN };
	verdict__all_freed(&m, 0);
	ASSERT(m.verdict == VERDICT_UNKNOWN);
	m = (struct report_memory){ .verdict = VERDICT_STARTUP, .exited = true, .attached = true };
	verdict__all_freed(&m, 0);
	ASSERT(m.verdict == VERDICT_STARTUP);
	m = (struct report_memory){ .verdict = VERDICT_UNKNOWN, .exited = true, .incomplete = true };
	verdict__all_freed(&m, 0);
	ASSERT(m.verdict == VERDICT_UNKNOWN);
	m = (struct report_memory){ .verdict = VERDICT_UNKNOWN, .exited = true, .untracked = 5 };
	verdict__all_freed(&m, 0);
	ASSERT(m.verdict == VERDICT_UNKNOWN);
	/* Start-up ended by the exit: no leak. Fragmentation, growth, a stopped leak say more. */
	m = (struct report_memory){ .verdict = VERDICT_STARTUP, .exited = true };
	verdict__all_freed(&m, 0);
	ASSERT(m.verdict == VERDICT_NO_LEAK);
	for (enum report_verdict v = VERDICT_UNKNOWN; v <= VERDICT_STOPPED; v++) {
		if (v == VERDICT_UNKNOWN || v == VERDICT_STARTUP || v == VERDICT_NO_LEAK)
			continue;
		m = (struct report_memory){ .verdict = v, .exited = true };
		verdict__all_freed(&m, 0);
		ASSERT(m.verdict == v && !m.all_freed);
	}
	return true;
}
