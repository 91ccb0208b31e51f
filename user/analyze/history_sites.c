// SPDX-License-Identifier: GPL-2.0
/*
 * Start-up and growth judged by site, under sampling (see history_sites.h):
 * the report's sites, grouped by analyze/sites.c, are
 * handed in by insight.c once their frames are known.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "history_internal.h"
#include "history_sites.h"
#include "util/vec.h"

void history_sites__by_site(struct history *h)
{
	h->by_site = true;
	h->startup.by_site = true;
}

/* Site's stack as of the last report (history_merge__current: tmp and vals hold a copy). */
static const struct hstack *of_site(const struct history *h, size_t site, struct hstack *tmp,
				    uint64_t *vals)
{
	return history_merge__current(h, history__stack_of_site(h, site),
				      tmp, vals);
}

uint64_t history_sites__interval_allocs(const struct history *h, size_t site)
{
	uint64_t vals[HISTORY_POINTS];
	struct hstack tmp;
	const struct hstack *s = of_site(h, site, &tmp, vals);

	return s ? s->iv_allocs : 0;
}

static int key_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool seen_in(const uint64_t *keys, size_t n, uint64_t key)
{
	return n && bsearch(&key, keys, n, sizeof(key), key_cmp);
}

/* The sites not seen before join the seen ones, kept sorted, once each. */
static int remember(struct history *h, const struct history_site *sites, size_t n)
{
	size_t old = h->nr_seen, out = 0;

	if (vec__reserve(&h->seen, &h->cap_seen, h->nr_seen + n + 1, sizeof(*h->seen)))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (!seen_in(h->seen, old, sites[i].key))
			h->seen[h->nr_seen++] = sites[i].key;
	if (h->nr_seen == old)
		return 0;
	qsort(h->seen, h->nr_seen, sizeof(*h->seen), key_cmp);
	for (size_t i = 0; i < h->nr_seen; i++)
		if (!out || h->seen[out - 1] != h->seen[i])
			h->seen[out++] = h->seen[i];
	h->nr_seen = out;
	return 0;
}

/*
 * The interval's allocations among the stacks the report holds, and those
 * of new or importing sites; the stacks the full stack map could not take
 * count as new (history.h, HISTORY_STARTUP_SHARE), as by stack.
 */
int history_sites__startup(struct history *h, const struct history_site *sites, size_t n)
{
	uint64_t all = h->startup.unstored;
	double fresh = (double)h->startup.unstored;

	if (!h->by_site)
		return 0;
	h->startup.new_sites = 0;
	for (size_t i = 0; i < n; i++) {
		const struct history_site *s = &sites[i];

		all += s->allocs;
		if (s->import) {
			h->startup.new_sites += s->allocs > 0;
			fresh += (double)s->allocs;
		} else if (!seen_in(h->seen, h->nr_seen, s->key)) {
			h->startup.new_sites++;
			if (s->samples > 1)
				fresh += (double)s->allocs * (double)(s->samples - 1) / (double)s->samples;
		}
	}
	history__startup_judge(h, h->t_last, all ? fmin(1, fresh / (double)all) : 0,
			       h->reports > 1);
	return remember(h, sites, n);
}

/* Add stack s, its kept points in vals, into sum, whose kept points (sum_vals) start zeroed. */
static void add_stack(const struct history *h, struct hstack *sum, uint64_t *sum_vals,
		      const struct hstack *s, const uint64_t *vals)
{
	if (s->first == NONE)
		return;
	if (sum->first == NONE) {
		sum->first = s->first;
		sum->t_zero = s->t_zero;
		sum->api = s->api;
		sum->idle = true;
	}
	for (uint32_t i = s->first; i < h->npoints; i++)
		sum_vals[i] += vals[i];
	if (s->first < sum->first)
		sum->first = s->first;
	if (s->t_zero < sum->t_zero)
		sum->t_zero = s->t_zero;
	sum->idle = sum->idle && s->idle;
	sum->bytes += s->bytes;
	sum->blocks += s->blocks;
	sum->var += s->var;
}

/* The sum's intervals, and those in which it grew or fell: from its kept points, and the last. */
static void count_moves(const struct history *h, struct hstack *sum, const uint64_t *vals)
{
	uint64_t prev;

	/* Its first bytes came at the last report, not a kept point: one interval, grown. */
	if (sum->first >= h->npoints) {
		sum->intervals = sum->grew = 1;
		return;
	}
	prev = vals[sum->first];

	for (uint32_t i = sum->first + 1; i <= h->npoints; i++) {
		uint64_t v = i < h->npoints ? vals[i] : sum->bytes;

		if (i == h->npoints && h->t[h->npoints - 1] >= h->t_last)
			break;	/* the last report is a kept point */
		sum->intervals++;
		sum->grew += v > prev;
		sum->shrank += v < prev;
		prev = v;
	}
	sum->intervals = sum->intervals ?: 1;
	sum->grew = sum->grew ?: sum->intervals == 1;
}

void history_sites__growth_sum(const struct history *h, const size_t *sites, size_t n, double age_s,
			 struct report_growth *g)
{
	uint64_t vals[HISTORY_POINTS] = { 0 };
	struct hstack sum = { .first = NONE };

	for (size_t i = 0; i < n; i++) {
		uint64_t kept[HISTORY_POINTS];
		struct hstack tmp;
		const struct hstack *s = of_site(h, sites[i], &tmp, kept);

		if (s)
			add_stack(h, &sum, vals, s, kept);
	}
	memset(g, 0, sizeof(*g));
	g->age_s = age_s;
	if (sum.first == NONE || !h->npoints)
		return;
	count_moves(h, &sum, vals);
	history__growth_of(h, &sum, vals, age_s, g);
}
