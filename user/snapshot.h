/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A copy of the BPF maps at one moment, as plain arrays. snapshot.c is the
 * only reader of map fds; everything downstream works on this struct.
 */
#ifndef SNAPSHOT_H
#define SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "memleak.h"

struct snap_site {
	uint64_t stack_id;	/* hash of the stack; MEMLEAK_NO_STACK when unknown */
	uint32_t api;		/* enum memleak_api */
	struct site_stats stats;
	uint32_t nr_ips;	/* 0 for MEMLEAK_NO_STACK */
	uint64_t ips[MEMLEAK_MAX_STACK_DEPTH];	/* innermost first, as captured */
};

struct snapshot {
	struct snap_site *sites;
	size_t nr;
	uint64_t counters[CNT__COUNT];
	/*
	 * With older_ns, sites[].stats.outstanding_* count only the old blocks;
	 * these keep the figures for every live block, for the totals.
	 */
	bool older;
	uint64_t all_outstanding_bytes;
	uint64_t all_outstanding_allocs;
};

struct probes;

/*
 * Copy the per-site figures, their stacks and the counters. With older_ns,
 * the outstanding figures count only live blocks older than that (walks the
 * live-allocation map); totals still cover everything. 0 or -errno.
 */
int snapshot__collect(struct probes *p, uint64_t older_ns, struct snapshot **out);
void snapshot__free(struct snapshot *snap);

#endif
