// SPDX-License-Identifier: GPL-2.0
/*
 * What the verdict says of drops: the figures they made incomplete, by how
 * much, and the option that fixes each; and allocations that keep going
 * untracked, which count as growth (analyze/verdict.h).
 */
#include <stdio.h>
#include <string.h>
#include "analyze/verdict.h"
#include "model/report.h"
#include "report_incomplete.h"

#define COUNT_LEN REPORT_COUNT_LEN
#define SIZE_LEN 64

/* "more allocations went untracked in 6 of 7 intervals (285,312 in all)": growth too. */
void report_incomplete__untracked_growth(const struct report_memory *m, FILE *f)
{
	char n[COUNT_LEN];

	fprintf(f, "more allocations went untracked in %u of %u intervals (%s in all):\n"
		"  the tables are full of live blocks and more keep coming (a leak too big for them,\n"
		"  or more blocks live at once than they hold)",
		m->untracked_rose, m->untracked_intervals, report__count(m->untracked, n));
}

/*
 * A site that grows by G bytes of small blocks from nothing adds estimated
 * bytes of variance about G times the mean (each sampled block, of weight
 * w·s ~ BYTES, adds w(w-1)s^2 ~ BYTES·w·s): it is told from noise when
 * G > z·sqrt(G·BYTES), G > z²·BYTES, 1.9 MiB at --sample 512K. Under -s N a
 * block of s bytes weighs N blocks and adds N(N-1)s^2: z²·(N-1) blocks.
 * A site that held much already has the variance of that too: more.
 */
double report_incomplete__least_growth(const struct report_sampling *s)
{
	return REPORT_Z95 * REPORT_Z95 * (s->by_bytes ? (double)s->mean : (double)s->mean - 1);
}

void report_incomplete__sampling(const struct report *r, FILE *f)
{
	const struct report_sampling *s = r->sampling;
	enum report_verdict v = r->analysis->memory.verdict;
	char a[SIZE_LEN], b[SIZE_LEN], n[COUNT_LEN];
	double least;

	if (!s || v == VERDICT_LEAK || v == VERDICT_LEAK_AND_FRAGMENTATION)
		return;
	least = report_incomplete__least_growth(s);
	if (s->by_bytes)
		fprintf(f, "  Sampling cannot see a small leak: a site's growth under ~%s (more where it already\n"
			"  held much) cannot be told from noise at --sample %s; exact mode sees every block.\n",
			report__human_size((uint64_t)least, a, sizeof(a)),
			report__human_size(s->mean, b, sizeof(b)));
	else
		fprintf(f, "  Sampling cannot see a small leak: a site's growth under ~%s blocks (more where it\n"
			"  already held much) cannot be told from noise at -s %llu; exact mode sees every block.\n",
			report__count((uint64_t)least, n), (unsigned long long)s->mean);
}

/* Retention that the untracked blocks may explain: measured, not judged. */
static void print_unexplained(const struct report_memory *m, FILE *f)
{
	char a[REPORT_COUNT_LEN];

	if (!verdict__unexplained(m))
		return;
	fprintf(f, "  At %.1f s anonymous memory had grown by %s more than the live blocks tracked:\n"
		"  the untracked blocks may be in it, or memory the allocator keeps.\n",
		m->worst.mem_t_s, report__human_size((uint64_t)m->worst_retained, a, sizeof(a)));
}

/*
 * "; raise --stack-storage-size": the options of r's drops, each once;
 * --max-allocs apart (report_incomplete__text names its size).
 */
static void print_fixes(const struct report *r, FILE *f)
{
	const char *seen[CNT__COUNT];
	size_t n = 0;

	for (int c = 0; c < CNT__COUNT; c++) {
		const char *fix = report__counter_fix(c);
		bool dup = false;

		if (!fix || !r->totals.counters[c] || c == CNT_ALLOCS_MAP_FULL)
			continue;
		for (size_t i = 0; i < n; i++)
			dup |= !strcmp(seen[i], fix);
		if (dup)
			continue;
		fprintf(f, "%s%s", n ? ", " : "; raise ", fix);
		seen[n++] = fix;
	}
}

/*
 * Drops of any kind: the figures are incomplete, by how much, and the
 * option that fixes it; the table's size that holds every block seen.
 */
void report_incomplete__text(const struct report *r, FILE *f)
{
	const struct report_memory *m = &r->analysis->memory;
	uint64_t hint = verdict__max_allocs_hint(&r->totals), other = m->drops - m->untracked;
	char a[COUNT_LEN], b[COUNT_LEN];

	if (!m->incomplete)
		return;
	fputs("  The figures are incomplete:", f);
	if (m->untracked)
		fprintf(f, " %s %s not tracked: %s in no figure here", report__count(m->untracked, a),
			report__plural(m->untracked, "allocation was", "allocations were"),
			report__plural(m->untracked, "its block is", "their blocks are"));
	if (m->untracked && other)
		fputs(", and", f);
	if (other)
		fprintf(f, " %s other %s (stacks, frees or processes missed)", report__count(other, b),
			report__plural(other, "drop", "drops"));
	print_fixes(r, f);
	fputs("; see Dropped below.\n", f);
	print_unexplained(m, f);
	if (hint)
		fprintf(f, "  At most %s blocks were live at once, tracked or not: --max-allocs %llu holds them\n"
			"  (a leak that goes on needs more).\n",
			report__count(r->totals.outstanding_allocs + r->totals.counters[CNT_ALLOCS_MAP_FULL], a),
			(unsigned long long)hint);
}
