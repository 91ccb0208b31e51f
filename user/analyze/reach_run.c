// SPDX-License-Identifier: GPL-2.0
/* One reachability scan of a held target (reach_run.h). */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>
#include "memleak.h"
#include "reach.h"
#include "reach_roots.h"
#include "reach_run.h"
#include "target/reach_hold.h"
#include "target/reach_pagemap.h"
#include "util/proc.h"
#include "util/procmaps.h"
#include "util/nice.h"

/* The heap blocks: tracked mmaps are no blocks to memcheck, and are scanned as roots. */
static bool heap_block(const struct live_block *b)
{
	return b->api != API_MMAP && b->api != API_MREMAP;
}

/* What the hold and the blocks give the classifier. */
struct scan {
	struct reach_hold *hold;
	struct live_block *blocks;	/* the heap blocks first (nr_heap), then the mmaps */
	size_t nr_blocks, nr_heap;
	uint64_t *regs, *sps, *tps;
	struct reach_range *roots;
	size_t nr_roots;
	uint8_t *kinds;			/* per block of blocks */
};

/*
 * The heap blocks first, the mmaps after (the order is any: the sums by
 * stack take blocks and kinds side by side), so that the classifier reads
 * them in place, without a copy of their addresses and sizes (16 bytes a
 * block: 64 MiB of a 4 GiB heap of 1 KiB blocks).
 */
static int split_blocks(struct scan *s)
{
	size_t lo = 0, hi = s->nr_blocks;

	if (s->nr_blocks >= UINT32_MAX)
		return -E2BIG;	/* as the index (reach_index.h) */
	s->kinds = malloc(s->nr_blocks ?: 1);
	if (!s->kinds)
		return -ENOMEM;
	memset(s->kinds, REACH_SUM_NONE, s->nr_blocks);
	while (lo < hi) {
		if (heap_block(&s->blocks[lo])) {
			lo++;
		} else {
			struct live_block t = s->blocks[lo];

			s->blocks[lo] = s->blocks[--hi];
			s->blocks[hi] = t;
		}
	}
	s->nr_heap = lo;
	return 0;
}

static int take_registers(struct scan *s)
{
	const struct reach_hold *h = s->hold;

	s->regs = calloc(h->nr ? h->nr * REACH_HOLD_REGS : 1, sizeof(*s->regs));
	s->sps = calloc(h->nr ?: 1, sizeof(*s->sps));
	s->tps = calloc(h->nr ?: 1, sizeof(*s->tps));
	if (!s->regs || !s->sps || !s->tps)
		return -ENOMEM;
	for (size_t i = 0; i < h->nr; i++) {
		memcpy(s->regs + i * REACH_HOLD_REGS, h->threads[i].regs, sizeof(h->threads[i].regs));
		s->sps[i] = h->threads[i].sp;
		s->tps[i] = h->threads[i].tp;
	}
	return 0;
}

/* The roots less the pages of large ones that were never touched (reach_pagemap.h). */
static int only_present(struct scan *s)
{
	int fd = proc__open(s->hold->pid, "pagemap", O_RDONLY);
	struct reach_range *roots;
	struct mem_run *runs = NULL;
	size_t nr = 0, cap = 0;
	int err = 0;

	for (size_t i = 0; i < s->nr_roots && !err; i++)
		err = reach_pagemap__runs(fd, s->roots[i].start, s->roots[i].end, &runs, &nr, &cap);
	if (fd >= 0)
		close(fd);
	roots = err ? NULL : calloc(nr ?: 1, sizeof(*roots));
	for (size_t i = 0; roots && i < nr; i++)
		roots[i] = (struct reach_range){ runs[i].start, runs[i].end };
	free(runs);
	if (!roots)
		return err ?: -ENOMEM;
	free(s->roots);
	s->roots = roots;
	s->nr_roots = nr;
	return 0;
}

static int choose_roots(struct scan *s)
{
	struct reach_roots_info info;
	struct maps *m;
	int err = maps__read(s->hold->pid, &m);

	if (err)
		return err;
	err = reach_roots__choose(m, s->sps, s->tps, s->hold->nr, &s->roots, &s->nr_roots, &info);
	maps__free(m);
	return err ?: only_present(s);
}

/* A live block starts with its address and size: the classifier's struct reach_block. */
_Static_assert(offsetof(struct live_block, addr) == offsetof(struct reach_block, addr) &&
	       offsetof(struct live_block, size) == offsetof(struct reach_block, size),
	       "live_block must start as reach_block does");

static int classify(struct scan *s, struct reach_stats *st)
{
	struct reach_input in = {
		.blocks = (const struct reach_block *)s->blocks, .nr_blocks = s->nr_heap,
		.stride = sizeof(*s->blocks),
		.roots = s->roots, .nr_roots = s->nr_roots,
		.regs = s->regs, .nr_regs = s->hold->nr * REACH_HOLD_REGS,
		.read = reach_hold__read, .ctx = s->hold,
	};

	return reach__classify(&in, s->kinds, st);
}

/* Everything while the target is held. */
static int scan_held(struct scan *s, const struct reach_run_ops *ops, struct reach_stats *st)
{
	int err = ops->blocks(ops->ctx, &s->blocks, &s->nr_blocks);

	err = err ?: split_blocks(s) ?: take_registers(s) ?: choose_roots(s);
	return err ?: classify(s, st);
}

static void scan_free(struct scan *s)
{
	free(s->blocks);
	free(s->regs);
	free(s->sps);
	free(s->tps);
	free(s->roots);
	free(s->kinds);
}

static double ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) * 1e3 + (double)(now.tv_nsec - t0->tv_nsec) / 1e6;
}

/*
 * What a scan reads per second while it holds the target, when this run
 * has not scanned a big heap yet: scripts/bench_reach.py's 4 GiB heap was
 * held 9.4 s, its 1 GiB 1.5 to 2.1 s, on a loaded 2-vCPU VM. The slow end:
 * the line had better not promise a shorter hold than comes.
 */
#define REACH_MIB_PER_S 430.0
#define REACH_BIG_HEAP (256ull << 20)	/* a heap this big is told its hold first */

/*
 * Before a long hold, how long: the live heap, and the hold it takes at
 * this run's last big scan's rate, else the one measured here. The roots
 * come on top (the heap is most of what a big scan reads).
 */
static void say_expected_hold(const struct reach_run_ops *ops, pid_t pid)
{
	const struct report_reach *last = ops->last;
	double mib, rate = REACH_MIB_PER_S;
	bool measured = false;

	if (ops->heap_bytes < REACH_BIG_HEAP)
		return;
	mib = (double)ops->heap_bytes / (1 << 20);
	if (last && last->held_ms > 0 && last->root_bytes + last->block_bytes >= REACH_BIG_HEAP) {
		rate = (double)(last->root_bytes + last->block_bytes) / (1 << 20) / last->held_ms * 1e3;
		measured = true;
	}
	fprintf(stderr, "memleakbpf: reachability of pid %d: %.1f GiB of live heap blocks to scan; "
		"the target will be held about %.1f s (%.0f MiB/s, %s)\n", pid, mib / 1024,
		mib / rate, rate, measured ? "this run's last scan" : "as measured on a 2-vCPU VM");
}

/*
 * The scan runs ahead of other work while it holds the target: its hold is
 * wall time, and on a loaded machine most of it was spent waiting for a CPU
 * (a 1 GiB heap: 2.2 s of CPU, held 7.4 s at a load of 12 on 2 CPUs). Back
 * to the thread's own nice value after. Without CAP_SYS_NICE: as before.
 */
#define REACH_RUN_NICE (-10)

int reach_run__scan(pid_t pid, const struct reach_run_ops *ops, struct reach_sum **out,
		    char *err, size_t errlen)
{
	struct scan s = { 0 };
	struct reach_stats st = { 0 };
	struct timespec t0;
	unsigned threads = 0;
	double held_ms, scan_ms;
	int e, was;

	*out = NULL;
	say_expected_hold(ops, pid);
	was = nice__raise(REACH_RUN_NICE);
	e = reach_hold__take(pid, REACH_RUN_STOP_MS, &s.hold, err, errlen);
	if (e) {
		nice__restore(was);
		return e;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	threads = (unsigned)s.hold->nr;
	e = scan_held(&s, ops, &st);
	scan_ms = ms_since(&t0);
	held_ms = reach_hold__release(s.hold);
	nice__restore(was);
	if (!e)
		e = reach_sum__build(s.blocks, s.kinds, s.nr_blocks, out);
	if (e) {
		snprintf(err, errlen, "reachability scan of pid %d failed: %s", pid, strerror(-e));
	} else {
		(*out)->head.held_ms = held_ms;
		(*out)->head.scan_ms = scan_ms;
		(*out)->head.threads = threads;
		(*out)->head.root_bytes = st.root_bytes;
		(*out)->head.block_bytes = st.block_bytes;
		(*out)->head.unread_bytes = st.unread_bytes;
	}
	scan_free(&s);
	return e;
}

void reach_run__say(pid_t pid, const struct report_reach *h)
{
	fprintf(stderr, "memleakbpf: reachability of pid %d%s: held %.1f ms (the scan %.1f ms), %u thread%s, %.1f MiB of roots and %.1f MiB of blocks read\n",
		pid, h->at_exit ? " at its exit" : "", h->held_ms, h->scan_ms, h->threads,
		h->threads == 1 ? "" : "s", h->root_bytes / 1048576.0, h->block_bytes / 1048576.0);
}
