// SPDX-License-Identifier: GPL-2.0
/*
 * The run's history (see history.h). Stacks keep their index, found by key,
 * and are merged with each snapshot (history_merge.c): of a snapshot that
 * carries the last one over, only the changed sites are touched.
 *
 * A leak's bytes lie on a rising line; a cache filled once is flat, and
 * one that warmed up early and stopped fits a line badly and is flat at the
 * end: the fit and the last third of the points tell them apart. A stack's
 * life starts at the last report before it held anything (tracing begins
 * with nothing tracked, under -p too).
 *
 * Start-up is told by the program, not by the stack: the stacks a module's
 * import grows are few and each grows by a little with every library or
 * module loaded, as steadily as a leak while the loading lasts. What only
 * start-up does is run code never seen before (history.h). Under -p the
 * first interval always counts: every stack is new to us.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "history.h"
#include "history_internal.h"
#include "memleak.h"
#include "sample.h"
#include "util/vec.h"

struct history *history__new(void)
{
	struct history *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->stride = 1;
	history_merge__stack_init(&h->live, 0, 0);
	h->live.first = 0;
	return h;
}

static void free_stacks(struct history *h)
{
	for (size_t i = 0; i < h->nr; i++)
		history_points__free(&h->stacks[i].pts);
	free(h->stacks);
	free(h->of_site);
	history_flat__free(h);
	history_flat__new_epoch(h);
	idmap__free(&h->index);
	h->cut_known = false;	/* history_fold.c's: the stacks it was of are gone */
	h->merged = 0;
	h->stacks = NULL;
	h->of_site = NULL;
	h->nr = h->cap = h->nr_of_site = h->cap_of_site = h->nr_points = h->folded_sites = 0;
	h->points_bytes = history_points__bytes(&h->live.pts);
}

void history__free(struct history *h)
{
	if (!h)
		return;
	free_stacks(h);
	history_points__free(&h->live.pts);
	free(h->samples);
	free(h->peak_sites);
	free(h->seen);
	free(h);
}

void history__reset(struct history *h)
{
	struct history_points pts = h->live.pts;
	double t = h->t_last;

	free_stacks(h);
	history_merge__stack_init(&h->live, 0, 0);
	h->live.pts = pts;
	h->live.first = 0;
	h->live.t_zero = t;
	h->npoints = 0;
	h->stride = 1;
	h->reports = 0;
	h->peak_known = false;
	h->peak.nr = 0;
	h->startup = (struct report_startup){ .end_s = t, .by_site = h->by_site };
	h->prev_map_full = 0;	/* the counters restart with the new image */
	h->nr_seen = 0;		/* a new program: its sites are new */
	h->exited = false;
}

static void set_memory(struct report_sample *r, const struct memstat *ms, double t_s,
		       uint64_t live)
{
	r->mem = true;
	r->mem_t_s = t_s;
	r->mem_live = live;
	r->rss = ms->rss;
	r->anon = ms->anon;
	r->heap = ms->heap;
	r->arena = ms->arena;
	r->arena_reserved = ms->arena_reserved;
	r->arenas = ms->arenas;
}

void history__set_base(struct history *h, const struct memstat *ms)
{
	memset(&h->base, 0, sizeof(h->base));
	h->base.t_s = h->t_last;
	if (ms)
		set_memory(&h->base, ms, h->t_last, 0);
}

/* ------------------------------------------------------------ the points */

/* Every other point goes: the kept ones still span the run, at half the resolution. */
static void thin_stack(struct hstack *s, uint32_t npoints)
{
	s->wrote = (npoints + 1) / 2;	/* every point written before (catch_up) */
	if (s->first == NONE)
		return;
	history_points__thin(&s->pts, npoints);
	s->points_end_at_bytes = false;	/* its last run may be gone */
	s->first = (s->first + 1) / 2;
}

/* Every stack made explicit first (or none thinned: -ENOMEM), then thinned. */
static int thin(struct history *h)
{
	for (size_t i = 0; i < h->nr; i++)
		if (history_merge__catch_up(h, &h->stacks[i], h->reports))
			return -ENOMEM;
	for (uint32_t i = 0; 2 * i < h->npoints; i++)
		h->t[i] = h->t[2 * i];
	for (size_t i = 0; i < h->nr; i++)
		thin_stack(&h->stacks[i], h->npoints);
	thin_stack(&h->live, h->npoints);
	h->npoints = (h->npoints + 1) / 2;
	h->stride *= 2;
	history_flat__new_epoch(h);	/* a stack's first point moved, its points fewer */
	return 0;
}

/* The kept point this report fills into *point, or NONE when it is not kept. 0 or -ENOMEM. */
static int take_point(struct history *h, double t_s, uint32_t *point)
{
	*point = NONE;
	if (h->reports % h->stride)
		return 0;
	if (h->npoints == HISTORY_POINTS) {
		if (thin(h))
			return -ENOMEM;
		/* The stride doubled: this report may no longer be one to keep. */
		if (h->reports % h->stride)
			return 0;
	}
	h->t[h->npoints] = t_s;
	*point = h->npoints++;
	return 0;
}

/* ------------------------------------------------------------ samples, peak */

static int add_sample(struct history *h, double t_s, const struct report_totals *totals,
		      const struct mem_reading *mem)
{
	struct report_sample *r;

	if (vec__reserve_min(&h->samples, &h->cap_samples, h->nr_samples + 1, sizeof(*r), 64))
		return -ENOMEM;
	r = &h->samples[h->nr_samples++];
	memset(r, 0, sizeof(*r));
	r->t_s = t_s;
	r->live = totals->outstanding_bytes;
	r->allocs = totals->allocs;
	r->frees = totals->frees;
	r->untracked = report__untracked(totals);
	r->drops = report__drops(totals);
	if (mem)
		set_memory(r, &mem->ms, mem->t_s, mem->live);
	return 0;
}

static bool peak_holds(uint32_t api, uint64_t bytes)
{
	return bytes && MEMLEAK_KIND_OF(api) == KIND_HEAP;
}

/*
 * Room for the n stacks of a new high-water mark: as many as hold
 * something, not as many as the run has seen (700,000 sites in a torch job).
 */
static int peak_room(struct history *h, size_t n)
{
	struct snap_live *v;

	if (n <= h->peak_cap && n >= h->peak_cap / 4)
		return 0;
	v = realloc(h->peak_sites, (n ?: 1) * sizeof(*v));
	if (!v)
		return n <= h->peak_cap ? 0 : -ENOMEM;
	h->peak_sites = v;
	h->peak_cap = n ?: 1;
	return 0;
}

static void peak_set(struct history *h, double t_s, uint64_t bytes, size_t n)
{
	h->peak.allocs = 0;
	for (size_t i = 0; i < n; i++)
		h->peak.allocs += h->peak_sites[i].allocs;
	h->peak.t_s = t_s;
	h->peak.bytes = bytes;
	h->peak.sites = h->peak_sites;
	h->peak.nr = n;
	h->peak_known = true;
}

/* A new high-water mark: keep the stacks that hold something. */
static int keep_peak(struct history *h, double t_s, uint64_t bytes, const struct snap_live *live,
		     size_t nr)
{
	size_t n = 0;

	for (size_t i = 0; i < nr; i++)
		n += peak_holds(live[i].api, live[i].bytes);
	if (peak_room(h, n))
		return -ENOMEM;
	n = 0;
	for (size_t i = 0; i < nr; i++)
		if (peak_holds(live[i].api, live[i].bytes))
			h->peak_sites[n++] = live[i];
	peak_set(h, t_s, bytes, n);
	return 0;
}

int history__tick(struct history *h, double t_s, const struct snap_live *live, size_t nr)
{
	uint64_t bytes = 0;

	for (size_t i = 0; i < nr; i++)
		if (MEMLEAK_KIND_OF(live[i].api) == KIND_HEAP)
			bytes += live[i].bytes;
	if (h->peak_known && bytes <= h->peak.bytes)
		return 0;
	return keep_peak(h, t_s, bytes, live, nr);
}

/* A report's snapshot is a sample of the peak too, unless -o trimmed its sites. */
static int report_peak(struct history *h, double t_s, const struct snapshot *snap,
		       const struct report_totals *totals)
{
	uint64_t heap = totals->kind_bytes[KIND_HEAP];
	size_t n = 0;

	if (snap->older || (h->peak_known && heap <= h->peak.bytes))
		return 0;
	for (size_t i = 0; i < snap->nr; i++)
		n += peak_holds(snap->sites[i].api, snap->sites[i].stats.outstanding_bytes);
	if (peak_room(h, n))
		return -ENOMEM;
	n = 0;
	for (size_t i = 0; i < snap->nr; i++) {
		const struct snap_site *s = &snap->sites[i];

		if (peak_holds(s->api, s->stats.outstanding_bytes))
			h->peak_sites[n++] = (struct snap_live){ s->stack_id, s->api,
								 s->stats.outstanding_bytes,
								 s->stats.outstanding_allocs };
	}
	peak_set(h, t_s, heap, n);
	return 0;
}

void history__startup_judge(struct history *h, double t_s, double share, bool later)
{
	struct report_startup *st = &h->startup;

	st->new_share = share;
	st->ongoing = share >= HISTORY_STARTUP_SHARE && !(h->first_only && later);
	if (st->ongoing && st->end_s != t_s)
		history_flat__new_epoch(h);	/* fewer points after it: flat no more, maybe */
	if (st->ongoing)
		st->end_s = t_s;
}

/*
 * Did the interval that ends at t_s run new code in bulk? Its allocations
 * from new stacks are the new keys' and those that found the stack map full
 * (counters restart at an exec). Under sampling a stack is new when it is
 * first sampled, which may be long after it first ran: history_sites.c
 * judges by site instead, once the report's sites are known.
 */
static void startup_update(struct history *h, double t_s, const struct report_totals *totals,
			   const struct history_interval *iv)
{
	uint64_t full = totals->counters[CNT_STACKS_MAP_FULL] + totals->counters[CNT_STACK_RING_FULL];
	struct report_startup *st = &h->startup;

	st->new_stacks = iv->new_stacks;
	st->unstored = full >= h->prev_map_full ? full - h->prev_map_full : full;
	h->prev_map_full = full;
	if (!h->by_site)
		history__startup_judge(h, t_s, iv->allocs ? fmin(1, (double)(iv->new_allocs +
						st->unstored) / iv->allocs) : 0, h->reports);
}

int history__add(struct history *h, double t_s, const struct snapshot *snap,
		 const struct report_totals *totals, const struct mem_reading *mem)
{
	struct history_interval iv = { 0 };
	uint32_t point;
	int err;

	err = take_point(h, t_s, &point);
	if (!err)
		err = history_merge__run(h, snap, t_s, point, &iv);
	/* Stacks the reading folded unread were new in this interval, all they allocated too. */
	iv.allocs += snap->unread_allocs;
	iv.new_allocs += snap->unread_allocs;
	iv.new_stacks += (uint32_t)snap->unread_sites;
	startup_update(h, t_s, totals, &iv);
	/* Sampling: the live total is an estimate too; its noise is no growth (trend_of). */
	h->live.var = totals->outstanding_var;
	if (!err)
		err = history_merge__update(h, &h->live, totals->outstanding_bytes, totals->allocs, 0,
					    t_s, point);
	if (!err)
		err = add_sample(h, t_s, totals, mem);
	if (!err)
		err = report_peak(h, t_s, snap, totals);
	h->t_last = t_s;
	h->reports++;
	return err;
}

/* ------------------------------------------------------------ trends */


/*
 * The stack's points after since: the kept ones (vals), and the last
 * report's; y NULL: their times only (vals not read, may be NULL).
 */
static size_t points_of(const struct history *h, const struct hstack *s, const uint64_t *vals,
			double since, double *t, double *y)
{
	size_t n = 0;

	for (uint32_t i = s->first; i < h->npoints; i++) {
		if (h->t[i] <= since)
			continue;
		if (y)
			y[n] = (double)vals[i];
		t[n++] = h->t[i];
	}
	if (h->reports && h->t_last > since && (!n || t[n - 1] < h->t_last)) {
		if (y)
			y[n] = (double)s->bytes;
		t[n++] = h->t_last;
	}
	return n;
}

/* Below this many bytes a flat stack's rounding (of its points' mean) is far from a trend. */
#define FLAT_MAX_BYTES (1ull << 40)

/*
 * Do s's n points from t (and y, NULL when not read: they are all its
 * bytes) hold the same bytes, over time? Then the fit would find a slope
 * of the mean's rounding only, far below HISTORY_MIN_GROWTH: stable.
 */
static bool flat(const struct hstack *s, const double *t, const double *y, size_t n)
{
	if (n < HISTORY_MIN_POINTS || !(t[0] < t[n - 1]) || s->bytes >= FLAT_MAX_BYTES)
		return false;
	for (size_t i = 0; y && i < n; i++)
		if (y[i] != y[0])
			return false;
	return true;
}

/*
 * The trend of a stack whose points all hold its bytes, without its line
 * fitted: stable (history__trend_site). A stack that never grew nor shrank
 * after its first point holds its bytes at every point: its points are not
 * even read (vals may be NULL then). False: not flat, the fit decides.
 */
static bool flat_trend(const struct history *h, const struct hstack *s, const uint64_t *vals,
		       struct report_growth *g)
{
	double t[HISTORY_POINTS + 1], y[HISTORY_POINTS + 1];
	bool unchanged = s->grew == 1 && !s->shrank;
	size_t n;

	if (!unchanged && !vals)
		return false;
	n = points_of(h, s, vals, h->startup.end_s, t, unchanged ? NULL : y);
	if (!flat(s, t, unchanged ? NULL : y, n))
		return false;
	g->trend = TREND_STABLE;
	g->slope = g->r2 = 0;
	g->unfitted = true;
	return true;
}

/* How many points points_of gives with no lower bound: the kept ones, and the last report's. */
static size_t nr_points(const struct history *h, const struct hstack *s)
{
	size_t n = h->npoints > s->first ? h->npoints - s->first : 0;

	return n + (h->reports && (!n || h->t[h->npoints - 1] < h->t_last));
}

/*
 * How leak-like, 0..1: how well the line fits, times the mean of the share
 * of intervals that grew and of the oldest block's age over the stack's
 * life. A leak never frees, so its oldest block is as old as its growth; a
 * queue that grows while its old entries are freed is younger.
 */
static double score(const struct report_growth *g, double life_s)
{
	double grew = g->intervals ? (double)g->grew / g->intervals : 0;
	double age = g->age_s < 0 || life_s <= 0 ? 1 : fmin(1, g->age_s / life_s);

	return g->trend == TREND_GROWING ? g->r2 * (grew + age) / 2 : 0;
}

/*
 * The trend over the reports after the one that ended start-up: every
 * point measured in steady state, none at the boundary, where the first
 * turns of the steady code may still be filling what they keep (a loop's
 * first steps). A stack with enough points in all but not after held bytes
 * during start-up: not judged yet.
 */
static void trend_of(const struct history *h, const struct hstack *s, const uint64_t *vals,
		     struct report_growth *g)
{
	double t[HISTORY_POINTS + 1], y[HISTORY_POINTS + 1];
	size_t all = nr_points(h, s);
	size_t n = points_of(h, s, vals, h->startup.end_s, t, y);
	/*
	 * The interval in which the target exited, if the stack did nothing in
	 * it, says only that it stopped when the program did: its exact final
	 * figures are fitted, but whether it was still rising is told by the
	 * points while it ran.
	 */
	size_t active = h->exited && s->idle && n > HISTORY_MIN_POINTS - 1 ? n - 1 : n;

	history_fit__classify_until(t, y, n, active, g);
	/* By fewer than HISTORY_MIN_GROWTH_BLOCKS of its heap blocks (their mean size): none. */
	if (g->trend != TREND_UNKNOWN && s->blocks && MEMLEAK_KIND_OF(s->api) == KIND_HEAP &&
	    fabs(g->slope) * (t[n - 1] - t[0]) <
		    HISTORY_MIN_GROWTH_BLOCKS * s->bytes / (double)s->blocks)
		g->trend = TREND_STABLE;
	/*
	 * Sampling: growth that its estimate's own noise could make is none.
	 * What grew since the first point is the estimate of the blocks added
	 * meanwhile, whose variance is at most that of the last estimate.
	 */
	if (g->trend == TREND_GROWING &&
	    fabs(g->slope) * (t[n - 1] - t[0]) < report__margin(s->var))
		g->trend = TREND_STABLE;
	if (all >= HISTORY_MIN_POINTS && n < HISTORY_MIN_POINTS)
		g->trend = TREND_STARTUP;
}

/* history__growth_of, the trend of a flat stack told without a fit when quick. */
static void growth_of(const struct history *h, const struct hstack *s, const uint64_t *vals,
		      double age_s, bool quick, struct report_growth *g)
{
	memset(g, 0, sizeof(*g));
	g->age_s = age_s;
	if (s->first == NONE)
		return;
	if (!quick || !flat_trend(h, s, vals, g))
		trend_of(h, s, vals, g);
	g->grew = s->grew;
	g->shrank = s->shrank;
	g->intervals = s->intervals;
	g->age_s = age_s;
	g->score = score(g, h->t_last - s->t_zero);
}

void history__growth_of(const struct history *h, const struct hstack *s, const uint64_t *vals,
			double age_s, struct report_growth *g)
{
	growth_of(h, s, vals, age_s, false, g);
}

static void growth_or_none(const struct history *h, const struct hstack *s, double age_s,
			   bool quick, struct report_growth *g)
{
	uint64_t vals[HISTORY_POINTS];
	struct hstack tmp;

	memset(g, 0, sizeof(*g));
	g->age_s = age_s;
	if (s)
		growth_of(h, history_merge__current(h, s, &tmp, vals), vals, age_s, quick, g);
}

void history__growth(const struct history *h, uint64_t stack_id, uint32_t api, double age_s,
		     struct report_growth *g)
{
	growth_or_none(h, history_merge__find(h, stack_id, api), age_s, false, g);
}

size_t history__bytes(const struct history *h, size_t *stacks)
{
	*stacks = h->nr;
	return h->cap * sizeof(*h->stacks) + h->cap_of_site * sizeof(*h->of_site) +
	       idmap__bytes(&h->index) + h->points_bytes +
	       h->cap_samples * sizeof(*h->samples) + h->peak_cap * sizeof(*h->peak_sites) +
	       h->cap_seen * sizeof(*h->seen);
}

void history__growth_site(const struct history *h, size_t site, double age_s,
			  struct report_growth *g)
{
	growth_or_none(h, history__stack_of_site(h, site), age_s, false,
		       g);
}

bool history__flat_site(struct history *h, size_t site, double age_s,
			struct report_growth *g)
{
	const struct hstack *s;

	if (history_flat__kept(h, site, age_s, g))	/* told at a report before: its stack unread */
		return true;
	s = history__stack_of_site(h, site);
	/* What growth_of says of it caught up: catch_up only adds the reports missed. */
	if (!s || s->first == NONE || s->grew != 1 || s->shrank)
		return false;
	memset(g, 0, sizeof(*g));
	if (!flat_trend(h, s, NULL, g))
		return false;
	g->grew = s->grew;
	g->shrank = s->shrank;
	g->intervals = s->intervals + (uint32_t)(h->reports > s->at ? h->reports - s->at : 0);
	g->age_s = age_s;
	g->score = score(g, h->t_last - s->t_zero);
	history_flat__keep(h, site, g);
	return true;
}

void history__trend_site(const struct history *h, size_t site, double age_s,
			 struct report_growth *g)
{
	growth_or_none(h, history__stack_of_site(h, site), age_s, true,
		       g);
}

void history__prefetch_site(const struct history *h, size_t site, int stage)
{
	const struct hstack *s;

	if (site >= h->nr_of_site)
		return;
	if (stage == 0) {
		__builtin_prefetch(&h->of_site[site]);
		history_flat__prefetch(h, site);
		return;
	}
	if (history_flat__held(h, site))
		return;	/* flat, kept: its stack is not read */
	s = history__stack_of_site(h, site);
	if (!s)
		return;
	__builtin_prefetch(s);
	__builtin_prefetch((const char *)s + 64);
}

void history__catch_up_site(struct history *h, size_t site)
{
	struct hstack *s = history__stack_of_site(h, site);

	/* On failure it stays implicit: history_merge__current reads it all the same. */
	if (s)
		(void)history_merge__catch_up(h, s, h->reports);
}

/*
 * The live blocks as a whole: a trend moves them by HISTORY_MIN_LIVE_SHARE
 * of their level at least over the points fitted. The torch job's read
 * 95.3, 95.3, 95.3 and 95.1 MiB after start-up, a line that fits well, and
 * "the live blocks shrink" was true of the figures but not what they show.
 */
void history__live_growth(const struct history *h, struct report_growth *g)
{
	double t[HISTORY_POINTS + 1], y[HISTORY_POINTS + 1], level = 0;
	uint64_t vals[HISTORY_POINTS];
	const struct hstack *s =
		history_merge__current(h, &h->live, &(struct hstack){ 0 }, vals);
	size_t n;

	history__growth_of(h, s, vals, -1, g);
	g->score = 0;
	if (g->trend != TREND_GROWING && g->trend != TREND_SHRINKING)
		return;
	n = points_of(h, s, vals, h->startup.end_s, t, y);
	for (size_t i = 0; i < n; i++)
		level += y[i] / n;
	if (n && fabs(g->slope) * (t[n - 1] - t[0]) < HISTORY_MIN_LIVE_SHARE * level)
		g->trend = TREND_STABLE;
}

/* ------------------------------------------------------------ churn */

static int churn_cmp(const void *a, const void *b)
{
	const struct snap_site *x = *(const struct snap_site *const *)a;
	const struct snap_site *y = *(const struct snap_site *const *)b;

	if (x->stats.total_allocs != y->stats.total_allocs)
		return x->stats.total_allocs > y->stats.total_allocs ? -1 : 1;
	if (x->stats.total_bytes != y->stats.total_bytes)
		return x->stats.total_bytes > y->stats.total_bytes ? -1 : 1;
	return report__cmp_site(x->stack_id, x->api, y->stack_id, y->api);
}

/*
 * Keep site among the best max so far in v (n of them, best first), by
 * churn_cmp: a report asks for a few of hundreds of thousands of sites, so
 * a pass with an insertion each beats sorting them all.
 */
static size_t keep_best(const struct snap_site **v, size_t n, size_t max,
			const struct snap_site *site)
{
	size_t i = n < max ? n++ : max;

	if (i == max && churn_cmp(&site, &v[max - 1]) >= 0)
		return n;
	if (i == max)
		i = max - 1;
	for (; i > 0 && churn_cmp(&site, &v[i - 1]) < 0; i--)
		v[i] = v[i - 1];
	v[i] = site;
	return n;
}

int history__churn(const struct history *h, const struct snapshot *snap,
		   const struct snap_site **out, struct report_rate *rates, size_t max)
{
	double t = h->t_last > 0 ? h->t_last : 1;
	size_t n = 0;

	if (!max)
		return 0;
	/* Calls since tracing began, over the same time for all: the order of the rates. */
	for (size_t i = 0; i < snap->nr; i++)
		if (snap->sites[i].stats.total_allocs)
			n = keep_best(out, n, max, &snap->sites[i]);
	for (size_t i = 0; i < n; i++) {
		const struct hstack *s = history_merge__find(h, out[i]->stack_id, out[i]->api);

		/* Left alone since its last update: it allocated nothing in the last interval. */
		if (s && s->at < h->reports)
			s = NULL;

		rates[i] = (struct report_rate){
			.allocs_per_s = out[i]->stats.total_allocs / t,
			.bytes_per_s = out[i]->stats.total_bytes / t,
			.last_allocs_per_s = s ? s->last_allocs_per_s : 0,
			.last_bytes_per_s = s ? s->last_bytes_per_s : 0,
		};
	}
	return (int)n;
}

void history__startup_first(struct history *h)
{
	h->first_only = true;
}

void history__exited(struct history *h)
{
	h->exited = true;
}

const struct report_startup *history__startup(const struct history *h)
{
	return &h->startup;
}

const struct history_peak *history__peak(const struct history *h)
{
	return h->peak_known ? &h->peak : NULL;
}

const struct report_sample *history__samples(const struct history *h, size_t *nr)
{
	*nr = h->nr_samples;
	return h->samples;
}

const struct report_sample *history__base(const struct history *h)
{
	return &h->base;
}
