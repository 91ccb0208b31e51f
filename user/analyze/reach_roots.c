// SPDX-License-Identifier: GPL-2.0
/* The roots of the reachability scan, from the target's mappings (reach_roots.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "reach_roots.h"
#include "util/vec.h"

#define ARENA_ALIGN (64ull << 20)	/* glibc's HEAP_MAX_SIZE on 64-bit */

/* A glibc thread arena's heap: aligned, the rest of its reservation inaccessible right after. */
static bool arena_heap(const struct maps *m, size_t i)
{
	const struct map_entry *e = &m->entries[i], *next = i + 1 < m->nr ? e + 1 : NULL;

	if (e->start % ARENA_ALIGN)
		return false;
	if (e->end - e->start == ARENA_ALIGN)
		return true;
	return next && next->start == e->end && !next->readable && !next->writable &&
	       !next->path[0] && next->end - e->start <= ARENA_ALIGN;
}

static bool device(const struct map_entry *e)
{
	return !strncmp(e->path, "/dev/", 5) && strcmp(e->path, "/dev/zero") &&
	       strncmp(e->path, "/dev/shm/", 9);
}

static bool heap(const struct maps *m, size_t i)
{
	const struct map_entry *e = &m->entries[i];

	return !strcmp(e->path, "[heap]") || (!e->path[0] && arena_heap(m, i));
}

/* The lowest stack pointer in [start, end), or end. */
static uint64_t lowest_sp(const uint64_t *sps, size_t nr, uint64_t start, uint64_t end)
{
	uint64_t low = end;

	for (size_t i = 0; i < nr; i++)
		if (sps[i] >= start && sps[i] < low)
			low = sps[i];
	return low;
}

int reach_roots__choose(const struct maps *m, const uint64_t *sps, size_t nr_sps,
			struct reach_range **out, size_t *nr, struct reach_roots_info *info)
{
	size_t cap = 0;

	*out = NULL;
	*nr = 0;
	memset(info, 0, sizeof(*info));
	for (size_t i = 0; i < m->nr; i++) {
		const struct map_entry *e = &m->entries[i];
		uint64_t start = lowest_sp(sps, nr_sps, e->start, e->end);

		if (!e->readable || !e->writable || device(e))
			continue;
		if (start < e->end) {
			info->stacks++;	/* a stack: a heap block is never one */
		} else if (heap(m, i)) {
			info->heap_maps++;
			info->heap_bytes += e->end - e->start;
			continue;
		} else {
			start = e->start;
		}
		if (vec__reserve(out, &cap, *nr + 1, sizeof(**out))) {
			free(*out);
			*out = NULL;
			*nr = 0;
			return -ENOMEM;
		}
		(*out)[(*nr)++] = (struct reach_range){ start, e->end };
	}
	return 0;
}
