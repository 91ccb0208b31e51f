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

void verdict__judge(const struct report_sample *base, const struct report_sample *samples,
		    size_t nr, const struct report_growth *live, size_t growing, bool attached,
		    struct report_memory *m)
{
	bool frag, leak;

	memset(m, 0, sizeof(*m));
	m->attached = attached;
	m->live = *live;
	m->growing = growing;
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
	if (!m->reports || !m->base.mem)
		return;
	m->worst_in_heap = heap_of(&m->worst) - heap_of(&m->base);
	frag = fragmented(m);
	/* Given back since: trimmed, or the blocks in the way were freed at last. */
	m->released = frag && m->now.t_s > m->worst.t_s && 2 * m->now_retained < m->worst_retained;
	leak = growing > 0;
	if (leak && frag)
		m->verdict = VERDICT_LEAK_AND_FRAGMENTATION;
	else if (leak)
		m->verdict = VERDICT_LEAK;
	else if (frag)
		m->verdict = VERDICT_FRAGMENTATION;
	else if (live->trend == TREND_STARTUP)
		m->verdict = VERDICT_STARTUP;
	else if (live->trend != TREND_UNKNOWN)
		m->verdict = VERDICT_NO_LEAK;
}

bool verdict__retained(const struct report_memory *m)
{
	return m->reports && m->base.mem && fragmented(m);
}

void verdict__pymalloc(struct report_memory *m, const struct report_pyarenas *a)
{
	uint64_t free = a && a->known && a->bytes > a->used_bytes ? a->bytes - a->used_bytes : 0;

	if (free < VERDICT_MIN_RETAINED || 2 * free < a->bytes)
		return;
	m->pymalloc = true;
	if (m->verdict == VERDICT_LEAK || m->verdict == VERDICT_LEAK_AND_FRAGMENTATION)
		m->verdict = VERDICT_LEAK_AND_FRAGMENTATION;
	else
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
	};

	return (unsigned)v < sizeof(names) / sizeof(names[0]) ? names[v] : "unknown";
}
