/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which pages of a large root range hold anything (/proc/PID/pagemap): a
 * reservation of gigabytes never touched holds only zeros, and the
 * reachability scan (analyze/reach_run.c) need not read it, which would
 * keep the target held for as long as it takes to read gigabytes.
 */
#ifndef REACH_PAGEMAP_H
#define REACH_PAGEMAP_H

#include <stddef.h>
#include <stdint.h>

#define REACH_PAGEMAP_MIN (64ull << 20)	/* smaller ranges are read whole */

struct mem_run {
	uint64_t start, end;
};

/*
 * The runs of [start, end) whose pages are present or swapped out,
 * appended to *out (*nr of *cap), from the pagemap open at fd. A range
 * under REACH_PAGEMAP_MIN, or one whose pagemap cannot be read, comes
 * back whole. 0 or -ENOMEM.
 */
int reach_pagemap__runs(int fd, uint64_t start, uint64_t end, struct mem_run **out, size_t *nr,
			size_t *cap);

#endif
