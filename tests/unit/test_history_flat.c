// SPDX-License-Identifier: GPL-2.0
/*
 * history.c's flat stacks: history__trend_site tells a stack whose points
 * all hold the same bytes stable without fitting its line, and says
 * everything else exactly as history__growth_site does, report after
 * report (through two thinnings): stacks flat from their first point,
 * flat after growing, growing, noisy, freed, and one too big for the
 * rounding bound. Where it says unfitted, the fit finds a stable line of
 * (next to) no slope.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/history.h"
#include "analyze/history_internal.h"
#include "unit.h"

#define SITES 60
#define REPORTS 150

/* Site i's bytes at report r, by its kind (i % 6). */
static uint64_t bytes_at(size_t i, unsigned r, unsigned *seed)
{
	switch (i % 6) {
	case 0:	/* the same from its first report on */
		return 4096 * (1 + i);
	case 1:	/* grows for a while, then holds */
		return 1000 * (r < 10 + i ? r : 10 + i);
	case 2:	/* grows throughout */
		return 512 * r + i;
	case 3:	/* noise */
		return 100000 + (uint64_t)(rand_r(seed) % 50000);
	case 4:	/* holds, is freed, comes back */
		return r % 40 < 30 ? 8192 : 0;
	default:	/* more than the rounding bound holds for: fitted always */
		return (1ull << 41) + i;
	}
}

TEST(history_flat_stacks_told_without_a_fit)
{
	static struct snap_site sites[SITES];
	static uint32_t changed[SITES];
	struct history *h = history__new();
	unsigned seed = 7, unfitted = 0, fitted = 0, flat_unread = 0;
	double t_s = 0;

	ASSERT(h);
	for (size_t i = 0; i < SITES; i++)
		sites[i] = (struct snap_site){ .stack_id = 100 + i, .api = API_MALLOC };
	for (unsigned r = 1; r <= REPORTS; r++) {
		struct report_totals t = { 0 };
		/* A reading carried over: the sites that did not change are left alone. */
		struct snapshot snap = { .sites = sites, .nr = SITES, .reading = r,
					 .follows = r - 1, .changed = changed };

		for (size_t i = 0; i < SITES; i++) {
			struct site_stats *s = &sites[i].stats;
			uint64_t b = bytes_at(i, r, &seed);

			if (r == 1 || b != s->outstanding_bytes)
				changed[snap.nr_changed++] = (uint32_t)i;

			s->total_allocs += b != s->outstanding_bytes;
			s->total_bytes += b > s->outstanding_bytes ? b - s->outstanding_bytes : 0;
			s->outstanding_bytes = b;
			s->outstanding_allocs = b ? 1 + b / 4096 : 0;
			t.outstanding_bytes += b;
			t.allocs += s->total_allocs;
		}
		t_s += r % 7 ? 1.0 : 2.5;
		ASSERT(!history__add(h, t_s, &snap, &t, NULL));
		for (size_t i = 0; i < SITES; i++) {
			struct report_growth x, y, z;
			/* Before its catch-up (as a report leaves most stacks): the same. */
			bool quick = history__flat_site(h, i, 1.5, &z);

			/* Some left for reports: their implicit points made explicit in copies. */
			if ((r + i) % 3 == 0)
				history__catch_up_site(h, i);
			history__trend_site(h, i, 1.5, &x);
			history__growth_site(h, i, 1.5, &y);
			ASSERT(!y.unfitted);
			ASSERT(!quick || (x.unfitted && !memcmp(&x, &z, sizeof(x))));
			flat_unread += quick;
			if (!x.unfitted) {
				ASSERT(!memcmp(&x, &y, sizeof(x)));
				fitted++;
				continue;
			}
			unfitted++;
			ASSERT(i % 6 != 2 && i % 6 != 3 && i % 6 != 5);
			ASSERT(x.trend == TREND_STABLE && y.trend == TREND_STABLE);
			ASSERT(x.slope == 0 && x.r2 == 0 && fabs(y.slope) < 1e-3);
			x.slope = y.slope;
			x.r2 = y.r2;
			x.unfitted = false;
			ASSERT(!memcmp(&x, &y, sizeof(x)));
		}
	}
	/* Both ways taken, many times each. */
	ASSERT(unfitted > 1000 && fitted > 1000 && flat_unread > 500);
	history__free(h);
	return true;
}

/*
 * history_flat.c: what history__flat_site keeps from report to report is
 * what it says anew. Two histories fed the same carried readings; one
 * keeps its flat stacks, the other is asked afresh each report (a new
 * epoch: nothing kept holds). Bursts of new stacks move start-up's end
 * (a flat stack has too few points after it for a while), the points are
 * thinned twice, and now and then a reading drops a site that holds
 * nothing, the others moving down (snapshot.moved).
 */
#define CARRY_SITES 96
#define BURST 8		/* new stacks at each burst, allocating most of the interval */

struct carry_feed {
	struct snap_site sites[CARRY_SITES + 4 * BURST];
	size_t nr;
	uint32_t changed[CARRY_SITES + 4 * BURST], moved[CARRY_SITES + 4 * BURST];
	size_t nr_changed, nr_moved;
	unsigned seed;
};

/* Site i's bytes at report r: flat from the start, flat after a change, noise, freed and back. */
static uint64_t carry_bytes(size_t i, unsigned r, unsigned *seed)
{
	switch (i % 4) {
	case 0:
		return 4096 * (1 + i);
	case 1:
		return r < 30 + i ? 1000 : 3000;
	case 2:
		return rand_r(seed) % 3 ? 2048 : 2048 + 16 * (rand_r(seed) % 4);
	default:
		return r % 45 < 35 ? 8192 : 0;
	}
}

/* Site k (holding nothing) leaves the reading, the others after it move down one. */
static void carry_drop(struct carry_feed *f, size_t k)
{
	f->nr_moved = f->nr;
	for (size_t i = 0; i < f->nr; i++)
		f->moved[i] = i < k ? (uint32_t)i : i == k ? SNAP_GONE : (uint32_t)(i - 1);
	memmove(&f->sites[k], &f->sites[k + 1], (f->nr - k - 1) * sizeof(f->sites[0]));
	f->nr--;
}

static void carry_set(struct carry_feed *f, size_t i, uint64_t b, uint64_t allocs, bool is_new)
{
	struct site_stats *s = &f->sites[i].stats;

	if (is_new || b != s->outstanding_bytes || allocs)
		f->changed[f->nr_changed++] = (uint32_t)i;
	s->total_allocs += allocs + (b != s->outstanding_bytes);
	s->total_bytes += b > s->outstanding_bytes ? b - s->outstanding_bytes : 0;
	s->outstanding_bytes = b;
	s->outstanding_allocs = b ? 1 + b / 4096 : 0;
}

/*
 * Bursts of new stacks: start-up ends at each, one at a report that moves
 * (each run another), so that one run thins the points when a flat stack
 * has just three after start-up.
 */
static bool carry_burst(unsigned r, unsigned moving)
{
	return r == 40 || r == moving || r == 100 || r == moving + 66;
}

/* Report r's reading: the sites' figures, a burst of new ones now and then. */
static void carry_step(struct carry_feed *f, unsigned r, unsigned moving, struct report_totals *t)
{
	f->nr_changed = 0;
	f->nr_moved = 0;
	if (r % 45 == 40 || r % 45 == 42) {	/* a site that holds nothing goes, if there is one */
		for (size_t k = 0; k < f->nr; k++)
			if (!f->sites[k].stats.outstanding_allocs && f->sites[k].stack_id % 4 == 3) {
				carry_drop(f, k);
				break;
			}
	}
	for (size_t i = 0; i < f->nr; i++) {
		size_t id = f->sites[i].stack_id - 100;

		carry_set(f, i, id < CARRY_SITES ? carry_bytes(id, r, &f->seed) : 512, 0, r == 1);
	}
	for (size_t b = 0; carry_burst(r, moving) && b < BURST; b++) {
		f->sites[f->nr] = (struct snap_site){ .stack_id = 100 + CARRY_SITES + f->nr * 7 + b,
						      .api = API_MALLOC };
		carry_set(f, f->nr++, 512, 5000, true);
	}
	*t = (struct report_totals){ 0 };
	for (size_t i = 0; i < f->nr; i++) {
		t->outstanding_bytes += f->sites[i].stats.outstanding_bytes;
		t->allocs += f->sites[i].stats.total_allocs;
	}
}

/* One run, the moving burst at report moving: counts into the figures. */
static bool carry_run(unsigned moving, unsigned *carried, unsigned *flat, unsigned *startups)
{
	static struct carry_feed f;
	struct history *kept = history__new(), *anew = history__new();
	double t_s = 0, end_s = 0;

	ASSERT(kept && anew);
	memset(&f, 0, sizeof(f));
	f.seed = 11;
	for (size_t i = 0; i < CARRY_SITES; i++)
		f.sites[i] = (struct snap_site){ .stack_id = 100 + i, .api = API_MALLOC };
	f.nr = CARRY_SITES;
	for (unsigned r = 1; r <= REPORTS; r++) {
		struct report_totals t;
		struct snapshot snap;

		carry_step(&f, r, moving, &t);
		snap = (struct snapshot){ .sites = f.sites, .nr = f.nr, .reading = r,
					  .follows = r - 1, .changed = f.changed,
					  .nr_changed = f.nr_changed,
					  .moved = f.nr_moved ? f.moved : NULL,
					  .nr_moved = f.nr_moved };
		t_s += r % 7 ? 1.0 : 2.5;
		ASSERT(!history__add(kept, t_s, &snap, &t, NULL));
		ASSERT(!history__add(anew, t_s, &snap, &t, NULL));
		history_flat__new_epoch(anew);	/* nothing kept holds: every answer afresh */
		*startups += history__startup(kept)->end_s != end_s;
		end_s = history__startup(kept)->end_s;
		for (size_t i = 0; i < f.nr; i++) {
			struct report_growth x, y;
			bool held = history_flat__held(kept, i);
			bool a = history__flat_site(kept, i, 0.5 * i, &x);
			bool b = history__flat_site(anew, i, 0.5 * i, &y);

			ASSERT(a == b);
			ASSERT(!a || !memcmp(&x, &y, sizeof(x)));
			*carried += held;
			*flat += a;
		}
	}
	history__free(kept);
	history__free(anew);
	return true;
}

TEST(history_flat_kept_is_told_anew)
{
	unsigned carried = 0, flat = 0, startups = 0;

	for (unsigned moving = 56; moving <= 68; moving++)
		ASSERT(carry_run(moving, &carried, &flat, &startups));
	/* Most flat answers carried; start-up moved by the bursts. */
	ASSERT(flat > 20000 && carried > flat / 2 && startups >= 3 * 13);
	return true;
}
