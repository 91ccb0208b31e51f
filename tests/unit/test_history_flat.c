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
