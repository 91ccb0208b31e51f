// SPDX-License-Identifier: GPL-2.0
/*
 * Leak or not. Everything is measured from the start of tracing: the live
 * bytes are those allocated since then (under -p, blocks from before the
 * attach are unknown), so the target's anonymous memory is taken relative to
 * its amount then. What grew in anonymous memory and is not in live blocks
 * is retained: freed blocks the allocator keeps (fragmentation, arenas,
 * no trimming), or memory nothing traced allocated.
 *
 * Anonymous rather than all of RSS: RSS also counts the pages of the
 * program's files, which grow as code runs and mean nothing here.
 */
#include <string.h>
#include "verdict.h"

/* Against the live bytes when the memory was read, which may be before the report. */
static int64_t retained(const struct report_sample *s, const struct report_sample *base)
{
	return ((int64_t)s->anon - (int64_t)base->anon) -
	       ((int64_t)s->mem_live - (int64_t)base->mem_live);
}

/* The start: the figures when tracing began, else the first report that has them. */
static struct report_sample start_of(const struct report_sample *base,
				     const struct report_sample *s, size_t nr)
{
	if (base->mem)
		return *base;
	for (size_t i = 0; i < nr; i++)
		if (s[i].mem)
			return s[i];
	return *base;
}

static bool fragmented(const struct report_memory *m)
{
	int64_t grown = (int64_t)m->worst.anon - (int64_t)m->base.anon;

	return m->worst_retained >= (int64_t)VERDICT_MIN_RETAINED && 2 * m->worst_retained >= grown;
}

static int64_t heap_of(const struct report_sample *s)
{
	return (int64_t)(s->heap + s->arena);
}

/*
 * Drops. Allocations not tracked that keep coming in most intervals since
 * the first (at least HISTORY_MIN_POINTS - 1 of them) count as growth: the
 * block table is full of blocks still live, and the program goes on
 * allocating more than it frees back.
 */
static void judge_drops(const struct report_sample *s, size_t nr, struct report_memory *m)
{
	uint64_t prev = 0;

	if (!nr)
		return;
	m->drops = s[nr - 1].drops;
	m->untracked = s[nr - 1].untracked;
	m->incomplete = m->drops > 0;
	for (size_t i = 0; i < nr; i++) {
		if (m->untracked_intervals || s[i].untracked > prev)
			m->untracked_intervals++;
		m->untracked_rose += s[i].untracked > prev;
		prev = s[i].untracked;
	}
	m->untracked_growing = m->untracked_rose >= VERDICT_MIN_RISES &&
			       2 * m->untracked_rose >= m->untracked_intervals;
}

/* Measured: a line was fitted after start-up, and nothing was dropped. */
static bool trend_known(const struct report_memory *m)
{
	return m->live.trend != TREND_UNKNOWN && m->live.trend != TREND_STARTUP && !m->incomplete;
}

/* The samples' figures: the start, the most retained, the last. */
static void take_samples(const struct report_sample *base, const struct report_sample *samples,
			 size_t nr, struct report_memory *m)
{
	m->base = start_of(base, samples, nr);
	for (size_t i = 0; i < nr; i++) {
		const struct report_sample *s = &samples[i];
		int64_t r = retained(s, &m->base);

		if (!s->mem)
			continue;
		if (!m->reports++ || r > m->worst_retained) {
			m->worst = *s;
			m->worst_retained = r;
		}
		m->now = *s;
		m->now_retained = r;
	}
}

/*
 * Blocks not tracked are in the anonymous memory but in no live figure:
 * what looks retained may be theirs, so retention is no verdict then.
 */
static enum report_verdict verdict_of(const struct report_memory *m, bool frag)
{
	bool leak = m->growing > 0 || m->untracked_growing;

	frag = frag && !m->untracked;
	if (leak && frag)
		return VERDICT_LEAK_AND_FRAGMENTATION;
	if (leak)
		return VERDICT_LEAK;
	if (m->live.trend == TREND_GROWING)
		return VERDICT_GROWTH;
	if (frag)
		return VERDICT_FRAGMENTATION;
	if (m->live.trend == TREND_STARTUP)
		return VERDICT_STARTUP;
	if (m->live.trend == TREND_UNKNOWN)
		return VERDICT_UNKNOWN;
	return m->incomplete ? VERDICT_INCOMPLETE : VERDICT_NO_LEAK;
}

/*
 * Retained at the worst, much less of it at the last reading: given back
 * (trimmed, or the blocks in the way freed at last) if the anonymous memory
 * fell by at least half of what retention lost; else the live blocks grew
 * into the memory retained, which the allocator reused (a torch job's
 * import retains memory that its training then fills: "given back" beside
 * an RSS that rose from 208 to 236 MiB was false).
 */
static void judge_since(struct report_memory *m, bool frag)
{
	int64_t lost = m->worst_retained - m->now_retained;
	int64_t fell = (int64_t)m->worst.anon - (int64_t)m->now.anon;

	if (!frag || m->now.t_s <= m->worst.t_s || 2 * m->now_retained >= m->worst_retained)
		return;
	m->released = 2 * fell >= lost;
	m->reused = !m->released;
}

void verdict__judge(const struct report_sample *base, const struct report_sample *samples,
		    size_t nr, const struct report_growth *live, size_t growing, bool attached,
		    struct report_memory *m)
{
	bool frag;

	memset(m, 0, sizeof(*m));
	m->attached = attached;
	m->live = *live;
	m->growing = growing;
	judge_drops(samples, nr, m);
	m->trend_known = trend_known(m);
	take_samples(base, samples, nr, m);
	if (!m->reports || !m->base.mem)
		return;
	m->worst_in_heap = heap_of(&m->worst) - heap_of(&m->base);
	frag = fragmented(m);
	judge_since(m, frag);
	m->verdict = verdict_of(m, frag);
}

void verdict__kernel(struct report_memory *m)
{
	m->attached = false;
	m->verdict = verdict_of(m, false);
}

void verdict__all_freed(struct report_memory *m, uint64_t outstanding_allocs)
{
	if (!m->exited || outstanding_allocs || m->attached || m->incomplete || m->untracked)
		return;
	if (m->verdict != VERDICT_UNKNOWN && m->verdict != VERDICT_STARTUP &&
	    m->verdict != VERDICT_NO_LEAK)
		return;
	m->all_freed = true;
	m->verdict = VERDICT_NO_LEAK;
}

void verdict__stopped(struct report_memory *m, const struct report_grew *g)
{
	if (!g->stacks || (m->verdict != VERDICT_NO_LEAK && m->verdict != VERDICT_FRAGMENTATION))
		return;
	m->grew = *g;
	if (m->verdict == VERDICT_NO_LEAK)
		m->verdict = VERDICT_STOPPED;
}

bool verdict__retained(const struct report_memory *m)
{
	return m->reports && m->base.mem && !m->untracked && fragmented(m);
}

bool verdict__unexplained(const struct report_memory *m)
{
	return m->reports && m->base.mem && m->untracked && fragmented(m);
}

uint64_t verdict__max_allocs_hint(const struct report_totals *t)
{
	uint64_t live = t->outstanding_allocs + t->counters[CNT_ALLOCS_MAP_FULL], n = 1;

	if (!t->counters[CNT_ALLOCS_MAP_FULL])
		return 0;
	while (n < live)
		n <<= 1;
	return n;
}

void verdict__pymalloc(struct report_memory *m, const struct report_pyarenas *a)
{
	uint64_t free = a && a->known && a->bytes > a->used_bytes ? a->bytes - a->used_bytes : 0;

	if (free < VERDICT_MIN_RETAINED || 2 * free < a->bytes)
		return;
	m->pymalloc = true;
	if (m->verdict == VERDICT_LEAK || m->verdict == VERDICT_LEAK_AND_FRAGMENTATION)
		m->verdict = VERDICT_LEAK_AND_FRAGMENTATION;
	else if (m->verdict != VERDICT_GROWTH)
		m->verdict = VERDICT_FRAGMENTATION;
}

const char *verdict__name(enum report_verdict v)
{
	static const char *const names[] = {
		[VERDICT_UNKNOWN] = "unknown",
		[VERDICT_NO_LEAK] = "no_leak",
		[VERDICT_LEAK] = "leak",
		[VERDICT_FRAGMENTATION] = "fragmentation",
		[VERDICT_LEAK_AND_FRAGMENTATION] = "leak_and_fragmentation",
		[VERDICT_STARTUP] = "startup",
		[VERDICT_INCOMPLETE] = "incomplete",
		[VERDICT_GROWTH] = "growing",
		[VERDICT_STOPPED] = "stopped",
	};

	return (unsigned)v < sizeof(names) / sizeof(names[0]) ? names[v] : "unknown";
}
