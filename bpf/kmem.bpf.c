// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's own allocations (-k): kmalloc, kmem_cache_alloc, the page
 * allocator and per-CPU blocks, through their BTF tracepoints (tp_btf:
 * attached by BPF links, no tracefs). One record per live block keyed by
 * its address space and address, and per (kernel stack, API) figures kept
 * up to date here, as memleak.bpf.c keeps them for a process.
 *
 * Every map is preallocated: a program that allocated to store a block
 * would trace its own allocation.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "memleak.h"
#include "kmem_types.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u64 min_size = 0;
const volatile __u64 max_size = ~0ULL;
const volatile __u64 page_size = 4096;
const volatile __u32 self_tgid = 0;	/* the tracer: reading its maps allocates */
/*
 * Benchmarking only (make bench): the programs return at once; or they take
 * no kernel stack (what the kernel's unwinder costs).
 */
const volatile bool bench_floor = false;
const volatile bool bench_no_stack = false;

__u64 counters[CNT__COUNT];
__u64 now_ns;	/* CLOCK_MONOTONIC to 5 ms, kept by a thread of the tracer (user/probe/clock.c) */

/* peak.bpf.h's timestamp (memleak.bpf.c's reads the kernel's under sampling; -k has none). */
static __always_inline __u64 stamp_ns(void)
{
	return now_ns;
}

/* peak.bpf.h's event, when user space sets a mark (it does not under -k). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} events SEC(".maps");

#include "peak.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct kmem_key);
	__type(value, struct kmem_block);
	__uint(max_entries, 1);	/* --max-allocs, set before load */
} blocks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct kmem_site_key);
	__type(value, struct site_counts);
	__uint(max_entries, 1);	/* from --stack-storage-size */
} sites SEC(".maps");

/* Stacks keyed by a 64-bit hash of their frames: a shared bucket fails no capture. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u64);
	__type(value, struct stack_trace);
	__uint(max_entries, 1);	/* --stack-storage-size */
} stacks SEC(".maps");

/*
 * The capture's room, a stack being too big for the BPF stack: one per
 * level of nesting on a CPU. A tracepoint's program runs with preemption
 * off, but an interrupt that allocates runs another of ours on the same
 * CPU in the middle of a capture (task, softirq, hardirq: each level
 * ends before the one it interrupted goes on), which would write its
 * stack over the one under way.
 */
#define KMEM_NEST 4

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct stack_trace);
	__uint(max_entries, KMEM_NEST);
} scratch SEC(".maps");

/* Captures under way on the CPU: the level of the next one. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1);
} scratch_depth SEC(".maps");

static __always_inline void count(enum memleak_counter c)
{
	if (c < CNT__COUNT)
		__sync_fetch_and_add(&counters[c], 1);
}

/* FNV-1a over the frames: the stack's id, never MEMLEAK_NO_STACK. */
static __always_inline __u64 stack_hash(const struct stack_trace *st)
{
	__u64 h = 0xcbf29ce484222325ULL;

	for (int i = 0; i < MEMLEAK_MAX_STACK_DEPTH; i++) {
		if (i >= st->nr)
			break;
		h = (h ^ st->ips[i]) * 0x100000001b3ULL;
	}
	return h ?: 1;
}

/*
 * Two stacks with one hash: told apart by their depth and three frames
 * (a full comparison would cost every allocation a loop over the frames).
 */
static __always_inline bool same_stack(const struct stack_trace *a, const struct stack_trace *b)
{
	__u32 n = a->nr, mid = n / 2;

	if (n != b->nr || !n || n > MEMLEAK_MAX_STACK_DEPTH)
		return n == b->nr;
	return a->ips[0] == b->ips[0] && a->ips[mid & (MEMLEAK_STACK_SLOTS - 1)] ==
	       b->ips[mid & (MEMLEAK_STACK_SLOTS - 1)] &&
	       a->ips[(n - 1) & (MEMLEAK_STACK_SLOTS - 1)] == b->ips[(n - 1) & (MEMLEAK_STACK_SLOTS - 1)];
}

/* The kernel stack of this allocation, in st, stored once: its id, or MEMLEAK_NO_STACK. */
static __always_inline __u64 capture_in(void *ctx, struct stack_trace *st)
{
	struct stack_trace *old;
	long n;
	__u64 id;

	if (!st)
		return MEMLEAK_NO_STACK;
	/*
	 * The first two frames are the capture's: this program, and
	 * bpf_trace_runN that called it from the tracepoint. The stack starts
	 * at the function that hit the tracepoint (kmalloc_noprof, ...).
	 */
	n = bpf_get_stack(ctx, st->ips, MEMLEAK_MAX_STACK_DEPTH * sizeof(__u64), KMEM_SKIP_FRAMES);
	if (n <= 0) {
		count(CNT_STACK_ERRORS);
		return MEMLEAK_NO_STACK;
	}
	st->nr = n / sizeof(__u64);
	/* A full buffer: the stack may go on beyond it. */
	st->flags = st->nr >= MEMLEAK_MAX_STACK_DEPTH ? STACK_TRUNCATED : 0;
	id = stack_hash(st);
	old = bpf_map_lookup_elem(&stacks, &id);
	if (old) {
		if (same_stack(st, old))
			return id;
		count(CNT_STACK_COLLISIONS);
		return MEMLEAK_NO_STACK;
	}
	n = bpf_map_update_elem(&stacks, &id, st, BPF_NOEXIST);
	if (n == -17 /* EEXIST: another CPU stored it */ || !n)
		return id;
	count(n == -16 /* EBUSY */ ? CNT_KERNEL_MISSED : CNT_STACKS_MAP_FULL);
	return MEMLEAK_NO_STACK;
}

/*
 * ... in the room of its level of nesting. An interrupt's program between
 * the read and the write of the depth ends before this one goes on, and
 * leaves it as it found it.
 */
static __always_inline __u64 capture(void *ctx)
{
	__u32 zero = 0, level, *depth = bpf_map_lookup_elem(&scratch_depth, &zero);
	__u64 id;

	if (bench_no_stack)
		return MEMLEAK_NO_STACK;
	if (!depth || *depth >= KMEM_NEST) {
		count(CNT_STACK_ERRORS);
		return MEMLEAK_NO_STACK;
	}
	level = (*depth)++;
	id = capture_in(ctx, bpf_map_lookup_elem(&scratch, &level));
	(*depth)--;
	return id;
}

static __always_inline struct site_counts *site_of(__u64 stack_id, __u32 api, bool make)
{
	struct kmem_site_key key = { .stack_id = stack_id, .api = api };
	struct site_counts *c = bpf_map_lookup_elem(&sites, &key), zero = {};
	long err;

	if (c || !make)
		return c;
	err = bpf_map_update_elem(&sites, &key, &zero, BPF_NOEXIST);
	if (err && err != -17)
		count(err == -16 ? CNT_KERNEL_MISSED : CNT_SITES_MAP_FULL);
	return bpf_map_lookup_elem(&sites, &key);
}

/* A block's site counts it freed, and the live bytes go down. */
static __always_inline void credit_free(const struct kmem_block *b)
{
	struct site_counts *c = site_of(b->stack_id, b->api, false);

	if (c) {
		__sync_fetch_and_add(&c->freed_bytes, b->size);
		__sync_fetch_and_add(&c->freed_allocs, 1);
	}
	live_sub(KIND_HEAP, b->size);
}

static __always_inline bool ours(void)
{
	return bench_floor || (bpf_get_current_pid_tgid() >> 32) == self_tgid;
}

static __always_inline void on_alloc(void *ctx, __u64 addr, __u32 space, __u64 size, __u32 api)
{
	struct kmem_key key = { .addr = addr, .space = space };
	struct kmem_block b = { .size = size, .timestamp_ns = now_ns, .api = api }, *old;
	struct site_counts *c;
	long err;

	if (addr < 4096 || size < min_size || size > max_size || ours())
		return;	/* NULL and ZERO_SIZE_PTR are no blocks */
	b.stack_id = capture(ctx);
	c = site_of(b.stack_id, api, true);
	if (!c)
		return;	/* counted: not tracked */
	old = bpf_map_lookup_elem(&blocks, &key);
	if (old) {
		/* Its free was missed: the old block is gone, this one is new. */
		credit_free(old);
		count(CNT_REPLACED);
	}
	err = bpf_map_update_elem(&blocks, &key, &b, BPF_ANY);
	if (err) {
		count(err == -16 ? CNT_KERNEL_MISSED : CNT_ALLOCS_MAP_FULL);
		return;
	}
	__sync_fetch_and_add(&c->total_bytes, size);
	__sync_fetch_and_add(&c->total_allocs, 1);
	live_add(KIND_HEAP, size);
}

static __always_inline void on_free(__u64 addr, __u32 space)
{
	struct kmem_key key = { .addr = addr, .space = space };
	struct kmem_block *b;

	if (addr < 4096 || bench_floor)
		return;
	b = bpf_map_lookup_elem(&blocks, &key);
	if (!b) {
		count(CNT_UNTRACKED_FREES);
		return;
	}
	credit_free(b);
	if (bpf_map_delete_elem(&blocks, &key) == -16)
		count(CNT_KERNEL_MISSED);
}

SEC("tp_btf/kmalloc")
int BPF_PROG(kmalloc_enter, unsigned long call_site, const void *ptr, size_t bytes_req,
	     size_t bytes_alloc, gfp_t gfp_flags, int node)
{
	on_alloc(ctx, (__u64)ptr, KMEM_SLAB, bytes_alloc, API_KMALLOC);
	return 0;
}

SEC("tp_btf/kmem_cache_alloc")
int BPF_PROG(kmem_cache_alloc_enter, unsigned long call_site, const void *ptr,
	     struct kmem_cache *s, gfp_t gfp_flags, int node)
{
	on_alloc(ctx, (__u64)ptr, KMEM_SLAB, BPF_CORE_READ(s, size), API_KMEM_CACHE_ALLOC);
	return 0;
}

SEC("tp_btf/kfree")
int BPF_PROG(kfree_enter, unsigned long call_site, const void *ptr)
{
	on_free((__u64)ptr, KMEM_SLAB);
	return 0;
}

SEC("tp_btf/kmem_cache_free")
int BPF_PROG(kmem_cache_free_enter, unsigned long call_site, const void *ptr,
	     const struct kmem_cache *s)
{
	on_free((__u64)ptr, KMEM_SLAB);
	return 0;
}

/*
 * Frees with no tracepoint of their own: objects freed in bulk (kfree_bulk,
 * the RCU batches of kfree_rcu), and objects handed to kfree_rcu, which
 * caches with sheaves free without kmem_cache_free's tracepoint. Without
 * these their blocks would stay outstanding and the address, reused, would
 * count a missed free (replaced). A kfree_rcu'd object counts freed when
 * handed over: nothing may use it from then on.
 */
struct bulk_ctx {
	void **p;
};

static long free_one(__u64 i, void *arg)
{
	struct bulk_ctx *c = arg;
	void *ptr = NULL;

	bpf_probe_read_kernel(&ptr, sizeof(ptr), &c->p[i]);
	on_free((__u64)ptr, KMEM_SLAB);
	return 0;
}

SEC("fentry/kmem_cache_free_bulk")
int BPF_PROG(kmem_cache_free_bulk_enter, struct kmem_cache *s, size_t size, void **p)
{
	struct bulk_ctx c = { p };

	bpf_loop(size, free_one, &c, 0);
	return 0;
}

SEC("fentry/kvfree_call_rcu")
int BPF_PROG(kvfree_call_rcu_enter, struct callback_head *head, void *ptr)
{
	on_free((__u64)ptr, KMEM_SLAB);
	return 0;
}

SEC("tp_btf/mm_page_alloc")
int BPF_PROG(mm_page_alloc_enter, struct page *page, unsigned int order, gfp_t gfp_flags,
	     int migratetype)
{
	on_alloc(ctx, (__u64)page, KMEM_PAGES, page_size << (order & 31), API_PAGES);
	return 0;
}

SEC("tp_btf/mm_page_free")
int BPF_PROG(mm_page_free_enter, struct page *page, unsigned int order)
{
	on_free((__u64)page, KMEM_PAGES);
	return 0;
}

SEC("tp_btf/mm_page_free_batched")
int BPF_PROG(mm_page_free_batched_enter, struct page *page)
{
	on_free((__u64)page, KMEM_PAGES);
	return 0;
}

SEC("tp_btf/percpu_alloc_percpu")
int BPF_PROG(percpu_alloc_enter, unsigned long call_site, bool reserved, bool is_atomic,
	     size_t size, size_t align, void *base_addr, int off, void *ptr, size_t bytes_alloc,
	     gfp_t gfp_flags)
{
	on_alloc(ctx, (__u64)ptr, KMEM_PERCPU, bytes_alloc, API_PERCPU);
	return 0;
}

SEC("tp_btf/percpu_free_percpu")
int BPF_PROG(percpu_free_enter, void *base_addr, int off, void *ptr)
{
	on_free((__u64)ptr, KMEM_PERCPU);
	return 0;
}
