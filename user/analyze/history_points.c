// SPDX-License-Identifier: GPL-2.0
/*
 * A stack's kept points as runs (history_points.h). mem[0] is a header:
 * the runs held, the room, and whether mem holds the plain array instead
 * (mem[1 + i]: point i). A run is its first point in the top bits of a
 * word and the value in the rest: it holds every point from its first to
 * the next run's first (the last run: to the last point written).
 *
 * 600,000 stacks of a PyTorch job each kept 64 words (512 bytes) whatever
 * they held; as runs, most take the 24 bytes of malloc's smallest block.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "history_points.h"

#define RUN_SHIFT 58			/* 6 bits of first point: HISTORY_POINTS is 64 */
#define VALUE_MAX ((1ULL << RUN_SHIFT) - 1)
#define WIDE (1ULL << 16)
#define FIRST_ROOM 2			/* header and two runs: 24 bytes, malloc's smallest block */

_Static_assert(HISTORY_POINTS <= 1 << (64 - RUN_SHIFT), "a run's first point fits its bits");

static uint32_t nr_of(const uint64_t *m)
{
	return m ? (uint32_t)(m[0] & 0xff) : 0;
}

static uint32_t room_of(const uint64_t *m)
{
	return m ? (uint32_t)(m[0] >> 8 & 0xff) : 0;
}

static bool wide(const uint64_t *m)
{
	return m && (m[0] & WIDE);
}

static void set_header(uint64_t *m, uint32_t nr, uint32_t room)
{
	m[0] = nr | (uint64_t)room << 8;
}

static uint32_t first_of(uint64_t run)
{
	return (uint32_t)(run >> RUN_SHIFT);
}

static uint64_t value_of(uint64_t run)
{
	return run & VALUE_MAX;
}

/* Point i of runs mem: the value of the last run that starts at or before it (0: none). */
static void runs_get(const uint64_t *m, uint32_t from, uint32_t to, uint64_t *out)
{
	const uint64_t *run = m ? m + 1 : NULL;
	uint32_t nr = nr_of(m), k = 0;
	uint64_t v = 0;

	for (uint32_t i = from; i < to; i++) {
		while (k < nr && first_of(run[k]) <= i)
			v = value_of(run[k++]);
		out[i] = v;
	}
}

/* The runs become the plain array: a value too wide for a run, or more runs than points. */
static int to_wide(struct history_points *p)
{
	uint64_t vals[HISTORY_POINTS];
	uint64_t *m;

	if (wide(p->mem))
		return 0;
	runs_get(p->mem, 0, HISTORY_POINTS, vals);
	m = realloc(p->mem, (1 + HISTORY_POINTS) * sizeof(*m));
	if (!m)
		return -ENOMEM;
	memcpy(m + 1, vals, sizeof(vals));
	m[0] = WIDE;
	p->mem = m;
	return 0;
}

int history_points__reserve(struct history_points *p, uint32_t more, uint64_t v)
{
	uint32_t nr = nr_of(p->mem), room = room_of(p->mem), want = nr + more;
	uint64_t *m;

	if (wide(p->mem) || (want <= room && v <= VALUE_MAX))
		return 0;
	if (want > HISTORY_POINTS || v > VALUE_MAX)
		return to_wide(p);
	room = room ? room : FIRST_ROOM;
	while (room < want)
		room *= 2;
	m = realloc(p->mem, (1 + room) * sizeof(*m));
	if (!m)
		return -ENOMEM;
	set_header(m, nr, room);
	p->mem = m;
	return 0;
}

int history_points__fill(struct history_points *p, uint32_t from, uint32_t to, uint64_t v)
{
	uint32_t nr;

	if (from >= to)
		return 0;
	if (v > VALUE_MAX && to_wide(p))
		return -ENOMEM;
	if (wide(p->mem)) {
		for (uint32_t i = from; i < to && i < HISTORY_POINTS; i++)
			p->mem[1 + i] = v;
		return 0;
	}
	nr = nr_of(p->mem);
	/* A point written anew: what its run said from there on is replaced. */
	while (nr && first_of(p->mem[nr]) >= from)
		nr--;
	if (p->mem)
		set_header(p->mem, nr, room_of(p->mem));
	if (nr && value_of(p->mem[nr]) == v)
		return 0;	/* the last run goes on */
	if (history_points__reserve(p, 1, v))
		return -ENOMEM;
	if (wide(p->mem))
		return history_points__fill(p, from, to, v);
	p->mem[1 + nr] = (uint64_t)from << RUN_SHIFT | v;
	set_header(p->mem, nr + 1, room_of(p->mem));
	return 0;
}

/*
 * A run keeps the even points it held, from (first + 1) / 2 on; one that
 * held no even point (a single odd one) is gone, and the runs either side
 * of it may now hold one value: they become one. The last run holds the
 * points up to the last of the npoints.
 */
static void runs_thin(uint64_t *m, uint32_t npoints)
{
	uint32_t nr = nr_of(m), out = 0;
	uint64_t *run = m + 1;

	for (uint32_t k = 0; k < nr; k++) {
		uint32_t first = first_of(run[k]);
		uint32_t end = k + 1 < nr ? first_of(run[k + 1]) - 1 : npoints - 1;
		uint32_t kept = (first + 1) / 2;

		if (2 * kept > end || (out && value_of(run[out - 1]) == value_of(run[k])))
			continue;
		run[out++] = (uint64_t)kept << RUN_SHIFT | value_of(run[k]);
	}
	set_header(m, out, room_of(m));
}

void history_points__thin(struct history_points *p, uint32_t npoints)
{
	if (!p->mem)
		return;
	if (!wide(p->mem)) {
		runs_thin(p->mem, npoints);
		return;
	}
	for (uint32_t i = 0; 2 * i < npoints && 2 * i < HISTORY_POINTS; i++)
		p->mem[1 + i] = p->mem[1 + 2 * i];
}

void history_points__get(const struct history_points *p, uint32_t from, uint32_t to,
			 uint64_t *out)
{
	if (to > HISTORY_POINTS)
		to = HISTORY_POINTS;
	if (wide(p->mem)) {
		for (uint32_t i = from; i < to; i++)
			out[i] = p->mem[1 + i];
		return;
	}
	runs_get(p->mem, from, to, out);
}

size_t history_points__bytes(const struct history_points *p)
{
	if (!p->mem)
		return 0;
	return (1 + (wide(p->mem) ? HISTORY_POINTS : room_of(p->mem))) * sizeof(uint64_t);
}

uint32_t history_points__runs(const struct history_points *p)
{
	return wide(p->mem) ? HISTORY_POINTS : nr_of(p->mem);
}

void history_points__free(struct history_points *p)
{
	free(p->mem);
	p->mem = NULL;
}
