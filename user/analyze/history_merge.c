// SPDX-License-Identifier: GPL-2.0
/*
 * The history's stacks merged with each report's snapshot (history.h).
 * A stack stays at its index (found by key in an index), so that the
 * snapshot's site i is stacks[of_site[i]] from report to report.
 *
 * Of a snapshot that carries the one merged last over (probe/snapshot_kept.h),
 * only the sites whose figures changed are updated: a stack the report
 * does not touch keeps an implicit "the same as before" for every report
 * since its last update (at), which history_merge__catch_up makes explicit
 * when the stack is read or updated again: the same intervals, idle, no
 * allocations in the interval, and its bytes at each point kept since
 * (from wrote on). That is what update() makes of figures that did not
 * change, provided each of those reports came later than the one before
 * (dt > 0): a report that does not is merged whole.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "history_internal.h"
#include "memleak.h"
#include "model/retired.h"
#include "sample.h"
#include "util/vec.h"

void history_merge__stack_init(struct hstack *s, uint64_t stack_id, uint32_t api)
{
	memset(s, 0, sizeof(*s));
	s->stack_id = stack_id;
	s->api = api;
	s->first = NONE;
}

/* A change to s's points, its bytes counted into the history's (-v). */
static int points_fill(struct history *h, struct hstack *s, uint32_t from, uint32_t to,
		       uint64_t v)
{
	size_t before = history_points__bytes(&s->pts);
	int err = history_points__fill(&s->pts, from, to, v);

	h->points_bytes += history_points__bytes(&s->pts) - before;
	return err;
}

/* The figures of the reports before upto that left s alone; the first point they left unwritten. */
static uint32_t catch_up_figures(const struct history *h, struct hstack *s, uint64_t upto)
{
	uint32_t from = s->first > s->wrote ? s->first : s->wrote;

	s->idle = true;
	s->last_allocs_per_s = s->last_bytes_per_s = 0;
	s->iv_allocs = 0;
	if (s->first != NONE)
		s->intervals += (uint32_t)(upto - s->at);
	s->wrote = h->npoints;
	s->at = upto;
	return from;
}

int history_merge__catch_up(struct history *h, struct hstack *s, uint64_t upto)
{
	uint32_t from = s->first > s->wrote ? s->first : s->wrote;

	if (upto <= s->at)
		return 0;
	/* The points first: on failure s stays as it was, implicit. */
	if (s->first != NONE && from < h->npoints && !s->points_end_at_bytes) {
		if (points_fill(h, s, from, h->npoints, s->bytes))
			return -ENOMEM;
		s->points_end_at_bytes = true;
	}
	catch_up_figures(h, s, upto);
	return 0;
}

const struct hstack *history_merge__current(const struct history *h, const struct hstack *s,
					    struct hstack *tmp, uint64_t *vals)
{
	uint32_t from;

	if (!s)
		return NULL;
	if (s->first != NONE)
		history_points__get(&s->pts, s->first, h->npoints, vals);
	if (s->at >= h->reports)
		return s;
	*tmp = *s;
	from = catch_up_figures(h, tmp, h->reports);
	for (uint32_t i = from; s->first != NONE && i < h->npoints; i++)
		vals[i] = s->bytes;
	return tmp;
}

int history_merge__update(struct history *h, struct hstack *s, uint64_t bytes, uint64_t allocs,
			  uint64_t total, double t_s, uint32_t point)
{
	double dt = t_s - h->t_last;

	/* This report's point before anything changes: on failure s stays as it was. */
	if ((s->first != NONE || bytes) && point != NONE &&
	    points_fill(h, s, point, point + 1, bytes))
		return -ENOMEM;
	s->at = h->reports + 1;
	s->wrote = h->npoints;
	s->idle = bytes == s->bytes && allocs == s->total_allocs;
	if (dt > 0) {
		s->last_allocs_per_s = allocs > s->total_allocs ? (allocs - s->total_allocs) / dt : 0;
		s->last_bytes_per_s = total > s->total_bytes ? (total - s->total_bytes) / dt : 0;
	}
	s->total_allocs = allocs;
	s->total_bytes = total;
	if (s->first == NONE) {
		if (!bytes)
			return 0;
		h->nr_points++;
		/* It held nothing at the last report: that is where its series starts. */
		s->t_zero = h->t_last;
		s->first = point != NONE ? point : h->npoints;
		s->intervals = s->grew = 1;
	} else {
		s->intervals++;
		s->grew += bytes > s->bytes;
		s->shrank += bytes < s->bytes;
	}
	s->points_end_at_bytes = point != NONE || (s->points_end_at_bytes && bytes == s->bytes);
	s->bytes = bytes;
	return 0;
}

/* A stack the snapshot lacks (st NULL) holds nothing and allocated nothing more. */
static int update_site(struct history *h, struct hstack *s, const struct site_stats *st,
		       double t_s, uint32_t point)
{
	s->blocks = st ? st->outstanding_allocs : 0;
	s->var = st ? (double)st->outstanding_var * (double)(1ULL << MEMLEAK_VAR_SHIFT) : 0;
	if (!st)
		return history_merge__update(h, s, 0, s->total_allocs, s->total_bytes, t_s, point);
	return history_merge__update(h, s, st->outstanding_bytes, st->total_allocs, st->total_bytes,
				     t_s, point);
}

/*
 * One stack's allocations in the interval, before update() takes its new
 * totals; fresh: a key we never saw. The stack of failed walks is no code
 * of its own.
 */
static void count_interval(struct history_interval *iv, struct hstack *s,
			   const struct snap_site *site, bool fresh)
{
	uint64_t now = site->stats.total_allocs;
	/* Fewer than before: its site was cleared and made anew in between. */
	uint64_t n = now >= s->total_allocs ? now - s->total_allocs : now;

	s->iv_allocs = n;
	iv->allocs += n;
	if (fresh && site->stack_id != MEMLEAK_NO_STACK) {
		iv->new_stacks++;
		iv->new_allocs += n;
	}
}

struct hstack *history_merge__find(const struct history *h, uint64_t stack_id, uint32_t api)
{
	uint32_t i;

	return idmap__get(&h->index, retired__site_key(stack_id, api), &i) ? &h->stacks[i] : NULL;
}

/* The stack of (stack_id, api), made if new (*fresh); its index in *at. */
static int stack_for(struct history *h, uint64_t stack_id, uint32_t api, uint32_t *at,
		     bool *fresh)
{
	uint64_t key = retired__site_key(stack_id, api);

	*fresh = !idmap__get(&h->index, key, at);
	if (!*fresh)
		return 0;
	if (vec__reserve_min(&h->stacks, &h->cap, h->nr + 1, sizeof(*h->stacks), 256) ||
	    idmap__put(&h->index, key, (uint32_t)h->nr))
		return -ENOMEM;
	*at = (uint32_t)h->nr++;
	history_merge__stack_init(&h->stacks[*at], stack_id, api);
	return 0;
}

/* Site i of snap, at report h->reports: its stack caught up, then updated. */
static int merge_site(struct history *h, const struct snapshot *snap, size_t i, double t_s,
		      uint32_t point, struct history_interval *iv)
{
	const struct snap_site *site = &snap->sites[i];
	struct hstack *s;
	bool fresh = false;
	uint32_t at;

	history_flat__forget(h, i);	/* updated: flat or not, told anew */
	if (i < h->nr_of_site)
		at = h->of_site[i];
	else if (stack_for(h, site->stack_id, site->api, &at, &fresh))
		return -ENOMEM;
	h->of_site[i] = at;
	s = &h->stacks[at];
	/*
	 * A folded stack back (history_fold.c): what it had then was taken in
	 * already, and it is no new code.
	 */
	if (fresh && (site->folded_allocs || site->folded_bytes)) {
		s->total_allocs = site->folded_allocs;
		s->total_bytes = site->folded_bytes;
		fresh = false;
	}
	if (history_merge__catch_up(h, s, h->reports))
		return -ENOMEM;
	count_interval(iv, s, site, fresh);
	return update_site(h, s, &site->stats, t_s, point);
}

/* Every site of snap, and every stack it lacks: all of them brought up to date. */
static int merge_all(struct history *h, const struct snapshot *snap, double t_s, uint32_t point,
		     struct history_interval *iv)
{
	int err = 0;

	h->merged_whole++;
	history_flat__new_epoch(h);	/* every stack updated */
	h->nr_of_site = 0;
	for (size_t i = 0; i < snap->nr; i++) {
		int e = merge_site(h, snap, i, t_s, point, iv);

		if (e == -ENOMEM && i >= h->nr_of_site)
			return e;	/* no stack for it: of_site cannot name one */
		h->nr_of_site = i + 1;
		err = err ?: e;
	}
	for (size_t j = 0; j < h->nr; j++) {
		struct hstack *s = &h->stacks[j];

		if (s->at == h->reports + 1)
			continue;
		if (history_merge__catch_up(h, s, h->reports)) {
			err = -ENOMEM;
			continue;
		}
		s->iv_allocs = 0;
		err = err ?: update_site(h, s, NULL, t_s, point);
	}
	return err;
}

/* Only the sites whose figures changed: the others' stacks stay the same, implicitly. */
static int merge_changed(struct history *h, const struct snapshot *snap, double t_s,
			 uint32_t point, struct history_interval *iv)
{
	int err = 0;

	for (size_t k = 0; k < snap->nr_changed; k++) {
		int e = merge_site(h, snap, snap->changed[k], t_s, point, iv);

		if (e == -ENOMEM && snap->changed[k] >= h->nr_of_site)
			return e;	/* of_site names no stack for it */
		err = err ?: e;
	}
	h->nr_of_site = snap->nr;
	return err;
}

/*
 * The reading's sites moved (snapshot.moved: a fold or a trim of the
 * retired store), and perhaps the stacks (history_fold__drop): each site's
 * stack moves with it. False: one of the sites kept lost its stack (its
 * retired entry was not folded), the merge is whole.
 */
static bool move_sites(struct history *h, const struct snapshot *snap)
{
	size_t n = 0;

	if (snap->nr_moved != (h->folded_sites ?: h->nr_of_site))
		return false;
	for (size_t i = 0; i < snap->nr_moved; i++) {
		uint32_t to = snap->moved[i];

		if (to == SNAP_GONE)
			continue;
		if (h->of_site[i] == HSTACK_GONE)
			return false;
		h->of_site[to] = h->of_site[i];
		history_flat__move(h, i, to);
		n = to + 1;
	}
	h->nr_of_site = n;
	return true;
}

int history_merge__run(struct history *h, const struct snapshot *snap, double t_s,
		       uint32_t point, struct history_interval *iv)
{
	bool carried = snap->follows && h->merged == snap->follows && h->reports &&
		       t_s > h->t_last;
	int err;

	if (vec__reserve(&h->of_site, &h->cap_of_site, snap->nr + 1, sizeof(*h->of_site)) ||
	    history_flat__reserve(h, snap->nr + 1))
		return -ENOMEM;
	if (carried && snap->moved)
		carried = move_sites(h, snap);
	else if (h->folded_sites)
		carried = false;	/* the stacks moved, the sites did not */
	h->folded_sites = 0;
	err = carried ? merge_changed(h, snap, t_s, point, iv) : merge_all(h, snap, t_s, point, iv);
	h->merged = err ? 0 : snap->reading;	/* after a failure, the next merge is whole */
	return err;
}
