// SPDX-License-Identifier: GPL-2.0
/*
 * pymalloc's arenas in the reports: how full they are (text and JSON), and
 * why the verdict calls them fragmentation (analyze/verdict.h).
 */
#include <math.h>
#include "model/report.h"
#include "report_pyarenas.h"

#define SIZE_LEN 64

static unsigned share(uint64_t part, uint64_t whole)
{
	return whole ? (unsigned)llround(100.0 * (double)part / (double)whole) : 0;
}

void report_pyarenas__text(const struct report_pyarenas *a, FILE *f)
{
	char s1[SIZE_LEN], s2[SIZE_LEN], n1[REPORT_COUNT_LEN], n2[REPORT_COUNT_LEN],
	     n3[REPORT_COUNT_LEN];

	if (!a->known)
		return;
	fprintf(f, "  pymalloc's arenas at %.1f s: %s of %s used (%u%%): %s blocks in %s of %s pools",
		a->t_s, report__human_size(a->used_bytes, s1, SIZE_LEN),
		report__human_size(a->bytes, s2, SIZE_LEN), share(a->used_bytes, a->bytes),
		report__count(a->used_blocks, n1), report__count(a->used_pools, n2),
		report__count(a->pools, n3));
	fprintf(f, ", %s %s\n", report__count(a->arenas, n1),
		report__plural(a->arenas, "arena", "arenas"));
}

void report_pyarenas__verdict(const struct report_pyarenas *a, FILE *f)
{
	char s1[SIZE_LEN], s2[SIZE_LEN];

	fprintf(f, "  pymalloc's arenas hold %s for %s of objects (%u%%): the 1 MiB arenas count as live\n"
		"  blocks, but most of each is free pools and blocks, kept while any object in the arena lives.\n"
		"  What helps: fewer long-lived small objects among many short-lived ones (allocate what stays\n"
		"  together, early); PYTHONMALLOC=malloc, whose allocator can give pages back.\n",
		report__human_size(a->bytes, s1, SIZE_LEN),
		report__human_size(a->used_bytes, s2, SIZE_LEN), share(a->used_bytes, a->bytes));
}

void report_pyarenas__json(const struct report_pyarenas *a, FILE *f)
{
	if (!a->known) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"t_s\": %.3f, \"arenas\": %llu, \"bytes\": %llu, \"pools\": %llu, "
		"\"used_pools\": %llu, \"used_blocks\": %llu, \"used_bytes\": %llu, \"skipped\": %llu}",
		a->t_s, (unsigned long long)a->arenas, (unsigned long long)a->bytes,
		(unsigned long long)a->pools, (unsigned long long)a->used_pools,
		(unsigned long long)a->used_blocks, (unsigned long long)a->used_bytes,
		(unsigned long long)a->skipped);
}
