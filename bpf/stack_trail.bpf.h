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
	__u64 top;		/* above the highest of them (or more) */
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

/*
 * The loops below are open-coded in global functions, which the verifier
 * checks once: a round of bpf_loop costs a call and a return, and each
 * return a mispredicted one under this machine's SRSO mitigation (safe
 * RET), more than the round's work.
 */

/*
 * A round of bpf_loop below handles TRAIL_BATCH items (words, frames). 16
 * rather than 8: a walk of the torch job's import takes some 47 frames
 * from the trail (50 deep, meeting it after 3), 3 rounds instead of 6, and
 * its words likewise; for 8,300 more instructions of api_exit to verify
 * (docs/PERFORMANCE.md, "The tables' misses, overlapped").
 */
#define TRAIL_BATCH 16

/*
 * Taking the trail's outer frames: its words checked, then noted in the
 * cache way and its frames copied, the two in one bpf_loop (each call and
 * each round costs a return). Checking, noting and copying in one loop
 * would save one more call, but the verifier then follows each state the
 * checks leave through the rest: 91,000 instructions of api_exit instead
 * of 71,500.
 */
struct trail_take {
	const struct stack_trail *t;
	struct stack_window *win;
	struct walk_notes *n;	/* the words to check and checked: in the map, unknown to the verifier */
	struct stack_trace *st;
	struct stack_cache *c;
	__u64 bad;		/* 0, the address of a word that changed, ~0 when one cannot be read */
	__u64 base;		/* the cache way's sp - 16 */
	__u32 k, q;		/* the walk's innermost frame, the trail's met */
};

/*
 * Note the words checked in the cache way, as if the walk had read them
 * (cache_read), after the way's note_nr words: TRAIL_BATCH in round r.
 * note_nr and note_span are kept in the notes, in the map: as fields of x
 * the verifier would follow each value they take.
 */
static __always_inline void trail_note_words(struct trail_take *x, __u32 r)
{
	struct walk_notes *n = x->n;
	__u32 nr = n->note_nr, nw = n->to_check;

	if (nr == STACK_CACHE_FULL)
		return;
	for (__u32 u = 0; u < TRAIL_BATCH; u++) {
		__u32 j = r * TRAIL_BATCH + u, w = (nw - 1 - j) & (TRAIL_WORDS - 1);
		__u32 i = (nr + j) & (STACK_CACHE_WORDS - 1);
		__u64 off = x->t->waddr[w] - x->base;

		if (j >= nw)
			return;
		if ((off | x->base) & 7 || off > STACK_CACHE_WINDOW - 8) {
			n->note_nr = STACK_CACHE_FULL;
			return;
		}
		x->c->off[i] = off / 8;
		x->c->val[i] = x->t->wval[w];
		if (off + 8 > n->note_span)
			n->note_span = off + 8;
	}
}

/*
 * The trail's frames beyond the one met, after the walk's: TRAIL_BATCH in
 * round r (a number the verifier does not know, where a count kept in x
 * would be a constant it follows round by round).
 */
static __always_inline void trail_copy_frames(struct trail_take *x, __u32 r)
{
	for (__u32 u = 0; u < TRAIL_BATCH; u++) {
		__u32 j = r * TRAIL_BATCH + u;

		if (j >= x->q)
			return;
		x->st->ips[(x->k + 1 + j) & (MEMLEAK_STACK_SLOTS - 1)] =
			x->t->ip[(x->q - 1 - j) & (MEMLEAK_STACK_SLOTS - 1)];
	}
}

/*
 * The next TRAIL_BATCH words, lowest address first (they are kept
 * outermost first), through the window, filled from a word outside it to
 * the trail's highest (at most the window's size; else to that word's
 * page end); false when the round ends the loop.
 */
static __always_inline bool trail_check_words(struct trail_take *x)
{
	const struct stack_trail *t = x->t;
	struct stack_window *win = x->win;
	__u32 nw = x->n->to_check, j = x->n->checked;
	__u64 top = t->top, addr = t->waddr[(nw - 1 - j) & (TRAIL_WORDS - 1)], off;

	if (j >= nw)
		return true;
	/* The first word of the round in the window: the rest stop the round where they are not. */
	if (!in_window(win, addr, 8) &&
	    (addr & 7 || top <= addr ||
	     (!window_fill(win, addr, top - addr > STACK_CACHE_WINDOW ? STACK_CACHE_WINDOW :
									 top - addr) &&
	      !window_fill(win, addr, 4096 - (addr & 4095))))) {
		x->bad = ~0ULL;
		return false;
	}
	for (int u = 0; u < TRAIL_BATCH; u++, j++) {
		__u32 w = (nw - 1 - j) & (TRAIL_WORDS - 1);

		if (j >= nw)
			break;
		addr = t->waddr[w];
		off = addr - win->lo;
		if (off >= win->len || off & 7)
			break;
		if (win->w[(off / 8) & (STACK_CACHE_WINDOW / 8 - 1)] != t->wval[w]) {
			x->bad = addr;
			return false;
		}
	}
	x->n->checked = j;
	return true;
}

/* A round of bpf_loop checks a batch. */
static long trail_check_batch(__u32 r, void *ctx)
{
	struct trail_take *x = ctx;

	return !trail_check_words(x) || x->n->checked >= x->n->to_check;
}

/* Once every word is checked: the cache way's notes, and the frames. */
static long trail_take_batch(__u32 r, void *ctx)
{
	struct trail_take *x = ctx;

	trail_copy_frames(x, r);
	trail_note_words(x, r);
	return (r + 1) * TRAIL_BATCH >= x->q && (r + 1) * TRAIL_BATCH >= x->n->to_check;
}

/*
 * The frame being walked (the innermost of st) has the state of the
 * trail's at q: if the words the trail's walk read from there on still
 * hold what they held, st ends with the trail's frames beyond it, the
 * cache way c notes those words, and notes say where they met: 1. A
 * global function, which the verifier checks once.
 */
__noinline __u32 trail_merge(const struct stack_trail *t, struct walk_notes *n,
			     struct stack_trace *st, struct stack_window *win,
			     struct stack_cache *c)
{
	struct trail_take x = { .t = t, .win = win, .n = n, .st = st, .c = c };
	__u32 k, q, nw;

	if (!t || !n || !st || !win || !c)
		return 0;
	k = (st->nr - 1) & (MEMLEAK_STACK_SLOTS - 1);
	q = n->q & (MEMLEAK_STACK_SLOTS - 1);
	nw = t->wc[q];
	/* A walk that went on would stop at the deepest frame: not the trail's end. */
	if (k + 1 + q > MEMLEAK_MAX_STACK_DEPTH || nw > TRAIL_WORDS) {
		n->seek = 0;
		return 0;
	}
	x.k = k;
	x.q = q;
	x.base = c->sp - 16;
	n->note_nr = c->nr + nw > STACK_CACHE_WORDS ? STACK_CACHE_FULL : c->nr;
	n->note_span = c->span;
	n->to_check = nw;
	n->checked = 0;
	/* A round checks a batch of words, at least: a window's end may cut one short. */
	bpf_loop(TRAIL_WORDS, trail_check_batch, &x, 0);
	if (!x.bad)
		bpf_loop(TRAIL_WORDS / TRAIL_BATCH, trail_take_batch, &x, 0);
	if (x.bad == ~0ULL) {
		n->seek = 0;
		return 0;
	}
	if (x.bad) {
		/*
		 * A word that changed (a caller that is not the trail's, at
		 * the same depth): frames below it cannot meet the trail, but
		 * those above may, past the callers that differ.
		 */
		n->past = x.bad;
		return 0;
	}
	if (n->note_nr == STACK_CACHE_FULL) {
		c->nr = STACK_CACHE_FULL;
	} else {
		c->nr = n->note_nr + nw;
		c->span = n->note_span;
	}
	st->nr = k + 1 + q;
	/* The rest may have used the %rbp the walk started with. */
	if (n->bp_src[k] == BP_FROM_REGISTER)
		c->bp_used = 1;
	n->met = q + 1;
	n->at = k;
	return 1;
}

/*
 * Note the state of the frame being walked; if it is that of a frame of
 * the trail, take the rest from there (trail_merge): true then.
 */
static __always_inline bool trail_meet(struct walk_notes *n, const struct stack_trail *t,
				       struct uwalk *s)
{
	__u32 k = (s->st->nr - 1) & (MEMLEAK_STACK_SLOTS - 1), q;
	__u64 sp = s->f->sp, bp = s->f->bp, bp_at = s->f->bp_at, bp_src = s->f->bp_src;

	n->sp[k] = sp;
	n->bp[k] = bp;
	n->bp_at[k] = bp_at;
	n->bp_src[k] = bp_src;
	n->wl[k] = n->nw;
	if (!n->seek || sp <= n->past)
		return false;
	/* Frames lie ever higher up: pass the trail's below this one. */
	q = n->q;
	for (int j = 0; j < 4; j++) {
		if (q >= t->nr || t->sp[q & (MEMLEAK_STACK_SLOTS - 1)] >= sp)
			break;
		q--;
	}
	n->q = q;
	if (q >= t->nr) {
		n->seek = 0;	/* past the trail's outermost frame */
		return false;
	}
	q &= MEMLEAK_STACK_SLOTS - 1;
	/*
	 * The same state: a %rbp read from the stack is checked with the
	 * words, when the rest uses it (frame_bp notes it then).
	 */
	if (t->sp[q] != sp || t->ip[q] != s->st->ips[k] || t->bp_at[q] != bp_at ||
	    t->bp_src[q] != bp_src || (bp_src <= BP_FROM_REGISTER && t->bp[q] != bp))
		return false;
	return trail_merge(t, n, s->st, s->r.win, s->r.c);
}

/*
 * Start a walk's notes, for the walk from stack pointer sp: may it meet
 * the trail t of this generation?
 */
static __always_inline void trail_start(struct walk_notes *n, const struct stack_trail *t,
					__u64 gen, bool tables, __u64 sp)
{
	n->owner = sp;
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
	__u64 h, top;
	__u32 fresh, base, wbase, nw;
};

/* The walk's frames from the outermost, hashed onto the trail's. */
static long trail_hash_batch(__u32 r, void *ctx)
{
	struct trail_fill *x = ctx;

	for (__u32 u = 0; u < TRAIL_BATCH; u++) {
		__u32 j = r * TRAIL_BATCH + u;

		if (j >= x->fresh)
			return 1;
		x->h = mix(x->h, x->st->ips[(x->fresh - 1 - j) & (MEMLEAK_STACK_SLOTS - 1)]);
	}
	return 0;
}

/* ... and into the trail, after the frames kept: TRAIL_BATCH a round. */
static __always_inline void trail_fill_frames(struct trail_fill *x, __u32 r)
{
	struct stack_trail *t = x->t;
	const struct walk_notes *n = x->n;

	for (__u32 u = 0; u < TRAIL_BATCH; u++) {
		__u32 j = r * TRAIL_BATCH + u;
		__u32 k = (x->fresh - 1 - j) & (MEMLEAK_STACK_SLOTS - 1);
		__u32 pos = (x->base + j) & (MEMLEAK_STACK_SLOTS - 1);

		if (j >= x->fresh)
			return;
		x->h = mix(x->h, x->st->ips[k]);
		t->ip[pos] = x->st->ips[k];
		t->sp[pos] = n->sp[k];
		t->bp[pos] = n->bp[k];
		t->bp_at[pos] = n->bp_at[k];
		t->bp_src[pos] = n->bp_src[k];
		t->h[pos] = x->h;
		t->wc[pos] = x->wbase + x->nw - n->wl[k];
	}
}

/* The walk's words, outermost first, after those of the frames kept: TRAIL_BATCH a round. */
static __always_inline void trail_fill_words(struct trail_fill *x, __u32 r)
{
	for (__u32 u = 0; u < TRAIL_BATCH; u++) {
		__u32 j = r * TRAIL_BATCH + u;
		__u32 from = (x->nw - 1 - j) & (WALK_NOTE_WORDS - 1);
		__u32 to = (x->wbase + j) & (TRAIL_WORDS - 1);
		__u64 addr = x->n->addr[from];

		if (j >= x->nw)
			return;
		x->t->waddr[to] = addr;
		x->t->wval[to] = x->n->val[from];
		x->top = addr + 8 > x->top ? addr + 8 : x->top;
	}
}

/* Both in one loop: a bpf_loop call and its rounds' returns fewer. */
static long trail_fill_batch(__u32 r, void *ctx)
{
	struct trail_fill *x = ctx;

	trail_fill_frames(x, r);
	trail_fill_words(x, r);
	return (r + 1) * TRAIL_BATCH >= x->fresh && (r + 1) * TRAIL_BATCH >= x->nw;
}

/*
 * The hash of st's frames, outermost first: from the trail's where the
 * walk met it. With owner, the stack pointer the walk started from, its
 * frames and words go into the trail (after those kept), unless the notes
 * are another walk's: before Linux 6.10 uprobe programs may run with
 * preemption on (scratch.bpf.h), and one of another thread of the target,
 * on this CPU meanwhile, may have written over them (threads' stack
 * pointers differ). A global function, checked once.
 */
__noinline __u64 trail_finish(struct stack_trail *t, const struct walk_notes *n,
			      const struct stack_trace *st, __u64 gen, __u64 owner)
{
	struct trail_fill x = { .t = t, .n = n, .st = st, .h = STACK_HASH_SEED };
	__u32 p;

	if (!st || !t || !n)
		return 0;
	x.fresh = st->nr & (MEMLEAK_STACK_SLOTS - 1);
	if (n->met) {
		p = (n->met - 1) & (MEMLEAK_STACK_SLOTS - 1);
		x.base = p + 1;
		x.fresh = n->at & (MEMLEAK_STACK_SLOTS - 1);
		x.h = t->h[p];
		x.wbase = t->wc[p];
		x.top = t->top;
	}
	x.nw = n->nw;
	if (!owner || n->owner != owner || x.nw > WALK_NOTE_WORDS ||
	    x.wbase + x.nw > TRAIL_WORDS) {
		bpf_loop(MEMLEAK_STACK_SLOTS / TRAIL_BATCH, trail_hash_batch, &x, 0);
		return x.h;
	}
	bpf_loop(WALK_NOTE_WORDS / TRAIL_BATCH, trail_fill_batch, &x, 0);
	t->nw = x.wbase + x.nw;
	t->top = x.top;
	t->nr = st->nr;
	t->gen = gen;
	return x.h;
}

#endif
