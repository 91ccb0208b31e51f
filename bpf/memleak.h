/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one header shared by the BPF programs and the user side. Plain
 * fixed-width types only: it is included both after vmlinux.h (BPF) and after
 * <linux/types.h> (user space).
 */
#ifndef MEMLEAK_H
#define MEMLEAK_H

#define MEMLEAK_MAX_STACK_DEPTH 127	/* PERF_MAX_STACK_DEPTH */
#define MEMLEAK_STACK_SLOTS 128		/* power of two above it, for masked indexing */
#define MEMLEAK_MAX_INTERNAL 8		/* address ranges of allocator code */
#define MEMLEAK_NO_STACK 0		/* stack id of allocations whose stack failed */

/*
 * Allocation APIs. The allocating ones come first: a site is keyed by one of
 * them. The releasing ones (>= API_FREE) never name a site.
 */
enum memleak_api {
	API_MALLOC,
	API_CALLOC,
	API_REALLOC,
	API_REALLOCARRAY,
	API_POSIX_MEMALIGN,
	API_ALIGNED_ALLOC,
	API_MEMALIGN,
	API_VALLOC,
	API_PVALLOC,
	API_MMAP,
	API_MREMAP,
	API_NEW,
	API_NEW_ARRAY,
	API_FREE,
	API_MUNMAP,
	API_DELETE,
	API_DELETE_ARRAY,
	API__COUNT,
};

#define API__ALLOCATING API_FREE

/* Drop and anomaly counters, indexed in the BPF .bss array `counters`. */
enum memleak_counter {
	CNT_ALLOCS_MAP_FULL,	/* live-allocation map full: allocation not tracked */
	CNT_SITES_MAP_FULL,	/* per-site map full: allocation not tracked */
	CNT_STACK_ERRORS,	/* user stack capture failed: tracked, stack unknown */
	CNT_STACKS_MAP_FULL,	/* stack map full: tracked, stack unknown */
	CNT_STACK_COLLISIONS,	/* two stacks with one hash: tracked, stack unknown */
	CNT_MISSED_RETURNS,	/* return probe without its entry */
	CNT_STATE_ERRORS,	/* no per-thread call state could be created */
	CNT_REPLACED,		/* new block at an address still tracked (a free was missed) */
	CNT_STOP_REQUESTS,	/* SIGSTOPs sent to the target at exec or library load */
	CNT_EXECS,		/* exec()s seen in the target */
	CNT__COUNT,
};

/* Value of the live-allocation map, keyed by the block's address (__u64). */
struct alloc_info {
	__u64 size;
	__u64 timestamp_ns;	/* bpf_ktime_get_ns() when the call returned */
	__u64 stack_id;		/* hash of the user stack; MEMLEAK_NO_STACK when unknown */
	__u32 api;		/* enum memleak_api */
	__u32 pad;
};

/* Value of the stack map, keyed by the stack's hash (__u64). */
struct stack_trace {
	__u32 nr;		/* frames in ips */
	__u32 pad;
	__u64 ips[MEMLEAK_STACK_SLOTS];	/* innermost first */
};

/* Key and value of the per-site map: one entry per (user stack, API). */
struct site_key {
	__u64 stack_id;
	__u32 api;
	__u32 pad;
};

struct site_stats {
	__u64 outstanding_bytes;
	__u64 outstanding_allocs;
	__u64 total_bytes;
	__u64 total_allocs;
};

/* What the BPF side tells user space through its ring buffer. */
enum memleak_event_kind {
	EVENT_STOPPED,		/* the process is being stopped for us: attach, then resume */
	EVENT_LIBRARIES,	/* the dynamic linker changed its list: reread the maps */
};

struct memleak_event {
	__u32 tgid;
	__u32 kind;		/* enum memleak_event_kind */
};

/* Address range of code whose own mmap/munmap calls are the allocator's. */
struct addr_range {
	__u64 start;
	__u64 end;
};

#endif /* MEMLEAK_H */
