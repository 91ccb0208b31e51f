// SPDX-License-Identifier: GPL-2.0
/*
 * Folding the history's stacks that hold nothing and that no later report
 * needs by themselves (history.h): a torch import retires some 450,000
 * stacks of an allocation or two, and each kept its place here (with the
 * carried reading's, the stack cache's and the retired store's) for the
 * rest of the run, though no report names any of them again.
 *
 * What a folded stack stood for stays where it is read: its allocations in
 * the totals (the snapshot's forgotten ones), the intervals it counted in
 * (start-up) already judged. A report lists stacks that hold bytes, and
 * the churn and the peak those it picks from the snapshot: the churn's
 * cut-off only rises (totals only grow), and the peak keeps its stacks'
 * keys (pins), so neither will ask for a folded one.
 */
#include <errno.h>
#include <stdlib.h>
#include "history.h"
#include "history_internal.h"
#include "memleak.h"
#include "model/retired.h"
#include "util/vec.h"

/* Is site among the churn's best (n of them) or the pins? */
static bool picked(const struct snap_site *site, const struct snap_site *const *best, size_t n,
		   const struct snap_live *pins, size_t nr_pins)
{
	for (size_t i = 0; i < n; i++)
		if (best[i] == site)
			return true;
	for (size_t i = 0; i < nr_pins; i++)
		if (pins[i].stack_id == site->stack_id && pins[i].api == site->api)
			return true;
	return false;
}

size_t history_fold__pick(struct history *h, const struct snapshot *snap,
			  size_t max_churn, const struct snap_live *pins, size_t nr_pins,
			  uint32_t *out)
{
	const struct snap_site **best = calloc(max_churn ?: 1, sizeof(*best));
	struct report_rate *rates = calloc(max_churn ?: 1, sizeof(*rates));
	size_t n = 0;
	int nr_best;

	/* Without the churn's best, nothing is known to be safe to fold. */
	nr_best = best && rates ? history__churn(h, snap, best, rates, max_churn) : -ENOMEM;
	h->cut_known = max_churn && nr_best == (int)max_churn;
	if (h->cut_known) {
		h->cut_allocs = best[max_churn - 1]->stats.total_allocs;
		h->cut_bytes = best[max_churn - 1]->stats.total_bytes;
	}
	for (size_t i = 0; nr_best >= 0 && i < snap->nr; i++) {
		const struct snap_site *s = &snap->sites[i];

		if (!s->stats.outstanding_allocs && s->stats.total_allocs &&
		    s->stack_id != MEMLEAK_NO_STACK &&
		    !picked(s, best, (size_t)nr_best, pins, nr_pins))
			out[n++] = (uint32_t)i;
	}
	free(best);
	free(rates);
	return n;
}

/* The stacks not folded keep their order (to: where each went); the index made anew, to fit. */
static int compact(struct history *h, const bool *gone, uint32_t *to)
{
	size_t n = 0;

	for (size_t i = 0; i < h->nr; i++) {
		struct hstack *s = &h->stacks[i];

		if (to)
			to[i] = gone[i] ? HSTACK_GONE : (uint32_t)n;
		if (!gone[i]) {
			h->stacks[n++] = *s;
			continue;
		}
		h->nr_points -= s->first != NONE;
		h->points_bytes -= history_points__bytes(&s->pts);
		history_points__free(&s->pts);
	}
	h->nr = n;
	/*
	 * Made anew in the room it has (it shrinks only if far too big): freed
	 * and filled from empty, it grew a dozen times to 200,000 stacks, each
	 * time a new array faulted in and every key moved.
	 */
	if (idmap__reset(&h->index, n))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (idmap__put(&h->index, retired__site_key(h->stacks[i].stack_id, h->stacks[i].api),
			       (uint32_t)i))
			return -ENOMEM;
	vec__fit(&h->stacks, &h->cap, n, sizeof(*h->stacks));
	return 0;
}

/*
 * The last snapshot's sites name their stacks' new indexes; the next merge
 * moves them as the reading's sites moved (history_merge.c), or merges
 * whole. Without to, it merges whole. Until then the sites not folded
 * still find their stacks through it: a report folds before it is built
 * (run/reports.c), and asks the growth of its stacks after.
 */
static void move_of_site(struct history *h, const uint32_t *to)
{
	/* Two folds before a merge: the first's moves are moved again. */
	size_t n = h->folded_sites ?: h->nr_of_site;

	h->folded_sites = 0;
	h->nr_of_site = 0;	/* no stack is read through it until the merge */
	if (!to || !h->merged) {
		h->merged = 0;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (h->of_site[i] != HSTACK_GONE)
			h->of_site[i] = to[h->of_site[i]];
		if (h->of_site[i] == HSTACK_GONE)
			history_flat__forget(h, i);	/* no stack: never flat */
	}
	h->folded_sites = n;
	h->nr_of_site = n;
}

int history_fold__drop(struct history *h, const uint64_t *keys, size_t n)
{
	bool *gone = calloc(h->nr ?: 1, sizeof(*gone));
	uint32_t *to = malloc((h->nr ?: 1) * sizeof(*to));
	uint32_t at;
	int err;

	if (!gone) {
		free(to);
		return -ENOMEM;
	}
	for (size_t k = 0; k < n; k++)
		if (idmap__get(&h->index, keys[k], &at))
			gone[at] = true;
	err = compact(h, gone, to);
	move_of_site(h, err ? NULL : to);
	free(gone);
	free(to);
	return err;
}

bool history_fold__cut_known(const struct history *h)
{
	return h->cut_known;
}

void history_fold__floor(struct history *h, uint64_t allocs, uint64_t bytes)
{
	h->cut_known = true;
	h->cut_allocs = allocs;
	h->cut_bytes = bytes;
}

bool history_fold__unseen(const struct history *h, uint64_t stack_id, uint32_t api,
			  uint64_t allocs, uint64_t bytes)
{
	if (!h->cut_known || allocs > h->cut_allocs ||
	    (allocs == h->cut_allocs && bytes >= h->cut_bytes))
		return false;
	return !history_merge__find(h, stack_id, api);
}
