/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The walk by the CFI rows user space loads (--unwind): the rows and the
 * target's mappings, the row cache, and one frame per bpf_loop round; for
 * stack.bpf.h, which includes this once, after stack_cache.bpf.h (its
 * reader) and fp_walk.bpf.h.
 */
#ifndef CFI_WALK_BPF_H
#define CFI_WALK_BPF_H

/* --unwind: UNWIND_MODE_TABLES walks with the CFI rows user space loads. */
const volatile __u32 unwind_mode = UNWIND_MODE_FP;

/*
 * Rows of every module's CFI, in chunks created by user space as they fill,
 * mmap'able so that it copies rows in without a syscall per chunk of rows.
 */
struct cfi_chunk {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
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
 * the half << 16 | the count. Under --follow, each exec'd image alive (and
 * each fork of the target that loaded libraries of its own) has a slot of
 * its own after the target's (user space sets max_entries to
 * MEMLEAK_UNWIND_SLOTS slots of two halves): image_unwind_slot gives it,
 * image_unwind_active[slot] is its unwind_active.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * MEMLEAK_UNWIND_MAPPINGS);
	__type(key, __u32);
	__type(value, struct unwind_mapping);
} unwind_mappings SEC(".maps");

__u64 unwind_active;
__u64 image_unwind_active[MEMLEAK_UNWIND_SLOTS];

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MEMLEAK_UNWIND_SLOTS);
	__type(key, __u32);	/* the image's tag (memleak_proc.image), or a fork's own */
	__type(value, __u32);	/* its slot, 1 .. MEMLEAK_UNWIND_SLOTS - 1 */
} image_unwind_slot SEC(".maps");

/*
 * Set for a mapping (its index in unwind_mappings) when a walk met it while
 * its rows were pending: user space loads those first. It clears a half
 * before it fills it.
 */
__u8 unwind_wanted[2 * MEMLEAK_UNWIND_MAPPINGS];

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

/*
 * Registers of the frame being unwound, and where its caller goes. Kept in
 * a per-CPU map rather than on the BPF stack: the verifier then sees them
 * as unknown at every round of the walk, and checks the step twice instead
 * of once for each set of constants a round can leave in them (26 rounds
 * of 1,200 instructions at every start).
 */
struct uwalk_frame {
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
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct uwalk_frame);
	__uint(max_entries, 1);
} uwalk_frame SEC(".maps");

/*
 * A walk: its frame's registers, where its frames go, how it reads the
 * stack, the thread's trail it may meet.
 */
struct uwalk {
	struct uwalk_frame *f;
	struct stack_trace *st;
	struct stack_reader r;
	const struct stack_trail *t;
};

#define BP_FROM_REGISTER 1	/* never a stack address: those are aligned */

/* A frame-pointer frame: CFA = %rbp + 16, the caller's %rbp at CFA - 16. */
static const struct unwind_row fp_row = {
	.kind = UNWIND_CFA_RBP | UNWIND_RBP_SAVED | UNWIND_FP_GUESS, .cfa_off = 16, .rbp_off = -2,
};

/*
 * The mapping holding pc among [first, first + nr): the last one starting
 * at or below it (its index in *at).
 */
static __always_inline const struct unwind_mapping *find_mapping(__u64 pc, __u32 first, __u32 nr,
								  __u32 *at)
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
	*at = lo;
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
	union row_bits b = { .raw = 0 };	/* UNWIND_CFA_NONE */
	const struct unwind_mapping *m;
	const struct unwind_row *r;
	__u32 lo, hi, mid, at = 0;

	m = find_mapping(pc, first, nr, &at);
	/* Rows still being loaded (-p): not a frame-pointer guess, an end the report marks. */
	if (m && !m->nr_rows && m->first_row == MEMLEAK_ROWS_PENDING) {
		if (at < 2 * MEMLEAK_UNWIND_MAPPINGS)
			unwind_wanted[at] = 1;
		b.row.kind = UNWIND_CFA_PENDING;
		return b.raw;
	}
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
	__u64 pc = s->f->ip - s->f->adj;
	__u32 key = (__u32)((pc * 0x9e3779b97f4a7c15ULL) >> 52);	/* 12 bits */
	struct row_cache_slot *slot = bpf_map_lookup_elem(&row_cache, &key), c;
	union row_bits u;

	if (!slot) {
		u.raw = cfi_search(pc, s->f->first, s->f->nr);
		return u.row;
	}
	c = *slot;
	if (c.pc == pc && c.check == row_check(c.pc, c.row, s->f->gen)) {
		u.raw = c.row;
		return u.row;
	}
	u.raw = cfi_search(pc, s->f->first, s->f->nr);
	slot->pc = pc;
	slot->row = u.raw;
	slot->check = row_check(pc, u.raw, s->f->gen);
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

	/* rare: not worth caching, nor a trail; and its caller is not a return address */
	s->r.c->nr = STACK_CACHE_FULL;
	s->r.n->nw = WALK_NOTES_FULL;
	s->r.n->seek = 0;
	if (bpf_probe_read_user(r, sizeof(r), (void *)(s->f->sp + 120)) || !r[6])
		return -1;
	if (!push_frame(s, r[6]))
		return 1;
	s->f->ip = r[6];
	s->f->sp = r[5];
	s->f->bp = r[0];
	s->f->bp_at = 0;
	s->f->bp_src = 0;
	s->f->adj = 0;	/* an interrupted instruction, not a return address */
	return 0;
}

/*
 * The frame's %rbp, for a rule that needs it: from now on the walk depends
 * on the register it started with, or on the stack word it came from.
 */
static __always_inline __u64 frame_bp(struct uwalk *s)
{
	if (s->f->bp_src == BP_FROM_REGISTER)
		s->r.c->bp_used = 1;
	else if (s->f->bp_src)
		note_read(&s->r, &s->f->bp, sizeof(s->f->bp), s->f->bp_src, 0);
	s->f->bp_src = 0;
	return s->f->bp;
}

static __always_inline __u64 cfa_of(struct uwalk *s, const struct unwind_row *row)
{
	__u64 off = row->kind & UNWIND_CFA_X8 ? (__u64)row->cfa_off * 8 : row->cfa_off;

	switch (row->kind & UNWIND_CFA_MASK) {
	case UNWIND_CFA_RSP:
		return s->f->sp + off;
	case UNWIND_CFA_RBP:
		return frame_bp(s) ? s->f->bp + off : 0;
	case UNWIND_CFA_PLT:
		return s->f->sp + 8 + ((s->f->ip & 15) >= off ? 8 : 0);
	}
	return 0;
}

/*
 * %rbp is read only when a rule needs it: most frames of code without frame
 * pointers save it somewhere, and no caller ever looks at it.
 */
static __always_inline bool load_bp(struct uwalk *s)
{
	if (!s->f->bp_at)
		return true;
	if (walk_read(&s->r, &s->f->bp, sizeof(s->f->bp), s->f->bp_at))
		return false;
	s->f->bp_at = 0;
	s->f->bp_src = 0;
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
		note_read(&s->r, &pair[1], sizeof(pair[1]), cfa - 8, 0);
		/*
		 * A suffix taken from the trail reads none of these: where the
		 * saved %rbp is on a page of its own, whether that page is
		 * there is part of what the trail checks.
		 */
		if (!((cfa - 8) & 4095))
			note_word(s->r.n, cfa - 16, pair[0]);
		s->f->bp = pair[0];
		s->f->bp_at = 0;
		s->f->bp_src = cfa - 16;
		*ra = pair[1];
		return true;
	}
	if (walk_read(&s->r, ra, sizeof(*ra), cfa - 8))
		return false;
	if (row->kind & UNWIND_RBP_SAVED) {
		s->f->bp_at = cfa + (__s64)row->rbp_off * 8;
		s->f->bp_src = 0;	/* load_bp notes the word when it reads it */
	} else if (row->kind & UNWIND_RBP_LOST) {
		s->f->bp = 0;
		s->f->bp_at = 0;
		s->f->bp_src = 0;
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
	if (kind == UNWIND_CFA_PENDING) {
		s->st->flags |= STACK_PENDING;
		count(CNT_UNWIND_PENDING);
		return 1;
	}
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
	if (cfa <= s->f->sp)
		return -1;
	if (!read_caller(s, &row, cfa, &ra))
		return -1;
	if (!ra)
		return 1;	/* some outermost frames end with a zero return address */
	if (!push_frame(s, ra))
		return 1;
	s->f->ip = ra;
	s->f->sp = cfa;
	s->f->adj = 1;
	return 0;
}

/* stack_trail.bpf.h, included after this one. */
static __always_inline bool trail_meet(struct walk_notes *n, const struct stack_trail *t,
				       struct uwalk *s);

static long unwind_step(__u32 i, void *ctx)
{
	struct uwalk *s = ctx;
	long ret;

	if (trail_meet(s->r.n, s->t, s))
		return 1;
	ret = unwind_frame(s);

	if (ret < 0) {
		s->st->flags |= STACK_CUT;
		count(CNT_UNWIND_STOPS);
	}
	return ret ? 1 : 0;
}

/* unwind_active of the mappings in slot: one load. */
static __always_inline __u64 unwind_active_of(__u32 slot)
{
	if (!slot)
		return *(volatile __u64 *)&unwind_active;
	return *(volatile __u64 *)&image_unwind_active[slot & (MEMLEAK_UNWIND_SLOTS - 1)];
}

/*
 * The slot of the mappings a stack of process proc, of image, is walked by:
 * its exec'd image's (false when it has none: frame pointers), that of a
 * fork of the target that loaded libraries of its own, or the target's (0).
 */
static __always_inline bool unwind_slot(__u32 image, __u32 proc, __u32 *slot)
{
	__u32 key = image ?: proc, *at;

	*slot = 0;
	if (!key)
		return true;
	at = bpf_map_lookup_elem(&image_unwind_slot, &key);
	if (!at || !*at || *at >= MEMLEAK_UNWIND_SLOTS)
		return !image;
	*slot = *at;
	return true;
}

/*
 * The user stack by the CFI rows of the mappings in slot, whose
 * unwind_active the caller read (once: the stack cache's generation is
 * the walk's): at the allocation function's return, ip is the return
 * address into its caller, sp and bp that caller's. One frame per bpf_loop
 * round: the verifier checks the step once, not 127 times.
 */
static __always_inline void unwind_user_stack(struct pt_regs *ctx, struct stack_trace *st,
					      const struct stack_reader *r, __u32 slot,
					      __u64 active, const struct stack_trail *t)
{
	struct uwalk s = { .st = st, .r = *r, .t = t };
	struct uwalk_frame *f;
	__u32 zero = 0;

	r->c->bp_used = 0;
	st->ips[0] = PT_REGS_IP(ctx);
	st->nr = 1;
	s.f = f = bpf_map_lookup_elem(&uwalk_frame, &zero);
	if (!f) {
		st->flags |= STACK_CUT;
		count(CNT_STACK_ERRORS);
		return;
	}
	f->ip = PT_REGS_IP(ctx);
	f->sp = PT_REGS_SP(ctx);
	f->bp = PT_REGS_FP(ctx);
	f->bp_at = 0;
	f->bp_src = BP_FROM_REGISTER;
	f->adj = 1;
	f->first = (slot * 2 + (active >> 16 & 1)) * MEMLEAK_UNWIND_MAPPINGS;
	f->nr = (__u16)active;
	/* The row cache's: each slot's generations apart from the others'. */
	f->gen = (__u32)(active >> 32) ^ slot << 24;
	bpf_loop(MEMLEAK_MAX_STACK_DEPTH, unwind_step, &s, 0);
}

#endif
