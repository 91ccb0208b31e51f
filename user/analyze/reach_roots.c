// SPDX-License-Identifier: GPL-2.0
/* The roots of the reachability scan, from the target's mappings (reach_roots.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "reach_roots.h"
#include "util/vec.h"

#define ARENA_ALIGN (64ull << 20)	/* glibc's HEAP_MAX_SIZE on 64-bit */
#define TLS_AFTER 4096			/* of [heap] after a thread pointer in it: its TCB */
#define DEAD_TOP 8192			/* of a dead thread's stack: its TCB, TLS, first frame */

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

/*
 * A thread stack no live thread runs on: anonymous, a guard page right
 * below it (glibc's, for every thread it starts), no stack pointer in it.
 * glibc keeps the stacks of threads that exited, to reuse them, with what
 * the dead threads left in them. memcheck has by then marked every frame
 * the thread popped as gone, and reads only what is above its last stack
 * pointer: the thread's descriptor and TLS at the top, and the frame that
 * ended it; so only the top DEAD_TOP bytes are roots.
 */
static bool dead_stack(const struct maps *m, size_t i)
{
	const struct map_entry *e = &m->entries[i], *g = i ? e - 1 : NULL;

	return !e->path[0] && g && g->end == e->start && !g->path[0] && !g->readable &&
	       !g->writable && !g->executable;
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

/* [heap] up to the TCB of a thread pointer in it (a static binary's), or nothing. */
static uint64_t heap_tls_end(const struct map_entry *e, const uint64_t *tps, size_t nr)
{
	uint64_t end = e->start;

	for (size_t i = 0; i < nr; i++)
		if (tps[i] >= e->start && tps[i] < e->end && tps[i] + TLS_AFTER > end)
			end = tps[i] + TLS_AFTER < e->end ? tps[i] + TLS_AFTER : e->end;
	return end;
}

static int add(struct reach_range **out, size_t *nr, size_t *cap, uint64_t start, uint64_t end)
{
	if (vec__reserve(out, cap, *nr + 1, sizeof(**out)))
		return -ENOMEM;
	(*out)[(*nr)++] = (struct reach_range){ start, end };
	return 0;
}

int reach_roots__choose(const struct maps *m, const uint64_t *sps, const uint64_t *tps,
			size_t nr_threads, struct reach_range **out, size_t *nr,
			struct reach_roots_info *info)
{
	size_t cap = 0;
	int err = 0;

	*out = NULL;
	*nr = 0;
	memset(info, 0, sizeof(*info));
	for (size_t i = 0; i < m->nr && !err; i++) {
		const struct map_entry *e = &m->entries[i];
		uint64_t start = lowest_sp(sps, nr_threads, e->start, e->end), end = e->end;

		if (!e->readable || !e->writable || device(e))
			continue;
		if (start < e->end) {
			info->stacks++;	/* a stack: a heap block is never one */
		} else if (dead_stack(m, i)) {
			info->dead_stacks++;
			start = e->end - e->start > DEAD_TOP ? e->end - DEAD_TOP : e->start;
		} else if (heap(m, i)) {
			info->heap_maps++;
			info->heap_bytes += e->end - e->start;
			start = e->start;
			end = heap_tls_end(e, tps, nr_threads);
		} else {
			start = e->start;
		}
		if (start < end)
			err = add(out, nr, &cap, start, end);
	}
	if (err) {
		free(*out);
		*out = NULL;
		*nr = 0;
	}
	return err;
}
