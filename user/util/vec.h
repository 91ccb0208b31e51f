/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Growable arrays: the one way to make room in an array that grows an
 * element (or a run of them) at a time. The array is a plain pointer, its
 * capacity a size_t beside it; capacity doubles, so appends cost O(1)
 * amortised, and calls that ask for no more than there is cost nothing.
 *
 *	if (vec__reserve(&v, &cap, nr + 1, sizeof(*v)))
 *		return -ENOMEM;
 *	v[nr++] = x;
 */
#ifndef VEC_H
#define VEC_H

#include <stddef.h>

/*
 * Make *arr (of *cap elements of size bytes) hold at least want elements,
 * at least min_cap on the first growth. 0, or -ENOMEM with *arr and *cap
 * untouched. arr is a pointer to the array pointer, whatever its type.
 */
int vec__reserve_min(void *arr, size_t *cap, size_t want, size_t size, size_t min_cap);

static inline int vec__reserve(void *arr, size_t *cap, size_t want, size_t size)
{
	return vec__reserve_min(arr, cap, want, size, 16);
}

/*
 * Give back the room of an array of *cap elements that holds n, when it
 * holds far less (under half): made to fit, or freed when n is 0. Without
 * memory for the smaller copy it stays as it is.
 */
void vec__fit(void *arr, size_t *cap, size_t n, size_t size);

#endif
