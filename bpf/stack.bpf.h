/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User stacks for memleak.bpf.c, which includes this once: the per-thread
 * stack cache, the page windows the walks read the stack through, the walk
 * by frame pointers, the walk by the CFI rows user space loads (--unwind),
 * and the stack map keyed by a hash of the frames.
 */
#ifndef STACK_BPF_H
#define STACK_BPF_H

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

/* Bumped by user space whenever it empties the stack map. */
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
 * How the walkers read the user stack. A bpf_probe_read_user costs about
 * 100 ns here whatever its size, so the stack is read a window at a time:
 * from the word wanted to the end of its page, which is never a fault when
 * that word's page is there. Every word handed out is noted in c.
 */
struct stack_reader {
	struct stack_window *win;	/* per-CPU */
	struct stack_cache *c;		/* the way the walk is noted in */
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

/* 8 or 16 bytes of the stack at addr, noted: 0, or the error of the read. */
static __always_inline long walk_read(struct stack_reader *r, __u64 *dst, __u32 len, __u64 addr)
{
	long err = stack_read(r, dst, len, addr);

	cache_read(r->c, dst, len, addr, err);
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

static __always_inline bool same_stack(const struct stack_trace *a, const struct stack_trace *b)
{
	__u32 last = (a->nr - 1) & (MEMLEAK_STACK_SLOTS - 1);

	/* Depth and both ends: a full compare on every allocation costs too much. */
	return a->nr == b->nr && a->flags == b->flags && a->ips[0] == b->ips[0] &&
	       a->ips[last] == b->ips[last];
}

/*
 * The user stack by its frame pointers, innermost first: the same frames
 * bpf_get_stack(BPF_F_USER_STACK) finds, for a third of the price. The
 * kernel's walk goes on until a read fails, and where a frame without a frame
 * pointer (Debian's libc) leaves garbage in the chain, that failure is a page
 * fault, the dearest part of the walk; frames lie ever higher on the stack,
 * so a link that does not go up ends the walk here without one.
 */
struct fpwalk {
	__u64 fp;
	struct stack_trace *st;
	struct stack_reader r;
};

/* One frame-pointer link per bpf_loop round: 1 ends the walk. */
static long fp_step(__u32 i, void *ctx)
{
	struct fpwalk *w = ctx;
	struct stack_trace *st = w->st;
	__u64 frame[2];		/* saved frame pointer, return address */

	if (walk_read(&w->r, frame, sizeof(frame), w->fp))
		return 1;
	if (st->nr >= MEMLEAK_MAX_STACK_DEPTH) {
		/* Full: one more link that goes up means frames were left out. */
		if (frame[1] && frame[0] > w->fp)
			st->flags |= STACK_TRUNCATED;
		return 1;
	}
	st->ips[st->nr & (MEMLEAK_STACK_SLOTS - 1)] = frame[1];
	st->nr++;
	if (frame[0] <= w->fp)
		return 1;
	w->fp = frame[0];
	return 0;
}

static __always_inline void walk_user_stack(struct pt_regs *ctx, struct stack_trace *st,
					    const struct stack_reader *r)
{
	struct fpwalk w = { .fp = PT_REGS_FP(ctx), .st = st, .r = *r };

	st->ips[0] = PT_REGS_IP(ctx);
	st->nr = 1;
	bpf_loop(MEMLEAK_MAX_STACK_DEPTH, fp_step, &w, 0);
}

/* --unwind: UNWIND_MODE_TABLES walks with the CFI rows user space loads. */
const volatile __u32 unwind_mode = UNWIND_MODE_FP;

/* Rows of every module's CFI, in chunks created by user space as they fill. */
struct cfi_chunk {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MEMLEAK_CFI_CHUNK_ROWS);
	/* Sizes, not types: clang emits only a forward declaration of a struct
	 * named inside an inner map's definition. */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct unwind_row));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, MEMLEAK_CFI_CHUNKS);
	__type(key, __u32);
	__array(values, struct cfi_chunk);
} cfi_chunks SEC(".maps");

/*
 * The target's executable mappings, in two halves: user space fills the one
 * BPF does not read, then switches unwind_active: its generation << 32 |
 * the half << 16 | the count.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * MEMLEAK_UNWIND_MAPPINGS);
	__type(key, __u32);
	__type(value, struct unwind_mapping);
} unwind_mappings SEC(".maps");

__u64 unwind_active;

/*
 * Rows found lately, by lookup address: call sites repeat, and a hit saves
 * both binary searches. Shared by all CPUs; a slot written by two at once
 * fails its check and is a miss. The generation retires every slot when
 * the mappings change.
 */
#define ROW_CACHE_SLOTS 4096

struct row_cache_slot {
	__u64 pc;
	__u64 row;	/* struct unwind_row */
	__u64 check;	/* of pc, row and the generation */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ROW_CACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct row_cache_slot);
} row_cache SEC(".maps");

/* Registers of the frame being unwound, and where its caller goes. */
struct uwalk {
	__u64 ip, sp, bp;
	__u64 bp_at;		/* not 0: bp is not read yet, it is saved there */
	/*
	 * Where bp came from, until a rule uses it: BP_FROM_REGISTER, the
	 * stack word it was read from, not yet noted in the cache, or 0.
	 */
	__u64 bp_src;
	__u32 adj;		/* 1: ip is a return address; its call is at ip - 1 */
	__u32 first, nr;	/* the active mappings */
	__u32 gen;		/* their generation */
	struct stack_trace *st;
	struct stack_reader r;
};

#define BP_FROM_REGISTER 1	/* never a stack address: those are aligned */

/* A frame-pointer frame: CFA = %rbp + 16, the caller's %rbp at CFA - 16. */
static const struct unwind_row fp_row = {
	.kind = UNWIND_CFA_RBP | UNWIND_RBP_SAVED | UNWIND_FP_GUESS, .cfa_off = 16, .rbp_off = -2,
};

/* The mapping holding pc among [first, first + nr): the last one starting at or below it. */
static __always_inline const struct unwind_mapping *find_mapping(__u64 pc, __u32 first, __u32 nr)
{
	const struct unwind_mapping *m;
	__u32 lo = first, hi = first + nr, mid;

	for (int i = 0; i < 10; i++) {	/* 2^10 > MEMLEAK_UNWIND_MAPPINGS */
		if (lo + 1 >= hi)
			break;
		mid = lo + (hi - lo) / 2;
		m = bpf_map_lookup_elem(&unwind_mappings, &mid);
		if (!m)
			return NULL;
		if (m->start <= pc)
			lo = mid;
		else
			hi = mid;
	}
	m = bpf_map_lookup_elem(&unwind_mappings, &lo);
	return m && nr && pc >= m->start && pc < m->end ? m : NULL;
}

static __always_inline const struct unwind_row *row_at(__u32 idx)
{
	__u32 chunk = idx >> MEMLEAK_CFI_CHUNK_SHIFT, slot = idx & (MEMLEAK_CFI_CHUNK_ROWS - 1);
	void *rows = bpf_map_lookup_elem(&cfi_chunks, &chunk);

	return rows ? bpf_map_lookup_elem(rows, &slot) : NULL;
}

/* A row in a register: what cfi_search returns. */
union row_bits {
	struct unwind_row row;
	__u64 raw;
};

/*
 * The rule for lookup address pc, in the mappings [first, first + nr): its
 * module's row, frame pointers for code without CFI. A global function: the
 * verifier checks its two binary searches once, not on every path of the
 * unwinder that calls it.
 */
__noinline __u64 cfi_search(__u64 pc, __u32 first, __u32 nr)
{
	const struct unwind_mapping *m = find_mapping(pc, first, nr);
	union row_bits b = { .raw = 0 };	/* UNWIND_CFA_NONE */
	const struct unwind_row *r;
	__u32 lo, hi, mid;

	/* JIT code, the vdso, a module without CFI. */
	if (!m || !m->nr_rows) {
		b.row = fp_row;
		return b.raw;
	}
	if (pc - m->base > 0xffffffffULL)
		return b.raw;
	pc -= m->base;
	lo = m->first_row;
	hi = m->first_row + m->nr_rows;
	for (int i = 0; i < 24; i++) {	/* 2^24 = MEMLEAK_CFI_MAX_ROWS */
		if (lo + 1 >= hi)
			break;
		mid = lo + (hi - lo) / 2;
		r = row_at(mid);
		if (!r)
			return b.raw;
		if (r->pc <= pc)
			lo = mid;
		else
			hi = mid;
	}
	r = row_at(lo);
	if (r && r->pc <= pc)
		b.row = *r;
	return b.raw;
}

static __always_inline __u64 row_check(__u64 pc, __u64 row, __u32 gen)
{
	return mix(mix(pc, row), gen) | 1;	/* never 0: an empty slot never matches */
}

static __always_inline struct unwind_row find_row(struct uwalk *s)
{
	__u64 pc = s->ip - s->adj;
	__u32 key = (__u32)((pc * 0x9e3779b97f4a7c15ULL) >> 52);	/* 12 bits */
	struct row_cache_slot *slot = bpf_map_lookup_elem(&row_cache, &key), c;
	union row_bits u;

	if (!slot) {
		u.raw = cfi_search(pc, s->first, s->nr);
		return u.row;
	}
	c = *slot;
	if (c.pc == pc && c.check == row_check(c.pc, c.row, s->gen)) {
		u.raw = c.row;
		return u.row;
	}
	u.raw = cfi_search(pc, s->first, s->nr);
	slot->pc = pc;
	slot->row = u.raw;
	slot->check = row_check(pc, u.raw, s->gen);
	return u.row;
}

static __always_inline bool push_frame(struct uwalk *s, __u64 ip)
{
	struct stack_trace *st = s->st;

	if (st->nr >= MEMLEAK_MAX_STACK_DEPTH) {
		st->flags |= STACK_TRUNCATED;
		return false;
	}
	st->ips[st->nr & (MEMLEAK_STACK_SLOTS - 1)] = ip;
	st->nr++;
	return true;
}

/*
 * A signal handler returns into the trampoline (__restore_rt) with %rsp at
 * the ucontext of its rt_sigframe; the interrupted registers are in its
 * uc_mcontext (struct sigcontext): %rbp at +120, %rsp at +160, %rip at +168.
 */
static __always_inline long signal_frame(struct uwalk *s)
{
	__u64 r[7];	/* rbp, rbx, rdx, rax, rcx, rsp, rip */

	s->r.c->nr = STACK_CACHE_FULL;	/* rare: not worth caching */
	if (bpf_probe_read_user(r, sizeof(r), (void *)(s->sp + 120)) || !r[6])
		return -1;
	if (!push_frame(s, r[6]))
		return 1;
	s->ip = r[6];
	s->sp = r[5];
	s->bp = r[0];
	s->bp_at = 0;
	s->bp_src = 0;
	s->adj = 0;	/* an interrupted instruction, not a return address */
	return 0;
}

/*
 * The frame's %rbp, for a rule that needs it: from now on the walk depends
 * on the register it started with, or on the stack word it came from.
 */
static __always_inline __u64 frame_bp(struct uwalk *s)
{
	if (s->bp_src == BP_FROM_REGISTER)
		s->r.c->bp_used = 1;
	else if (s->bp_src)
		cache_read(s->r.c, &s->bp, sizeof(s->bp), s->bp_src, 0);
	s->bp_src = 0;
	return s->bp;
}

static __always_inline __u64 cfa_of(struct uwalk *s, const struct unwind_row *row)
{
	__u64 off = row->kind & UNWIND_CFA_X8 ? (__u64)row->cfa_off * 8 : row->cfa_off;

	switch (row->kind & UNWIND_CFA_MASK) {
	case UNWIND_CFA_RSP:
		return s->sp + off;
	case UNWIND_CFA_RBP:
		return frame_bp(s) ? s->bp + off : 0;
	case UNWIND_CFA_PLT:
		return s->sp + 8 + ((s->ip & 15) >= off ? 8 : 0);
	}
	return 0;
}

/*
 * %rbp is read only when a rule needs it: most frames of code without frame
 * pointers save it somewhere, and no caller ever looks at it.
 */
static __always_inline bool load_bp(struct uwalk *s)
{
	if (!s->bp_at)
		return true;
	if (walk_read(&s->r, &s->bp, sizeof(s->bp), s->bp_at))
		return false;
	s->bp_at = 0;
	s->bp_src = 0;
	return true;
}

/* The caller's return address, and where its %rbp is. */
static __always_inline bool read_caller(struct uwalk *s, const struct unwind_row *row, __u64 cfa,
					__u64 *ra)
{
	__u64 pair[2];

	if (row->kind & UNWIND_RBP_SAVED && row->rbp_off == -2) {
		/*
		 * The usual push %rbp right after the call: one read for both.
		 * The saved %rbp is noted only if a rule uses it: in code
		 * without frame pointers it is data, different at every call.
		 */
		if (stack_read(&s->r, pair, sizeof(pair), cfa - 16))
			return false;
		cache_read(s->r.c, &pair[1], sizeof(pair[1]), cfa - 8, 0);
		s->bp = pair[0];
		s->bp_at = 0;
		s->bp_src = cfa - 16;
		*ra = pair[1];
		return true;
	}
	if (walk_read(&s->r, ra, sizeof(*ra), cfa - 8))
		return false;
	if (row->kind & UNWIND_RBP_SAVED) {
		s->bp_at = cfa + (__s64)row->rbp_off * 8;
		s->bp_src = 0;	/* load_bp notes the word when it reads it */
	} else if (row->kind & UNWIND_RBP_LOST) {
		s->bp = 0;
		s->bp_at = 0;
		s->bp_src = 0;
	}
	return true;
}

/* Caller of the frame at s: 0 go on, 1 the stack ended, -1 cannot follow. */
static __always_inline long unwind_frame(struct uwalk *s)
{
	struct unwind_row row = find_row(s);
	__u32 kind = row.kind & UNWIND_CFA_MASK;
	__u64 cfa, ra;

	if (kind == UNWIND_CFA_END)
		return 1;
	if ((kind == UNWIND_CFA_RBP || kind == UNWIND_CFA_NONE) && !load_bp(s))
		return -1;
	/*
	 * Code without CFI (the dynamic linker's entry, which runs library
	 * constructors) or frame pointers: the psABI marks the outermost frame
	 * by a zero %rbp.
	 */
	if ((kind == UNWIND_CFA_NONE || row.kind & UNWIND_FP_GUESS) && !frame_bp(s))
		return 1;
	if (kind == UNWIND_CFA_SIGNAL)
		return signal_frame(s);
	cfa = cfa_of(s, &row);
	/* Callers' frames lie higher up: anything else is garbage. */
	if (cfa <= s->sp)
		return -1;
	if (!read_caller(s, &row, cfa, &ra))
		return -1;
	if (!ra)
		return 1;	/* some outermost frames end with a zero return address */
	if (!push_frame(s, ra))
		return 1;
	s->ip = ra;
	s->sp = cfa;
	s->adj = 1;
	return 0;
}

static long unwind_step(__u32 i, void *ctx)
{
	struct uwalk *s = ctx;
	long ret = unwind_frame(s);

	if (ret < 0) {
		s->st->flags |= STACK_CUT;
		count(CNT_UNWIND_STOPS);
	}
	return ret ? 1 : 0;
}

/*
 * The user stack by the CFI rows: at the allocation function's return, ip
 * is the return address into its caller, sp and bp that caller's. One frame
 * per bpf_loop round: the verifier checks the step once, not 127 times.
 */
static __always_inline void unwind_user_stack(struct pt_regs *ctx, struct stack_trace *st,
					      const struct stack_reader *r)
{
	__u64 active = *(volatile __u64 *)&unwind_active;	/* one load: all three */
	struct uwalk s = {
		.ip = PT_REGS_IP(ctx), .sp = PT_REGS_SP(ctx), .bp = PT_REGS_FP(ctx), .adj = 1,
		.bp_src = BP_FROM_REGISTER,
		.first = (active >> 16 & 1) * MEMLEAK_UNWIND_MAPPINGS, .nr = (__u16)active,
		.gen = active >> 32, .st = st, .r = *r,
	};

	r->c->bp_used = 0;
	st->ips[0] = s.ip;
	st->nr = 1;
	bpf_loop(MEMLEAK_MAX_STACK_DEPTH, unwind_step, &s, 0);
}

/*
 * What a cached walk depends on besides registers and stack: the unwind
 * rows (their generation) and the stack map (emptied at an exec).
 */
static __always_inline __u64 stack_cache_gen(void)
{
	__u64 active = *(volatile __u64 *)&unwind_active;

	return (active >> 32) << 32 | (__u32)(stacks_cleared + 1);
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
	if (bpf_map_update_elem(&stack_traces, &h, st, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&stack_traces, &h)) {
		count(CNT_STACKS_MAP_FULL);
		return MEMLEAK_NO_STACK;
	}
	return h;
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

/*
 * The caller's user stack, by the thread's stack cache (a set of two ways)
 * or a walk that refills it: its id in the stack map, or MEMLEAK_NO_STACK.
 */
static __always_inline __u64 capture_stack(struct pt_regs *ctx, struct stack_cache *set)
{
	__u64 gen = stack_cache_gen(), id;
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
	if (unwind_mode == UNWIND_MODE_TABLES)
		unwind_user_stack(ctx, st, &r);
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
