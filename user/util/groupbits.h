/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A bit for each group of a table's entries (2^shift entries a group), set
 * once an entry of the group was written: a walk of the table passes over
 * the groups whose bit is clear without touching their pages. BPF keeps
 * those of the site and live-block tables (bpf/memleak.h); the carried
 * reading keeps its own for its per-slot arrays (probe/snapshot_kept.c).
 */
#ifndef GROUPBITS_H
#define GROUPBITS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* Is entry i's group marked? */
static inline bool groupbits__marked(const volatile __u64 *words, unsigned shift, size_t i)
{
	size_t g = i >> shift;

	return __atomic_load_n(&words[g / 64], __ATOMIC_ACQUIRE) & (1ull << (g % 64));
}

/* The first of nr entries at or after i whose group is marked (nr: none). */
static inline size_t groupbits__next(const volatile __u64 *words, unsigned shift, size_t nr,
				     size_t i)
{
	while (i < nr && !groupbits__marked(words, shift, i))
		i = ((i >> shift) + 1) << shift;
	return i < nr ? i : nr;
}

#endif
