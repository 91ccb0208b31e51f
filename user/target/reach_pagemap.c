// SPDX-License-Identifier: GPL-2.0
/* The pages of a large range that hold anything (reach_pagemap.h). */
#include <errno.h>
#include <stdbool.h>
#include <unistd.h>
#include "reach_pagemap.h"
#include "util/vec.h"

#define PAGE 4096ull
#define ENTRIES 8192		/* pagemap entries read at once: 32 MiB of the target */
#define PM_PRESENT (1ull << 63)
#define PM_SWAPPED (1ull << 62)

static int append(struct mem_run **out, size_t *nr, size_t *cap, uint64_t start, uint64_t end)
{
	/* A run that continues the last one extends it. */
	if (*nr && (*out)[*nr - 1].end == start) {
		(*out)[*nr - 1].end = end;
		return 0;
	}
	if (vec__reserve(out, cap, *nr + 1, sizeof(**out)))
		return -ENOMEM;
	(*out)[(*nr)++] = (struct mem_run){ start, end };
	return 0;
}

/* The entries of [a, a + n pages): false when they cannot be read. */
static bool read_entries(int fd, uint64_t a, uint64_t *e, size_t n)
{
	ssize_t got = pread(fd, e, n * sizeof(*e), (off_t)(a / PAGE * sizeof(*e)));

	return got == (ssize_t)(n * sizeof(*e));
}

int reach_pagemap__runs(int fd, uint64_t start, uint64_t end, struct mem_run **out, size_t *nr,
			size_t *cap)
{
	uint64_t e[ENTRIES];
	size_t first = *nr;

	if (fd < 0 || end - start < REACH_PAGEMAP_MIN || start % PAGE || end % PAGE)
		return append(out, nr, cap, start, end);
	for (uint64_t a = start; a < end;) {
		size_t n = (end - a) / PAGE < ENTRIES ? (size_t)((end - a) / PAGE) : ENTRIES;

		if (!read_entries(fd, a, e, n)) {
			*nr = first;	/* unknown: all of it */
			return append(out, nr, cap, start, end);
		}
		for (size_t i = 0; i < n; i++, a += PAGE)
			if ((e[i] & (PM_PRESENT | PM_SWAPPED)) && append(out, nr, cap, a, a + PAGE))
				return -ENOMEM;
	}
	return 0;
}
