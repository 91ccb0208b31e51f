// SPDX-License-Identifier: GPL-2.0
/*
 * A stack's kept points as runs (history_points.h). A run is its first
 * point in the top bits of a word and the value in the rest: it holds
 * every point from its first to the next run's first (the last run: to
 * the last point written).
 *
 * One run (a stack that held the same bytes since its first point, most
 * of them) sits in the word itself, its low bit set: no block to allocate,
 * and none to miss the cache on when a report reads 700,000 stacks. More
 * runs are in a block: mem[0] a header (the runs held, the room, whether
 * mem holds the plain array instead: mem[1 + i] is point i), then the runs.
 *
 * 600,000 stacks of a PyTorch job each kept 64 words (512 bytes) whatever
 * they held.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "history_points.h"

#define RUN_SHIFT 58			/* 6 bits of first point: HISTORY_POINTS is 64 */
#define VALUE_MAX ((1ULL << RUN_SHIFT) - 1)
#define INLINE_SHIFT 7			/* the word: value, first point, 1 */
#define INLINE_MAX ((1ULL << (64 - INLINE_SHIFT)) - 1)
#define WIDE (1ULL << 16)
#define FIRST_ROOM 2			/* header and two runs: 24 bytes, malloc's smallest block */

_Static_assert(HISTORY_POINTS <= 1 << (64 - RUN_SHIFT), "a run's first point fits its bits");
_Static_assert(HISTORY_POINTS <= 1 << (INLINE_SHIFT - 1), "and the word's");

/* The runs as read: in the block, or the word's one. */
struct view {
	const uint64_t *run;
	uint32_t nr;
	uint64_t one;
};

static bool is_inline(const struct history_points *p)
{
	return p->word & 1;
}

static uint64_t *mem_of(const struct history_points *p)
{
	return is_inline(p) ? NULL : (uint64_t *)(uintptr_t)p->word;
}

static uint32_t nr_of(const uint64_t *m)
{
	return m ? (uint32_t)(m[0] & 0xff) : 0;
}

static uint32_t room_of(const uint64_t *m)
{
	return m ? (uint32_t)(m[0] >> 8 & 0xff) : 0;
}

static bool wide(const struct history_points *p)
{
	const uint64_t *m = mem_of(p);

	return m && (m[0] & WIDE);
}

static void set_header(uint64_t *m, uint32_t nr, uint32_t room)
{
	m[0] = nr | (uint64_t)room << 8;
}

static uint64_t run_of(uint32_t first, uint64_t v)
{
	return (uint64_t)first << RUN_SHIFT | v;
}

static uint32_t first_of(uint64_t run)
{
	return (uint32_t)(run >> RUN_SHIFT);
}

static uint64_t value_of(uint64_t run)
{
	return run & VALUE_MAX;
}

static void set_inline(struct history_points *p, uint32_t first, uint64_t v)
{
	p->word = v << INLINE_SHIFT | (uint64_t)first << 1 | 1;
}

static void view_of(const struct history_points *p, struct view *v)
{
	const uint64_t *m = mem_of(p);

	*v = (struct view){ 0 };
	if (is_inline(p)) {
		v->one = run_of((uint32_t)(p->word >> 1 & 0x3f), p->word >> INLINE_SHIFT);
		v->run = &v->one;
		v->nr = 1;
	} else if (m) {
		v->run = m + 1;
		v->nr = nr_of(m);
	}
}

/* Points from..to-1 of nr runs: each the value of the last run that starts at or before it (0: none). */
static void runs_get(const uint64_t *run, uint32_t nr, uint32_t from, uint32_t to, uint64_t *out)
{
	uint32_t i = from;
	uint64_t v = 0;

	/* Up to where run k begins, the value before it; past the last run, the last's. */
	for (uint32_t k = 0; k <= nr && i < to; k++) {
		uint32_t end = k < nr && first_of(run[k]) < to ? first_of(run[k]) : to;

		for (; i < end; i++)
			out[i] = v;
		if (k < nr)
			v = value_of(run[k]);
	}
}

/* The runs become the plain array: a value too wide for a run, or more runs than points. */
static int to_wide(struct history_points *p)
{
	uint64_t vals[HISTORY_POINTS];
	struct view v;
	uint64_t *m;

	if (wide(p))
		return 0;
	view_of(p, &v);
	runs_get(v.run, v.nr, 0, HISTORY_POINTS, vals);
	m = realloc(mem_of(p), (1 + HISTORY_POINTS) * sizeof(*m));
	if (!m)
		return -ENOMEM;
	memcpy(m + 1, vals, sizeof(vals));
	m[0] = WIDE;
	p->word = (uintptr_t)m;
	return 0;
}

/* A block with room for want runs, the word's run (if kept: nr 1) moved in. */
static int room_for(struct history_points *p, uint32_t nr, uint32_t want)
{
	uint64_t *m = mem_of(p);
	uint32_t room = room_of(m);
	struct view v;

	view_of(p, &v);

	if (want <= room)
		return 0;
	if (want > HISTORY_POINTS)
		return to_wide(p);
	room = room ? room : FIRST_ROOM;
	while (room < want)
		room *= 2;
	m = realloc(m, (1 + room) * sizeof(*m));
	if (!m)
		return -ENOMEM;
	if (is_inline(p))
		m[1] = v.one;
	set_header(m, nr, room);
	p->word = (uintptr_t)m;
	return 0;
}

/* Keep the first nr runs. */
static void keep_runs(struct history_points *p, uint32_t nr)
{
	uint64_t *m = mem_of(p);

	if (m)
		set_header(m, nr, room_of(m));
	else if (!nr)
		p->word = 0;
}

int history_points__fill(struct history_points *p, uint32_t from, uint32_t to, uint64_t v)
{
	struct view runs;
	uint64_t *m;

	if (from >= to)
		return 0;
	if (v > VALUE_MAX && to_wide(p))
		return -ENOMEM;
	if (wide(p)) {
		for (uint32_t i = from; i < to && i < HISTORY_POINTS; i++)
			mem_of(p)[1 + i] = v;
		return 0;
	}
	view_of(p, &runs);
	/* A point written anew: what its run said from there on is replaced. */
	while (runs.nr && first_of(runs.run[runs.nr - 1]) >= from)
		runs.nr--;
	keep_runs(p, runs.nr);
	if (runs.nr && value_of(runs.run[runs.nr - 1]) == v)
		return 0;	/* the last run goes on */
	if (!runs.nr && !mem_of(p) && v <= INLINE_MAX) {
		set_inline(p, from, v);
		return 0;
	}
	if (room_for(p, runs.nr, runs.nr + 1))
		return -ENOMEM;
	if (wide(p))
		return history_points__fill(p, from, to, v);
	m = mem_of(p);
	m[1 + runs.nr] = run_of(from, v);
	set_header(m, runs.nr + 1, room_of(m));
	return 0;
}

/*
 * A run keeps the even points it held, from (first + 1) / 2 on; one that
 * held no even point (a single odd one) is gone, and the runs either side
 * of it may now hold one value: they become one. The last run holds the
 * points up to the last of the npoints. Done in place: a run only moves
 * down.
 */
static uint32_t runs_thin(uint64_t *run, uint32_t nr, uint32_t npoints)
{
	uint32_t out = 0;

	for (uint32_t k = 0; k < nr; k++) {
		uint32_t first = first_of(run[k]);
		uint32_t end = k + 1 < nr ? first_of(run[k + 1]) - 1 : npoints - 1;
		uint32_t kept = (first + 1) / 2;

		if (2 * kept > end || (out && value_of(run[out - 1]) == value_of(run[k])))
			continue;
		run[out++] = run_of(kept, value_of(run[k]));
	}
	return out;
}

void history_points__thin(struct history_points *p, uint32_t npoints)
{
	uint64_t *m = mem_of(p);

	if (is_inline(p)) {
		struct view v;

		view_of(p, &v);
		if (runs_thin(&v.one, 1, npoints))
			set_inline(p, first_of(v.one), value_of(v.one));
		else
			p->word = 0;
	} else if (m && !wide(p)) {
		set_header(m, runs_thin(m + 1, nr_of(m), npoints), room_of(m));
	} else if (m) {
		for (uint32_t i = 0; 2 * i < npoints && 2 * i < HISTORY_POINTS; i++)
			m[1 + i] = m[1 + 2 * i];
	}
}

void history_points__get(const struct history_points *p, uint32_t from, uint32_t to,
			 uint64_t *out)
{
	struct view v;

	if (to > HISTORY_POINTS)
		to = HISTORY_POINTS;
	if (wide(p)) {
		for (uint32_t i = from; i < to; i++)
			out[i] = mem_of(p)[1 + i];
		return;
	}
	view_of(p, &v);
	runs_get(v.run, v.nr, from, to, out);
}

size_t history_points__bytes(const struct history_points *p)
{
	const uint64_t *m = mem_of(p);

	if (!m)
		return 0;
	return (1 + (wide(p) ? HISTORY_POINTS : room_of(m))) * sizeof(uint64_t);
}

uint32_t history_points__runs(const struct history_points *p)
{
	struct view v;

	view_of(p, &v);
	return wide(p) ? HISTORY_POINTS : v.nr;
}

void history_points__free(struct history_points *p)
{
	free(mem_of(p));
	p->word = 0;
}
