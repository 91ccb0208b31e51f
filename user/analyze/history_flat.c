// SPDX-License-Identifier: GPL-2.0
/*
 * Flat stacks carried from report to report (history.h's history__flat_site).
 *
 * A stack that held the same bytes since it came is told stable without a
 * fit; a report asks that of each of its 200,000 stacks, and reading each
 * stack was a cache miss of its own (half the growth's time on a torch
 * job). Once told flat, it stays flat while nothing touches it: a carried
 * merge leaves the stacks of the sites that did not change alone, and the
 * points after start-up's end only gain later ones (the first stays, the
 * last is later: three or more points, from earlier to later, still).
 * What could undo it: the stack updated (its site changed: merge_site
 * forgets it), every stack merged anew, the points thinned (the first
 * moves), start-up ending later, a reset. Those start a new epoch, and
 * what was kept before holds no more.
 *
 * What is kept of a flat stack is all that history__flat_site says that
 * moves: its intervals, which grow by one a report (history.reports) as
 * long as it is left alone; the rest is the same for every flat stack.
 */
#include <stdlib.h>
#include <string.h>
#include "history_internal.h"
#include "util/vec.h"

/* A kept entry: the epoch it was told in (0: none), and its intervals less the reports. */
static uint64_t entry(uint32_t epoch, uint32_t base)
{
	return (uint64_t)epoch << 32 | base;
}

int history_flat__reserve(struct history *h, size_t nr)
{
	size_t cap = h->cap_flat;

	if (vec__reserve(&h->flat, &h->cap_flat, nr, sizeof(*h->flat)))
		return -1;
	if (h->cap_flat > cap)
		memset(h->flat + cap, 0, (h->cap_flat - cap) * sizeof(*h->flat));
	return 0;
}

void history_flat__new_epoch(struct history *h)
{
	/* 0 is no epoch: an entry left zeroed never holds. */
	h->flat_epoch = h->flat_epoch + 1 ?: 1;
}

void history_flat__forget(struct history *h, size_t site)
{
	if (site < h->cap_flat)
		h->flat[site] = 0;
}

void history_flat__move(struct history *h, size_t from, size_t to)
{
	if (from < h->cap_flat && to < h->cap_flat)
		h->flat[to] = h->flat[from];
}

void history_flat__free(struct history *h)
{
	free(h->flat);
	h->flat = NULL;
	h->cap_flat = 0;
}

/* Not past the sites of_site names: a fold leaves none named until the next merge. */
bool history_flat__held(const struct history *h, size_t site)
{
	return h->flat_epoch && site < h->cap_flat && site < h->nr_of_site &&
	       (uint32_t)(h->flat[site] >> 32) == h->flat_epoch;
}

bool history_flat__kept(const struct history *h, size_t site, double age_s,
			struct report_growth *g)
{
	if (!history_flat__held(h, site))
		return false;
	/* history__flat_site's answer for a flat stack (score: 0, as it does not grow). */
	memset(g, 0, sizeof(*g));
	g->trend = TREND_STABLE;
	g->unfitted = true;
	g->grew = 1;
	g->intervals = (uint32_t)h->flat[site] + (uint32_t)h->reports;
	g->age_s = age_s;
	return true;
}

void history_flat__keep(struct history *h, size_t site, const struct report_growth *g)
{
	if (site < h->cap_flat && h->flat_epoch)
		h->flat[site] = entry(h->flat_epoch, g->intervals - (uint32_t)h->reports);
}

void history_flat__prefetch(const struct history *h, size_t site)
{
	if (site < h->cap_flat)
		__builtin_prefetch(&h->flat[site]);
}

