// SPDX-License-Identifier: GPL-2.0
/* util/keysort.c: radix sort of (64-bit, 32-bit) keys. */
#include <stdint.h>
#include <stdlib.h>
#include "util/keysort.h"
#include "unit.h"

static int ref_cmp(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;	/* stable */
}

/* A xorshift: the same keys on every run. */
static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

TEST(keysort_orders_like_qsort_and_is_stable)
{
	enum { N = 20000 };
	struct keyed *v = malloc(N * sizeof(*v)), *ref = malloc(N * sizeof(*ref));
	uint64_t seed = 0x9e3779b97f4a7c15ULL;

	ASSERT(v && ref);
	for (uint32_t i = 0; i < N; i++) {
		/* Stack ids of all bits, a few apis, and repeats of both. */
		uint64_t hi = i % 7 ? next(&seed) : 42;
		uint32_t lo = (uint32_t)(next(&seed) % 5) | (i % 3 ? 0 : 0x10000);

		v[i] = ref[i] = (struct keyed){ hi, lo, i };
	}
	qsort(ref, N, sizeof(*ref), ref_cmp);
	ASSERT(keysort__sort(v, N) == 0);
	for (uint32_t i = 0; i < N; i++)
		ASSERT(v[i].hi == ref[i].hi && v[i].lo == ref[i].lo && v[i].index == ref[i].index);
	/* Nothing and one key: as they are. */
	ASSERT(keysort__sort(v, 0) == 0 && keysort__sort(v, 1) == 0 && v[0].index == ref[0].index);
	free(v);
	free(ref);
	return true;
}
