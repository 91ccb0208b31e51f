/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User stacks for memleak.bpf.c, which includes this once: the per-thread
 * stack cache and the page windows the walks read the stack through
 * (stack_cache.bpf.h), the walk by frame pointers (fp_walk.bpf.h), the walk
 * by the CFI rows user space loads (--unwind, cfi_walk.bpf.h), and here the
 * stack map keyed by a hash of the frames, and the capture that uses them all.
 */
#ifndef STACK_BPF_H
#define STACK_BPF_H

/* Each uses what those before it define; the object's maps and programs keep their order. */
#include "stack_cache.bpf.h"
#include "fp_walk.bpf.h"
#include "cfi_walk.bpf.h"

static __always_inline bool same_stack(const struct stack_trace *a, const struct stack_trace *b)
{
	__u32 last = (a->nr - 1) & (MEMLEAK_STACK_SLOTS - 1);

	/* Depth and both ends: a full compare on every allocation costs too much. */
	return a->nr == b->nr && a->flags == b->flags && a->ips[0] == b->ips[0] &&
	       a->ips[last] == b->ips[last];
}

/*
 * What a cached walk depends on besides registers and stack: the unwind
 * rows of the mappings in slot (their generation, in active) and the stack
 * map (emptied at an exec).
 */
static __always_inline __u64 stack_cache_gen(__u64 active, __u32 slot)
{
	return ((active >> 32) ^ (__u64)slot << 24) << 32 | (__u32)(stacks_cleared + 1);
}

struct hash_walk {
	__u64 h;
	const struct stack_trace *st;
};

/* A loop of bpf_loop, not of the program: the verifier checks one round. */
static long hash_step(__u32 i, void *ctx)
{
	struct hash_walk *hw = ctx;

	hw->h = mix(hw->h, hw->st->ips[i & (MEMLEAK_STACK_SLOTS - 1)]);
	return 0;
}

/* The frames in st, stored once; their hash, or MEMLEAK_NO_STACK. */
static __always_inline __u64 store_stack(struct stack_trace *st)
{
	struct stack_trace *old;
	__u64 h;

	struct hash_walk hw = { mix(0x9e3779b97f4a7c15ULL, st->nr | (__u64)st->flags << 32), st };

	bpf_loop(st->nr & (MEMLEAK_STACK_SLOTS - 1), hash_step, &hw, 0);
	h = hw.h ?: 1;
	old = bpf_map_lookup_elem(&stack_traces, &h);
	if (old) {
		if (same_stack(old, st))
			return h;
		count(CNT_STACK_COLLISIONS);
		return MEMLEAK_NO_STACK;
	}
	if (!bpf_map_update_elem(&stack_traces, &h, st, BPF_NOEXIST))
		fill_add(&fill.stacks, &fill_mark.stacks);
	else if (!bpf_map_lookup_elem(&stack_traces, &h)) {
		count(CNT_STACKS_MAP_FULL);
		return MEMLEAK_NO_STACK;
	}
	return h;
}

/*
 * The caller's user stack, by the thread's stack cache (a set of two ways)
 * or a walk that refills it: its id in the stack map, or MEMLEAK_NO_STACK.
 */
static __always_inline __u64 capture_stack(struct pt_regs *ctx, struct stack_cache *set,
					   __u32 image, __u32 proc)
{
	__u32 slot = 0;
	/*
	 * A process of an exec'd image, or a fork with libraries of its own:
	 * by its own mappings (an image without: frame pointers).
	 */
	bool tables = unwind_mode == UNWIND_MODE_TABLES && unwind_slot(image, proc, &slot);
	__u64 active = unwind_active_of(slot), gen = stack_cache_gen(active, slot), id;
	bool match;
	struct stack_cache *c = stack_cache_pick(set, ctx, gen, &match);
	struct stack_reader r = { .c = c };
	struct stack_trace *st;
	__u32 zero = 0;

	r.win = bpf_map_lookup_elem(&stack_window, &zero);
	if (!r.win) {
		count(CNT_STACK_ERRORS);
		return MEMLEAK_NO_STACK;
	}
	r.win->len = 0;	/* what an earlier program read, on this CPU */
	if (match && stack_cache_hit(c, &r))
		return c->stack_id;
	/* A walk: where its frames go. */
	st = bpf_map_lookup_elem(&stack_scratch, &zero);
	if (!st) {
		count(CNT_STACK_ERRORS);
		return MEMLEAK_NO_STACK;
	}
	st->flags = 0;
	stack_cache_start(c, ctx);
	if (tables)
		unwind_user_stack(ctx, st, &r, slot, active);
	else
		walk_user_stack(ctx, st, &r);
	id = store_stack(st);
	/* Cut and truncated walks count a stop each time: walk those again. */
	if (id != MEMLEAK_NO_STACK && !st->flags && c->nr <= STACK_CACHE_WORDS) {
		c->stack_id = id;
		c->gen = gen;
	}
	return id;
}

#endif
