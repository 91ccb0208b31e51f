/* SPDX-License-Identifier: GPL-2.0 */
/*
 * 64-bit hashes of report names, to group or compare many frames by
 * integers before their names: sites of stacks (analyze/sites.c), the
 * flame graph's order (report/report_svg.c). Not for anything kept.
 */
#ifndef HASH_H
#define HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t hash__mix(uint64_t x)
{
	x = (x ^ x >> 31) * 0xbf58476d1ce4e5b9ULL;
	return x ^ x >> 29;
}

/* str into h, 8 bytes at a time; NULL hashes apart from "". */
static inline uint64_t hash__str(uint64_t h, const char *str)
{
	size_t n = str ? strlen(str) : 0;
	uint64_t w;

	if (!str)
		return hash__mix(h ^ 0x5bd1e995);
	for (; n >= 8; n -= 8, str += 8) {
		memcpy(&w, str, 8);
		h = hash__mix(h ^ w);
	}
	w = 0;
	memcpy(&w, str, n);
	return hash__mix(h ^ w ^ (uint64_t)(n + 1) << 56);
}

#endif
