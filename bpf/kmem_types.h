/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's own allocations (-k, bpf/kmem.bpf.c): what the kernel-mode
 * programs and user/probe/kmem.c share, beside memleak.h's counters, site
 * figures and stack layout. Plain fixed-width types only, as memleak.h.
 */
#ifndef KMEM_TYPES_H
#define KMEM_TYPES_H

/*
 * Where a block's address lives: kfree and kmem_cache_free both free slab
 * objects (kmalloc's and a cache's alike), pages are named by their struct
 * page, per-CPU blocks by their __percpu pointer. The same number in two
 * spaces is two blocks.
 */
enum kmem_space {
	KMEM_SLAB,
	KMEM_PAGES,
	KMEM_PERCPU,
};

struct kmem_key {
	__u64 addr;
	__u32 space;		/* enum kmem_space */
	__u32 pad;
};

/* A live block: its size, when it was allocated, and its site's key. */
struct kmem_block {
	__u64 size;
	__u64 timestamp_ns;	/* CLOCK_MONOTONIC to 5 ms, as alloc_info's */
	__u64 stack_id;		/* MEMLEAK_NO_STACK: its stack was not captured */
	__u32 api;		/* enum memleak_api: API_KMALLOC ... */
	__u32 pad;
};

/* A site: one kernel stack and the API it called (values: struct site_counts, shard 0 only). */
struct kmem_site_key {
	__u64 stack_id;
	__u32 api;
	__u32 pad;
};

/* Frames of the capture itself on top of a tp_btf program's kernel stack. */
#define KMEM_SKIP_FRAMES 2

/* The default room for kernel stacks: they are fewer than a big program's. */
#define KMEM_DEFAULT_STACKS 16384

#endif
