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
#include "sample.h"

#define SIGSTOP 19
#define MAP_FAILED ((__u64)-1)
#define EEXIST 17
#define ENOSPC 28

char LICENSE[] SEC("license") = "GPL";

const volatile __u64 min_size = 0;
const volatile __u64 max_size = ~0ULL;

/* -z/-Z: is a block of size bytes counted (and traced)? */
static __always_inline bool size_wanted(__u64 size)
{
	return size >= min_size && size <= max_size;
}

const volatile __u64 page_size = 4096;
/*
 * Benchmarking only: the same programs on the same links return at once, so
 * that `make bench` can measure what the probes alone cost.
 */
const volatile bool bench_floor = false;

/*
 * --sample and -s (bpf/sample.h): the mode; --sample's mean bytes; -s's
 * threshold on a 32-bit draw and each block's weight; a seed for tests
 * (MEMLEAKBPF_SAMPLE_SEED: each thread's draws from xorshift, not prandom).
 */
const volatile __u32 sample_mode = SAMPLE_NONE;
const volatile __u64 sample_mean = 0;
const volatile __u64 sample_threshold = 0;
const volatile __u64 sample_per_block = 0;
const volatile __u64 sample_seed = 0;
/* Sampling: the calls, counted exactly at their entry (memleak.h). */
struct memleak_calls entry_calls[MEMLEAK_SITE_SHARDS];

/* Written by user space while the target runs or is stopped. */
__u32 targ_tgid;	/* the traced process; changes when a shell hands over */
__u32 follow_shell;	/* the target is a shell: its first child takes over at exec */
__u32 handoff_tgid;	/* that first child, once forked */
__u64 counters[CNT__COUNT];
struct addr_range internal[MEMLEAK_MAX_INTERNAL];
__u32 nr_internal;
__u32 stop_on_dl;	/* SIGSTOP the target at each dynamic-linker event */
__u32 notify_dl;	/* -p: only tell user space, which rereads the maps */
/*
 * The target's _r_debug (glibc's struct r_debug), as user space last read
 * it; 0: not known since its exec (exec_stop clears it: the new image's
 * dynamic linker is elsewhere).
 */
__u64 dl_r_debug;
__u32 stop_on_exec;	/* SIGSTOP the target right after each exec */
/*
 * While probes are being attached to a running process (-p), a return may be
 * seen whose entry probe was not in place yet: not a missed return. Until
 * this time (bpf_ktime_get_ns), such returns are not counted.
 */
__u64 settle_until_ns;
/*
 * CLOCK_MONOTONIC to CLOCK_FEED_PERIOD_MS, kept by a thread of the tracer
 * (user/probe/clock.c): the allocations' timestamps. bpf_ktime_get_ns() would
 * cost a sixth of what the programs do per malloc/free pair.
 */
__u64 now_ns;

/*
 * A recorded block's timestamp, and the peak's. Under sampling only the
 * sampled calls need one, a few a second: they ask the kernel, and no
 * feed thread wakes the tracer 200 times a second (probes.c).
 */
static __always_inline __u64 stamp_ns(void)
{
	return sample_mode == SAMPLE_NONE ? now_ns : bpf_ktime_get_ns();
}

/*
 * New stacks go to user space through a ring of their own, which costs a
 * copy where inserting into a hash map without preallocation cost an
 * allocation and a memory-cgroup charge (3.5 us a stack on a torch job,
 * half of whose allocations made one); user space keeps the frames
 * (user/probe/stack_ring.c). Sized by --new-stack-buffer.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} stack_ring SEC(".maps");

/* The stacks sent (memleak.h): sets of --stack-storage-size / MEMLEAK_KNOWN_WAYS. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct known_set);
	__uint(max_entries, 1 << 16);
} known_stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct stack_msg);
	__uint(max_entries, 1);
} stack_scratch SEC(".maps");

/* Events for user space: struct memleak_event. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 65536);	/* --follow: a burst of forks, an event each */
} events SEC(".maps");

/* Entries in the tables reclaiming empties, and the marks (memleak.h). */
struct memleak_fill fill;
struct memleak_fill fill_mark;

static __always_inline void count(enum memleak_counter c)
{
	__sync_fetch_and_add(&counters[c], 1);
}

/*
 * One more entry in a table; at its mark, wake user space to sweep it
 * (user/probe/reclaim.c) rather than wait for its next tick, by when a
 * torch import has filled the rest.
 */
static __always_inline void fill_add(__u64 *n, const __u64 *mark)
{
	struct memleak_event ev = { bpf_get_current_pid_tgid() >> 32, EVENT_RECLAIM };

	if (__sync_fetch_and_add(n, 1) + 1 == *(volatile const __u64 *)mark)
		bpf_ringbuf_output(&events, &ev, sizeof(ev), 0);
}

#include "args.bpf.h"
#include "tables.bpf.h"
#include "peak.bpf.h"
#include "stack.bpf.h"
#include "follow.bpf.h"

#define CALL_INTERNAL	1	/* the allocator's own mmap: not a user allocation */
#define CALL_HAVE_OLD	2	/* `old` holds the record of the block being resized */
#define CALL_SAMPLED	4	/* sampling: the block it returns is recorded */

/*
 * Per-thread state of the outermost allocator call in flight. Task storage
 * goes away with the thread, so exited threads leave nothing behind.
 */
struct call_state {
	__u64 sp;		/* stack pointer at the call's entry; 0 when idle */
	__u64 size;		/* bytes requested */
	__u64 ptr;		/* realloc, mremap, xallocx: old block; posix_memalign: out-pointer */
	struct alloc_info old;	/* ... the old block's record, taken at entry */
	__u32 api;
	__u32 flags;
	__u32 tail_calls;	/* API functions it jumped to: their returns come first */
	__u32 proc;		/* its process's tag (memleak_proc) */
	__u32 image;		/* its process's own image: its mappings, its Python (memleak_proc) */
	__u64 released;		/* the block this thread's last free/delete released */
	/* Sampling: bytes to the next sample point (2^-16 bytes), and the seeded draws. */
	__u64 sample_left;
	__u64 rng;
	__u32 sample_ready;	/* sample_left was drawn */
	__u32 skip_api;		/* uprobe sessions: the last call sampled out (sample.bpf.h) */
	__u64 skip_sp;		/* ... its entry stack pointer, 0 when none */
	__u64 skip_ret;		/* ... and the return address there */
	/* Stacks of its last allocations, a way per call site and depth. */
	struct stack_cache stack[STACK_CACHE_WAYS];
	struct stack_trail trail;	/* its last walk (stack_trail.bpf.h) */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct call_state);
} calls SEC(".maps");

/* Set when a Python target begins to shut down: from then on it is not traced. */
__u32 py_frozen;
__u32 py_exit_stop;	/* -c: stop it at its exit; -p only tells user space */

/*
 * The tag of the traced process task belongs to: 0 for the target, its own
 * for a followed one; -1 for any other. The programs take the current task
 * once and read its tgid: every helper call costs its own return thunk on
 * this machine's CPUs.
 */
static __always_inline __s64 proc_image_of(struct task_struct *task, __u32 *image)
{
	struct memleak_proc *e;

	if (task->tgid == targ_tgid)
		return py_frozen ? -1 : 0;
	e = followed(task->tgid);
	if (!e || e->frozen)
		return -1;
	if (image)
		*image = e->image;
	return e->tag;
}

static __always_inline __s64 proc_of(struct task_struct *task)
{
	return proc_image_of(task, NULL);
}

static __always_inline bool is_target(struct task_struct *task)
{
	return proc_of(task) >= 0;
}

static __always_inline struct call_state *call_state(struct task_struct *task, bool create)
{
	return bpf_task_storage_get(&calls, task, NULL,
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

/*
 * Does the caller's return address (at the entry sp) lie in the allocator's
 * own code? The target's ranges serve it and the children that share its
 * image; a process that exec'd has its own.
 */
static __always_inline bool called_from_allocator(__u64 sp)
{
	const struct addr_range *r = internal;
	__u32 nr = nr_internal, tgid;
	struct internal_set *own;
	__u64 ret_addr;

	if (follow && (tgid = bpf_get_current_pid_tgid() >> 32) != targ_tgid &&
	    (own = bpf_map_lookup_elem(&own_internal, &tgid))) {
		r = own->r;
		nr = own->nr;
	}
	if (bpf_probe_read_user(&ret_addr, sizeof(ret_addr), (void *)sp))
		return false;
	for (int i = 0; i < MEMLEAK_MAX_INTERNAL; i++) {
		if (i >= nr)
			break;
		if (ret_addr >= r[i].start && ret_addr < r[i].end)
			return true;
	}
	return false;
}

#include "sample.bpf.h"
#include "trace.bpf.h"

/*
 * Start tracking an outermost call; NULL for nested and foreign calls.
 * returns: the call's return probe will run (false: a session program's
 * entry that asks for none, so a tail call has no return to wait for).
 */
static __always_inline struct call_state *call_begin(struct pt_regs *ctx, struct task_struct *task,
						     __u32 api, __u64 size, __u64 ptr,
						     bool returns)
{
	__u32 image = 0;
	__s64 proc = proc_image_of(task, &image);
	struct call_state *st;

	if (proc < 0)
		return NULL;
	st = call_state(task, true);
	if (!st) {
		count(CNT_STATE_ERRORS);
		return NULL;
	}
	if (st->sp) {
		if (PT_REGS_SP(ctx) < st->sp)
			return NULL;
		if (PT_REGS_SP(ctx) == st->sp) {
			st->tail_calls += returns;
			return NULL;
		}
		/* The previous call left without its return probe (longjmp). */
		count(CNT_MISSED_RETURNS);
	} else if (sample_inside_skipped(ctx, st, api, size)) {
		return NULL;
	}
	st->tail_calls = 0;
	st->released = 0;
	st->sp = PT_REGS_SP(ctx);
	st->api = api;
	st->size = size;
	st->ptr = ptr;
	st->flags = sample_decide(st, task, api, size) ? CALL_SAMPLED : 0;
	st->proc = proc;
	st->image = image;
	return st;
}

#include "python.bpf.h"
#include "scratch.bpf.h"

/*
 * Take a freed or resized block out of its site's outstanding figures:
 * all of it (what it added), or, as munmap of a region's front does, bytes
 * of it and none of its count (mmap regions weigh 1).
 */
static __always_inline void site_sub(const struct alloc_info *info, __u64 bytes, bool whole)
{
	struct site_slot *s = site_at(info->site);
	struct sample_weight w = { bytes, 0, 0 };
	struct site_counts *c;

	if (!s)
		return;
	if (whole)
		block_weight(&w, s->api, info->size);
	/*
	 * Its site's API says its kind: a block's site stays while the block
	 * lives. Under --follow, every traced process counts, as in the totals.
	 */
	live_sub(MEMLEAK_KIND_OF(s->api), w.bytes);
	c = site_shard(s);
	__sync_fetch_and_add(&c->freed_bytes, w.bytes);
	__sync_fetch_and_add(&c->freed_allocs, w.blocks);
	if (sample_mode == SAMPLE_NONE || !whole)
		return;
	__sync_fetch_and_add(&c->freed_samples, 1);
	__sync_fetch_and_add(&c->freed_var, w.var);
}

/*
 * A tracked block leaves the table and its site's figures; false if
 * untracked. api: the release that freed it (API__COUNT: a free missed).
 */
static __always_inline bool release_tracked(__u64 addr, __u32 proc, __u32 api)
{
	struct alloc_info old;

	if (!forget(addr, proc, &old))
		return false;
	site_sub(&old, old.size, true);
	if (trace_calls && api != API__COUNT)
		trace_emit(api, old.size, addr, 0, 0);
	return true;
}

/* The block at addr that the call in st returned; its lines touched as its stack is known. */
static __always_inline void record(struct pt_regs *ctx, struct call_state *st, __u64 addr)
{
	struct alloc_info info = { .size = st->size, .proc = st->proc };
	struct sample_weight w;
	struct site_slot *s;
	int err;

	if (!size_wanted(info.size))
		return;
	block_weight(&w, st->api, info.size);
	info.timestamp_ns = stamp_ns();
	s = site_enter(record_touch(scratch_capture(ctx, st, addr), st->api, addr, st->proc),
		       st->api, &w, &info.site);
	if (!s)
		return;
	/*
	 * A block still tracked at this address was freed behind our back:
	 * forget it and insert again. A loop, not a second call: the verifier
	 * then has one copy of alloc_insert's loops to check, not two.
	 */
	for (int i = 0; i < 2; i++) {
		err = alloc_insert(addr, &info);
		if (err != -EEXIST || i)
			break;
		release_tracked(addr, st->proc, API__COUNT);
		count(CNT_REPLACED);
	}
	if (err) {
		/* Not tracked: the site does not count it either. */
		site_count(s, &w, -1);
		count(CNT_ALLOCS_MAP_FULL);
		return;
	}
	/* After a resize's old block was taken off (call_end): massif's order too. */
	live_add(MEMLEAK_KIND_OF(st->api), w.bytes);
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
static __always_inline void release(struct task_struct *task, __u64 addr, __u64 sp,
				    struct call_state *st, __u32 proc, __u32 api)
{
	/* Sampling: most blocks freed were never sampled; not counted. */
	if (!release_tracked(addr, proc, api) && sample_mode == SAMPLE_NONE &&
	    (!st || st->released != addr) && !called_from_allocator(sp)) {
		count(CNT_UNTRACKED_FREES);
		trace_emit(api, 0, addr, 0, TRACE_SIZE_UNKNOWN);
	}
	if (!st)
		st = call_state(task, true);
	if (st)
		st->released = addr;
}

/* Any other free or delete: the call state tells nested and repeated releases. */
static __always_inline void release_unknown(struct task_struct *task, __u64 addr, __u64 sp,
					    __u32 proc, __u32 api)
{
	struct call_state *st = call_state(task, false);

	if (!nested(sp, st))
		release(task, addr, sp, st, proc, api);
}

/*
 * realloc, mremap and xallocx: take the old block's record at entry, so
 * that another thread reusing the address before we return cannot be
 * mistaken for it.
 */
static __always_inline void resize_begin(struct call_state *st, __u64 old_addr)
{
	if (old_addr && forget(old_addr, st->proc, &st->old))
		st->flags |= CALL_HAVE_OLD;
}

/* The old block is gone: freed, or moved into the new one. */
static __always_inline void resize_drop_old(struct call_state *st)
{
	if (st->flags & CALL_HAVE_OLD)
		site_sub(&st->old, st->old.size, true);
}

/* The call failed and the old block is still the caller's. */
static __always_inline void resize_keep_old(struct call_state *st)
{
	__u64 addr = st->ptr;

	if (!(st->flags & CALL_HAVE_OLD))
		return;
	if (alloc_insert(addr, &st->old)) {
		count(CNT_ALLOCS_MAP_FULL);
		site_sub(&st->old, st->old.size, true);
	}
}

/* What a resize's return does with the old block. */
enum old_block {
	OLD_UNTOUCHED,	/* not a resize */
	OLD_KEPT,	/* the call failed: the block is still the caller's */
	OLD_GONE,	/* moved into the new block, or realloc(p, 0) freed it */
};

/*
 * The block the call in st returned (ret its return value) into *addr, and
 * what became of a resize's old block in *old: whether there is a block to
 * record. Each effect is then applied at one place in call_end: the
 * verifier checks one copy of each (they are inlined) instead of one per
 * API, most of all of the stack capture in record().
 */
static __always_inline bool returned_block(struct call_state *st, __u64 ret, __u64 *addr,
					   enum old_block *old)
{
	*addr = ret;
	*old = OLD_UNTOUCHED;
	switch (st->api) {
	case API_POSIX_MEMALIGN:
		return ret == 0 && !bpf_probe_read_user(addr, sizeof(*addr), (void *)st->ptr);
	case API_MMAP:
		return ret != MAP_FAILED;
	case API_MREMAP:
		*old = ret == MAP_FAILED ? OLD_KEPT : OLD_GONE;
		return ret != MAP_FAILED;
	case API_XALLOCX:
		/*
		 * The block's real size now: the caller may use all of it. Less
		 * than asked: not resized, the block as it was.
		 */
		*addr = st->ptr;
		*old = ret >= st->size ? OLD_GONE : OLD_KEPT;
		if (ret >= st->size)
			st->size = ret;
		return *old == OLD_GONE;
	case API_REALLOC:
	case API_REALLOCARRAY:
		/* realloc released a block we never saw: an untracked free, as with free(). */
		if (st->ptr && !(st->flags & CALL_HAVE_OLD) && (ret || st->size == 0) &&
		    sample_mode == SAMPLE_NONE)
			count(CNT_UNTRACKED_FREES);
		*old = ret || st->size == 0 ? OLD_GONE : OLD_KEPT;
		return ret;
	default:
		return ret;
	}
}

static __always_inline int call_end(struct pt_regs *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	enum old_block old;
	struct call_state *st;
	__u64 addr;
	bool found;

	if (!is_target(task))
		return 0;
	st = call_state(task, false);
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

	found = returned_block(st, PT_REGS_RC(ctx), &addr, &old);
	trace_call(st, found ? addr : 0);
	if (old == OLD_KEPT)
		resize_keep_old(st);
	else if (old == OLD_GONE)
		resize_drop_old(st);
	if (found && st->flags & CALL_SAMPLED)
		record(ctx, st, addr);
	return 0;
}

/* Entry-only probes (free, delete, munmap): skip calls the allocator makes. */
static __always_inline bool user_release(struct task_struct *task, __u64 sp)
{
	return !nested(sp, call_state(task, false));
}

static __always_inline void munmap_user(struct task_struct *task, __u64 sp, __u64 start,
					__u64 length)
{
	__s64 proc = proc_of(task);
	__u64 len, rest;
	struct alloc_info old;

	if (proc < 0 || !user_release(task, sp) || called_from_allocator(sp) ||
	    !forget(start, proc, &old))
		return;
	len = (length + page_size - 1) & ~(page_size - 1);
	trace_emit(API_MUNMAP, len < old.size ? len : old.size, start, 0, 0);
	if (len >= old.size) {
		site_sub(&old, old.size, true);
		return;
	}
	/* Unmapping the front of a mapping: the rest stays outstanding. */
	rest = start + len;
	site_sub(&old, len, false);
	old.size -= len;
	if (alloc_insert(rest, &old)) {
		count(CNT_ALLOCS_MAP_FULL);
		site_sub(&old, old.size, true);
	}
}

/*
 * The call in st has begun: the allocator's own mmap and mremap are its
 * business; a resize takes its old block's record now.
 */
static __always_inline void call_begun(struct pt_regs *ctx, struct call_state *st, __u32 api,
				       __u64 ptr)
{
	if ((api == API_MMAP || api == API_MREMAP) && called_from_allocator(PT_REGS_SP(ctx)))
		st->flags |= CALL_INTERNAL;
	else if (api_resizes(api))
		resize_begin(st, ptr);
}

/*
 * Entry of any API function but free and malloc; the attach cookie's low
 * half says which. One program for all of them lets user space attach them
 * with one multi-uprobe link per object, and detach it with one RCU grace
 * period instead of one per function. call_begin is called from one place:
 * the verifier checks one copy of it, not one per API.
 */
static __always_inline int on_enter(struct pt_regs *ctx, __u64 cookie)
{
	__u32 api = (__u32)cookie;
	__u64 a1 = PT_REGS_PARM1(ctx), a2 = PT_REGS_PARM2(ctx), a3 = PT_REGS_PARM3(ctx);
	struct task_struct *task = bpf_get_current_task_btf();
	struct call_state *st;
	__u64 size, ptr;
	__s64 proc;

	switch (api) {
	case API_FREE:		/* api_free's, on its own link */
	case API_DELETE:
	case API_DELETE_ARRAY:
		proc = a1 ? proc_of(task) : -1;
		if (proc >= 0)
			release_unknown(task, a1, entry_sp(ctx, cookie), proc, api);
		return 0;
	case API_MUNMAP:
		munmap_user(task, entry_sp(ctx, cookie), a1, a2);
		return 0;
	}
	call_args(api, a1, a2, a3, &size, &ptr);
	st = call_begin(ctx, task, api, size, ptr, true);
	if (st)
		call_begun(ctx, st, api, ptr);
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

/*
 * free() and malloc() have programs of their own (user/probe/probes.c: lanes):
 * the hottest calls take no switch. A free() of a tracked block is the
 * program's own release, whatever the thread is doing: the allocator's
 * nested calls never record a block, and a block being resized left the
 * table at the resize's entry. So only a block release_tracked did not know
 * needs the call state and the attach cookie (free's stack-pointer delta).
 * Not for delete, whose free() of the same block must find it in `released`.
 */
SEC("uprobe")
int api_free(struct pt_regs *ctx)
{
	__u64 a1 = PT_REGS_PARM1(ctx);
	struct task_struct *task;
	__s64 proc;

	if (bench_floor || !a1)
		return 0;
	/* A handed-over shell's links stay (probes.c): their pid filter is not ours. */
	task = bpf_get_current_task_btf();
	proc = proc_of(task);
	/* Sampling: a block not found was not sampled (or is not ours): one lookup. */
	if (proc >= 0 && !release_tracked(a1, proc, API_FREE) && sample_mode == SAMPLE_NONE)
		release_unknown(task, a1, entry_sp(ctx, bpf_get_attach_cookie(ctx)), proc, API_FREE);
	return 0;
}

SEC("uprobe")
int api_malloc(struct pt_regs *ctx)
{
	if (bench_floor)
		return 0;
	call_begin(ctx, bpf_get_current_task_btf(), API_MALLOC, PT_REGS_PARM1(ctx), 0, true);
	return 0;
}

SEC("uprobe")
int api_exit(struct pt_regs *ctx)
{
	if (bench_floor)
		return 0;
	return call_end(ctx);
}

#include "sample_session.bpf.h"
#include "events.bpf.h"
