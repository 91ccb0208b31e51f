/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User stacks for memleak.bpf.c, which includes this once: the per-thread
 * stack cache and the page windows the walks read the stack through
 * (stack_cache.bpf.h), the walk by frame pointers (fp_walk.bpf.h), the walk
 * by the CFI rows user space loads (--unwind, cfi_walk.bpf.h), the thread's
 * last CFI walk that the next takes its outer frames from (stack_trail.bpf.h),
 * and here the stacks sent to user space by a hash of their frames, and the
 * capture that uses them all.
 */
#ifndef STACK_BPF_H
#define STACK_BPF_H

/* Each uses what those before it define; the object's maps and programs keep their order. */
#include "stack_cache.bpf.h"
#include "fp_walk.bpf.h"
#include "cfi_walk.bpf.h"
#include "stack_trail.bpf.h"

/*
 * What a cached walk depends on besides registers and stack: the unwind
 * rows of the mappings in slot (their generation, in active) and the
 * stacks user space holds (stacks_cleared: it let go of some).
 */
static __always_inline __u64 stack_cache_gen(__u64 active, __u32 slot)
{
	return ((active >> 32) ^ (__u64)slot << 24) << 32 | (__u32)(stacks_cleared + 1);
}

/* Sets of known_stacks less one, and the ring's bytes that wake its reader: set before loading. */
const volatile __u32 known_mask = (1 << 16) - 1;
const volatile __u64 stack_ring_wake = 1 << 20;

/*
 * The depth, flags and both ends of st, hashed: what tells two stacks of
 * one id apart, as comparing them with the stack map's entry once did.
 */
static __always_inline __u64 stack_check(const struct stack_trace *st)
{
	__u32 nr = st->nr, last = (nr - 1) & (MEMLEAK_STACK_SLOTS - 1);
	__u64 first = nr ? st->ips[0] : 0, end = nr ? st->ips[last] : 0;

	return mix(mix(nr | (__u64)st->flags << 32, first), end) | 1;
}

enum known { KNOWN_NOT, KNOWN_SENT, KNOWN_OTHER };

/*
 * Was the stack of key (its id in this generation) and check sent? A way
 * is rewritten key first (to 0), then check, then key: a check read
 * between two reads of one key is that key's.
 */
static __always_inline enum known known_find(const struct known_set *s, __u64 key, __u64 check)
{
	for (int i = 0; i < MEMLEAK_KNOWN_WAYS; i++) {
		const struct known_stack *w = &s->way[i];

		if (*(volatile const __u64 *)&w->key != key)
			continue;
		if (*(volatile const __u64 *)&w->check == check)
			return KNOWN_SENT;
		return *(volatile const __u64 *)&w->key == key ? KNOWN_OTHER : KNOWN_NOT;
	}
	return KNOWN_NOT;
}

/* Remember a stack sent: in an empty way, else in any (a cache: the one lost is sent again). */
static __always_inline void known_add(struct known_set *s, __u64 key, __u64 check)
{
	__u32 i = bpf_get_prandom_u32();
	struct known_stack *w;

	for (__u32 j = 0; j < MEMLEAK_KNOWN_WAYS; j++) {
		if (!s->way[j].key) {
			i = j;
			break;
		}
	}
	w = &s->way[i & (MEMLEAK_KNOWN_WAYS - 1)];
	*(volatile __u64 *)&w->key = 0;
	*(volatile __u64 *)&w->check = check;
	*(volatile __u64 *)&w->key = key;
}

/*
 * len bytes of rec to user space, through the stack ring. The reader
 * looks by itself every few ms; woken only when this record fills the
 * ring past the mark.
 */
static __always_inline bool stack_ring_put(void *rec, __u64 len)
{
	__u64 avail = bpf_ringbuf_query(&stack_ring, BPF_RB_AVAIL_DATA);

	return !bpf_ringbuf_output(&stack_ring, rec, len,
				   avail < stack_ring_wake && avail + len >= stack_ring_wake ?
					   BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
}

/* rec to user space: its frames only. */
static __always_inline bool stack_send(struct stack_msg *rec)
{
	__u32 nr = rec->st.nr;

	if (nr > MEMLEAK_MAX_STACK_DEPTH)
		nr = MEMLEAK_MAX_STACK_DEPTH;
	return stack_ring_put(rec, sizeof(*rec) - sizeof(rec->st.ips) + nr * sizeof(rec->st.ips[0]));
}

/*
 * Where id of kind goes in known_stacks: its set (NULL: an error, the
 * caller's to count) and the key it is known by in this generation
 * (stacks_cleared). One table for all kinds: a cache, sized by
 * --stack-storage-size, where what is forgotten is sent again.
 */
static __always_inline struct known_set *known_set_of(__u64 id, __u32 kind, __u64 *key)
{
	__u32 idx = (__u32)(id >> 32) & known_mask;

	*key = (id ^ (stacks_cleared + 1ULL) * 0x9e3779b97f4a7c15ULL ^
		(__u64)kind * 0xc2b2ae3d27d4eb4fULL) ?: 1;
	return bpf_map_lookup_elem(&known_stacks, &idx);
}

/*
 * The id of rec's frames (a hash of their depth and flags and of frames,
 * the hash of the frames from the outermost, which trail_finish takes
 * from the trail where it can), sent to user space the first time in
 * this generation (stacks_cleared); MEMLEAK_NO_STACK when they collide
 * with another stack's, or could not be sent. A global function, which
 * the verifier checks once: its caller goes on from one answer it does
 * not know, not from each way of the set it could have found.
 */
__noinline __u64 store_stack(struct stack_msg *rec, __u64 frames)
{
	struct stack_trace *st;
	__u64 h, key, check;
	struct known_set *s;
	enum known k;

	if (!rec)
		return MEMLEAK_NO_STACK;
	st = &rec->st;
	check = stack_check(st);
	h = mix(frames, st->nr | (__u64)st->flags << 32) ?: 1;
	s = known_set_of(h, STACK_MSG_NATIVE, &key);
	if (!s) {
		count(CNT_STACK_ERRORS);
		return MEMLEAK_NO_STACK;
	}
	k = known_find(s, key, check);
	if (k == KNOWN_SENT)
		return h;
	if (k == KNOWN_OTHER) {
		count(CNT_STACK_COLLISIONS);
		return MEMLEAK_NO_STACK;
	}
	rec->h.id = h;
	rec->h.kind = STACK_MSG_NATIVE;
	if (!stack_send(rec)) {
		/* Not remembered: the next allocation from it sends it again. */
		count(CNT_STACK_RING_FULL);
		return MEMLEAK_NO_STACK;
	}
	known_add(s, key, check);
	return h;
}

/* A capture under way: what the cached stack and the walk go by. */
struct capture {
	struct stack_reader r;
	__u64 active, gen;
	__u32 slot;
	bool tables, match;
};

/*
 * The caller's user stack by the thread's stack cache (a set of two
 * ways): its id, or MEMLEAK_NO_STACK for a miss, with x ready for the
 * walk (capture_walk) that refills the way.
 */
static __always_inline __u64 capture_cached(struct pt_regs *ctx, struct stack_cache *set,
					    __u32 image, __u32 proc, struct capture *x)
{
	__u32 zero = 0;

	/*
	 * A process of an exec'd image, or a fork with libraries of its own:
	 * by its own mappings (an image without: frame pointers).
	 */
	x->slot = 0;
	x->tables = unwind_mode == UNWIND_MODE_TABLES && unwind_slot(image, proc, &x->slot);
	x->active = unwind_active_of(x->slot);
	x->gen = stack_cache_gen(x->active, x->slot);
	x->r.c = stack_cache_pick(set, ctx, x->gen, &x->match);
	x->r.n = NULL;
	x->r.win = bpf_map_lookup_elem(&stack_window, &zero);
	if (!x->r.win)
		return MEMLEAK_NO_STACK;
	x->r.win->len = 0;	/* what an earlier program read, on this CPU */
	if (x->match && stack_cache_hit(x->r.c, &x->r))
		return x->r.c->stack_id;
	return MEMLEAK_NO_STACK;
}

/*
 * ... else by a walk, shortened by the thread's trail: its id in the stack
 * map, or MEMLEAK_NO_STACK.
 */
static __always_inline __u64 capture_walk(struct pt_regs *ctx, struct capture *x,
					  struct stack_trail *trail)
{
	struct stack_cache *c = x->r.c;
	struct stack_msg *rec;
	struct stack_trace *st;
	__u32 zero = 0;
	__u64 id;

	/* Where its frames go. */
	rec = bpf_map_lookup_elem(&stack_scratch, &zero);
	x->r.n = bpf_map_lookup_elem(&walk_notes, &zero);
	if (!rec || !x->r.n || !x->r.win) {
		count(CNT_STACK_ERRORS);
		return MEMLEAK_NO_STACK;
	}
	trail_start(x->r.n, trail, x->gen, x->tables, PT_REGS_SP(ctx));
	st = &rec->st;
	st->flags = 0;
	stack_cache_start(c, ctx);
	if (x->tables)
		unwind_user_stack(ctx, st, &x->r, x->slot, x->active, trail);
	else
		walk_user_stack(ctx, st, &x->r);
	/* Cut and truncated walks are not a trail: their last frame is not the stack's end. */
	id = store_stack(rec, trail_finish(trail, x->r.n, st, x->gen,
					   x->tables && !st->flags ? PT_REGS_SP(ctx) : 0));
	/* Cut and truncated walks count a stop each time: walk those again. */
	if (id != MEMLEAK_NO_STACK && !st->flags && c->nr <= STACK_CACHE_WORDS) {
		c->stack_id = id;
		c->gen = x->gen;
	}
	return id;
}

#endif
