// SPDX-License-Identifier: GPL-2.0
/*
 * analyze/history_points.c: a stack's kept points as runs read back
 * exactly what a plain array written the same way holds, through
 * rewritten points, thinnings, values too wide for a run and stacks that
 * change at every point; and a stack that holds one value takes no block.
 */
#include <stdlib.h>
#include <string.h>
#include "analyze/history_points.h"
#include "unit.h"

/* The history's way of writing (history_merge.c), on the runs and on a plain array beside. */
struct model {
	struct history_points p;
	uint64_t ref[HISTORY_POINTS];
	uint32_t first, wrote, npoints;
	uint64_t bytes;
	unsigned seed;
};

static bool fill(struct model *m, uint32_t from, uint32_t to, uint64_t v)
{
	for (uint32_t i = from; i < to; i++)
		m->ref[i] = v;
	return !history_points__fill(&m->p, from, to, v);
}

/* The points the reports left alone hold the bytes they held. */
static bool catch_up(struct model *m)
{
	uint32_t from = m->first > m->wrote ? m->first : m->wrote;
	bool ok = from >= m->npoints || fill(m, from, m->npoints, m->bytes);

	m->wrote = m->npoints;
	return ok;
}

static bool same(const struct model *m)
{
	uint64_t got[HISTORY_POINTS];

	memset(got, 0xa5, sizeof(got));
	history_points__get(&m->p, m->first, m->npoints, got);
	for (uint32_t i = m->first; i < m->npoints; i++)
		if (got[i] != m->ref[i])
			return false;
	return true;
}

static void thin(struct model *m)
{
	for (uint32_t i = 0; 2 * i < m->npoints; i++)
		m->ref[i] = m->ref[2 * i];
	history_points__thin(&m->p, m->npoints);
	m->first = (m->first + 1) / 2;
	m->npoints = (m->npoints + 1) / 2;
	m->wrote = m->npoints;
}

/* A value from few (runs repeat), now and then one too wide for a run or for the word. */
static uint64_t next_bytes(struct model *m, unsigned wide_one_in)
{
	unsigned r = (unsigned)rand_r(&m->seed);

	if (wide_one_in && r % wide_one_in == 0)
		return UINT64_MAX - r % 3;
	if (wide_one_in && r % wide_one_in == 1)
		return (1ULL << 57) + r % 3;	/* too wide for the word's run, not for a block's */
	return (uint64_t)(r % 4) * 4096;
}

/* One run of reports: each is a kept point or not, updates the stack or leaves it alone. */
static bool run(unsigned seed, unsigned wide_one_in, unsigned reports)
{
	struct model m = { .seed = seed };
	bool ok = true;

	m.npoints = m.first = m.wrote = (uint32_t)(rand_r(&m.seed) % 8);
	for (unsigned r = 0; ok && r < reports; r++) {
		unsigned c = (unsigned)rand_r(&m.seed);
		bool kept = c % 3 != 0, update = c % 5 < 3;
		uint32_t point = 0;

		if (kept && m.npoints == HISTORY_POINTS) {
			ok = catch_up(&m);
			thin(&m);
		}
		if (kept)
			point = m.npoints++;
		if (update) {
			ok = ok && catch_up(&m);
			m.bytes = next_bytes(&m, wide_one_in);
			if (kept)
				ok = ok && fill(&m, point, point + 1, m.bytes);
			/* A point written anew (a report merged whole after a carried one). */
			if (kept && c % 7 == 0)
				ok = ok && fill(&m, point, point + 1, m.bytes = next_bytes(&m, 0));
		}
		if (c % 4 == 0) {
			ok = ok && catch_up(&m) && same(&m);
			ok = ok && history_points__runs(&m.p) <= HISTORY_POINTS;
		}
	}
	ok = ok && catch_up(&m) && same(&m);
	history_points__free(&m.p);
	return ok;
}

TEST(history_points_read_back_what_an_array_holds)
{
	for (unsigned seed = 1; seed <= 300; seed++)
		ASSERT(run(seed, 0, 400));
	return true;
}

TEST(history_points_too_wide_for_a_run_become_the_array)
{
	for (unsigned seed = 1; seed <= 100; seed++)
		ASSERT(run(seed, 50, 300));
	return true;
}

/* Point 2i becomes point i: a run of one odd point goes, the runs beside it join. */
TEST(history_points_thin_by_hand)
{
	struct history_points p = { 0 };
	uint64_t got[HISTORY_POINTS];

	for (uint32_t i = 0; i < HISTORY_POINTS; i++)
		ASSERT(!history_points__fill(&p, i, i + 1, i == 5 ? 9 : i < 10 ? 1 : 2));
	ASSERT_EQ_U64(history_points__runs(&p), 4);	/* 1, 9 at 5, 1, 2 from 10 */
	history_points__thin(&p, HISTORY_POINTS);
	ASSERT_EQ_U64(history_points__runs(&p), 2);	/* 1 to 4 (old 8), 2 from 5 (old 10) */
	history_points__get(&p, 0, HISTORY_POINTS / 2, got);
	for (uint32_t i = 0; i < HISTORY_POINTS / 2; i++)
		ASSERT_EQ_U64(got[i], i < 5 ? 1 : 2);
	history_points__free(&p);
	return true;
}

TEST(history_points_one_value_takes_no_block)
{
	struct history_points p = { 0 };
	uint64_t got[HISTORY_POINTS];

	for (uint32_t i = 3; i < HISTORY_POINTS; i++)
		ASSERT(!history_points__fill(&p, i, i + 1, 4096));
	ASSERT_EQ_U64(history_points__bytes(&p), 0);	/* its one run is in the word */
	ASSERT_EQ_U64(history_points__runs(&p), 1);
	history_points__get(&p, 3, HISTORY_POINTS, got);
	ASSERT_EQ_U64(got[3], 4096);
	ASSERT_EQ_U64(got[HISTORY_POINTS - 1], 4096);
	/* The last point written anew, again and again: it stays one run of its own. */
	for (uint64_t v = 0; v < 20; v++)
		ASSERT(!history_points__fill(&p, HISTORY_POINTS - 1, HISTORY_POINTS, v % 2 ? 7 : 8));
	ASSERT_EQ_U64(history_points__runs(&p), 2);
	ASSERT_EQ_U64(history_points__bytes(&p), 3 * sizeof(uint64_t));	/* header, two runs */
	history_points__get(&p, 3, HISTORY_POINTS, got);
	ASSERT_EQ_U64(got[HISTORY_POINTS - 2], 4096);
	ASSERT_EQ_U64(got[HISTORY_POINTS - 1], 7);
	history_points__free(&p);
	/* A value too wide for a run: the plain array. */
	ASSERT(!history_points__fill(&p, 5, 6, UINT64_MAX));
	ASSERT_EQ_U64(history_points__bytes(&p), (1 + HISTORY_POINTS) * sizeof(uint64_t));
	history_points__get(&p, 5, 6, got);
	ASSERT_EQ_U64(got[5], UINT64_MAX);
	history_points__free(&p);
	/* A value at every point: no more than the plain array (and its header). */
	for (uint32_t i = 0; i < HISTORY_POINTS; i++)
		ASSERT(!history_points__fill(&p, i, i + 1, i * 3));
	ASSERT(history_points__bytes(&p) <= (1 + HISTORY_POINTS) * sizeof(uint64_t));
	history_points__get(&p, 0, HISTORY_POINTS, got);
	for (uint32_t i = 0; i < HISTORY_POINTS; i++)
		ASSERT_EQ_U64(got[i], i * 3);
	history_points__free(&p);
	return true;
}
