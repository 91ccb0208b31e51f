/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The target's memory as the kernel sees it: resident and anonymous bytes
 * (/proc/PID/status, /proc/PID/smaps_rollup), its [heap] segment and glibc's
 * thread-arena heaps (/proc/PID/maps). The parsers are pure, so that they
 * are tested on saved text; memstat__read is the only function doing I/O.
 */
#ifndef MEMSTAT_H
#define MEMSTAT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * glibc's HEAP_MAX_SIZE on 64-bit: every thread arena lives in heaps of
 * this size, each mapped at a multiple of it.
 */
#define MEMSTAT_ARENA_HEAP (64ull << 20)

struct maps;

struct memstat {
	uint64_t rss;		/* resident bytes */
	uint64_t anon;		/* of those, anonymous */
	uint64_t swap;		/* swapped out */
	bool rollup;		/* rss/anon from smaps_rollup (exact), not status (counters) */
	uint64_t heap;		/* the [heap] (brk) segment */
	uint32_t arenas;	/* glibc thread-arena heaps */
	uint64_t arena;		/* their read-write part: what the arenas ever used */
	uint64_t arena_reserved;	/* their whole mappings, MEMSTAT_ARENA_HEAP each */
};

/* VmRSS, RssAnon, VmSwap of /proc/PID/status. -EINVAL without VmRSS (a zombie). */
int memstat__parse_status(const char *text, struct memstat *m);
/* Rss, Anonymous, Swap of /proc/PID/smaps_rollup (they replace status's). -EINVAL without Rss. */
int memstat__parse_rollup(const char *text, struct memstat *m);
/* [heap] and the thread-arena heaps of parsed /proc/PID/maps. */
void memstat__add_maps(const struct maps *maps, struct memstat *m);
/* All of the above for pid. 0 or -errno (-ENOENT, -ESRCH: the target is gone). */
int memstat__read(pid_t pid, struct memstat *m);

#endif
