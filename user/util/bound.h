/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one binary search of arrays sorted by a 64-bit key: which element
 * covers an address (a module's span, an unwind row's pc).
 */
#ifndef BOUND_H
#define BOUND_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * In v (nr elements of stride bytes, sorted by the uint64_t at byte off of
 * each), how many have a key at or below x: the last of them is at the
 * result minus one, and 0 means none.
 */
static inline size_t bound__upper_u64(const void *v, size_t nr, size_t stride, size_t off,
				      uint64_t x)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t key;

		memcpy(&key, (const char *)v + mid * stride + off, sizeof(key));
		if (key <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif
