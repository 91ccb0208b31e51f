// SPDX-License-Identifier: GPL-2.0
/* Growable arrays (vec.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "vec.h"

int vec__reserve_min(void *arr, size_t *cap, size_t want, size_t size, size_t min_cap)
{
	size_t ncap = *cap ? *cap : (min_cap ? min_cap : 1);
	void *old, *n;

	if (want <= *cap)
		return 0;
	while (ncap < want) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / (size ? size : 1))
		return -ENOMEM;
	memcpy(&old, arr, sizeof(old));
	n = realloc(old, ncap * size);
	if (!n)
		return -ENOMEM;
	memcpy(arr, &n, sizeof(n));
	*cap = ncap;
	return 0;
}

void vec__fit(void *arr, size_t *cap, size_t n, size_t size)
{
	void *old, *v;

	if (*cap <= 2 * n + 16)
		return;
	memcpy(&old, arr, sizeof(old));
	if (!n) {
		free(old);
		v = NULL;
	} else if (!(v = realloc(old, n * size))) {
		return;	/* it stays as big */
	}
	memcpy(arr, &v, sizeof(v));
	*cap = n;
}
