// SPDX-License-Identifier: GPL-2.0
/* util/vec.c: growable arrays. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include "util/vec.h"
#include "unit.h"

TEST(vec_grows_by_doubling_and_keeps_contents)
{
	uint64_t *v = NULL;
	size_t cap = 0, nr = 0;

	for (uint64_t i = 0; i < 1000; i++) {
		ASSERT(vec__reserve(&v, &cap, nr + 1, sizeof(*v)) == 0);
		v[nr++] = i * 3;
	}
	ASSERT_EQ_U64(cap, 1024);	/* 16, 32, ... 1024 */
	for (uint64_t i = 0; i < 1000; i++)
		ASSERT_EQ_U64(v[i], i * 3);
	/* No more than there is: nothing to do. */
	ASSERT(vec__reserve(&v, &cap, 10, sizeof(*v)) == 0 && cap == 1024);
	/* A run at once. */
	ASSERT(vec__reserve(&v, &cap, 5000, sizeof(*v)) == 0 && cap == 8192);
	free(v);
	return true;
}

TEST(vec_first_capacity_and_overflow)
{
	char *v = NULL;
	size_t cap = 0;

	ASSERT(vec__reserve_min(&v, &cap, 1, 1, 64) == 0 && cap == 64);
	/* Sizes that overflow are refused, and the array is left as it was. */
	ASSERT(vec__reserve(&v, &cap, SIZE_MAX / 2 + 2, 4) == -ENOMEM);
	ASSERT(cap == 64 && v);
	free(v);
	return true;
}
