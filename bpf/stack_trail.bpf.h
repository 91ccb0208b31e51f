/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The thread's trail: its last CFI walk, frame by frame, so that the next
 * walk stops where it meets it and takes the rest from it; for stack.bpf.h,
 * which includes this once, after cfi_walk.bpf.h (the walk it shortens).
 *
 * A walk's frames from a frame on follow from nothing but the frame's
 * state (ip, sp, the %rbp the rest may use), the unwind rows of the
 * generation and the stack words the rest reads: the argument of the stack
 * cache (stack_cache.bpf.h), applied to a suffix. Consecutive allocations
 * of a thread mostly differ in their innermost frames only (the PyTorch
 * job: each walk met the thread's last one after 2.9 of its 50 frames):
 * the walk goes on until one of its frames has the state a frame of the
 * trail had, checks that the words the trail's walk read from there on
 * still hold what they held, and copies the trail's outer frames. Kept
 * outermost first, so that those stay where they are when the next walk is
 * written over the trail: its frames, their hashes and their words.
 */
#ifndef STACK_TRAIL_BPF_H
#define STACK_TRAIL_BPF_H

#define TRAIL_WORDS WALK_NOTE_WORDS
#define STACK_HASH_SEED 0x9e3779b97f4a7c15ULL

/* In call_state (memleak.bpf.c): 10 KiB of task storage per thread. */
struct stack_trail {
	__u64 gen;		/* stack_cache_gen() of its walks; 0: empty */
	__u32 nr;		/* frames; position 0 the outermost, nr - 1 the innermost */
	__u32 nw;		/* words */
	/* by position: the frame's state, as the walk found it (walk_notes) */
	__u64 ip[MEMLEAK_STACK_SLOTS];
	__u64 sp[MEMLEAK_STACK_SLOTS];
	__u64 bp[MEMLEAK_STACK_SLOTS];
	__u64 bp_at[MEMLEAK_STACK_SLOTS];
	__u64 bp_src[MEMLEAK_STACK_SLOTS];
	__u64 h[MEMLEAK_STACK_SLOTS];		/* hash of positions 0 .. p */
	__u16 wc[MEMLEAK_STACK_SLOTS];		/* words the walk read from there out */
	/* the words read, outermost first: those of position p are [0, wc[p]) */
	__u64 waddr[TRAIL_WORDS];
	__u64 wval[TRAIL_WORDS];
};

/* The loops below: a round of bpf_loop each, which the verifier checks once. */
struct trail_check {
	const struct stack_trail *t;
	struct stack_trace *st;
	struct stack_cache *c;
	struct stack_reader r;
	__u64 bad;		/* the address of a word that changed */
	__u32 nw, k, q, pad;
};

/* The trail's words, lowest address first (they are kept outermost first): a window a page. */
static long trail_check_word(__u32 j, void *ctx)
{
	struct trail_check *x = ctx;
	__u32 w = (x->nw - 1 - j) & (TRAIL_WORDS - 1);
	__u64 v, addr = x->t->waddr[w];

	if (stack_read(&x->r, &v, sizeof(v), addr)) {
		x->bad = ~0ULL;
		return 1;
	}
	if (v != x->t->wval[w]) {
		x->bad = addr;
		return 1;
	}
	cache_read(x->c, &v, sizeof(v), addr, 0);
	return 0;
}

/* The trail's frames beyond the one met, after the walk's. */
static long trail_copy_frame(__u32 j, void *ctx)
{
	struct trail_check *x = ctx;

	x->st->ips[(x->k + 1 + j) & (MEMLEAK_STACK_SLOTS - 1)] =
		x->t->ip[(x->q - 1 - j) & (MEMLEAK_STACK_SLOTS - 1)];
	return 0;
}

/*
 * Does the frame being walked (the innermost of st) meet the trail? Then
 * st ends with the trail's frames beyond it, the cache way c notes the
 * words checked, and notes say where they met: 1. A global function, which
 * the verifier checks once for all the rounds of the walk.
 */
__noinline __u32 trail_merge(const struct stack_trail *t, struct walk_notes *n,
			     struct stack_trace *st, struct stack_window *win,
			     struct stack_cache *c)
{
	struct trail_check x = { .t = t, .st = st, .c = c, .r = { .win = win, .c = c } };
	__u32 k, q;

	if (!t || !n || !st || !win || !c)
		return 0;
	k = (st->nr - 1) & (MEMLEAK_STACK_SLOTS - 1);
	/* Frames lie ever higher up: pass the trail's below this one. */
	q = n->q;
	for (int j = 0; j < 8; j++) {
		if (q >= t->nr || t->sp[q & (MEMLEAK_STACK_SLOTS - 1)] >= n->sp[k])
			break;
		q--;
	}
	n->q = q;
	if (q >= t->nr) {
		n->seek = 0;	/* past the trail's outermost frame */
		return 0;
	}
	q &= MEMLEAK_STACK_SLOTS - 1;
	/*
	 * The same state: a %rbp read from the stack is checked with the
	 * words, when the rest uses it (frame_bp notes it then).
	 */
	if (t->sp[q] != n->sp[k] || t->ip[q] != st->ips[k] || t->bp_at[q] != n->bp_at[k] ||
	    t->bp_src[q] != n->bp_src[k] ||
	    (n->bp_src[k] <= BP_FROM_REGISTER && t->bp[q] != n->bp[k]))
		return 0;
	/* A walk that went on would stop at the deepest frame: not the trail's end. */
	x.nw = t->wc[q];
	if (k + 1 + q > MEMLEAK_MAX_STACK_DEPTH || x.nw > TRAIL_WORDS)
		goto give_up;
	bpf_loop(x.nw, trail_check_word, &x, 0);
	if (x.bad) {
		/*
		 * A word that changed (a caller that is not the trail's, at
		 * the same depth): frames below it cannot meet the trail, but
		 * those above may, past the callers that differ.
		 */
		n->past = x.bad;
		return 0;
	}
	x.k = k;
	x.q = q;
	bpf_loop(q, trail_copy_frame, &x, 0);
	st->nr = k + 1 + q;
	/* The rest may have used the %rbp the walk started with. */
	if (n->bp_src[k] == BP_FROM_REGISTER)
		c->bp_used = 1;
	n->met = q + 1;
	n->at = k;
	return 1;
give_up:
	n->seek = 0;
	return 0;
}

/*
 * Note the state of the frame being walked, and take the rest from the
 * trail if it meets it: true then.
 */
static __always_inline bool trail_meet(struct walk_notes *n, const struct stack_trail *t,
				       struct uwalk *s)
{
	__u32 k = (s->st->nr - 1) & (MEMLEAK_STACK_SLOTS - 1);

	n->sp[k] = s->f->sp;
	n->bp[k] = s->f->bp;
	n->bp_at[k] = s->f->bp_at;
	n->bp_src[k] = s->f->bp_src;
	n->wl[k] = n->nw;
	return n->seek && s->f->sp > n->past && trail_merge(t, n, s->st, s->r.win, s->r.c);
}

/* Start a walk's notes: may it meet the trail t of this generation? */
static __always_inline void trail_start(struct walk_notes *n, const struct stack_trail *t,
					__u64 gen, bool tables)
{
	n->nw = 0;
	n->met = 0;
	n->past = 0;
	n->q = t->nr - 1;
	n->seek = tables && t->gen == gen && t->nr && t->nr <= MEMLEAK_STACK_SLOTS;
}

struct trail_fill {
	struct stack_trail *t;
	const struct walk_notes *n;
	const struct stack_trace *st;
	__u64 h;
	__u32 fresh, base, wbase, nw, write;
};

/* The walk's frames from the outermost, hashed onto the trail's; into it with write. */
static long trail_fill_frame(__u32 j, void *ctx)
{
	struct trail_fill *x = ctx;
	__u32 k = (x->fresh - 1 - j) & (MEMLEAK_STACK_SLOTS - 1);
	__u32 pos = (x->base + j) & (MEMLEAK_STACK_SLOTS - 1);
	__u64 ip = x->st->ips[k];

	x->h = mix(x->h, ip);
	if (!x->write)
		return 0;
	x->t->ip[pos] = ip;
	x->t->sp[pos] = x->n->sp[k];
	x->t->bp[pos] = x->n->bp[k];
	x->t->bp_at[pos] = x->n->bp_at[k];
	x->t->bp_src[pos] = x->n->bp_src[k];
	x->t->h[pos] = x->h;
	x->t->wc[pos] = x->wbase + x->nw - x->n->wl[k];
	return 0;
}

/* The walk's words, outermost first, after those of the trail's frames kept. */
static long trail_fill_word(__u32 j, void *ctx)
{
	struct trail_fill *x = ctx;
	__u32 from = (x->nw - 1 - j) & (WALK_NOTE_WORDS - 1);
	__u32 to = (x->wbase + j) & (TRAIL_WORDS - 1);

	x->t->waddr[to] = x->n->addr[from];
	x->t->wval[to] = x->n->val[from];
	return 0;
}

/*
 * The hash of st's frames, outermost first: from the trail's where the
 * walk met it. With write, the walk's frames and words go into the trail
 * (after those kept). A global function, checked once.
 */
__noinline __u64 trail_finish(struct stack_trail *t, const struct walk_notes *n,
			      const struct stack_trace *st, __u64 gen, __u32 write)
{
	struct trail_fill x = { .t = t, .n = n, .st = st, .h = STACK_HASH_SEED };
	__u32 p;

	if (!st || !t || !n)
		return 0;
	x.fresh = st->nr;
	if (n->met) {
		p = (n->met - 1) & (MEMLEAK_STACK_SLOTS - 1);
		x.base = p + 1;
		x.fresh = n->at;
		x.h = t->h[p];
		x.wbase = t->wc[p];
	}
	x.nw = n->nw;
	x.write = write && x.nw <= WALK_NOTE_WORDS && x.wbase + x.nw <= TRAIL_WORDS;
	bpf_loop(x.fresh & (MEMLEAK_STACK_SLOTS - 1), trail_fill_frame, &x, 0);
	if (!x.write)
		return x.h;
	bpf_loop(x.nw, trail_fill_word, &x, 0);
	t->nw = x.wbase + x.nw;
	t->nr = st->nr;
	t->gen = gen;
	return x.h;
}

#endif
