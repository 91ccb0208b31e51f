// SPDX-License-Identifier: GPL-2.0
/* Tables sized against the memory available (mapfit.h). */
#include <errno.h>
#include <stdio.h>
#include "mapfit.h"
#include "model/report.h"
#include "util/mapmem.h"

uint32_t mapfit__largest(const struct mapfit *f, bool allocs, uint64_t allowed)
{
	uint32_t lo = 0, hi = allocs ? f->max_allocs : f->stacks;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo + 1) / 2;
		uint64_t c = allocs ? f->cost(f->obj, mid, f->stacks) :
				      f->cost(f->obj, f->max_allocs, mid);

		if (c <= allowed)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

int mapfit__check(const struct mapfit *f, const char *prefix, char *err, size_t errlen)
{
	struct mapmem_budget b;
	char need[32], have[32];
	uint64_t cost, allowed;
	const char *option;
	bool allocs;

	if (mapmem__budget(&b))
		return 0;	/* unknown: loading will tell */
	allowed = mapmem__allowed(&b);
	cost = f->cost(f->obj, f->max_allocs, f->stacks);
	if (cost <= allowed)
		return 0;
	/* Blame the table that grew: the live blocks' unless the stacks' alone do not fit. */
	allocs = f->cost(f->obj, 1, f->stacks) <= allowed;
	option = allocs ? "--max-allocs" : "--stack-storage-size";
	report__human_size(cost, need, sizeof(need));
	report__human_size(b.bytes, have, sizeof(have));
	snprintf(err, errlen, "%s%s %u needs %s of kernel memory for its tables, more than half of the %s available (%s): the largest that fits is %s %u",
		 prefix, option, allocs ? f->max_allocs : f->stacks, need, have, b.source, option,
		 mapfit__largest(f, allocs, allowed));
	return -ENOMEM;
}
