/* SPDX-License-Identifier: GPL-2.0 */
/* Start-up and growth judged by site, under sampling (the history's, history.h). */
#ifndef HISTORY_SITES_H
#define HISTORY_SITES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "history.h"

/*
 * Sampling. A stack counts as new when it is first
 * sampled, which for one that allocates rarely is long after it first ran:
 * a loop's stacks go on being "new" for minutes. Its site (analyze/sites.h),
 * a line of the program, is seen within seconds, and an import's stacks
 * share its site, marked as an import. So start-up is judged by site: the
 * share of the interval's estimated allocations, among the stacks the report
 * holds, from sites not seen before or allocating for an import, and from
 * stacks the full stack map could not take. And growth is judged by site:
 * a leak at one line spreads its few samples over many stacks, each within
 * its own noise, while the site's sum grows beyond the sum of their
 * variances (independent blocks: the variance of a sum adds).
 */
void history_sites__by_site(struct history *h);
/* Snapshot site i (of the snapshot added last): its allocations in the last interval. */
uint64_t history_sites__interval_allocs(const struct history *h, size_t site);

struct history_site {
	uint64_t key;		/* sites__key of its frame */
	uint64_t allocs;	/* its stacks' allocations in the last interval */
	uint64_t samples;	/* the sampled blocks its stacks hold */
	bool import;		/* allocated by an import: start-up by definition */
};

/*
 * Start-up as of the last report, judged by its n sites. A site's first
 * sample says that it ran, not when it began: a loop's rare line is first
 * sampled long after it began. So a site not seen before counts as new code
 * only by its samples beyond the first, (k - 1)/k of its allocations with k
 * samples: a rare site adds nothing, a new bulk of code (k large) almost
 * all. An import's sites always count whole. 0 or -ENOMEM.
 */
int history_sites__startup(struct history *h, const struct history_site *sites, size_t n);
/*
 * The growth of the sum of snapshot sites sites[0..n) (the stacks of one
 * site), its variance their variances' sum, as history__growth_site; age_s
 * of its oldest block.
 */
void history_sites__growth_sum(const struct history *h, const size_t *sites, size_t n, double age_s,
			 struct report_growth *g);

#endif
