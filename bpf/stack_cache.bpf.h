/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-thread stack cache, and the page windows the walks read the user
 * stack through, noting each word they use in the cache; for stack.bpf.h,
 * which includes this once, before the walks.
 */
#ifndef STACK_CACHE_BPF_H
#define STACK_CACHE_BPF_H

/*
 * A stack a thread allocated from, and what its walk read. A walk's
 * frames follow from nothing but the registers it starts from, the unwind
 * rows of its generation and the stack words it reads: when the thread
 * allocates again with the same registers and those words still hold the
 * same values, the walk would find the same frames. One read of the stack
 * and a compare then stand in for the walk, and for hashing and looking up
 * its frames: a loop that allocates pays for its stack once.
 */
#define STACK_CACHE_WORDS 64		/* stack words a cached walk may have read */
#define STACK_CACHE_WINDOW 8192		/* bytes, from sp - 16, they may lie in */
#define STACK_CACHE_FULL 0xffff		/* nr: the walk read what the cache cannot hold */

struct stack_cache {
	__u64 ip, sp, bp;	/* the registers the walk started from */
	__u64 gen;		/* stack_cache_gen() of the walk; 0: nothing cached */
	__u64 stack_id;
	__u32 nr;		/* words in off and val, or STACK_CACHE_FULL */
	__u32 span;		/* bytes from sp - 16 that hold them */
	__u32 bp_used;		/* the walk depended on the starting %rbp */
	__u32 mru;		/* in a set's first way: which of its two was used last */
	__u64 val[STACK_CACHE_WORDS];
	__u16 off[STACK_CACHE_WORDS];	/* in words, from sp - 16 */
};

/*
 * The stack words of [lo, lo + len). Kept in the map rather than on the
 * BPF stack: the verifier then sees lo and len as unknown at every round of
 * the walkers' loops instead of tracking each value they could take.
 */
struct stack_window {
	__u64 lo;
	__u32 len;
	__u32 pad;
	__u64 w[STACK_CACHE_WINDOW / 8];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct stack_window);
	__uint(max_entries, 1);
} stack_window SEC(".maps");

/*
 * Bumped by user space whenever it lets go of stacks (an exec, a sweep):
 * the threads' caches and the stacks known as sent forget them.
 */
__u32 stacks_cleared;

/*
 * A thread allocates from some call sites at some depths in turn: each
 * (return address, stack pointer) has its set of two ways, so that
 * alternating sites keep their stacks. jq found its stack cached in 42% of
 * its allocations with 4 direct-mapped ways, 76% with 32, no more with 64;
 * with one way per set, how many of those collided depended on where ASLR put
 * the stack (Python: from 4% to 28% of its allocations). 32 ways of 64
 * words are 22 KiB of task storage per thread that allocates.
 */
#define STACK_CACHE_WAYS 32

/* The first of the two ways (return address, stack pointer) may be cached in. */
static __always_inline struct stack_cache *stack_cache_set(struct stack_cache *ways,
							   struct pt_regs *ctx)
{
	__u64 k = (PT_REGS_IP(ctx) ^ PT_REGS_SP(ctx) >> 4) * 0x9e3779b97f4a7c15ULL;

	return &ways[(k >> 58) & (STACK_CACHE_WAYS - 2)];
}

/*
 * What the walk under way read, and each of its frames' state when it got
 * there: written into the thread's trail (stack_trail.bpf.h) when the walk
 * ends. Per-CPU, like the window.
 */
#define WALK_NOTE_WORDS 256
#define WALK_NOTES_FULL 0xffff	/* nw: the walk read more, or what a trail cannot hold */

struct walk_notes {
	__u32 nw;		/* words in addr and val, or WALK_NOTES_FULL */
	__u32 seek;		/* the walk may still meet the trail */
	__u32 q;		/* the trail's position it looks at */
	__u32 met;		/* it met the trail there + 1; 0: it did not */
	__u32 at;		/* ... at this frame of its own */
	__u32 to_check, checked;	/* words of the trail (stack_trail.bpf.h) */
	__u32 note_nr, note_span;	/* ... the cache way's words and span, as they are noted */
	__u64 owner;		/* the stack pointer the walk started from */
	__u64 past;		/* a word of the trail's that changed: meet it above only */
	/* by frame, innermost first: as uwalk_frame was when the walk got there */
	__u64 sp[MEMLEAK_STACK_SLOTS];
	__u64 bp[MEMLEAK_STACK_SLOTS];
	__u64 bp_at[MEMLEAK_STACK_SLOTS];
	__u64 bp_src[MEMLEAK_STACK_SLOTS];
	__u16 wl[MEMLEAK_STACK_SLOTS];	/* nw then */
	__u64 addr[WALK_NOTE_WORDS];
	__u64 val[WALK_NOTE_WORDS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct walk_notes);
	__uint(max_entries, 1);
} walk_notes SEC(".maps");

static __always_inline void note_word(struct walk_notes *n, __u64 addr, __u64 val)
{
	__u32 k = n->nw;

	if (k >= WALK_NOTE_WORDS) {
		n->nw = WALK_NOTES_FULL;
		return;
	}
	n->addr[k] = addr;
	n->val[k] = val;
	n->nw = k + 1;
}

/*
 * How the walkers read the user stack. A bpf_probe_read_user costs about
 * 100 ns here whatever its size, so the stack is read a window at a time:
 * from the word wanted to the end of its page, which is never a fault when
 * that word's page is there. Every word handed out is noted in c.
 */
struct stack_reader {
	struct stack_window *win;	/* per-CPU */
	struct stack_cache *c;		/* the way the walk is noted in */
	struct walk_notes *n;		/* ... and the notes (per-CPU) */
};

static __always_inline void cache_word(struct stack_cache *c, __u64 off, __u64 val)
{
	__u32 n = c->nr & (STACK_CACHE_WORDS - 1);

	c->off[n] = off / 8;
	c->val[n] = val;
	c->nr++;
}

/* Note the words a walk read, or that it read what the cache cannot hold. */
static __always_inline void cache_read(struct stack_cache *c, const __u64 *dst, __u32 len,
				       __u64 addr, long err)
{
	__u64 off = addr - (c->sp - 16);

	if (err || (addr & 7) || off > STACK_CACHE_WINDOW - len ||
	    c->nr + len / 8 > STACK_CACHE_WORDS) {
		c->nr = STACK_CACHE_FULL;
		return;
	}
	cache_word(c, off, dst[0]);
	if (len == 16)
		cache_word(c, off + 8, dst[1]);
	if (off + len > c->span)
		c->span = off + len;
}

static __always_inline bool in_window(const struct stack_window *win, __u64 addr, __u32 len)
{
	__u64 lo = win->lo, n = win->len;

	return !(addr & 7) && addr >= lo && n >= len && addr - lo <= n - len;
}

/* Read [lo, lo + n) into the window; false, and an empty window, if it fails. */
static __always_inline bool window_fill(struct stack_window *win, __u64 lo, __u32 n)
{
	win->len = 0;
	if (n > STACK_CACHE_WINDOW || bpf_probe_read_user(win->w, n, (void *)lo))
		return false;
	win->lo = lo;
	win->len = n;
	return true;
}

/* The 8-byte words at addr, in the window (in_window). */
static __always_inline void window_copy(const struct stack_window *win, __u64 *dst, __u32 words,
					__u64 addr)
{
	__u32 first = (addr - win->lo) / 8;

	for (__u32 i = 0; i < words; i++)
		dst[i] = win->w[(first + i) & (STACK_CACHE_WINDOW / 8 - 1)];
}

/* 8 or 16 bytes of the stack at addr, not noted: 0, or the error of the read. */
static __always_inline long stack_read(struct stack_reader *r, __u64 *dst, __u32 len, __u64 addr)
{
	/* A new window runs from addr to its page's end. */
	if (!in_window(r->win, addr, len) && !(addr & 7))
		window_fill(r->win, addr, 4096 - (addr & 4095));
	if (in_window(r->win, addr, len)) {
		window_copy(r->win, dst, len / 8, addr);
		return 0;
	}
	/* unaligned, or across a page: read it alone */
	return bpf_probe_read_user(dst, len, (void *)addr);
}

/* Note words of the stack read at addr: in the cache way and the walk's notes. */
static __always_inline void note_read(struct stack_reader *r, const __u64 *dst, __u32 len,
				      __u64 addr, long err)
{
	cache_read(r->c, dst, len, addr, err);
	if (err) {
		r->n->nw = WALK_NOTES_FULL;
		return;
	}
	note_word(r->n, addr, dst[0]);
	if (len == 16)
		note_word(r->n, addr + 8, dst[1]);
}

/* 8 or 16 bytes of the stack at addr, noted: 0, or the error of the read. */
static __always_inline long walk_read(struct stack_reader *r, __u64 *dst, __u32 len, __u64 addr)
{
	long err = stack_read(r, dst, len, addr);

	note_read(r, dst, len, addr, err);
	return err;
}

/*
 * %rbp is part of the key only when the walk used it: in code built without
 * frame pointers it is just another register, different at every call, and
 * a CFI walk that finds the caller's %rbp saved on the stack never looks at
 * it (jq: 17% of its allocations missed the cache on %rbp alone).
 */
static __always_inline bool same_registers(const struct stack_cache *c, struct pt_regs *ctx,
					   __u64 gen)
{
	return c->gen == gen && c->ip == PT_REGS_IP(ctx) && c->sp == PT_REGS_SP(ctx) &&
	       (!c->bp_used || c->bp == PT_REGS_FP(ctx));
}

/*
 * Would a walk from the registers c holds find the cached stack? The stack
 * it reads stays in r's window for the walk that follows a miss.
 */
static __always_inline bool stack_cache_hit(const struct stack_cache *c, struct stack_reader *r)
{
	__u32 nr = c->nr, span = c->span;

	if (nr > STACK_CACHE_WORDS || span < 8 ||
	    !window_fill(r->win, c->sp - 16, span))
		return false;
	for (__u32 i = 0; i < STACK_CACHE_WORDS; i++) {
		if (i >= nr)
			break;
		if (r->win->w[c->off[i] & (STACK_CACHE_WINDOW / 8 - 1)] != c->val[i])
			return false;
	}
	return true;
}

/* Start recording a walk from ctx into c. */
static __always_inline void stack_cache_start(struct stack_cache *c, struct pt_regs *ctx)
{
	c->gen = 0;
	c->ip = PT_REGS_IP(ctx);
	c->sp = PT_REGS_SP(ctx);
	c->bp = PT_REGS_FP(ctx);
	c->bp_used = 1;		/* a CFI walk clears it, and sets it again when it uses %rbp */
	c->nr = 0;
	c->span = 0;
}

/*
 * The way of set whose registers match ctx's (*match), else the one used
 * less lately.
 */
static __always_inline struct stack_cache *stack_cache_pick(struct stack_cache *set,
							    struct pt_regs *ctx, __u64 gen,
							    bool *match)
{
	struct stack_cache *c = &set[1];

	*match = true;
	if (same_registers(set, ctx, gen))
		c = set;
	else if (!same_registers(c, ctx, gen) && (*match = false, set->mru))
		c = set;
	set->mru = c != set;
	return c;
}

#endif
