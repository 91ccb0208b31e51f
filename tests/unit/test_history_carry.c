// SPDX-License-Identifier: GPL-2.0
/*
 * history_merge.c: a history fed readings carried over (only the changed
 * sites touched, the others "the same as before" implicitly) says exactly
 * what one fed the same figures as snapshots of their own says, report
 * after report: each site's growth, the churn rates, start-up, the
 * interval's allocations, through the thinning of the points, a report
 * at the same time as the last, the target's exit, sites that grow, stop,
 * are freed, come back, and new ones.
 */
#include <stdlib.h>
#include <string.h>
#include "analyze/history.h"
#include "analyze/history_internal.h"
#include "analyze/history_sites.h"
#include "model/retired.h"
#include "unit.h"

#define MAX_SITES 240
#define REPORTS 150	/* past 64 and 128 points: two thinnings */

struct feed {
	struct snap_site sites[MAX_SITES];
	size_t nr;
	uint32_t changed[MAX_SITES];
	size_t nr_changed;
	unsigned seed;
};

/* What site i does at each report: its kind, by its index. */
static void step(struct feed *f, size_t i, unsigned report)
{
	struct site_stats *s = &f->sites[i].stats;
	unsigned r = (unsigned)rand_r(&f->seed);
	uint64_t n = 0, freed = 0;

	switch (i % 5) {
	case 0:	/* leaks one block a report, for a while, then stops: some just before the end */
		n = report < 40 + i % 50 || (i % 10 == 0 && report < REPORTS - 1 - (i / 10) % 3);
		break;
	case 1:	/* now and then allocates, frees all it holds */
		n = r % 7 == 0 ? 1 + r % 3 : 0;
		freed = r % 11 == 0 ? s->outstanding_allocs : 0;
		break;
	case 2:	/* busy early, idle after */
		n = report < 20 ? 2 : 0;
		freed = report == 30 + i % 20 ? s->outstanding_allocs : 0;
		break;
	case 3:	/* freed, then back */
		n = report % 37 < 5;
		freed = report % 37 == 20 ? s->outstanding_allocs : 0;
		break;
	default:	/* never changes after it came */
		break;
	}
	s->total_allocs += n;
	s->total_bytes += n * (64 + 16 * (i % 4));
	s->outstanding_allocs += n - freed;
	s->outstanding_bytes = s->outstanding_allocs * (64 + 16 * (i % 4));
}

/* The next reading: sites change, new ones come; the changed ones listed. */
static void next_reading(struct feed *f, unsigned report)
{
	struct site_stats was;

	f->nr_changed = 0;
	for (size_t i = 0; i < f->nr; i++) {
		was = f->sites[i].stats;
		step(f, i, report);
		if (memcmp(&was, &f->sites[i].stats, sizeof(was)))
			f->changed[f->nr_changed++] = (uint32_t)i;
	}
	for (unsigned n = report < 100 ? 2 + report % 3 : 0; n && f->nr < MAX_SITES; n--) {
		size_t i = f->nr++;

		/* Keys not in the order of the indexes; every kind of site among them. */
		f->sites[i] = (struct snap_site){ .stack_id = 1 + (i * 7919) % 100003,
						  .api = API_MALLOC };
		f->sites[i].stats.total_allocs = 1;
		f->sites[i].stats.total_bytes = 64;
		f->sites[i].stats.outstanding_allocs = i % 5 != 1;
		f->sites[i].stats.outstanding_bytes = 64 * (i % 5 != 1);
		f->changed[f->nr_changed++] = (uint32_t)i;
	}
}

static void totals_of(const struct feed *f, struct report_totals *t)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < f->nr; i++) {
		t->outstanding_bytes += f->sites[i].stats.outstanding_bytes;
		t->outstanding_allocs += f->sites[i].stats.outstanding_allocs;
		t->allocs += f->sites[i].stats.total_allocs;
		t->kind_bytes[KIND_HEAP] += f->sites[i].stats.outstanding_bytes;
	}
	t->frees = t->allocs - t->outstanding_allocs;
}

static bool same_growth(const struct history *a, const struct history *b, size_t i, double age)
{
	struct report_growth x, y;

	history__growth_site(a, i, age, &x);
	history__growth_site(b, i, age, &y);
	return !memcmp(&x, &y, sizeof(x)) &&
	       history_sites__interval_allocs(a, i) == history_sites__interval_allocs(b, i);
}

/* Site i's stack, as of the last report, field by field: what any reading of it sees. */
static bool same_stack(const struct history *a, const struct history *b, size_t i)
{
	uint64_t va[HISTORY_POINTS], vb[HISTORY_POINTS];
	struct hstack ta, tb;
	const struct hstack *x = history_merge__current(a, &a->stacks[a->of_site[i]], &ta, va);
	const struct hstack *y = history_merge__current(b, &b->stacks[b->of_site[i]], &tb, vb);

	if (x->stack_id != y->stack_id || x->first != y->first || x->grew != y->grew ||
	    x->shrank != y->shrank || x->intervals != y->intervals || x->idle != y->idle ||
	    x->bytes != y->bytes || x->blocks != y->blocks || x->var != y->var ||
	    x->iv_allocs != y->iv_allocs || x->total_allocs != y->total_allocs ||
	    x->total_bytes != y->total_bytes || x->last_allocs_per_s != y->last_allocs_per_s ||
	    x->last_bytes_per_s != y->last_bytes_per_s || x->t_zero != y->t_zero)
		return false;
	for (uint32_t j = x->first; x->first != NONE && j < a->npoints; j++)
		if (va[j] != vb[j])
			return false;
	return true;
}

static bool same_churn(const struct history *a, const struct history *b,
		       const struct snapshot *snap)
{
	const struct snap_site *sa[20], *sb[20];
	struct report_rate ra[20], rb[20];
	int na = history__churn(a, snap, sa, ra, 20), nb = history__churn(b, snap, sb, rb, 20);

	return na == nb && !memcmp(sa, sb, na * sizeof(*sa)) && !memcmp(ra, rb, na * sizeof(*ra));
}

static bool same_startup(const struct history *a, const struct history *b)
{
	struct report_growth x, y;

	history__live_growth(a, &x);
	history__live_growth(b, &y);
	return !memcmp(history__startup(a), history__startup(b), sizeof(struct report_startup)) &&
	       !memcmp(&x, &y, sizeof(x));
}

TEST(history_carried_readings_say_what_whole_ones_do)
{
	struct feed *f = calloc(1, sizeof(*f));
	struct history *carried = history__new(), *whole = history__new();
	struct report_totals t;
	bool ok = f && carried && whole;
	double time_s = 0;

	if (f)
		f->seed = 27;
	for (unsigned r = 1; ok && r <= REPORTS; r++) {
		struct snapshot plain, snap;

		next_reading(f, r);
		totals_of(f, &t);
		time_s += r == 90 ? 0 : 1.5;	/* one report at the time of the last */
		snap = (struct snapshot){ .sites = f->sites, .nr = f->nr, .reading = r,
					  .follows = r - 1, .changed = f->changed,
					  .nr_changed = f->nr_changed };
		plain = (struct snapshot){ .sites = f->sites, .nr = f->nr };
		if (r == REPORTS - 3) {	/* the target gone: idle stacks judged on the points before */
			history__exited(carried);
			history__exited(whole);
		}
		ok = !history__add(carried, time_s, &snap, &t, NULL) &&
		     !history__add(whole, time_s, &plain, &t, NULL);
		/* As insight does for the sites a report lists, but for every other one only. */
		for (size_t i = 0; i < f->nr; i += 2)
			if (f->sites[i].stats.outstanding_allocs)
				history__catch_up_site(carried, i);
		for (size_t i = 0; ok && i < f->nr; i++)
			ok = same_growth(carried, whole, i, i % 3 ? -1 : 0.5 * (double)i) &&
			     same_stack(carried, whole, i);
		ok = ok && same_churn(carried, whole, &plain) && same_startup(carried, whole);
		if (!ok)
			fprintf(stderr, "  report %u (%zu sites, %zu changed) differs\n", r, f->nr,
				f->nr_changed);
	}
	history__free(carried);
	history__free(whole);
	free(f);
	ASSERT(ok);
	return true;
}

/*
 * Folds between readings (history_fold__drop, snapshot.moved): every few
 * reports the sites that hold nothing leave the reading, some folded out
 * of the history too (reclaim__fold), some not (a trim of the retired
 * store); the others move down in their order. A history fed the moved
 * readings carried over says what one fed whole snapshots says, and takes
 * the carry (it merges every site only at the first report).
 */
static void fold_feed(struct feed *f, struct history *a, struct history *b, uint32_t *moved,
		      bool fold)
{
	uint64_t keys[MAX_SITES];
	size_t n = 0, nr_keys = 0;

	for (size_t i = 0; i < f->nr; i++) {
		const struct snap_site *s = &f->sites[i];

		if (!s->stats.outstanding_allocs && s->stats.total_allocs && i % 3 != 1) {
			moved[i] = SNAP_GONE;
			keys[nr_keys++] = retired__site_key(s->stack_id, s->api);
			continue;
		}
		moved[i] = (uint32_t)n;
		f->sites[n++] = *s;
	}
	f->nr = n;
	if (fold) {
		history_fold__drop(a, keys, nr_keys);
		history_fold__drop(b, keys, nr_keys);
	}
}

TEST(history_carried_across_folds)
{
	struct feed *f = calloc(1, sizeof(*f));
	struct history *carried = history__new(), *whole = history__new();
	uint32_t moved[MAX_SITES];
	size_t nr_moved = 0, made = 0;
	struct report_totals t;
	bool ok = f && carried && whole;
	double time_s = 0;

	if (f)
		f->seed = 31;
	for (unsigned r = 1; ok && r <= 120; r++) {
		struct snapshot plain, snap;
		size_t before = f ? f->nr : 0;

		next_reading(f, r);
		/* Keys of their own: indexes are used again after a fold. */
		for (size_t i = before; i < f->nr; i++)
			f->sites[i].stack_id = 200003 + made++;
		totals_of(f, &t);
		time_s += 1.5;
		snap = (struct snapshot){ .sites = f->sites, .nr = f->nr, .reading = r,
					  .follows = r - 1, .changed = f->changed,
					  .nr_changed = f->nr_changed,
					  .moved = nr_moved ? moved : NULL, .nr_moved = nr_moved };
		plain = (struct snapshot){ .sites = f->sites, .nr = f->nr };
		ok = !history__add(carried, time_s, &snap, &t, NULL) &&
		     !history__add(whole, time_s, &plain, &t, NULL);
		for (size_t i = 0; ok && i < f->nr; i++)
			ok = same_growth(carried, whole, i, i % 3 ? -1 : 0.5 * (double)i) &&
			     same_stack(carried, whole, i);
		ok = ok && same_churn(carried, whole, &plain) && same_startup(carried, whole);
		if (!ok)
			fprintf(stderr, "  report %u (%zu sites, %zu moved) differs\n", r, f->nr, nr_moved);
		nr_moved = 0;
		if (r % 6 == 0) {	/* a fold, or (every other) a trim */
			nr_moved = f->nr;
			fold_feed(f, carried, whole, moved, r % 12 == 0);
		}
	}
	ok = ok && carried->merged_whole == 1 && whole->merged_whole == 120 && carried->nr < made;
	history__free(carried);
	history__free(whole);
	free(f);
	ASSERT(ok);
	return true;
}

/*
 * A report folds before it is built (run/reports.c): after the fold and
 * before the next merge, each site not folded still finds its stack, and
 * its growth is what it was before the fold; a folded one has none.
 * Before, the fold left no site a stack until the next merge, and a
 * report built after it would have said "unknown" of every stack.
 */
TEST(history_growth_holds_between_a_fold_and_the_merge)
{
	struct feed *f = calloc(1, sizeof(*f));
	struct history *h = history__new();
	struct report_growth *was = calloc(MAX_SITES, sizeof(*was)), now;
	uint64_t keys[MAX_SITES];
	bool folded[MAX_SITES] = { 0 };
	size_t nr_keys = 0, same = 0;
	struct report_totals t;
	bool ok = f && h && was;

	if (f)
		f->seed = 37;
	for (unsigned r = 1; ok && r <= 60; r++) {
		struct snapshot snap;

		next_reading(f, r);
		totals_of(f, &t);
		snap = (struct snapshot){ .sites = f->sites, .nr = f->nr, .reading = r };
		ok = !history__add(h, 1.5 * r, &snap, &t, NULL);
	}
	for (size_t i = 0; ok && i < f->nr; i++) {
		const struct snap_site *s = &f->sites[i];

		history__growth_site(h, i, 2.0, &was[i]);
		if (!s->stats.outstanding_allocs && s->stats.total_allocs && i % 2) {
			keys[nr_keys++] = retired__site_key(s->stack_id, s->api);
			folded[i] = true;
		}
	}
	ok = ok && nr_keys && !history_fold__drop(h, keys, nr_keys);
	for (size_t i = 0; ok && i < f->nr; i++) {
		history__growth_site(h, i, 2.0, &now);
		if (folded[i]) {
			ok = now.trend == TREND_UNKNOWN;
			continue;
		}
		ok = !memcmp(&now, &was[i], sizeof(now));
		same += was[i].trend != TREND_UNKNOWN;	/* some have too few intervals yet */
	}
	if (!ok)
		fprintf(stderr, "  %zu sites, %zu folded: a site's growth changed with the fold\n",
			f ? f->nr : 0, nr_keys);
	history__free(h);
	free(was);
	free(f);
	ASSERT(ok && same);
	return true;
}
