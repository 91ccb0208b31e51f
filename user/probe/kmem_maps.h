/* SPDX-License-Identifier: GPL-2.0 */
/*
 * -k's BPF object (bpf/kmem.bpf.c) has its maps and .bss owned here, as
 * bpfmaps.c owns memleak.bpf.c's: the files of kmem say what they read, and
 * only this module calls libbpf's map functions on them (the layout check
 * holds it to that).
 */
#ifndef KMEM_MAPS_H
#define KMEM_MAPS_H

#include <stdint.h>
#include <linux/types.h>
#include "memleak.h"
#include "kmem_types.h"
#include "kmem.skel.h"

/* Before the object loads: room for max_allocs live blocks and stacks stacks. */
void kmem_maps__size(struct kmem_bpf *skel, uint32_t max_allocs, uint32_t stacks);

/* A BPF counter, the live totals (bpf/peak.bpf.h), the word the clock keeps. */
static inline uint64_t kmem_maps__counter(const struct kmem_bpf *skel, enum memleak_counter c)
{
	return __atomic_load_n(&skel->bss->counters[c], __ATOMIC_RELAXED);
}

static inline const struct memleak_live *kmem_maps__live(const struct kmem_bpf *skel)
{
	return skel->bss->live;
}

static inline volatile uint64_t *kmem_maps__now_ns(struct kmem_bpf *skel)
{
	return (volatile uint64_t *)&skel->bss->now_ns;
}

/* Stack id's frames: 0, or -errno. */
int kmem_maps__stack_lookup(const struct kmem_bpf *skel, uint64_t id, struct stack_trace *buf);

/* Each site's key and counts, to fn (0 or -errno; non-zero ends the walk and is returned). */
typedef int (*kmem_maps_site_fn)(void *ctx, const struct kmem_site_key *key,
				 const struct site_counts *c);
int kmem_maps__each_site(const struct kmem_bpf *skel, kmem_maps_site_fn fn, void *ctx);

/* Every live block, KMEM_MAPS_BATCH at a time, to fn: 0 or -errno. */
#define KMEM_MAPS_BATCH 4096
typedef void (*kmem_maps_blocks_fn)(void *ctx, const struct kmem_block *b, __u32 n);
int kmem_maps__each_block(const struct kmem_bpf *skel, kmem_maps_blocks_fn fn, void *ctx);

#endif
