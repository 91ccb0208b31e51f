// SPDX-License-Identifier: GPL-2.0
/*
 * Start-up and growth under --sample 512K, judged by site (analyze/history_sites.h),
 * driven through insight.c as reports.c drives it: a
 * program's allocations drawn by the countdown of bpf/sample.h with a fixed
 * seed, a snapshot of the sampled stacks each second, their site frames set
 * before insight__fill.
 *
 * The program: an import for 5 s (500 stacks, 10 MB held), then a training
 * loop: 4,000 stacks that churn 16 KiB a second each (each first sampled
 * some 32 s in, on average), one line that leaks 480 KiB a second spread
 * over 12 stacks (each within its own noise), a cache filled once, and a
 * rare line whose first sample comes in the middle of the loop.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/history.h"
#include "analyze/insight.h"
#include "report/report_incomplete.h"
#include "sample.h"
#include "unit.h"

#define MEAN 524288ull
#define SECONDS 40
#define IMPORT_END 5
#define LEAK_STACKS 12
#define LEAK_BLOCKS 40		/* a second, each stack */
#define LEAK_SIZE 1024
#define CHURN_STACKS 4000
#define IMPORT_STACKS 500
#define CACHE_STACKS 3
#define RARE_AT 20
#define RARE_BLOCKS 8192	/* 512 KiB of 64-byte blocks at once: one sample, likely */
#define NR (IMPORT_STACKS + CHURN_STACKS + LEAK_STACKS + CACHE_STACKS + 1)

enum site { IMPORT, CHURN, LEAK, CACHE, RARE, NSITES };

struct sim_stack {
	enum site site;
	uint64_t bytes, blocks, var, samples;	/* outstanding: bytes, 1/WEIGHT_ONE, 2^VAR_SHIFT */
	uint64_t total_bytes, total_blocks;
};

struct sim {
	struct sim_stack stacks[NR];
	__u64 rng, left;
	uint64_t leak_truth;	/* the leak's bytes, exactly */
	struct snap_site sites[NR];
	struct snapshot snap;
	struct aggregate *agg;
	struct report *r;
	struct insight *in;
	struct report_frame frames[NSITES];
};

/* The countdown of bpf/memleak.bpf.c over k blocks of size bytes at stack s; held or freed. */
static void allocate(struct sim *w, struct sim_stack *s, uint64_t k, uint64_t size, bool held)
{
	uint64_t need = size << MEMLEAK_SAMPLE_FRAC;

	while (k) {
		uint64_t m = (w->left - 1) / need;
		struct sample_weight wt;

		if (m >= k) {
			w->left -= k * need;
			return;
		}
		w->left -= m * need;
		k -= m + 1;
		w->left = sample_exp_draw(MEAN, sample_xorshift(&w->rng));
		sample_bytes_weight(&wt, size, MEAN);
		s->total_bytes += wt.bytes;
		s->total_blocks += wt.blocks;
		if (!held)
			continue;
		s->bytes += wt.bytes;
		s->blocks += wt.blocks;
		s->var += wt.var;
		s->samples++;
	}
}

static uint64_t units(uint64_t blocks)
{
	return (blocks + MEMLEAK_WEIGHT_ONE / 2) >> MEMLEAK_WEIGHT_SHIFT;
}

/* One second of the program, second t (1-based). */
static void second(struct sim *w, int t, bool leak)
{
	if (t <= IMPORT_END) {
		for (int i = 0; i < IMPORT_STACKS / IMPORT_END; i++)
			allocate(w, &w->stacks[(t - 1) * IMPORT_STACKS / IMPORT_END + i], 40, 512, true);
		return;
	}
	for (int i = 0; i < CHURN_STACKS; i++)
		allocate(w, &w->stacks[IMPORT_STACKS + i], 64, 256, false);
	for (int i = 0; i < LEAK_STACKS; i++) {
		allocate(w, &w->stacks[IMPORT_STACKS + CHURN_STACKS + i], LEAK_BLOCKS, LEAK_SIZE,
			 leak);
		w->leak_truth += leak ? LEAK_BLOCKS * LEAK_SIZE : 0;
	}
	if (t == IMPORT_END + 1)
		for (int i = 0; i < CACHE_STACKS; i++)
			allocate(w, &w->stacks[NR - 1 - CACHE_STACKS + i], 1024, 1024, true);
	if (t == RARE_AT)
		allocate(w, &w->stacks[NR - 1], RARE_BLOCKS, 64, true);
}

/* The snapshot of the sampled stacks (those never sampled have no entry), as of second t. */
static int report(struct sim *w, int t)
{
	size_t n = 0;

	for (size_t i = 0; i < NR; i++) {
		const struct sim_stack *s = &w->stacks[i];

		if (!s->total_blocks)
			continue;
		w->sites[n++] = (struct snap_site){
			.stack_id = i + 1, .api = API_MALLOC,
			.stats = { .outstanding_bytes = s->bytes, .outstanding_allocs = units(s->blocks),
				   .total_bytes = s->total_bytes, .total_allocs = units(s->total_blocks),
				   .outstanding_samples = s->samples, .outstanding_var = s->var },
		};
	}
	w->snap = (struct snapshot){ .sites = w->sites, .nr = n, .time_ns = t * 1000000000ull };
	aggregate__free(w->agg);
	w->agg = NULL;
	return aggregate__build(&w->snap, &w->agg) ?: insight__add(w->in, 0, &w->snap, w->agg);
}

static int no_stacks(const struct aggregate *sites, void *ctx, struct report_stack **out,
		     size_t *nr)
{
	(void)sites;
	(void)ctx;
	*out = calloc(1, sizeof(**out));
	*nr = 0;
	return *out ? 0 : -ENOMEM;
}

static const struct report_sampling SAMPLING = { .by_bytes = true, .mean = MEAN, .seed = 1 };

static void free_report(struct sim *w)
{
	for (size_t i = 0; w->r && i < w->r->nr_stacks; i++)
		w->r->stacks[i].site_frame = NULL;	/* the sim's own */
	report__free(w->r);
	w->r = NULL;
}

/* The report of the last snapshot: each stack with its figures and its site's frame. */
static int fill(struct sim *w)
{
	free_report(w);
	w->r = calloc(1, sizeof(*w->r));
	if (!w->r || !(w->r->stacks = calloc(w->agg->nr ?: 1, sizeof(*w->r->stacks))))
		return -ENOMEM;
	w->r->nr_stacks = w->agg->nr;
	w->r->sampling = &SAMPLING;
	for (size_t i = 0; i < w->agg->nr; i++) {
		const struct snap_site *s = w->agg->sites[i];
		enum site site = w->stacks[s->stack_id - 1].site;

		w->r->stacks[i] = (struct report_stack){
			.api = s->api, .bytes = s->stats.outstanding_bytes,
			.allocs = s->stats.outstanding_allocs, .total_allocs = s->stats.total_allocs,
			.samples = s->stats.outstanding_samples,
			.var = (double)s->stats.outstanding_var * (double)(1ULL << MEMLEAK_VAR_SHIFT),
			.site_frame = &w->frames[site], .site_import = site == IMPORT,
		};
	}
	return insight__fill(w->in, &w->snap, w->agg, no_stacks, NULL, w->r);
}

static bool sim_start(struct sim *w, uint64_t seed)
{
	static const char *const lines[NSITES] = { "import", "churn", "leak", "cache", "rare" };
	struct timespec t0 = { 0 };

	memset(w, 0, sizeof(*w));
	w->rng = sample_seed_of(seed, 1);
	w->left = sample_exp_draw(MEAN, sample_xorshift(&w->rng));
	for (size_t i = 0; i < NR; i++)
		w->stacks[i].site = i < IMPORT_STACKS ? IMPORT :
				    i < IMPORT_STACKS + CHURN_STACKS ? CHURN :
				    i < IMPORT_STACKS + CHURN_STACKS + LEAK_STACKS ? LEAK :
				    i < NR - 1 ? CACHE : RARE;
	for (int s = 0; s < NSITES; s++)
		w->frames[s] = (struct report_frame){ .language = FRAME_PYTHON, .file = "train.py",
						      .function = (char *)lines[s], .line = 10 + s };
	w->in = insight__new(false);
	if (w->in)
		insight__start(w->in, 0, &t0);
	return w->in != NULL;
}

static void sim_end(struct sim *w)
{
	free_report(w);
	aggregate__free(w->agg);
	insight__free(w->in);
}

/* The run to its end, a report each second; the rare line's first sample's second. */
static bool run_for(struct sim *w, bool leak, int *rare_at, int seconds)
{
	*rare_at = 0;
	for (int t = 1; t <= seconds; t++) {
		second(w, t, leak);
		if (!*rare_at && w->stacks[NR - 1].samples)
			*rare_at = t;
		if (report(w, t) || fill(w))
			return false;
	}
	return true;
}

static bool run(struct sim *w, bool leak, int *rare_at)
{
	return run_for(w, leak, rare_at, SECONDS);
}

static enum site site_of(const struct sim *w, size_t i)
{
	return w->stacks[w->agg->sites[i]->stack_id - 1].site;
}

/*
 * The leak is found at its line: start-up ends with the import (the loop's
 * first interval apart), though its stacks go on being sampled for the
 * first time all run long; the leak's line grows beyond the noise of its
 * twelve stacks together, where each alone is within its own; the cache,
 * the import and the rare line do not grow.
 */
TEST(sampled_leak_spread_over_stacks_is_found_at_its_site)
{
	double var = 0;
	uint64_t bytes = 0, samples = 0;
	size_t growing = 0, alone = 0;
	struct sim *w = calloc(1, sizeof(*w));
	int rare_at;

	ASSERT(w && sim_start(w, 1) && run(w, true, &rare_at));
	/*
	 * The rare line's one sample came mid-loop, and started no start-up: ~8,200
	 * allocations estimated from one sample, against the loop's 480 held a
	 * second, had it counted whole.
	 */
	ASSERT(rare_at == RARE_AT && w->stacks[NR - 1].samples == 1);
	ASSERT(w->r->analysis->memory.startup.end_s <= IMPORT_END + 2);
	ASSERT(!w->r->analysis->memory.startup.ongoing);
	for (size_t i = 0; i < w->r->nr_stacks; i++) {
		const struct report_stack *s = &w->r->stacks[i];

		if (s->growth.trend == TREND_GROWING)
			ASSERT(site_of(w, i) == LEAK && s->growth.rank && s->growth.score > 0.5);
		if (site_of(w, i) != LEAK)
			continue;
		growing += s->growth.trend == TREND_GROWING;
		/* Its own growth within its own noise, as the slope's line measures it. */
		alone += s->growth.slope * (SECONDS - IMPORT_END - 2) < 1.96 * sqrt(s->var);
		bytes += s->bytes;
		samples += s->samples;
		var += s->var;
	}
	ASSERT(growing >= LEAK_STACKS / 2 && w->r->analysis->nr_growing == growing);
	/* Most of its stacks alone are within their noise: judged by stack, no leak. */
	ASSERT(alone >= LEAK_STACKS / 2);
	/*
	 * Not luck: the truth, grown since start-up, is beyond twice the site's
	 * margin, and the estimate is within 3 standard deviations of it.
	 */
	ASSERT(w->leak_truth * (SECONDS - IMPORT_END - 2) / (SECONDS - IMPORT_END) >
	       2 * 1.96 * sqrt(var));
	ASSERT(fabs((double)bytes - (double)w->leak_truth) < 3 * sqrt(var) && samples > 20);
	sim_end(w);
	free(w);
	return true;
}

/* The same program without the leak (its blocks freed): nothing grows, for three seeds. */
TEST(sampled_no_leak_no_growing_site)
{
	struct sim *w = calloc(1, sizeof(*w));
	int rare_at;

	ASSERT(w);
	for (uint64_t seed = 1; seed <= 3; seed++) {
		ASSERT(sim_start(w, seed) && run(w, false, &rare_at));
		ASSERT(w->r->analysis->nr_growing == 0);
		ASSERT(w->r->analysis->memory.startup.end_s <= IMPORT_END + 2);
		sim_end(w);
	}
	free(w);
	return true;
}

/*
 * The least growth the report says sampling can tell from noise
 * (report_incomplete__least_growth: z² x BYTES): a site that grows from
 * nothing by that much in 64-byte blocks is judged (its estimate beyond
 * 1.96 standard deviations of itself) about half the time, by a quarter of
 * it almost never, by four times it almost always. 400 runs each: the
 * binomial's standard deviation is 2.5% at most.
 */
static double judged_share(uint64_t growth)
{
	int judged = 0, runs = 400;

	for (int r = 0; r < runs; r++) {
		struct sim_stack s = { 0 };
		struct sim *w = calloc(1, sizeof(*w));

		if (!w)
			return -1;
		w->rng = sample_seed_of(7, r);
		w->left = sample_exp_draw(MEAN, sample_xorshift(&w->rng));
		allocate(w, &s, growth / 64, 64, true);
		judged += (double)s.bytes >
			  REPORT_Z95 * sqrt((double)s.var * (double)(1ULL << MEMLEAK_VAR_SHIFT));
		free(w);
	}
	return (double)judged / runs;
}

TEST(sampled_least_growth_is_the_noise_floor)
{
	const struct report_sampling s = { .by_bytes = true, .mean = MEAN };
	double least = report_incomplete__least_growth(&s), p;

	ASSERT(fabs(least - 3.8415 * MEAN) < 0.001 * MEAN);	/* ~1.9 MiB */
	ASSERT((p = judged_share((uint64_t)(least / 4))) >= 0 && p < 0.05);
	ASSERT((p = judged_share((uint64_t)least)) > 0.3 && p < 0.75);
	ASSERT(judged_share((uint64_t)(least * 4)) > 0.95);
	return true;
}

/*
 * A long run: past HISTORY_POINTS reports the kept points are thinned (a
 * site's sum is made of its stacks' thinned points, some stacks first seen
 * at a report that is not kept); the leak is still its site's alone.
 */
TEST(sampled_leak_found_after_thinning)
{
	struct sim *w = calloc(1, sizeof(*w));
	size_t growing = 0;
	int rare_at;

	ASSERT(w && sim_start(w, 2) && run_for(w, true, &rare_at, 3 * HISTORY_POINTS / 2));
	for (size_t i = 0; i < w->r->nr_stacks; i++) {
		if (w->r->stacks[i].growth.trend != TREND_GROWING)
			continue;
		ASSERT(site_of(w, i) == LEAK);
		growing++;
	}
	ASSERT(growing >= LEAK_STACKS / 2 && w->r->analysis->memory.startup.end_s <= IMPORT_END + 2);
	sim_end(w);
	free(w);
	return true;
}
