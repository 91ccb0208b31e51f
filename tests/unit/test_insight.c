// SPDX-License-Identifier: GPL-2.0
/*
 * insight.c driven the way main.c and tracer.c drive it, with hand-made
 * figures: the live samples of the ticks, a snapshot per report, and a
 * stack builder standing in for the symbolizer.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include "analyze/history.h"
#include "analyze/insight.h"
#include "analyze/insight_internal.h"
#include "model/retired.h"
#include "util/idmap.h"
#include "unit.h"

enum { LEAK = 1, CACHE, CHURN, CROWD = 100 };
#define CROWD_NR (INSIGHT_PEAK + 2)	/* more stacks at the peak than it lists */

struct run {
	struct insight *in;
	struct timespec start;
	struct snap_site sites[3];
	struct snapshot snap;
	struct aggregate *agg;
	struct report *r;
};

/* What the stand-in symbolizer was asked for: the churn sites, then the peak's. */
struct builder {
	unsigned calls;
	unsigned fail_at;	/* this call fails; 0: none does */
	uint64_t ids[2][CROWD_NR];
	size_t nr[2];
};

static int build_stacks(const struct aggregate *sites, void *ctx, struct report_stack **out,
			size_t *nr)
{
	struct builder *b = ctx;
	unsigned call = b->calls++;

	if (b->calls == b->fail_at)
		return -EIO;
	*out = calloc(sites->nr ?: 1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (size_t i = 0; i < sites->nr; i++) {
		const struct snap_site *s = sites->sites[i];

		(*out)[i] = (struct report_stack){ .api = s->api,
						   .bytes = s->stats.outstanding_bytes,
						   .allocs = s->stats.outstanding_allocs,
						   .total_allocs = s->stats.total_allocs };
		if (call < 2 && i < CROWD_NR)
			b->ids[call][i] = s->stack_id;
	}
	if (call < 2)
		b->nr[call] = sites->nr;
	*nr = sites->nr;
	return 0;
}

static struct timespec at(const struct run *w, double s)
{
	uint64_t ns = (uint64_t)w->start.tv_sec * 1000000000ull + w->start.tv_nsec +
		      (uint64_t)(s * 1e9);

	return (struct timespec){ .tv_sec = ns / 1000000000ull, .tv_nsec = ns % 1000000000ull };
}

static void start(struct run *w, pid_t pid)
{
	memset(w, 0, sizeof(*w));
	clock_gettime(CLOCK_MONOTONIC, &w->start);
	w->in = insight__new(false);
	if (w->in)
		insight__start(w->in, pid, &w->start);
	w->sites[0] = (struct snap_site){ .stack_id = LEAK, .api = API_MALLOC };
	w->sites[1] = (struct snap_site){ .stack_id = CACHE, .api = API_MALLOC };
	w->sites[2] = (struct snap_site){ .stack_id = CHURN, .api = API_CALLOC };
}

static void finish(struct run *w)
{
	report__free(w->r);
	aggregate__free(w->agg);
	insight__free(w->in);
}

/*
 * Report k, k seconds in: the leak holds k KiB more each time (4 blocks),
 * the cache 5 KiB in 50 from the start, the churn site frees all of its 1000
 * calls a second.
 */
static int report_at(struct run *w, unsigned k, pid_t pid)
{
	struct timespec t = at(w, k);
	struct site_stats *leak = &w->sites[0].stats, *churn = &w->sites[2].stats;

	leak->outstanding_bytes = leak->total_bytes = k * 1024ull;
	leak->outstanding_allocs = leak->total_allocs = 4 * k;
	w->sites[1].stats = (struct site_stats){ .outstanding_bytes = 5120, .outstanding_allocs = 50,
						 .total_bytes = 5120, .total_allocs = 50 };
	churn->total_allocs = k * 1000ull;
	churn->total_bytes = k * 64000ull;
	w->snap = (struct snapshot){ .sites = w->sites, .nr = 3,
				     .time_ns = t.tv_sec * 1000000000ull + t.tv_nsec };
	aggregate__free(w->agg);
	return aggregate__build(&w->snap, &w->agg) ?: insight__add(w->in, pid, &w->snap, w->agg);
}

/* The report of the last snapshot, its stacks frameless, and its analysis. */
static int fill(struct run *w, struct builder *b)
{
	report__free(w->r);
	w->r = calloc(1, sizeof(*w->r));
	if (!w->r)
		return -ENOMEM;
	w->r->stacks = calloc(w->agg->nr ?: 1, sizeof(*w->r->stacks));
	if (!w->r->stacks)
		return -ENOMEM;
	w->r->nr_stacks = w->agg->nr;
	return insight__fill(w->in, &w->snap, w->agg, build_stacks, b, w->r);
}

/* The crowd at t_s: site i holds (i + 1) * scale bytes in i + 1 blocks. */
static void tick(struct run *w, double t_s, uint64_t scale)
{
	struct snap_live live[CROWD_NR];
	struct timespec t = at(w, t_s);
	uint64_t bytes = 0;

	for (size_t i = 0; i < CROWD_NR; i++) {
		live[i] = (struct snap_live){ .stack_id = CROWD + i, .api = API_MALLOC,
					      .bytes = (i + 1) * scale, .allocs = i + 1 };
		bytes += live[i].bytes;
	}
	insight__tick(w->in, &t, bytes);
	/* As reports.c does: the sites are scanned only when the heap passed the peak. */
	if (insight__peak_due(w->in, bytes))
		insight__sample(w->in, &t, live, CROWD_NR);
}

/* Leak, cache and churn told apart; the peak from the best tick, its biggest stacks listed. */
TEST(insight_growth_churn_and_peak)
{
	struct builder b = { 0 };
	struct report_analysis *a;
	struct run w;

	start(&w, 0);	/* no target to read: the verdict stays unknown */
	ASSERT(w.in);
	ASSERT(!insight__due(w.in));	/* the timer is 0.1 s away */
	ASSERT(insight__peak_due(w.in, 1));	/* no sample yet */
	tick(&w, 0.5, 1000);
	tick(&w, 0.7, 10);
	/* Another scan is due only past the sampled peak by a 64th. */
	ASSERT(!insight__peak_due(w.in, 1000ull * CROWD_NR * (CROWD_NR + 1) / 2 * 65 / 64));
	ASSERT(insight__peak_due(w.in, 1000ull * CROWD_NR * (CROWD_NR + 1) / 2 * 65 / 64 + 1));
	for (unsigned k = 1; k <= 4; k++)
		ASSERT(!report_at(&w, k, 0));
	ASSERT(!fill(&w, &b));
	a = w.r->analysis;
	/* In agg's order the cache (5 KiB) comes before the leak (4 KiB). */
	ASSERT(w.r->stacks[1].growth.trend == TREND_GROWING && w.r->stacks[1].growth.rank == 1);
	ASSERT(w.r->stacks[0].growth.trend == TREND_STABLE && !w.r->stacks[0].growth.rank);
	ASSERT(a->nr_growing == 1 && a->growing[0] == 1);
	/* Churn: most calls first (1000 a second, then the cache's 50, the leak's 16). */
	ASSERT(b.calls == 2 && b.nr[0] == 3 && a->nr_churn == 3);
	ASSERT(b.ids[0][0] == CHURN && b.ids[0][1] == CACHE && b.ids[0][2] == LEAK);
	ASSERT(a->churn[0].rate.allocs_per_s == 1000 && a->churn[0].total_allocs == 4000);
	/* Peak: at 0.5 s, the biggest INSIGHT_PEAK of the crowd, the two smallest left over. */
	ASSERT(a->peak.known && a->peak.t_s == 0.5 && a->peak.sample_s == INSIGHT_TICK_MS / 1000.0);
	ASSERT_EQ_U64(a->peak.bytes, 1000ull * CROWD_NR * (CROWD_NR + 1) / 2);
	ASSERT_EQ_U64(a->peak.other_bytes, 1000 + 2000);
	ASSERT_EQ_U64(a->peak.other_allocs, 1 + 2);
	ASSERT(b.nr[1] == INSIGHT_PEAK && a->peak.nr_stacks == INSIGHT_PEAK);
	ASSERT(b.ids[1][0] == CROWD + CROWD_NR - 1 && b.ids[1][INSIGHT_PEAK - 1] == CROWD + 2);
	ASSERT_EQ_U64(a->peak.stacks[0].bytes, 1000ull * CROWD_NR);
	ASSERT_EQ_U64(a->peak.stacks[0].allocs, CROWD_NR);
	ASSERT(a->nr_samples == 4 && a->samples[3].t_s == 4 && !a->samples[3].mem);
	ASSERT(a->memory.verdict == VERDICT_UNKNOWN);
	finish(&w);
	return true;
}

/* An exec forgets the stacks and the peak: the next report's snapshot is the peak. */
TEST(insight_reset_forgets_the_peak)
{
	struct builder b = { 0 };
	struct report_peak *p;
	struct run w;

	start(&w, 0);
	ASSERT(w.in);
	tick(&w, 0.5, 1000);
	insight__reset(w.in, 0);
	ASSERT(!report_at(&w, 1, 0) && !fill(&w, &b));
	p = &w.r->analysis->peak;
	ASSERT(p->known && p->t_s == 1 && p->bytes == 1024 + 5120);
	ASSERT(b.nr[1] == 2 && b.ids[1][0] == CACHE && b.ids[1][1] == LEAK);
	finish(&w);
	return true;
}

/* The builder's error is insight__fill's; what was filled goes with the report. */
TEST(insight_stack_builder_error)
{
	struct builder b = { .fail_at = 2 };	/* the peak's stacks */
	struct run w;

	start(&w, 0);
	ASSERT(w.in);
	tick(&w, 0.5, 1000);
	ASSERT(!report_at(&w, 1, 0));
	ASSERT(fill(&w, &b) == -EIO);
	ASSERT(w.r->analysis && w.r->analysis->nr_churn == 3 && !w.r->analysis->peak.stacks);
	finish(&w);	/* under AddressSanitizer: nothing leaks */
	return true;
}

/*
 * The target's memory: read at each report while it lives, and every
 * INSIGHT_MEM_TICKS ticks with the tick's live bytes; once it is gone, the
 * last reading stands, with its time. This process stands in for the target.
 */
TEST(insight_memory_of_a_target_that_exited)
{
	struct builder b = { 0 };
	const struct report_sample *s;
	struct run w;

	start(&w, getpid());
	ASSERT(w.in);
	tick(&w, 0.1, 1);	/* the first tick reads the memory */
	for (unsigned k = 2; k <= INSIGHT_MEM_TICKS; k++)
		tick(&w, k / 10.0, 2);	/* the next ones do not */
	ASSERT(!report_at(&w, 1, 0));
	ASSERT(!report_at(&w, 2, getpid()));
	ASSERT(!report_at(&w, 3, 0));
	ASSERT(!fill(&w, &b));
	s = w.r->analysis->samples;
	ASSERT(w.r->analysis->nr_samples == 3);
	ASSERT(s[0].mem && s[0].mem_t_s == 0.1 && s[0].rss);
	ASSERT_EQ_U64(s[0].mem_live, CROWD_NR * (CROWD_NR + 1) / 2);
	ASSERT(s[1].mem && s[1].mem_t_s == 2 && s[1].mem_live == 2048 + 5120);
	ASSERT(s[2].mem && s[2].mem_t_s == 2 && s[2].mem_live == 2048 + 5120);
	finish(&w);
	return true;
}

/* The peak's stacks as built: the marks (nr_ips) of the sites they were copied from. */
static uint32_t peak_marks[INSIGHT_PEAK];
static size_t nr_peak_marks;

static int mark_stacks(const struct aggregate *sites, void *ctx, struct report_stack **out,
		       size_t *nr)
{
	*out = calloc(sites->nr ?: 1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (size_t i = 0; i < sites->nr; i++)
		(*out)[i].bytes = sites->sites[i]->stats.outstanding_bytes;
	for (size_t i = 0; i < sites->nr && i < INSIGHT_PEAK; i++)
		peak_marks[i] = sites->sites[i]->nr_ips;
	nr_peak_marks = sites->nr;
	*nr = sites->nr;
	return 0;
}

/*
 * The peak's stacks are its sites of the report's snapshot (their stacks),
 * with the sample's figures: found by a pass over the snapshot, or through
 * a carried reading's index by key, alike.
 */
TEST(insight_peak_sites_by_key)
{
	struct snap_site sites[CROWD_NR];
	struct idmap index = { 0 };

	for (int by_key = 0; by_key < 2; by_key++) {
		struct run w;
		struct report_totals t = { 0 };

		start(&w, 0);
		ASSERT(w.in);
		tick(&w, 0.5, 1000);
		/* The snapshot holds the crowd in another order, each marked. */
		for (size_t i = 0; i < CROWD_NR; i++) {
			size_t at = (i * 7) % CROWD_NR;

			sites[at] = (struct snap_site){ .stack_id = CROWD + i, .api = API_MALLOC,
							.nr_ips = 100 + (uint32_t)i };
			sites[at].stats.outstanding_bytes = 1;
			sites[at].stats.outstanding_allocs = 1;
			t.outstanding_bytes++;
			ASSERT(!idmap__put(&index, retired__site_key(CROWD + i, API_MALLOC), at));
		}
		w.snap = (struct snapshot){ .sites = sites, .nr = CROWD_NR, .time_ns = 1000000000,
					    .by_key = by_key ? &index : NULL };
		ASSERT(!aggregate__build(&w.snap, &w.agg));
		ASSERT(!insight__add(w.in, 0, &w.snap, w.agg));
		w.r = calloc(1, sizeof(*w.r));
		ASSERT(w.r);
		w.r->stacks = calloc(w.agg->nr, sizeof(*w.r->stacks));
		w.r->nr_stacks = w.agg->nr;
		nr_peak_marks = 0;
		ASSERT(!insight__fill(w.in, &w.snap, w.agg, mark_stacks, NULL, w.r));
		ASSERT_EQ_U64(nr_peak_marks, INSIGHT_PEAK);
		/* The biggest first: crowd site CROWD_NR - 1, marked 100 + CROWD_NR - 1. */
		for (size_t k = 0; k < INSIGHT_PEAK; k++)
			ASSERT_EQ_U64(peak_marks[k], 100 + CROWD_NR - 1 - k);
		ASSERT_EQ_U64(w.r->analysis->peak.stacks[0].bytes, 1000ull * CROWD_NR);
		finish(&w);
	}
	idmap__free(&index);
	return true;
}

/*
 * The growth is read in the order of the snapshot's sites (insight.c's
 * growth_in_order), the report's stacks in the order of their bytes: each
 * stack gets its own site's growth, as the history tells it of that site
 * (its age, its intervals, its trend), report after report, fitted or not.
 */
#define ORDER_SITES 300

TEST(insight_growth_of_each_stack_its_own)
{
	static struct snap_site sites[ORDER_SITES];
	static uint32_t changed[ORDER_SITES];
	struct insight *in = insight__new(false);
	struct timespec t0;
	unsigned checked = 0;

	ASSERT(in);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	insight__start(in, 0, &t0);
	for (size_t i = 0; i < ORDER_SITES; i++)
		sites[i] = (struct snap_site){ .stack_id = 1000 + i, .api = API_MALLOC };
	for (unsigned k = 1; k <= 12; k++) {
		uint64_t now = (uint64_t)t0.tv_sec * 1000000000ull + t0.tv_nsec + k * 1000000000ull;
		struct snapshot snap = { .sites = sites, .nr = ORDER_SITES, .time_ns = now,
					 .reading = k, .follows = k - 1, .changed = changed };
		struct aggregate *agg;
		struct report *r = calloc(1, sizeof(*r));

		for (size_t i = 0; i < ORDER_SITES; i++) {
			struct site_stats *s = &sites[i].stats;
			/* Some from the start, some later; some grow, some hold, some go. */
			uint64_t b = k < 1 + i % 5 ? 0 : i % 3 == 0 ? 64 * k * (i % 7 + 1) :
				     i % 3 == 1 ? 4096 + 8 * i : (k + i) % 4 ? 100 + i : 0;

			if (k == 1 || b != s->outstanding_bytes)
				changed[snap.nr_changed++] = (uint32_t)i;
			s->total_bytes += b > s->outstanding_bytes ? b - s->outstanding_bytes : 0;
			s->total_allocs += b != s->outstanding_bytes;
			s->outstanding_bytes = b;
			s->outstanding_allocs = b ? 1 + i % 4 : 0;
			sites[i].oldest_ns = b ? now - (i + 1) * 1000000ull : 0;
		}
		ASSERT(r && !aggregate__build(&snap, &agg));
		ASSERT(!insight__add(in, 0, &snap, agg));
		r->stacks = calloc(agg->nr ?: 1, sizeof(*r->stacks));
		r->nr_stacks = agg->nr;
		ASSERT(r->stacks && !(k % 2 ? insight__fill : insight__fill_unfitted)(
					    in, &snap, agg, build_stacks, &(struct builder){ 0 }, r));
		for (size_t i = 0; i < agg->nr; i++) {
			size_t at = (size_t)(agg->sites[i] - sites);
			struct report_growth g = r->stacks[i].growth, want;

			(k % 2 ? history__growth_site : history__trend_site)(
				in->h, at, (double)(at + 1) / 1000, &want);
			ASSERT((g.rank != 0) == (g.trend == TREND_GROWING));
			g.rank = 0;
			ASSERT(!memcmp(&g, &want, sizeof(g)));
			checked++;
		}
		report__free(r);
		aggregate__free(agg);
	}
	ASSERT(checked > 2000);
	insight__free(in);
	return true;
}
