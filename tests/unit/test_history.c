// SPDX-License-Identifier: GPL-2.0
/* history.c: trends, churn, peak, timeline rows. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/history.h"
#include "analyze/history_internal.h"
#include "model/retired.h"
#include "sample.h"
#include "unit.h"

#define MiB (1ull << 20)

enum { CACHE = 1, LEAK, CHURN, POOL, LATE };

struct world {
	struct snap_site sites[32];
	size_t nr;
	struct snapshot snap;
	struct report_totals totals;
	uint64_t map_full;	/* allocations that found the stack map full, since tracing began */
};

static struct snap_site *site(struct world *w, uint64_t id)
{
	for (size_t i = 0; i < w->nr; i++)
		if (w->sites[i].stack_id == id)
			return &w->sites[i];
	w->sites[w->nr] = (struct snap_site){ .stack_id = id, .api = API_MALLOC };
	return &w->sites[w->nr++];
}

/* Allocate n blocks of size at id, then free f of them. */
static void churn(struct world *w, uint64_t id, uint64_t n, uint64_t size, uint64_t f)
{
	struct site_stats *s = &site(w, id)->stats;

	s->total_allocs += n;
	s->total_bytes += n * size;
	s->outstanding_allocs += n - f;
	s->outstanding_bytes += (n - f) * size;
}

static void drop(struct world *w, uint64_t id, uint64_t n, uint64_t size)
{
	struct site_stats *s = &site(w, id)->stats;

	s->outstanding_allocs -= n;
	s->outstanding_bytes -= n * size;
}

static const struct snapshot *snap_of(struct world *w)
{
	w->snap = (struct snapshot){ .sites = w->sites, .nr = w->nr };
	memset(&w->totals, 0, sizeof(w->totals));
	for (size_t i = 0; i < w->nr; i++) {
		w->totals.outstanding_bytes += w->sites[i].stats.outstanding_bytes;
		w->totals.outstanding_allocs += w->sites[i].stats.outstanding_allocs;
		w->totals.allocs += w->sites[i].stats.total_allocs;
		/* Sampling: aggregate.c's sum, in bytes^2. */
		w->totals.outstanding_var += (double)w->sites[i].stats.outstanding_var *
					     (double)(1ULL << MEMLEAK_VAR_SHIFT);
		w->totals.kind_bytes[MEMLEAK_KIND_OF(w->sites[i].api)] +=
			w->sites[i].stats.outstanding_bytes;
	}
	w->totals.frees = w->totals.allocs - w->totals.outstanding_allocs;
	w->totals.counters[CNT_STACKS_MAP_FULL] = w->map_full;
	return &w->snap;
}

static bool add(struct history *h, struct world *w, double t, const struct memstat *ms)
{
	const struct snapshot *s = snap_of(w);
	struct mem_reading mem = { .t_s = t, .live = w->totals.outstanding_bytes };

	if (ms)
		mem.ms = *ms;
	return history__add(h, t, s, &w->totals, ms ? &mem : NULL) == 0;
}

static enum report_trend trend(const struct history *h, uint64_t id, struct report_growth *g)
{
	history__growth(h, id, API_MALLOC, -1, g);
	return g->trend;
}

/* v_trend in miniature: the leak grows, the cache and the churn are stable, the pool drains. */
TEST(history_leak_cache_churn_pool)
{
	struct history *h = history__new();
	struct world w = { 0 };
	struct report_growth g;

	ASSERT(h);
	churn(&w, CACHE, 8192, 4096, 0);
	churn(&w, POOL, 256, 4096, 0);
	for (int k = 1; k <= 12; k++) {
		churn(&w, LEAK, 10, 2048, 0);
		/* Every other report catches one block in flight. */
		churn(&w, CHURN, 2000, 64, k % 2 ? 1999 : 2000);
		if (k % 2 == 0)
			drop(&w, CHURN, 1, 64);
		drop(&w, POOL, 20, 4096);
		ASSERT(add(h, &w, 0.5 * k, NULL));
	}
	ASSERT(trend(h, LEAK, &g) == TREND_GROWING);
	ASSERT(fabs(g.slope - 10 * 2048 / 0.5) < 1);
	ASSERT(g.r2 > 0.999);
	ASSERT_EQ_U64(g.grew, 12);
	ASSERT_EQ_U64(g.intervals, 12);
	ASSERT(g.score > 0.99);
	ASSERT(trend(h, CACHE, &g) == TREND_STABLE);
	ASSERT_EQ_U64(g.grew, 1);	/* it appeared in the first interval */
	ASSERT(g.score == 0);
	ASSERT(trend(h, CHURN, &g) == TREND_STABLE);
	ASSERT(trend(h, POOL, &g) == TREND_SHRINKING);
	ASSERT_EQ_U64(g.shrank, 11);
	ASSERT(fabs(g.slope + 20 * 4096 / 0.5) < 1);
	history__live_growth(h, &g);
	ASSERT(g.trend == TREND_SHRINKING);	/* the pool drains faster than the leak grows */
	/* Asked by the last snapshot's site (a report's pass): the same answers as by key. */
	{
		struct report_growth one;

		for (size_t i = 0; i < w.nr; i++) {
			history__growth_site(h, i, -1, &g);
			history__growth(h, w.sites[i].stack_id, w.sites[i].api, -1, &one);
			ASSERT(g.trend == one.trend && g.slope == one.slope && g.grew == one.grew);
		}
		ASSERT(w.nr == 4);	/* the four stacks */
		history__growth_site(h, w.nr, -1, &g);	/* past the snapshot: none */
		ASSERT(g.trend == TREND_UNKNOWN && !g.intervals);
	}
	history__free(h);
	return true;
}

TEST(history_churn_order_and_rates)
{
	struct history *h = history__new();
	struct world w = { 0 };
	const struct snap_site *out[3];
	struct report_rate rates[3];

	ASSERT(h);
	churn(&w, CACHE, 100, 4096, 0);
	churn(&w, POOL, 0, 0, 0);	/* allocated nothing: not churn */
	for (int k = 1; k <= 4; k++) {
		churn(&w, CHURN, 1000 * k, 64, 1000 * k);
		churn(&w, LEAK, 1, 100000, 0);
		ASSERT(add(h, &w, k, NULL));
	}
	ASSERT(history__churn(h, &w.snap, out, rates, 3) == 3);
	ASSERT_EQ_U64(out[0]->stack_id, CHURN);
	ASSERT_EQ_U64(out[1]->stack_id, CACHE);
	ASSERT_EQ_U64(out[2]->stack_id, LEAK);
	ASSERT(rates[0].allocs_per_s == 10000 / 4.0);
	ASSERT(rates[0].bytes_per_s == 640000 / 4.0);
	ASSERT(rates[0].last_allocs_per_s == 4000);	/* the last interval: 4,000 in 1 s */
	ASSERT(rates[1].last_allocs_per_s == 0);
	ASSERT(history__churn(h, &w.snap, out, rates, 1) == 1);
	history__free(h);
	return true;
}

/* The order a full sort gives: most calls, then most bytes, then by key. */
static int by_churn(const void *a, const void *b)
{
	const struct snap_site *x = a, *y = b;

	if (x->stats.total_allocs != y->stats.total_allocs)
		return x->stats.total_allocs > y->stats.total_allocs ? -1 : 1;
	if (x->stats.total_bytes != y->stats.total_bytes)
		return x->stats.total_bytes > y->stats.total_bytes ? -1 : 1;
	if (x->stack_id != y->stack_id)
		return x->stack_id < y->stack_id ? -1 : 1;
	return x->api < y->api ? -1 : x->api > y->api;
}

TEST(history_churn_top_is_a_full_sorts_top)
{
	enum { N = 5000, MAX = 20 };
	struct snap_site *sites = calloc(N, sizeof(*sites)), *sorted = calloc(N, sizeof(*sorted));
	struct snapshot snap = { .sites = sites, .nr = N };
	struct history *h = history__new();
	const struct snap_site *out[MAX];
	struct report_rate rates[MAX];
	unsigned seed = 7;

	ASSERT(sites && sorted && h);
	/* Few distinct counts, so that ties on calls and bytes decide by key. */
	for (size_t i = 0; i < N; i++) {
		seed = seed * 1103515245 + 12345;
		sites[i] = (struct snap_site){ .stack_id = 1 + (seed >> 8) % 100000,
					       .api = (seed >> 4) % 3 };
		sites[i].stats.total_allocs = (seed >> 16) % 40;
		sites[i].stats.total_bytes = 64 * ((seed >> 20) % 4);
	}
	memcpy(sorted, sites, N * sizeof(*sites));
	qsort(sorted, N, sizeof(*sorted), by_churn);
	ASSERT(history__churn(h, &snap, out, rates, MAX) == MAX);
	for (size_t i = 0; i < MAX; i++) {
		ASSERT_EQ_U64(out[i]->stack_id, sorted[i].stack_id);
		ASSERT_EQ_U64(out[i]->api, sorted[i].api);
		ASSERT_EQ_U64(out[i]->stats.total_allocs, sorted[i].stats.total_allocs);
	}
	/* Sites that allocated nothing are no churn, however few the others. */
	for (size_t i = 3; i < N; i++)
		sites[i].stats.total_allocs = 0;
	ASSERT(history__churn(h, &snap, out, rates, MAX) == 3);
	ASSERT(history__churn(h, &snap, out, rates, 0) == 0);
	history__free(h);
	free(sites);
	free(sorted);
	return true;
}

TEST(history_too_early_then_known)
{
	struct history *h = history__new();
	struct world w = { 0 };
	struct report_growth g;

	ASSERT(h);
	history__growth(h, LEAK, API_MALLOC, 2.5, &g);
	ASSERT(g.trend == TREND_UNKNOWN && g.intervals == 0 && g.age_s == 2.5);
	/* The first interval is start-up (every stack is new): judged on the 3 after it. */
	for (int k = 1; k <= 4; k++) {
		churn(&w, LEAK, 4, 250, 0);
		ASSERT(add(h, &w, k, NULL));
		ASSERT(trend(h, LEAK, &g) == (k < HISTORY_MIN_POINTS ? TREND_UNKNOWN :
					      k == HISTORY_MIN_POINTS ? TREND_STARTUP : TREND_GROWING));
	}
	history__free(h);
	return true;
}

/*
 * make demo in miniature: a leak grows at three reports, then the target
 * stops allocating and exits: the final interval is flat. The exit does not
 * erase the trend; a stack still active in that interval is judged on all.
 */
static enum report_trend demo_trend(bool exited, bool active_at_end)
{
	struct history *h = history__new();
	struct world w = { 0 };
	struct report_growth g;
	enum report_trend t;

	if (!h)
		return TREND_UNKNOWN;
	for (int k = 1; k <= 3; k++) {
		churn(&w, LEAK, 100, 512, 0);
		add(h, &w, k, NULL);
	}
	if (active_at_end)
		churn(&w, LEAK, 1, 512, 1);
	if (exited)
		history__exited(h);
	add(h, &w, 3.6, NULL);
	t = trend(h, LEAK, &g);
	history__free(h);
	return t;
}

TEST(history_exit_keeps_the_trend)
{
	ASSERT(demo_trend(true, false) == TREND_GROWING);
	ASSERT(demo_trend(false, false) == TREND_STABLE);
	ASSERT(demo_trend(true, true) == TREND_STABLE);
	return true;
}

/* A cache that warms up over a few intervals and then stays: not a leak. */
TEST(history_cache_warming_up)
{
	struct history *h = history__new();
	struct world w = { 0 };
	struct report_growth g;

	ASSERT(h);
	for (int k = 1; k <= 12; k++) {
		if (k <= 4)
			churn(&w, CACHE, 100, 4096, 0);
		churn(&w, LEAK, 1, 256, 0);
		ASSERT(add(h, &w, k, NULL));
	}
	ASSERT(trend(h, CACHE, &g) == TREND_STABLE);
	ASSERT_EQ_U64(g.grew, 4);
	ASSERT(trend(h, LEAK, &g) == TREND_GROWING);
	history__free(h);
	return true;
}

/* Long runs: the points are thinned, the counts and the slope stay exact. */
TEST(history_thinning_keeps_the_whole_run)
{
	struct history *h = history__new();
	struct world w = { 0 };
	struct report_growth g;

	ASSERT(h);
	churn(&w, CACHE, 10, 4096, 0);
	for (int k = 1; k <= 1000; k++) {
		churn(&w, LEAK, 1, 512, 0);
		ASSERT(add(h, &w, 0.25 * k, NULL));
	}
	ASSERT(trend(h, LEAK, &g) == TREND_GROWING);
	ASSERT(fabs(g.slope - 2048) < 0.01);
	ASSERT_EQ_U64(g.intervals, 1000);
	ASSERT_EQ_U64(g.grew, 1000);
	ASSERT(trend(h, CACHE, &g) == TREND_STABLE);
	/* A stack that appears late lives on the thinned points too. */
	for (int k = 1001; k <= 1100; k++) {
		churn(&w, LATE, 1, 100, 0);
		ASSERT(add(h, &w, 0.25 * k, NULL));
	}
	ASSERT(trend(h, LATE, &g) == TREND_GROWING);
	ASSERT(fabs(g.slope - 400) < 0.01);
	ASSERT_EQ_U64(g.intervals, 100);
	history__free(h);
	return true;
}

TEST(history_peak_from_ticks_and_reports)
{
	struct history *h = history__new();
	struct world w = { 0 };
	struct snap_live live[2] = { { CACHE, API_MALLOC, 1000, 1 }, { LEAK, API_MALLOC, 0, 0 } };
	const struct history_peak *p;

	ASSERT(h);
	ASSERT(!history__peak(h));
	ASSERT(history__tick(h, 0.1, live, 2) == 0);
	live[0].bytes = 64 * MiB;
	live[0].allocs = 4;
	live[1].bytes = 100;
	live[1].allocs = 1;
	ASSERT(history__tick(h, 0.2, live, 2) == 0);
	live[0].bytes = 0;
	ASSERT(history__tick(h, 0.3, live, 2) == 0);
	p = history__peak(h);
	ASSERT(p && p->t_s == 0.2 && p->bytes == 64 * MiB + 100 && p->allocs == 5 && p->nr == 2);
	ASSERT(p->sites[0].stack_id == CACHE && p->sites[0].bytes == 64 * MiB);
	/* A report above it is a sample too; stacks holding nothing are left out. */
	churn(&w, LEAK, 1, 65 * MiB, 0);
	churn(&w, CACHE, 1, 8, 1);
	ASSERT(add(h, &w, 0.5, NULL));
	p = history__peak(h);
	ASSERT(p->t_s == 0.5 && p->bytes == 65 * MiB && p->nr == 1 && p->sites[0].stack_id == LEAK);
	/* An exec forgets it. */
	history__reset(h);
	ASSERT(!history__peak(h));
	history__free(h);
	return true;
}

TEST(history_samples_and_reset)
{
	struct history *h = history__new();
	struct world w = { 0 };
	struct memstat ms = { .rss = 10 * MiB, .anon = 8 * MiB, .heap = 4 * MiB, .arenas = 2,
			      .arena = 3 * MiB, .arena_reserved = 128 * MiB };
	const struct report_sample *s;
	struct report_growth g;
	size_t nr;

	ASSERT(h);
	history__set_base(h, &ms);
	ASSERT(history__base(h)->mem && history__base(h)->rss == 10 * MiB);
	churn(&w, LEAK, 3, 100, 1);
	ASSERT(add(h, &w, 1, &ms));
	ASSERT(add(h, &w, 2, NULL));
	s = history__samples(h, &nr);
	ASSERT_EQ_U64(nr, 2);
	ASSERT(s[0].t_s == 1 && s[0].live == 200 && s[0].allocs == 3 && s[0].frees == 1);
	ASSERT(s[0].mem && s[0].anon == 8 * MiB && s[0].arenas == 2 && s[0].arena == 3 * MiB);
	ASSERT(!s[1].mem && s[1].rss == 0);
	history__reset(h);
	history__growth(h, LEAK, API_MALLOC, -1, &g);
	ASSERT(g.intervals == 0);
	ASSERT(add(h, &w, 3, NULL));
	s = history__samples(h, &nr);
	ASSERT_EQ_U64(nr, 3);	/* the timeline goes on */
	history__free(h);
	return true;
}

/* ---------------------------------------------------------------- start-up */

enum { REGISTRY = 10, LOOP, MODULE = 20 };

/*
 * Report k of an import: module k's code runs for the first time (a new
 * stack holding 100 KB), and registers itself in a registry (512 bytes more
 * at one stack each time, as gflags' flags or atexit handlers do).
 */
static void import_module(struct world *w, int k)
{
	churn(w, MODULE + k, 100, 1000, 0);
	churn(w, REGISTRY, 1, 512, 0);
}

/* A training step's worth: 2,000 blocks from one stack, all freed. */
static void train_step(struct world *w)
{
	churn(w, LOOP, 2000, 4096, 2000);
}

/* The registry's points as they are: the old rule called that a leak. */
static enum report_trend raw_trend(const double *y, size_t n)
{
	double t[16];
	struct report_growth g;

	for (size_t i = 0; i < n; i++)
		t[i] = i + 1;
	history_fit__classify(t, y, n, &g);
	return g.trend;
}

/*
 * A pool that drains by 40 KiB a report: the live blocks shrink when the
 * pool is all they hold, and hold steady beside 96 MiB of cache, which the
 * same fall leaves within HISTORY_MIN_LIVE_SHARE of its level.
 */
static enum report_trend live_while_draining(uint64_t cache_blocks)
{
	struct history *h = history__new();
	struct world w = { 0 };
	struct report_growth g = { 0 };

	if (!h)
		return TREND_UNKNOWN;
	churn(&w, CACHE, cache_blocks, 1 * MiB, 0);
	churn(&w, POOL, 128, 4096, 0);
	for (int k = 1; k <= 8; k++) {
		drop(&w, POOL, 10, 4096);
		if (!add(h, &w, k, NULL))
			g.trend = TREND_UNKNOWN;
		else if (k == 8)
			history__live_growth(h, &g);
	}
	history__free(h);
	return g.trend;
}

TEST(history_live_trend_weighs_its_level)
{
	ASSERT(live_while_draining(0) == TREND_SHRINKING);
	ASSERT(live_while_draining(96) == TREND_STABLE);
	/*
	 * Fitted after start-up (the first report): 7 points over 6 s, a fall
	 * of 240 KiB, at a level of the cache and 312 KiB of pool on average.
	 * 1% of that is 240 KiB at a cache of 23.1 MiB.
	 */
	ASSERT(live_while_draining(24) == TREND_STABLE);
	ASSERT(live_while_draining(23) == TREND_SHRINKING);
	return true;
}

/* An import grows the registry as steadily as a leak: start-up, judged only after it. */
TEST(history_startup_import_then_flat)
{
	double registry[6] = { 512, 1024, 1536, 2048, 2560, 3072 };
	struct history *h = history__new();
	struct world w = { 0 };
	const struct report_startup *st;
	struct report_growth g;

	ASSERT(h);
	ASSERT(raw_trend(registry, 6) == TREND_GROWING);
	for (int k = 1; k <= 6; k++) {
		import_module(&w, k);
		ASSERT(add(h, &w, k, NULL));
	}
	st = history__startup(h);
	ASSERT(st->ongoing && st->end_s == 6 && st->new_stacks == 1);
	ASSERT(fabs(st->new_share - 100.0 / 101) < 1e-9);
	ASSERT(trend(h, REGISTRY, &g) == TREND_STARTUP);
	ASSERT_EQ_U64(g.grew, 6);
	ASSERT(g.score == 0 && g.slope == 0);
	history__live_growth(h, &g);
	ASSERT(g.trend == TREND_STARTUP);
	/* The loop's first steps are new code too; from the second report on, none. */
	for (int k = 7; k <= 14; k++) {
		train_step(&w);
		ASSERT(add(h, &w, k, NULL));
		ASSERT(trend(h, REGISTRY, &g) == (k < 10 ? TREND_STARTUP : TREND_STABLE));
	}
	ASSERT(!st->ongoing && st->end_s == 7 && st->new_stacks == 0 && st->new_share == 0);
	ASSERT(trend(h, LOOP, &g) == TREND_UNKNOWN);	/* it never held a block at a report */
	ASSERT(trend(h, MODULE + 3, &g) == TREND_STABLE);
	history__live_growth(h, &g);
	ASSERT(g.trend == TREND_STABLE);
	history__free(h);
	return true;
}

/* A leak that runs through start-up is judged after it; one that starts later, as ever. */
TEST(history_startup_then_leak)
{
	struct history *h = history__new();
	struct world w = { 0 };
	struct report_growth g;

	ASSERT(h);
	for (int k = 1; k <= 14; k++) {
		if (k <= 6)
			import_module(&w, k);
		else
			train_step(&w);
		churn(&w, LEAK, 4, 256, 0);
		if (k >= 10)
			churn(&w, LATE, 10, 64, 0);	/* 10 of 2,010 calls: no start-up */
		ASSERT(add(h, &w, k, NULL));
		if (k == 6 || k == 9)
			ASSERT(trend(h, LEAK, &g) == TREND_STARTUP);
		if (k == 10)
			ASSERT(trend(h, LEAK, &g) == TREND_GROWING);
	}
	ASSERT(history__startup(h)->end_s == 7);
	ASSERT(trend(h, LEAK, &g) == TREND_GROWING);
	ASSERT(fabs(g.slope - 1024) < 1e-6 && g.r2 > 0.999);
	ASSERT_EQ_U64(g.grew, 14);
	ASSERT_EQ_U64(g.intervals, 14);
	ASSERT(g.score > 0.99);
	ASSERT(trend(h, LATE, &g) == TREND_GROWING);
	ASSERT(fabs(g.slope - 640) < 1e-6);
	ASSERT(trend(h, REGISTRY, &g) == TREND_STABLE);
	history__free(h);
	return true;
}

/*
 * The loop's first turns fill what they keep (a cache, a pool): a stack that
 * grows in the interval that ends start-up and the two after it, then stops,
 * is never growing. Counting the report that ended start-up as a point of
 * the trend called it a leak at the third.
 */
TEST(history_startup_boundary_warm_up)
{
	struct history *h = history__new();
	struct world w = { 0 };
	struct report_growth g;

	ASSERT(h);
	for (int k = 1; k <= 14; k++) {
		if (k <= 6)
			import_module(&w, k);
		else
			train_step(&w);
		if (k >= 7 && k <= 9)
			churn(&w, CACHE, 1, 800, 0);
		ASSERT(add(h, &w, k, NULL));
		ASSERT(k < 7 || trend(h, CACHE, &g) != TREND_GROWING);
	}
	ASSERT(history__startup(h)->end_s == 7);
	ASSERT(trend(h, CACHE, &g) == TREND_STABLE);
	history__free(h);
	return true;
}

/* At least HISTORY_STARTUP_SHARE of an interval's calls from new stacks, exactly. */
TEST(history_startup_share_threshold)
{
	struct history *h = history__new();
	struct world w = { 0 };
	const struct report_startup *st;

	ASSERT(h);
	churn(&w, LOOP, 1, 64, 1);
	ASSERT(add(h, &w, 1, NULL));
	st = history__startup(h);
	ASSERT(st->ongoing && st->end_s == 1 && st->new_share == 1);
	churn(&w, LOOP, 750, 64, 750);
	churn(&w, MODULE + 1, 250, 64, 250);
	ASSERT(add(h, &w, 2, NULL));
	ASSERT(st->ongoing && st->end_s == 2 && st->new_share == 0.25 && st->new_stacks == 1);
	churn(&w, LOOP, 751, 64, 751);
	churn(&w, MODULE + 2, 249, 64, 249);
	ASSERT(add(h, &w, 3, NULL));
	ASSERT(!st->ongoing && st->end_s == 2 && st->new_share == 0.249);
	/* No calls at all: nothing new ran. */
	ASSERT(add(h, &w, 4, NULL));
	ASSERT(!st->ongoing && st->new_share == 0 && st->end_s == 2);
	history__free(h);
	return true;
}

/* -k: only the first interval is start-up; later bursts of new code paths are not. */
TEST(history_startup_first_only)
{
	struct history *h = history__new();
	struct world w = { 0 };
	const struct report_startup *st;
	struct report_growth g;

	ASSERT(h);
	history__startup_first(h);
	churn(&w, LOOP, 1, 64, 1);
	ASSERT(add(h, &w, 1, NULL));
	st = history__startup(h);
	ASSERT(st->ongoing && st->end_s == 1);
	for (int k = 2; k <= 8; k++) {
		import_module(&w, k);	/* all new, every interval: start-up to a process */
		churn(&w, LEAK, 4, 256, 0);
		ASSERT(add(h, &w, k, NULL));
		ASSERT(!st->ongoing && st->end_s == 1 && st->new_share > 0.25);
	}
	ASSERT(trend(h, LEAK, &g) == TREND_GROWING);
	history__free(h);
	return true;
}

/*
 * With the stack map full, new code's calls land at the stack of failed
 * walks, which then grows: those calls count as new, and the stack is
 * start-up, not a leak. The stack of failed walks is never a new stack.
 */
TEST(history_startup_stack_map_full)
{
	struct history *h = history__new(), *blind = history__new();
	struct world w = { 0 };
	struct report_growth g;

	ASSERT(h && blind);
	for (int k = 1; k <= 8; k++) {
		churn(&w, MEMLEAK_NO_STACK, 1000, 100, 0);
		churn(&w, LOOP, 1000, 100, 1000);
		w.map_full += 1000;
		ASSERT(add(h, &w, k, NULL));
		w.map_full = 0;	/* the same calls, uncounted */
		ASSERT(add(blind, &w, k, NULL));
		w.map_full = 1000ull * k;
	}
	ASSERT(history__startup(h)->ongoing && history__startup(h)->new_share == 0.5);
	ASSERT(history__startup(h)->new_stacks == 0 && history__startup(h)->unstored == 1000);
	history__growth(h, MEMLEAK_NO_STACK, API_MALLOC, -1, &g);
	ASSERT(g.trend == TREND_STARTUP);
	history__growth(blind, MEMLEAK_NO_STACK, API_MALLOC, -1, &g);
	ASSERT(g.trend == TREND_GROWING);
	history__free(blind);
	history__free(h);
	return true;
}

/* A site cleared and made anew is not new code; an exec starts up anew. */
TEST(history_startup_cleared_site_and_exec)
{
	struct history *h = history__new();
	struct world w = { 0 };
	const struct report_startup *st;

	ASSERT(h);
	st = history__startup(h);
	churn(&w, LOOP, 1000, 64, 1000);
	ASSERT(add(h, &w, 1, NULL));
	ASSERT(st->ongoing && st->end_s == 1);
	site(&w, LOOP)->stats = (struct site_stats){ .total_allocs = 10, .total_bytes = 640 };
	ASSERT(add(h, &w, 2, NULL));
	ASSERT(!st->ongoing && st->new_share == 0 && st->end_s == 1);
	history__reset(h);
	ASSERT(st->end_s == 2 && !st->ongoing);
	churn(&w, LOOP, 10, 64, 10);
	ASSERT(add(h, &w, 3, NULL));
	ASSERT(st->ongoing && st->end_s == 3 && st->new_stacks == 1);
	history__free(h);
	return true;
}

/* ---------------------------------------------------------------- the floor */

/*
 * torch_fixed_c's flake in miniature: after an import, a flat loop, and a
 * stack that gains one 16-byte block at each of the reports (8 s apart, as
 * a loaded machine makes them): a line fits with R² 1.00 at +2 B/s, 64
 * bytes in all, which is no steady growth; nor is a 6 KiB block gained
 * at each of three reports (torch's CPU allocator did so at INTERVAL 2):
 * two blocks more. A slow leak (POOL: 64 bytes a report) is judged once it
 * has grown by HISTORY_MIN_GROWTH over the points fitted, and by
 * HISTORY_MIN_GROWTH_BLOCKS blocks.
 */
TEST(history_tiny_growth_is_not_a_trend)
{
	struct history *h = history__new();
	struct world w = { 0 };
	struct report_growth g;

	ASSERT(h);
	for (int k = 1; k <= 6; k++) {
		import_module(&w, k);
		ASSERT(add(h, &w, 8 * k, NULL));
	}
	for (int k = 7; k <= 30; k++) {
		train_step(&w);
		if (k <= 11)
			churn(&w, LATE, 1, 16, 0);
		churn(&w, POOL, 1, 64, 0);
		if (k >= 8)
			churn(&w, LEAK, 1, 6144, 0);
		ASSERT(add(h, &w, 8 * k, NULL));
		ASSERT(trend(h, LEAK, &g) == (k < 10 ? TREND_UNKNOWN :
					      k - 8 < HISTORY_MIN_GROWTH_BLOCKS ? TREND_STABLE :
					      TREND_GROWING));
		/* The points after start-up (it ended at report 7) span k - 8 intervals. */
		ASSERT(trend(h, POOL, &g) == (k < 9 ? TREND_UNKNOWN : k < 10 ? TREND_STARTUP :
					      64 * (k - 8) < HISTORY_MIN_GROWTH ? TREND_STABLE :
					      TREND_GROWING));
		if (k != 11)
			continue;
		ASSERT(trend(h, LATE, &g) == TREND_STABLE);
		ASSERT(fabs(g.slope - 2) < 1e-9 && g.r2 > 0.999);
		ASSERT_EQ_U64(g.grew, 5);
		ASSERT(g.score == 0);
	}
	ASSERT(history__startup(h)->end_s == 56);
	ASSERT(trend(h, POOL, &g) == TREND_GROWING && fabs(g.slope - 8) < 1e-9);
	history__free(h);
	return true;
}

/*
 * make demo in miniature (tests/victims/demo_leaky.c): 50 requests a
 * second, each leaking its 512-byte header, beside a response built and
 * freed and a cache of 4: at INTERVAL 1 the fourth report judges the leak.
 */
TEST(history_demo_leak_is_judged)
{
	struct history *h = history__new();
	struct world w = { 0 };
	struct report_growth g;

	ASSERT(h);
	churn(&w, CACHE, 4, 1024, 0);
	for (int k = 1; k <= 4; k++) {
		churn(&w, LEAK, 50, 512, 0);
		churn(&w, CHURN, 50, 4096, 50);
		churn(&w, CACHE, 5, 1024, 5);
		ASSERT(add(h, &w, k, NULL));
	}
	ASSERT(trend(h, LEAK, &g) == TREND_GROWING);
	ASSERT(fabs(g.slope - 50 * 512) < 1e-6 && g.score > 0.99);
	ASSERT(trend(h, CACHE, &g) == TREND_STABLE);
	history__free(h);
	return true;
}

/*
 * Sampling: a stack whose estimate grew by less than its own noise
 * (1.96 sd of its last estimate) is not judged growing; one that grew by
 * more is. Exact figures (no variance) are judged as ever.
 */
TEST(history_sampled_growth_beyond_noise)
{
	struct history *h = history__new();
	struct world w = { 0 };
	struct report_growth g;

	ASSERT(h);
	for (int k = 1; k <= 12; k++) {
		churn(&w, LEAK, 1, 4096, 0);	/* 48 KiB in all */
		churn(&w, LATE, 100, 4096, 0);	/* 4.7 MiB in all */
		/* sd 64 KiB for the small one, 128 KiB for the big one. */
		site(&w, LEAK)->stats.outstanding_var = (65536ULL * 65536) >> MEMLEAK_VAR_SHIFT;
		site(&w, LATE)->stats.outstanding_var = (131072ULL * 131072) >> MEMLEAK_VAR_SHIFT;
		ASSERT(add(h, &w, 0.5 * k, NULL));
	}
	ASSERT(trend(h, LEAK, &g) == TREND_STABLE);
	ASSERT(trend(h, LATE, &g) == TREND_GROWING);
	history__free(h);
	return true;
}

/*
 * Sampling: the live total is an estimate as well. 48 KiB more over the
 * run with a standard deviation of 64 KiB is no growth of it; the same
 * figures exact (no variance) are.
 */
TEST(history_sampled_live_total_beyond_noise)
{
	for (int sampled = 0; sampled <= 1; sampled++) {
		struct history *h = history__new();
		struct world w = { 0 };
		struct report_growth g;

		ASSERT(h);
		for (int k = 1; k <= 12; k++) {
			churn(&w, LEAK, 1, 4096, 0);
			site(&w, LEAK)->stats.outstanding_var =
				sampled ? (65536ULL * 65536) >> MEMLEAK_VAR_SHIFT : 0;
			ASSERT(add(h, &w, 0.5 * k, NULL));
		}
		history__live_growth(h, &g);
		ASSERT(g.trend == (sampled ? TREND_STABLE : TREND_GROWING));
		history__free(h);
	}
	return true;
}

/* What a stack's counts should be after a report, kept the plain way. */
struct expect {
	bool seen;		/* in some snapshot so far: the history keeps it */
	bool held;		/* has held bytes: its counts run */
	uint64_t bytes;
	uint32_t grew, shrank, intervals;
};

#define MERGE_KEYS 24

static void expect_report(struct expect *e, bool present, uint64_t bytes)
{
	uint64_t now = present ? bytes : 0;

	e->seen |= present;
	if (!e->seen)
		return;
	if (!e->held) {
		if (now) {
			e->held = true;
			e->intervals = e->grew = 1;
		}
	} else {
		e->intervals++;
		e->grew += now > e->bytes;
		e->shrank += now < e->bytes;
	}
	e->bytes = now;
}

/*
 * The merge of each snapshot into the stacks kept (done in place, from the
 * end): keys that arrive between kept ones, keys that leave a snapshot and
 * come back, snapshots in no order. Every stack's counts are those kept
 * the plain way, found by its key and by its site of the last snapshot.
 */
TEST(history_merge_interleaved_keys)
{
	struct history *h = history__new();
	struct expect e[MERGE_KEYS] = { 0 };
	struct snap_site sites[MERGE_KEYS];
	struct report_totals totals = { 0 };
	struct report_growth g, by_site;
	unsigned seed = 12345;

	ASSERT(h);
	for (int r = 1; r <= 14; r++) {
		struct snapshot snap = { .sites = sites };

		/* Key k arrives at report k % 7 + 1; ids interleave (7919 k mod 1000). */
		for (int k = 0; k < MERGE_KEYS; k++) {
			int at = (k * 5 + r) % MERGE_KEYS;	/* a different order each report */
			uint64_t id = (uint64_t)(at * 7919 % 1000) + 1;
			bool present = r >= at % 7 + 1 && (rand_r(&seed) % 5 != 0);
			uint64_t bytes = (uint64_t)(rand_r(&seed) % 4) * 4096;

			expect_report(&e[at], present, bytes);
			if (present)
				sites[snap.nr++] = (struct snap_site){
					.stack_id = id, .api = API_MALLOC,
					.stats = { .outstanding_bytes = bytes,
						   .outstanding_allocs = bytes / 4096,
						   .total_bytes = 4096ull * r,
						   .total_allocs = (uint64_t)r } };
		}
		ASSERT(history__add(h, r, &snap, &totals, NULL) == 0);
		for (int k = 0; k < MERGE_KEYS; k++) {
			history__growth(h, (uint64_t)(k * 7919 % 1000) + 1, API_MALLOC, -1, &g);
			ASSERT_EQ_U64(g.intervals, e[k].held ? e[k].intervals : 0);
			ASSERT_EQ_U64(g.grew, e[k].held ? e[k].grew : 0);
			ASSERT_EQ_U64(g.shrank, e[k].held ? e[k].shrank : 0);
		}
		for (size_t i = 0; i < snap.nr; i++) {
			history__growth(h, sites[i].stack_id, API_MALLOC, -1, &g);
			history__growth_site(h, i, -1, &by_site);
			ASSERT(memcmp(&g, &by_site, sizeof(g)) == 0);
		}
	}
	history__free(h);
	return true;
}

/* ---------------------------------------------------------------- folding */

/*
 * A report folds the stacks that hold nothing and that the churn does not
 * list (nor the peak: pins); one that comes back with the figures it had
 * is no new code, and its last interval counts only what it did since.
 */
TEST(history_fold_picks_drops_and_takes_back)
{
	struct history *h = history__new();
	struct world w = { 0 };
	const struct report_startup *st;
	const struct snap_site *top[3];
	struct report_rate rate[3];
	struct snap_live pin = { .stack_id = POOL, .api = API_MALLOC };
	uint32_t picked[8];
	uint64_t key;
	size_t stacks;

	ASSERT(h);
	st = history__startup(h);
	churn(&w, CHURN, 1000, 64, 1000);	/* the churn's top */
	churn(&w, POOL, 5, 32, 5);		/* held nothing: folds */
	churn(&w, LEAK, 10, 100, 0);		/* holds bytes */
	ASSERT(add(h, &w, 1, NULL) && st->ongoing);
	ASSERT(history_fold__pick(h, snap_of(&w), 1, &pin, 1, picked) == 0);
	ASSERT(history_fold__pick(h, snap_of(&w), 1, NULL, 0, picked) == 1);
	ASSERT(w.sites[picked[0]].stack_id == POOL);
	key = retired__site_key(POOL, API_MALLOC);
	history__bytes(h, &stacks);
	ASSERT(stacks == 3 && history_fold__drop(h, &key, 1) == 0);
	history__bytes(h, &stacks);
	ASSERT(stacks == 2);
	/* The next reading has it no more; its allocations are the totals' forgotten ones. */
	w.sites[picked[0]] = w.sites[--w.nr];
	ASSERT(add(h, &w, 2, NULL) && !st->ongoing && st->new_stacks == 0);
	/* Back: 3 allocations more, on top of the 5 it had when folded. */
	churn(&w, POOL, 8, 32, 8);
	site(&w, POOL)->folded_allocs = 5;
	site(&w, POOL)->folded_bytes = 160;
	ASSERT(add(h, &w, 3, NULL));
	ASSERT(!st->ongoing && st->new_stacks == 0 && st->new_share == 0);
	ASSERT(history__churn(h, snap_of(&w), top, rate, 3) == 3 && top[0]->stack_id == CHURN);
	ASSERT(top[1]->stack_id == LEAK && top[2]->stack_id == POOL);
	ASSERT(rate[2].last_allocs_per_s == 3 && rate[2].last_bytes_per_s == 96);
	history__bytes(h, &stacks);
	ASSERT(stacks == 3);
	history__free(h);
	return true;
}

/*
 * A reading folds unread only stacks the history never saw, below the
 * churn's cut-off; what they allocated is the interval's, from new stacks.
 */
TEST(history_fold_unseen_and_unread_counts)
{
	struct history *h = history__new();
	struct world w = { 0 };
	const struct report_startup *st;
	const struct snapshot *snap;
	uint32_t picked[8];

	ASSERT(h);
	st = history__startup(h);
	churn(&w, CHURN, 1000, 64, 1000);
	churn(&w, LEAK, 10, 100, 0);
	ASSERT(add(h, &w, 1, NULL));
	ASSERT(!history_fold__unseen(h, LATE, API_MALLOC, 1, 8));	/* no cut-off yet */
	ASSERT(history_fold__pick(h, snap_of(&w), 1, NULL, 0, picked) == 0);
	ASSERT(history_fold__unseen(h, LATE, API_MALLOC, 999, 1 << 20));
	ASSERT(history_fold__unseen(h, LATE, API_MALLOC, 1000, 63999));
	ASSERT(!history_fold__unseen(h, LATE, API_MALLOC, 1000, 64000));	/* a tie: the key decides */
	ASSERT(!history_fold__unseen(h, LEAK, API_MALLOC, 1, 8));	/* seen */
	/* The next interval: 1,000 allocations at CHURN, 3,000 from stacks folded unread. */
	churn(&w, CHURN, 1000, 64, 1000);
	snap = snap_of(&w);
	w.snap.unread_sites = 300;
	w.snap.unread_allocs = 3000;
	ASSERT(history__add(h, 2, snap, &w.totals, NULL) == 0);
	ASSERT(st->new_stacks == 300 && st->new_share == 0.75 && st->ongoing);
	history__free(h);
	return true;
}

/*
 * Before the first pick (a torch import's first report): the floor, the
 * figures the churn's last already reached, lets a reading fold the stacks
 * below it unread; a pick's cut-off then replaces it.
 */
TEST(history_fold_floor_before_the_first_pick)
{
	struct history *h = history__new();
	struct world w = { 0 };
	uint32_t picked[8];

	ASSERT(h && !history_fold__cut_known(h));
	ASSERT(!history_fold__unseen(h, LATE, API_MALLOC, 1, 8));	/* no cut-off yet */
	history_fold__floor(h, 10, 640);
	ASSERT(history_fold__cut_known(h));
	ASSERT(history_fold__unseen(h, LATE, API_MALLOC, 9, 1 << 20));
	ASSERT(!history_fold__unseen(h, LATE, API_MALLOC, 10, 640));	/* a tie: the key decides */
	ASSERT(!history_fold__unseen(h, LATE, API_MALLOC, 11, 8));
	churn(&w, CHURN, 1000, 64, 1000);
	churn(&w, LEAK, 10, 100, 0);
	ASSERT(add(h, &w, 1, NULL));
	ASSERT(history_fold__pick(h, snap_of(&w), 1, NULL, 0, picked) == 0);
	ASSERT(history_fold__unseen(h, LATE, API_MALLOC, 999, 8));	/* the pick's: 1,000 */
	history__free(h);
	return true;
}

/*
 * history_fold__drop: the index made anew in the room it had, each stack
 * kept found by its key at its new place, each folded one gone.
 */
TEST(history_fold_index_in_its_room)
{
	enum { NR = 3000 };
	static struct snap_site sites[NR];
	static uint32_t changed[NR];
	struct history *h = history__new();
	struct report_totals t = { 0 };
	uint64_t keys[NR / 3];
	size_t n = 0, cap;

	ASSERT(h);
	for (size_t i = 0; i < NR; i++) {
		sites[i] = (struct snap_site){ .stack_id = 77 + 13 * i, .api = API_MALLOC,
					       .stats = { .total_allocs = 1, .total_bytes = 8 } };
		changed[i] = (uint32_t)i;
	}
	ASSERT(!history__add(h, 1.0, &(struct snapshot){ .sites = sites, .nr = NR, .reading = 1,
							  .changed = changed, .nr_changed = NR },
			     &t, NULL));
	for (size_t i = 0; i < NR; i += 3)
		keys[n++] = retired__site_key(sites[i].stack_id, sites[i].api);
	cap = h->index.cap;
	ASSERT(!history_fold__drop(h, keys, n));
	ASSERT(h->nr == NR - n && h->index.nr == NR - n && h->index.cap == cap);
	for (size_t i = 0; i < NR; i++) {
		struct hstack *s = history_merge__find(h, sites[i].stack_id, sites[i].api);

		ASSERT(i % 3 ? s && s->stack_id == sites[i].stack_id : !s);
		ASSERT(!s || (size_t)(s - h->stacks) == i - i / 3 - 1);
	}
	history__free(h);
	return true;
}
