/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sorting many (64-bit, 32-bit) keys, each with the index of what it keys:
 * a report sorts its 700,000 sites by (stack id, api) to merge them with
 * the history's; qsort's 20 comparisons each through a function pointer
 * and two pointers took a sixth of the report. A radix sort, 16 bits a
 * pass, stable, in passes over plain arrays.
 */
#ifndef KEYSORT_H
#define KEYSORT_H

#include <stddef.h>
#include <stdint.h>

struct keyed {
	uint64_t hi;		/* compared first */
	uint32_t lo;
	uint32_t index;		/* the caller's */
};

/* Sort v[0..n) by (hi, lo), ascending; equal keys keep their order. 0 or -ENOMEM. */
int keysort__sort(struct keyed *v, size_t n);

#endif
