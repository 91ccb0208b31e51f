// SPDX-License-Identifier: GPL-2.0
/*
 * What a report may fold (insight.h): the sites no later report lists by
 * themselves, neither the churn's nor the peak's (history_fold.c).
 */
#include "history.h"
#include "insight_fold.h"
#include "insight_internal.h"

void insight_fold__prepare(struct insight *in)
{
	const struct history_peak *hp = history__peak(in->h);

	in->nr_pins = hp ? insight__top_of(hp->sites, hp->nr, in->pins, INSIGHT_PEAK) : 0;
}

bool insight_fold__wants_floor(const struct insight *in)
{
	return !history_fold__cut_known(in->h);
}

void insight_fold__floor(struct insight *in, uint64_t allocs, uint64_t bytes)
{
	history_fold__floor(in->h, allocs, bytes);
}

size_t insight_fold__pick(struct insight *in, const struct snapshot *snap, uint32_t *out)
{
	insight_fold__prepare(in);
	return history_fold__pick(in->h, snap, INSIGHT_CHURN, in->pins, in->nr_pins, out);
}

bool insight_fold__foldable(const struct insight *in, uint64_t stack_id, uint32_t api,
			    uint64_t allocs, uint64_t bytes)
{
	for (size_t i = 0; i < in->nr_pins; i++)
		if (in->pins[i].stack_id == stack_id && in->pins[i].api == api)
			return false;
	return history_fold__unseen(in->h, stack_id, api, allocs, bytes);
}

int insight_fold__drop(struct insight *in, const uint64_t *keys, size_t n)
{
	return history_fold__drop(in->h, keys, n);
}
