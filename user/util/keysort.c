// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "keysort.h"

#define DIGIT_BITS 16
#define DIGITS (1u << DIGIT_BITS)

/* Digit d of v's key: 0 and 1 are lo's, 2 to 5 hi's (the least significant first). */
static inline uint32_t digit(const struct keyed *v, int d)
{
	if (d < 2)
		return (v->lo >> (DIGIT_BITS * d)) & (DIGITS - 1);
	return (uint32_t)(v->hi >> (DIGIT_BITS * (d - 2))) & (DIGITS - 1);
}

/* One stable pass by digit d from src to dst; false when every key has the same digit. */
static bool pass(const struct keyed *src, struct keyed *dst, size_t n, int d, size_t *count)
{
	size_t sum = 0;

	memset(count, 0, DIGITS * sizeof(*count));
	for (size_t i = 0; i < n; i++)
		count[digit(&src[i], d)]++;
	if (count[digit(&src[0], d)] == n)
		return false;	/* nothing to move: api's high bits, for one */
	for (uint32_t k = 0; k < DIGITS; k++) {
		size_t c = count[k];

		count[k] = sum;
		sum += c;
	}
	for (size_t i = 0; i < n; i++)
		dst[count[digit(&src[i], d)]++] = src[i];
	return true;
}

int keysort__sort(struct keyed *v, size_t n)
{
	struct keyed *tmp, *src = v, *dst;
	size_t *count;

	if (n < 2)
		return 0;
	tmp = malloc(n * sizeof(*tmp));
	count = malloc(DIGITS * sizeof(*count));
	if (!tmp || !count) {
		free(tmp);
		free(count);
		return -ENOMEM;
	}
	dst = tmp;
	for (int d = 0; d < 6; d++) {
		struct keyed *swap = src;

		if (!pass(src, dst, n, d, count))
			continue;
		src = dst;
		dst = swap;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(tmp);
	free(count);
	return 0;
}
