/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which of the target's memory is a root of the reachability scan (reach.h),
 * from its mappings, its threads' stack pointers and where the live heap
 * blocks are. Pure. As memcheck's: every readable and writable mapping
 * (the objects' .data and .bss, the anonymous memory after them, thread
 * stacks and TLS, the program's own mmaps), but not the heap itself:
 *
 * - not [heap] (brk), nor an anonymous mapping laid out as a glibc arena
 *   heap (64 MiB aligned, its reserved rest inaccessible after it): their
 *   free memory keeps stale pointers, and memcheck never scans the
 *   allocator's memory. Other anonymous mappings are roots less the live
 *   blocks in them (reach.c takes the blocks out of every root): glibc's
 *   blocks of 128 KiB and more are mappings of their own, which the kernel
 *   may merge with a neighbour that holds roots (the main thread's TLS).
 *   So another allocator's spans (tcmalloc, jemalloc) are roots but for
 *   their live blocks: a stale pointer in their free memory can make a
 *   lost block look reachable, never the other way round;
 * - a stack from the thread's stack pointer to the mapping's end only
 *   (below it is dead, as memcheck marks it); of the stacks glibc keeps of
 *   threads that exited (a guard page below, no thread on them), the top
 *   8 KiB: the dead thread's descriptor, TLS and last frame;
 * - in [heap], a static binary's main-thread TLS: glibc (2.36) allocates
 *   it there before malloc runs, so [heap] from its start up to a page past
 *   the thread pointer (the TCB, 2.3 KiB, and the first chunk's header);
 * - no device mapping (/dev/..., but /dev/zero and /dev/shm).
 */
#ifndef REACH_ROOTS_H
#define REACH_ROOTS_H

#include <stddef.h>
#include <stdint.h>
#include "analyze/reach.h"
#include "util/procmaps.h"

struct reach_roots_info {
	uint64_t heap_bytes;	/* of mappings left out as heap */
	size_t heap_maps;
	size_t stacks;		/* mappings scanned from a stack pointer */
	size_t dead_stacks;	/* thread stacks kept for reuse: only their top read */
};

/*
 * The roots, into *out (*nr ranges; the caller frees it). sps and tps: the
 * threads' stack and thread pointers, nr_threads of each. 0 or -ENOMEM.
 */
int reach_roots__choose(const struct maps *m, const uint64_t *sps, const uint64_t *tps,
			size_t nr_threads, struct reach_range **out, size_t *nr,
			struct reach_roots_info *info);

#endif
