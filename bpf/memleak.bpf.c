// SPDX-License-Identifier: GPL-2.0
/*
 * memleakbpf probes: every allocation API of the target's allocator, one live
 * record per outstanding block, and per-(stack, API) aggregates kept up to
 * date here so that a report never walks the live blocks.
 *
 * A call is handled at its return, where the result is known and the user
 * stack starts at the caller's return address (at entry the kernel would miss
 * the caller of a function that does not begin with push %rbp).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "memleak.h"

#define SIGSTOP 19
#define MAP_FAILED ((__u64)-1)
#define EEXIST 17

char LICENSE[] SEC("license") = "GPL";

const volatile __u64 min_size = 0;
const volatile __u64 max_size = ~0ULL;
const volatile __u64 page_size = 4096;
/*
 * Benchmarking only: the same programs on the same links return at once, so
 * that `make bench` can measure what the probes alone cost.
 */
const volatile bool bench_floor = false;

/* Written by user space while the target runs or is stopped. */
__u32 targ_tgid;	/* the traced process; changes when a shell hands over */
__u32 follow_shell;	/* the target is a shell: its first child takes over at exec */
__u32 handoff_tgid;	/* that first child, once forked */
__u64 counters[CNT__COUNT];
struct addr_range internal[MEMLEAK_MAX_INTERNAL];
__u32 nr_internal;
__u32 stop_on_dl;	/* SIGSTOP the target at each dynamic-linker event */
__u32 notify_dl;	/* -p: only tell user space, which rereads the maps */
__u32 stop_on_exec;	/* SIGSTOP the target right after each exec */
/*
 * While probes are being attached to a running process (-p), a return may be
 * seen whose entry probe was not in place yet: not a missed return. Until
 * this time (bpf_ktime_get_ns), such returns are not counted.
 */
__u64 settle_until_ns;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u64);
	__type(value, struct alloc_info);
	__uint(max_entries, 1 << 20);	/* --max-allocs */
} allocs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct site_key);
	__type(value, struct site_stats);
	__uint(max_entries, 1 << 15);	/* follows --stack-storage-size */
} sites SEC(".maps");

/*
 * Stacks keyed by a 64-bit hash of their frames: unlike a STACK_TRACE map,
 * two stacks that share a bucket do not make the second capture fail.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u64);
	__type(value, struct stack_trace);
	__uint(max_entries, 1 << 15);	/* --stack-storage-size */
} stack_traces SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct stack_trace);
	__uint(max_entries, 1);
} stack_scratch SEC(".maps");

#define CALL_INTERNAL	1	/* the allocator's own mmap: not a user allocation */
#define CALL_HAVE_OLD	2	/* `old` holds the record of the block being resized */

/*
 * Per-thread state of the outermost allocator call in flight. Task storage
 * goes away with the thread, so exited threads leave nothing behind.
 */
struct call_state {
	__u64 sp;		/* stack pointer at the call's entry; 0 when idle */
	__u64 size;		/* bytes requested */
	__u64 ptr;		/* realloc/mremap: old block; posix_memalign: out-pointer */
	struct alloc_info old;	/* realloc/mremap: old block's record, taken at entry */
	__u32 api;
	__u32 flags;
	__u32 tail_calls;	/* API functions it jumped to: their returns come first */
	__u32 pad;
	__u64 released;		/* the block this thread's last free/delete released */
};

/* Events for user space: struct memleak_event. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} stops SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct call_state);
} calls SEC(".maps");

static __always_inline void count(enum memleak_counter c)
{
	__sync_fetch_and_add(&counters[c], 1);
}

/* Set when a Python target begins to shut down: from then on it is not traced. */
__u32 py_frozen;
__u32 py_exit_stop;	/* -c: stop it at its exit; -p only tells user space */

static __always_inline bool is_target(void)
{
	return bpf_get_current_pid_tgid() >> 32 == targ_tgid && !py_frozen;
}

static __always_inline struct call_state *call_state(bool create)
{
	return bpf_task_storage_get(&calls, bpf_get_current_task_btf(), NULL,
				    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
}

/*
 * True while the thread is inside an allocator call we already track: a call
 * made from there (glibc's arena mmap, realloc's free, operator new's malloc)
 * is the allocator's own business. Stacks grow down, so a nested call runs
 * below the outer call's entry stack pointer, and a tail call (realloc(NULL, n)
 * jumping to malloc, new[] to new) enters at the very same one. sp is the
 * probed function's stack pointer at its entry (see entry_sp).
 */
static __always_inline bool nested(__u64 sp, struct call_state *st)
{
	return st && st->sp && sp <= st->sp;
}

/* Does the caller's return address (at the entry sp) lie in the allocator's own code? */
static __always_inline bool called_from_allocator(__u64 sp)
{
	__u64 ret_addr;

	if (bpf_probe_read_user(&ret_addr, sizeof(ret_addr), (void *)sp))
		return false;
	for (int i = 0; i < MEMLEAK_MAX_INTERNAL; i++) {
		if (i >= nr_internal)
			break;
		if (ret_addr >= internal[i].start && ret_addr < internal[i].end)
			return true;
	}
	return false;
}

/* Start tracking an outermost call; NULL for nested and foreign calls. */
static __always_inline struct call_state *call_begin(struct pt_regs *ctx, __u32 api,
						     __u64 size, __u64 ptr)
{
	struct call_state *st;

	if (!is_target())
		return NULL;
	st = call_state(true);
	if (!st) {
		count(CNT_STATE_ERRORS);
		return NULL;
	}
	if (st->sp) {
		if (PT_REGS_SP(ctx) < st->sp)
			return NULL;
		if (PT_REGS_SP(ctx) == st->sp) {
			st->tail_calls++;
			return NULL;
		}
		/* The previous call left without its return probe (longjmp). */
		count(CNT_MISSED_RETURNS);
	}
	st->tail_calls = 0;
	st->released = 0;
	st->sp = PT_REGS_SP(ctx);
	st->api = api;
	st->size = size;
	st->ptr = ptr;
	st->flags = 0;
	return st;
}

/* A 64-bit mix per frame (splitmix64's finalizer): cheap and well spread. */
static __always_inline __u64 mix(__u64 h, __u64 v)
{
	h ^= v;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 31;
	return h;
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
static __always_inline void walk_user_stack(struct pt_regs *ctx, struct stack_trace *st)
{
	__u64 fp = PT_REGS_FP(ctx), frame[2];	/* saved frame pointer, return address */
	__u32 n = 1;

	st->ips[0] = PT_REGS_IP(ctx);
	for (int i = 1; i < MEMLEAK_MAX_STACK_DEPTH; i++) {
		if (bpf_probe_read_user(frame, sizeof(frame), (void *)fp))
			goto out;
		st->ips[i & (MEMLEAK_STACK_SLOTS - 1)] = frame[1];
		n++;
		if (frame[0] <= fp)
			goto out;
		fp = frame[0];
	}
	/* Full: one more link that goes up means frames were left out. */
	if (!bpf_probe_read_user(frame, sizeof(frame), (void *)fp) && frame[1] && frame[0] > fp)
		st->flags |= STACK_TRUNCATED;
out:
	st->nr = n;
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
	__u32 adj;		/* 1: ip is a return address; its call is at ip - 1 */
	__u32 first, nr;	/* the active mappings */
	__u32 gen;		/* their generation */
	struct stack_trace *st;
};

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

	if (bpf_probe_read_user(r, sizeof(r), (void *)(s->sp + 120)) || !r[6])
		return -1;
	if (!push_frame(s, r[6]))
		return 1;
	s->ip = r[6];
	s->sp = r[5];
	s->bp = r[0];
	s->bp_at = 0;
	s->adj = 0;	/* an interrupted instruction, not a return address */
	return 0;
}

static __always_inline __u64 cfa_of(const struct uwalk *s, const struct unwind_row *row)
{
	__u64 off = row->kind & UNWIND_CFA_X8 ? (__u64)row->cfa_off * 8 : row->cfa_off;

	switch (row->kind & UNWIND_CFA_MASK) {
	case UNWIND_CFA_RSP:
		return s->sp + off;
	case UNWIND_CFA_RBP:
		return s->bp ? s->bp + off : 0;
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
	if (bpf_probe_read_user(&s->bp, sizeof(s->bp), (void *)s->bp_at))
		return false;
	s->bp_at = 0;
	return true;
}

/* The caller's return address, and where its %rbp is. */
static __always_inline bool read_caller(struct uwalk *s, const struct unwind_row *row, __u64 cfa,
					__u64 *ra)
{
	__u64 pair[2];

	if (row->kind & UNWIND_RBP_SAVED && row->rbp_off == -2) {
		/* The usual push %rbp right after the call: one read for both. */
		if (bpf_probe_read_user(pair, sizeof(pair), (void *)(cfa - 16)))
			return false;
		s->bp = pair[0];
		s->bp_at = 0;
		*ra = pair[1];
		return true;
	}
	if (bpf_probe_read_user(ra, sizeof(*ra), (void *)(cfa - 8)))
		return false;
	if (row->kind & UNWIND_RBP_SAVED) {
		s->bp_at = cfa + (__s64)row->rbp_off * 8;
	} else if (row->kind & UNWIND_RBP_LOST) {
		s->bp = 0;
		s->bp_at = 0;
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
	if ((kind == UNWIND_CFA_NONE || row.kind & UNWIND_FP_GUESS) && !s->bp)
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
static __always_inline void unwind_user_stack(struct pt_regs *ctx, struct stack_trace *st)
{
	__u64 active = *(volatile __u64 *)&unwind_active;	/* one load: all three */
	struct uwalk s = {
		.ip = PT_REGS_IP(ctx), .sp = PT_REGS_SP(ctx), .bp = PT_REGS_FP(ctx), .adj = 1,
		.first = (active >> 16 & 1) * MEMLEAK_UNWIND_MAPPINGS, .nr = (__u16)active,
		.gen = active >> 32, .st = st,
	};

	st->ips[0] = s.ip;
	st->nr = 1;
	bpf_loop(MEMLEAK_MAX_STACK_DEPTH, unwind_step, &s, 0);
}

/* The caller's user stack, stored once; its hash, or MEMLEAK_NO_STACK. */
static __always_inline __u64 capture_stack(struct pt_regs *ctx)
{
	struct stack_trace *st, *old;
	__u32 zero = 0;
	__u64 h;

	st = bpf_map_lookup_elem(&stack_scratch, &zero);
	if (!st) {
		count(CNT_STACK_ERRORS);
		return MEMLEAK_NO_STACK;
	}
	st->flags = 0;
	if (unwind_mode == UNWIND_MODE_TABLES)
		unwind_user_stack(ctx, st);
	else
		walk_user_stack(ctx, st);
	h = mix(0x9e3779b97f4a7c15ULL, st->nr | (__u64)st->flags << 32);
	for (int i = 0; i < MEMLEAK_MAX_STACK_DEPTH; i++) {
		if (i >= st->nr)
			break;
		h = mix(h, st->ips[i]);
	}
	h = h ?: 1;
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

/* ---------------------------------------------------------------- Python */

/*
 * Python frames. When user space finds an interpreter in the target, it
 * fills py and sets py_enabled before it attaches the allocator; for any
 * other target their whole cost is the test of py_enabled.
 */
__u32 py_enabled;
struct py_offsets py;
/* The kernel has bpf_loop (5.17): without it the walk is left out, unverified. */
const volatile bool py_walk = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);	/* only Python targets use it */
	__type(key, __u64);
	__type(value, struct py_stack);
	__uint(max_entries, 1 << 15);	/* --stack-storage-size */
} py_stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, struct stack_pair);
	__uint(max_entries, 1 << 15);	/* --stack-storage-size */
} stack_pairs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct py_stack);
	__uint(max_entries, 1);
} py_scratch SEC(".maps");

/* Per thread: the PyThreadState it was last seen running with. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} py_threads SEC(".maps");

static __always_inline __u64 py_read(__u64 addr, __u32 off)
{
	__u64 v;

	if (!addr || bpf_probe_read_user(&v, sizeof(v), (void *)(addr + off)))
		return 0;
	return v;
}

/* From addr along the pointers at these offsets; 0 where one is NULL. */
static __always_inline __u64 py_follow(__u64 addr, const __u32 *path, __u32 nr)
{
	for (int i = 0; i < MEMLEAK_PY_PATH; i++) {
		if (i >= nr)
			break;
		addr = py_read(addr, path[i]);
	}
	return addr;
}

/*
 * The calling thread's PyThreadState, or 0. Whoever runs Python code holds
 * the GIL, so its holder (3.11; the last holder from 3.12 on) is tried
 * first; a thread that allocates after releasing it (I/O, C code) is found
 * by the state it last ran with. A state is the thread's own only if its
 * thread_id is the thread's pthread_self(), its %fs base on x86-64. Only
 * the thread itself changes its frames, so they are consistent here.
 */
static __always_inline __u64 py_thread_state(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 self = task->thread.fsbase, ts, *seen;

	ts = py_follow(py.runtime, py.holder, py.nr_holder);
	if (ts && py_read(ts, py.thread_id) == self) {
		seen = bpf_task_storage_get(&py_threads, task, NULL,
					    BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (seen)
			*seen = ts;
		return ts;
	}
	seen = bpf_task_storage_get(&py_threads, task, NULL, 0);
	if (seen && *seen && py_read(*seen, py.thread_id) == self)
		return *seen;
	return 0;
}

struct py_walk {
	__u64 frame;		/* the next _PyInterpreterFrame */
	struct py_stack *st;
	bool fault;
};

/* A field of a frame's head (offsets from user space, checked there too). */
static __always_inline __u64 head_u64(const __u64 *head, __u32 off)
{
	return off <= MEMLEAK_PY_FRAME_HEAD - 8 ? head[(off >> 3) & 15] : 0;
}

static __always_inline __u32 head_u8(const __u64 *head, __u32 off)
{
	return off < MEMLEAK_PY_FRAME_HEAD ? ((const __u8 *)head)[off & 127] : MEMLEAK_PY_NONE;
}

/* One frame per bpf_loop round: the verifier checks the step once. */
static long py_step(__u32 i, void *ctx)
{
	__u64 head[MEMLEAK_PY_FRAME_HEAD / 8] = {};
	struct py_walk *w = ctx;
	struct py_stack *st = w->st;
	__u32 n = st->nr;
	__u64 code;

	if (!w->frame)
		return 1;
	if (bpf_probe_read_user(head, sizeof(head), (void *)w->frame)) {
		w->fault = true;
		return 1;
	}
	w->frame = head_u64(head, py.previous);
	/* 3.12+: a shim frame on the C stack ends the evaluation above it. */
	if (head_u8(head, py.owner) == py.owner_cstack) {
		if (n)
			st->entries |= 1ULL << ((n - 1) & 63);
		return 0;
	}
	code = head_u64(head, py.code);
	if (!code)
		return 1;
	if (n >= MEMLEAK_PY_MAX_FRAMES) {
		st->flags |= PY_STACK_TRUNCATED;
		return 1;
	}
	st->frames[n & (MEMLEAK_PY_MAX_FRAMES - 1)].code = code;
	st->frames[n & (MEMLEAK_PY_MAX_FRAMES - 1)].instr = head_u64(head, py.instr);
	st->frames[n & (MEMLEAK_PY_MAX_FRAMES - 1)].linetable = py_read(code, py.code_linetable);
	/* 3.11: the frame an evaluation loop was entered with. */
	if (py.is_entry != MEMLEAK_PY_NONE && head_u8(head, py.is_entry))
		st->entries |= 1ULL << (n & 63);
	st->nr = n + 1;
	return 0;
}

/* Code objects already copied to user space, by (code, linetable). */
struct py_code_key {
	__u64 code;
	__u64 linetable;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct py_code_key);
	__type(value, __u8);
	__uint(max_entries, 1 << 15);	/* --stack-storage-size */
} py_codes_sent SEC(".maps");

/* struct py_code for user space (user/pytrace.c): room for about 230 at once. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} py_codes SEC(".maps");

/* A compact ASCII str's text into buf, whole; false for anything else. */
static __always_inline bool py_ascii(__u64 str, char *buf, __u32 len)
{
	__u32 state;
	long n;

	buf[0] = '\0';
	if (!str || bpf_probe_read_user(&state, sizeof(state), (void *)(str + 32)))
		return false;
	if ((state & 0x60) != 0x60)	/* PyASCIIObject.state: compact, ascii */
		return false;
	n = bpf_probe_read_user_str(buf, len, (void *)(str + py.ascii_size));
	return n > 0 && n < len;
}

/* Copy what names frame i's code object, unless that was done already. */
static long py_send_code(__u32 i, void *ctx)
{
	struct py_stack *st = *(struct py_stack **)ctx;
	struct py_frame *f = &st->frames[i & (MEMLEAK_PY_MAX_FRAMES - 1)];
	struct py_code_key key = { f->code, f->linetable };
	static const __u8 one = 1;
	struct py_code *c;
	__u64 n;

	if (i >= st->nr)
		return 1;
	if (bpf_map_lookup_elem(&py_codes_sent, &key) ||
	    bpf_map_update_elem(&py_codes_sent, &key, &one, BPF_NOEXIST))
		return 0;
	c = bpf_ringbuf_reserve(&py_codes, sizeof(*c), 0);
	if (!c) {
		/* Let a later stack send it; user space reads the target meanwhile. */
		bpf_map_delete_elem(&py_codes_sent, &key);
		return 0;
	}
	c->code = key.code;
	c->linetable = key.linetable;
	c->flags = 0;
	c->firstlineno = (__s32)py_read(key.code, py.code_firstlineno);
	c->firsttraceable = (__s32)py_read(key.code, py.code_firsttraceable);
	/* Both, even when the first fails: user space takes what it can. */
	if (!py_ascii(py_read(key.code, py.code_qualname), c->qualname, sizeof(c->qualname)))
		c->flags |= PY_CODE_NAMES_UNREAD;
	if (!py_ascii(py_read(key.code, py.code_filename), c->filename, sizeof(c->filename)))
		c->flags |= PY_CODE_NAMES_UNREAD;
	n = py_read(key.linetable, 16);		/* PyVarObject.ob_size */
	if (n > MEMLEAK_PY_TABLE_LEN) {
		n = MEMLEAK_PY_TABLE_LEN;
		c->flags |= PY_CODE_TABLE_CUT;
	}
	c->table_len = 0;
	if (n && !bpf_probe_read_user(c->table, n, (void *)(key.linetable + py.bytes_data)))
		c->table_len = n;
	bpf_ringbuf_submit(c, 0);
	return 0;
}

static __always_inline bool same_py_stack(const struct py_stack *a, const struct py_stack *b)
{
	__u32 last = (a->nr - 1) & (MEMLEAK_PY_MAX_FRAMES - 1);

	return a->nr == b->nr && a->flags == b->flags && a->entries == b->entries &&
	       a->frames[0].instr == b->frames[0].instr &&
	       a->frames[last].instr == b->frames[last].instr;
}

/* The calling thread's Python frames, stored once; their hash, or 0 for none. */
static __always_inline __u64 capture_python(void)
{
	struct py_walk w = {};
	struct py_stack *st, *old;
	__u32 zero = 0;
	__u64 ts, h;

	ts = py_thread_state();
	st = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!ts || !st)
		return 0;
	st->nr = st->flags = 0;
	st->entries = 0;
	w.st = st;
	w.frame = py_follow(ts, py.frame, py.nr_frame);
	/* Twice the frames: from 3.12 on, each evaluation adds a shim frame. */
	bpf_loop(2 * MEMLEAK_PY_MAX_FRAMES, py_step, &w, 0);
	if (w.fault) {
		count(CNT_PY_STACK_ERRORS);
		return 0;
	}
	if (!st->nr)
		return 0;
	h = mix(mix(0x7f4a7c159e3779b9ULL, st->nr | (__u64)st->flags << 32), st->entries);
	for (int i = 0; i < MEMLEAK_PY_MAX_FRAMES; i++) {
		if (i >= st->nr)
			break;
		h = mix(mix(mix(h, st->frames[i].code), st->frames[i].instr),
			st->frames[i].linetable);
	}
	h = h ?: 1;
	old = bpf_map_lookup_elem(&py_stacks, &h);
	if (old) {
		if (same_py_stack(old, st))
			return h;
		count(CNT_PY_STACK_ERRORS);
		return 0;
	}
	if (bpf_map_update_elem(&py_stacks, &h, st, BPF_NOEXIST)) {
		if (bpf_map_lookup_elem(&py_stacks, &h))
			return h;	/* another CPU stored it first */
		count(CNT_PY_STACKS_MAP_FULL);
		return 0;
	}
	/* A new stack: its code objects may be new too, and alive now. */
	bpf_loop(MEMLEAK_PY_MAX_FRAMES, py_send_code, &st, 0);
	return h;
}

/*
 * The id of the pair (native stack, Python frames), stored once; the native
 * id alone when the thread runs no Python or its frames could not be kept.
 * A global function: the verifier checks it once, not at every record().
 */
__noinline __u64 py_pair_id(__u64 native)
{
	struct stack_pair pair = { .native = native }, *old;
	__u64 id;

	if (!py_walk)
		return native;
	pair.python = capture_python();
	if (!pair.python)
		return native;
	id = mix(mix(0x94d049bb133111ebULL, native), pair.python) ?: 1;
	old = bpf_map_lookup_elem(&stack_pairs, &id);
	if (old) {
		if (old->native == native && old->python == pair.python)
			return id;
		count(CNT_PY_STACK_ERRORS);
		return native;
	}
	if (bpf_map_update_elem(&stack_pairs, &id, &pair, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&stack_pairs, &id)) {
		count(CNT_PY_STACKS_MAP_FULL);
		return native;
	}
	return id;
}

/* An allocation's stack id: for a thread running Python, with its frames. */
static __always_inline __u64 with_python(__u64 native)
{
	if (!py_walk || !py_enabled || native == MEMLEAK_NO_STACK)
		return native;
	return py_pair_id(native);
}

/* ---------------------------------------------------------------- end of Python */

static __always_inline struct site_stats *site_lookup(__u64 stack_id, __u32 api, bool create)
{
	struct site_key key = { .stack_id = stack_id, .api = api };
	static const struct site_stats zero;
	struct site_stats *s;

	s = bpf_map_lookup_elem(&sites, &key);
	if (s || !create)
		return s;
	bpf_map_update_elem(&sites, &key, &zero, BPF_NOEXIST);
	s = bpf_map_lookup_elem(&sites, &key);
	if (!s)
		count(CNT_SITES_MAP_FULL);
	return s;
}

/* Take a freed or resized block out of its site's outstanding figures. */
static __always_inline void site_sub(const struct alloc_info *info, __u64 bytes, __u64 allocs)
{
	struct site_stats *s = site_lookup(info->stack_id, info->api, false);

	if (!s)
		return;
	__sync_fetch_and_add(&s->outstanding_bytes, -bytes);
	__sync_fetch_and_add(&s->outstanding_allocs, -allocs);
}

/* Remove a block's record; false when it was not tracked. */
static __always_inline bool forget(__u64 addr, struct alloc_info *out)
{
	struct alloc_info *info = bpf_map_lookup_elem(&allocs, &addr);

	if (!info)
		return false;
	*out = *info;
	/* Two threads freeing one block (a double free): only one wins. */
	return bpf_map_delete_elem(&allocs, &addr) == 0;
}

static __always_inline void record(struct pt_regs *ctx, __u64 addr, __u64 size, __u32 api)
{
	struct alloc_info info = { .size = size, .api = api };
	struct alloc_info old;
	struct site_stats *s;
	long err;

	if (size < min_size || size > max_size)
		return;
	info.timestamp_ns = bpf_ktime_get_ns();
	info.stack_id = with_python(capture_stack(ctx));
	s = site_lookup(info.stack_id, api, true);
	if (!s)
		return;
	err = bpf_map_update_elem(&allocs, &addr, &info, BPF_NOEXIST);
	if (err == -EEXIST) {
		/* The block at this address was freed behind our back. */
		if (forget(addr, &old))
			site_sub(&old, old.size, 1);
		count(CNT_REPLACED);
		err = bpf_map_update_elem(&allocs, &addr, &info, BPF_NOEXIST);
	}
	if (err) {
		count(CNT_ALLOCS_MAP_FULL);
		return;
	}
	__sync_fetch_and_add(&s->outstanding_bytes, size);
	__sync_fetch_and_add(&s->outstanding_allocs, 1);
	__sync_fetch_and_add(&s->total_bytes, size);
	__sync_fetch_and_add(&s->total_allocs, 1);
}

/*
 * free/delete of addr, entered with stack pointer sp. A block we do not know
 * (allocated before -p attached, filtered by -z/-Z, dropped, or freed twice)
 * is counted as an untracked free, once per release the program asked for:
 * operator delete frees through free() (and sized delete through delete), so
 * the same address released again by the same thread, with no allocation
 * call in between, is that one release seen twice. Frees the allocator's own
 * code makes of what it never handed out (glibc empties a thread's tcache
 * through free() when the thread exits) are not the program's.
 */
static __always_inline void release(__u64 addr, __u64 sp, struct call_state *st)
{
	struct alloc_info old;

	if (forget(addr, &old))
		site_sub(&old, old.size, 1);
	else if ((!st || st->released != addr) && !called_from_allocator(sp))
		count(CNT_UNTRACKED_FREES);
	if (!st)
		st = call_state(true);
	if (st)
		st->released = addr;
}

/*
 * realloc and mremap: take the old block's record at entry, so that another
 * thread reusing the address before we return cannot be mistaken for it.
 */
static __always_inline void resize_begin(struct call_state *st, __u64 old_addr)
{
	if (old_addr && forget(old_addr, &st->old))
		st->flags |= CALL_HAVE_OLD;
}

/* The old block is gone: freed, or moved into the new one. */
static __always_inline void resize_drop_old(struct call_state *st)
{
	if (st->flags & CALL_HAVE_OLD)
		site_sub(&st->old, st->old.size, 1);
}

/* The call failed and the old block is still the caller's. */
static __always_inline void resize_keep_old(struct call_state *st)
{
	__u64 addr = st->ptr;

	if (!(st->flags & CALL_HAVE_OLD))
		return;
	if (bpf_map_update_elem(&allocs, &addr, &st->old, BPF_NOEXIST)) {
		count(CNT_ALLOCS_MAP_FULL);
		site_sub(&st->old, st->old.size, 1);
	}
}

static __always_inline void realloc_done(struct pt_regs *ctx, struct call_state *st, __u64 ret)
{
	/* realloc released a block we never saw: an untracked free, as with free(). */
	if (st->ptr && !(st->flags & CALL_HAVE_OLD) && (ret || st->size == 0))
		count(CNT_UNTRACKED_FREES);
	if (ret) {
		resize_drop_old(st);
		record(ctx, ret, st->size, st->api);
	} else if (st->size == 0) {
		resize_drop_old(st);	/* realloc(p, 0) freed p */
	} else {
		resize_keep_old(st);	/* failed: p untouched */
	}
}

static __always_inline int call_end(struct pt_regs *ctx)
{
	struct call_state *st;
	__u64 ret, ptr;

	if (!is_target())
		return 0;
	st = call_state(false);
	/*
	 * A thread that never entered a call since tracing began returns from
	 * one that was in flight when -p attached: it began before tracing,
	 * so nothing is lost.
	 */
	if (!st)
		return 0;
	if (!st->sp) {
		if (bpf_ktime_get_ns() > settle_until_ns)
			count(CNT_MISSED_RETURNS);
		return 0;
	}
	if (PT_REGS_SP(ctx) <= st->sp)
		return 0;	/* return of a nested call */
	if (st->tail_calls) {
		/* A tail-called function returns for its caller, innermost first. */
		st->tail_calls--;
		return 0;
	}
	st->sp = 0;
	if (st->flags & CALL_INTERNAL)
		return 0;

	ret = PT_REGS_RC(ctx);
	switch (st->api) {
	case API_POSIX_MEMALIGN:
		if (ret == 0 && !bpf_probe_read_user(&ptr, sizeof(ptr), (void *)st->ptr))
			record(ctx, ptr, st->size, st->api);
		break;
	case API_MMAP:
		if (ret != MAP_FAILED)
			record(ctx, ret, st->size, st->api);
		break;
	case API_MREMAP:
		if (ret == MAP_FAILED) {
			resize_keep_old(st);
		} else {
			resize_drop_old(st);
			record(ctx, ret, st->size, st->api);
		}
		break;
	case API_REALLOC:
	case API_REALLOCARRAY:
		realloc_done(ctx, st, ret);
		break;
	default:
		if (ret)
			record(ctx, ret, st->size, st->api);
	}
	return 0;
}

/* Entry-only probes (free, delete, munmap): skip calls the allocator makes. */
static __always_inline bool user_release(__u64 sp)
{
	return is_target() && !nested(sp, call_state(false));
}

static __always_inline void reallocarray_begin(struct pt_regs *ctx, __u64 ptr, __u64 nmemb,
					       __u64 size)
{
	__u64 bytes = nmemb * size;
	struct call_state *st;

	/* On overflow reallocarray fails and leaves ptr alone: a non-zero size
	 * makes the NULL return read as that failure. The barrier keeps clang
	 * from turning the check into a call to __multi3. */
	asm volatile("" : "+r"(bytes));
	if (nmemb && bytes / nmemb != size)
		bytes = ~0ULL;
	st = call_begin(ctx, API_REALLOCARRAY, bytes, ptr);
	if (st)
		resize_begin(st, ptr);
}

static __always_inline void mmap_begin(struct pt_regs *ctx, __u64 length)
{
	struct call_state *st = call_begin(ctx, API_MMAP, length, 0);

	if (st && called_from_allocator(PT_REGS_SP(ctx)))
		st->flags |= CALL_INTERNAL;
}

static __always_inline void mremap_begin(struct pt_regs *ctx, __u64 old_addr, __u64 new_size)
{
	struct call_state *st = call_begin(ctx, API_MREMAP, new_size, old_addr);

	if (!st)
		return;
	if (called_from_allocator(PT_REGS_SP(ctx)))
		st->flags |= CALL_INTERNAL;
	else
		resize_begin(st, old_addr);
}

static __always_inline void munmap_user(__u64 sp, __u64 start, __u64 length)
{
	__u64 len, rest;
	struct alloc_info old;

	if (!user_release(sp) || called_from_allocator(sp) || !forget(start, &old))
		return;
	len = (length + page_size - 1) & ~(page_size - 1);
	if (len >= old.size) {
		site_sub(&old, old.size, 1);
		return;
	}
	/* Unmapping the front of a mapping: the rest stays outstanding. */
	rest = start + len;
	site_sub(&old, len, 0);
	old.size -= len;
	if (bpf_map_update_elem(&allocs, &rest, &old, BPF_NOEXIST)) {
		count(CNT_ALLOCS_MAP_FULL);
		site_sub(&old, old.size, 1);
	}
}

/* pvalloc hands out whole pages, at least one. */
static __always_inline __u64 whole_pages(__u64 size)
{
	return size ? (size + page_size - 1) / page_size * page_size : page_size;
}

/*
 * An entry-only probe may sit past the entry, on the first instruction the
 * kernel emulates rather than single-steps (user/placement.c): the cookie's
 * upper half says by how many bytes the function has lowered the stack
 * pointer by then, so that the nested-call test and the return address see
 * the stack as it was at the entry.
 */
static __always_inline __u64 entry_sp(struct pt_regs *ctx, __u64 cookie)
{
	return PT_REGS_SP(ctx) + (cookie >> 32);
}

/*
 * Entry of any API function; the attach cookie's low half says which. One
 * program for all of them lets user space attach a whole allocator with one
 * multi-uprobe link per object, and detach it with one RCU grace period
 * instead of one per function.
 */
static __always_inline int on_enter(struct pt_regs *ctx, __u64 cookie)
{
	__u32 api = (__u32)cookie;
	__u64 a1 = PT_REGS_PARM1(ctx), a2 = PT_REGS_PARM2(ctx), a3 = PT_REGS_PARM3(ctx);
	struct call_state *st;

	switch (api) {
	case API_CALLOC:
		call_begin(ctx, api, a1 * a2, 0);
		break;
	case API_REALLOC:
		st = call_begin(ctx, api, a2, a1);
		if (st)
			resize_begin(st, a1);
		break;
	case API_REALLOCARRAY:
		reallocarray_begin(ctx, a1, a2, a3);
		break;
	case API_POSIX_MEMALIGN:
		call_begin(ctx, api, a3, a1);	/* (memptr, alignment, size) */
		break;
	case API_ALIGNED_ALLOC:
	case API_MEMALIGN:
		call_begin(ctx, api, a2, 0);	/* (alignment, size) */
		break;
	case API_PVALLOC:
		call_begin(ctx, api, whole_pages(a1), 0);
		break;
	case API_MMAP:
		mmap_begin(ctx, a2);		/* (addr, length, ...) */
		break;
	case API_MREMAP:
		mremap_begin(ctx, a1, a3);	/* (old, old_size, new_size, ...) */
		break;
	case API_FREE:
	case API_DELETE:
	case API_DELETE_ARRAY:
		if (!a1 || !is_target())
			break;
		st = call_state(false);
		if (!nested(entry_sp(ctx, cookie), st))
			release(a1, entry_sp(ctx, cookie), st);
		break;
	case API_MUNMAP:
		munmap_user(entry_sp(ctx, cookie), a1, a2);
		break;
	default:	/* malloc, valloc, new, new[]: size first */
		call_begin(ctx, api, a1, 0);
	}
	return 0;
}

/* Attached as multi-uprobes (user space sets the attach type). */
SEC("uprobe")
int api_enter(struct pt_regs *ctx)
{
	if (bench_floor)
		return 0;
	return on_enter(ctx, bpf_get_attach_cookie(ctx));
}

SEC("uprobe")
int api_exit(struct pt_regs *ctx)
{
	if (bench_floor)
		return 0;
	return call_end(ctx);
}

/*
 * Stop the current process and tell user space, which may not be its parent
 * (a shell's child) and so cannot see the stop through waitpid.
 */
static __always_inline void stop_current(void)
{
	struct memleak_event ev = { bpf_get_current_pid_tgid() >> 32, EVENT_STOPPED };

	count(CNT_STOP_REQUESTS);
	bpf_send_signal(SIGSTOP);
	bpf_ringbuf_output(&stops, &ev, sizeof(ev), 0);
}

/*
 * The dynamic linker calls _dl_debug_state() around every change of its
 * list of loaded objects. Stopping the target there lets user space attach
 * to a freshly loaded allocator before any of its code (or a constructor
 * that allocates) runs.
 */
SEC("uprobe")
int dl_debug_state(struct pt_regs *ctx)
{
	struct memleak_event ev = { bpf_get_current_pid_tgid() >> 32, EVENT_LIBRARIES };

	if (!is_target())
		return 0;
	if (stop_on_dl)
		stop_current();
	else if (notify_dl)
		bpf_ringbuf_output(&stops, &ev, sizeof(ev), 0);
	return 0;
}

/*
 * A Python target at Py_FinalizeEx (cookie 1) or at _exit (cookie 0): stop
 * it (-c) so that user space reads its code objects while they still exist;
 * a -p target is not stopped (its parent would see it), only announced.
 * From Py_FinalizeEx on nothing is traced: the interpreter frees its
 * objects as it shuts down, which would make every leak look freed.
 */
SEC("uprobe")
int py_exit(struct pt_regs *ctx)
{
	struct memleak_event ev = { bpf_get_current_pid_tgid() >> 32, EVENT_PY_EXITING };

	if (!py_enabled || !is_target())
		return 0;
	if (bpf_get_attach_cookie(ctx))
		py_frozen = 1;
	if (py_exit_stop) {
		ev.kind = EVENT_PY_EXIT;
		count(CNT_STOP_REQUESTS);
		bpf_send_signal(SIGSTOP);
	}
	bpf_ringbuf_output(&stops, &ev, sizeof(ev), 0);
	return 0;
}

/* Stop a traced command right after exec, before its first instruction. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(exec_stop, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	if (p->tgid != targ_tgid && (!handoff_tgid || p->tgid != handoff_tgid))
		return 0;
	count(CNT_EXECS);
	if (stop_on_exec) {
		stop_current();
	} else {
		/*
		 * -p: the image we traced is gone and a new one starts, which
		 * we did not stop for: trace nothing more of it, and tell user
		 * space, which ends with the old image's report.
		 */
		struct memleak_event ev = { p->tgid, EVENT_EXEC };

		targ_tgid = 0;
		bpf_ringbuf_output(&stops, &ev, sizeof(ev), 0);
	}
	return 0;
}

/*
 * `sh -c './app'`: the shell forks and the child execs the program. The
 * first child a traced shell forks is the one to follow.
 */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(fork_follow, struct task_struct *parent, struct task_struct *child)
{
	if (!follow_shell || handoff_tgid || parent->tgid != targ_tgid ||
	    child->pid != child->tgid)
		return 0;
	handoff_tgid = child->tgid;
	return 0;
}
