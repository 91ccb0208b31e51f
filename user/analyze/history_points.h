/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One stack's bytes at the history's kept points (history.h), exact and
 * compact: most stacks hold the same bytes for many reports (a block kept
 * for the run, a cache filled once), so the points are kept as runs of one
 * value, each run its first point and its value in one word. A stack
 * whose bytes changed at every point takes no more than the plain array
 * it replaces (64 words); one that never changed, no memory besides the
 * word below (its one run is in it). A value too wide for a run (over
 * 2^57 bytes) turns the stack's points into the plain array. Pure.
 *
 * The points are written in order, as the history writes them: each fill
 * starts at or after the last one's start (a point written anew is the
 * last one), and a point is read only once written; thinning keeps every
 * other point (point 2i becomes point i).
 */
#ifndef HISTORY_POINTS_H
#define HISTORY_POINTS_H

#include <stddef.h>
#include <stdint.h>

#define HISTORY_POINTS 64	/* kept points of a stack's bytes: thinned when full (history.h) */

/* 0: no point written; low bit set: one run, in the word; else the block the runs are in. */
struct history_points {
	uint64_t word;
};

/* Points from..to-1 hold v (from: at or after the last fill's). 0 or -ENOMEM. */
int history_points__fill(struct history_points *p, uint32_t from, uint32_t to, uint64_t v);
/* Every other point of the npoints: point 2i becomes point i. */
void history_points__thin(struct history_points *p, uint32_t npoints);
/* Points from..to-1 into out[from..to-1]. */
void history_points__get(const struct history_points *p, uint32_t from, uint32_t to,
			 uint64_t *out);
/* The bytes it holds (-v), and how many runs (the plain array: HISTORY_POINTS). */
size_t history_points__bytes(const struct history_points *p);
uint32_t history_points__runs(const struct history_points *p);
void history_points__free(struct history_points *p);

#endif
