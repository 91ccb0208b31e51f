// SPDX-License-Identifier: GPL-2.0
/*
 * probe/snapshot.h's snapshot__age_holds: a carried reading keeps a site's
 * age (its oldest live block's time) without walking the blocks only where
 * the walk would find the same. A site's blocks are played here (seeded:
 * allocations at rising times, frees of any live block, the oldest
 * included, readings between), and at each reading the age kept where the
 * rule says it holds is checked against the oldest of the live blocks.
 */
#include <stdlib.h>
#include "probe/snapshot.h"
#include "unit.h"

#define BLOCKS_MAX 64

struct played {
	uint64_t t[BLOCKS_MAX];	/* the live blocks' times */
	size_t nr;
	uint64_t allocs, frees, now;
};

static uint64_t oldest(const struct played *p)
{
	uint64_t o = 0;

	for (size_t i = 0; i < p->nr; i++)
		if (!o || p->t[i] < o)
			o = p->t[i];
	return o;
}

static struct site_stats stats_of(const struct played *p)
{
	return (struct site_stats){ .outstanding_allocs = p->nr, .outstanding_bytes = 16 * p->nr,
				    .total_allocs = p->allocs, .total_bytes = 16 * p->allocs };
}

/* Between two readings: a few allocations and frees, in a random order. */
static void play(struct played *p, unsigned *seed)
{
	int steps = rand_r(seed) % 4;

	for (int s = 0; s < steps; s++) {
		p->now += 5000000;
		if (p->nr && (p->nr == BLOCKS_MAX || rand_r(seed) % 3 == 0)) {
			size_t gone = (size_t)rand_r(seed) % p->nr;	/* any block, the oldest too */

			p->t[gone] = p->t[--p->nr];
			p->frees++;
		} else {
			p->t[p->nr++] = p->now;
			p->allocs++;
		}
	}
}

TEST(snapshot_age_kept_only_where_the_walk_finds_it)
{
	unsigned seed = 27;
	size_t kept = 0, walked = 0;

	for (int run = 0; run < 200; run++) {
		struct played p = { .now = 1000000000 };
		struct site_stats was = { 0 };
		uint64_t age = 0;

		for (int reading = 0; reading < 100; reading++) {
			struct site_stats now;

			play(&p, &seed);
			now = stats_of(&p);
			if (snapshot__age_holds(&was, &now, age)) {
				ASSERT_EQ_U64(age, oldest(&p));
				kept++;
			} else {
				age = oldest(&p);	/* the walk's */
				walked++;
			}
			was = now;
		}
	}
	/* Both ways taken often: the rule is tried, not passed over. */
	ASSERT(kept > 2000 && walked > 2000);
	return true;
}

TEST(snapshot_age_not_kept_without_one)
{
	struct site_stats was = { .outstanding_allocs = 2, .total_allocs = 5 };
	struct site_stats grew = { .outstanding_allocs = 3, .total_allocs = 6 };
	struct site_stats none = { .outstanding_allocs = 0, .total_allocs = 6 };
	struct site_stats swapped = { .outstanding_allocs = 2, .total_allocs = 6 };

	ASSERT(snapshot__age_holds(&was, &grew, 7));
	ASSERT(snapshot__age_holds(&was, &was, 7));
	ASSERT(!snapshot__age_holds(&was, &grew, 0));	/* none known */
	ASSERT(!snapshot__age_holds(&was, &none, 7));	/* all freed */
	ASSERT(!snapshot__age_holds(&was, &swapped, 7));	/* one freed, one made */
	ASSERT(!snapshot__age_holds(&none, &grew, 7));	/* none then */
	return true;
}
