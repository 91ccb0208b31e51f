/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The CPU's scratch, held for one capture: memleak.bpf.c includes this
 * once, after python.bpf.h, for record().
 *
 * A capture works in per-CPU maps (stack_scratch, stack_window,
 * walk_notes, uwalk_frame, py_scratch): too big for the BPF stack, too
 * dear in task storage. Uprobe programs run with migration off but, on a
 * preemptible kernel (preempt=full or lazy), preemption on: another
 * thread's program run on this CPU meanwhile writes over them, and the
 * first would record its block under frames of both, and remember them
 * in its stack cache. So each capture marks the CPU's scratch as its
 * thread's: a stack cache hit, which only reads the window, is taken only
 * if the mark is still its own at the end; the walk and the Python
 * frames, which write, hold preemption off, by the kfuncs of Linux 6.10
 * (user space sets preempt_kfuncs). An older kernel has none: a capture
 * that finds another's mark at its end is counted (CNT_STACK_PREEMPTED)
 * and gives no stack. Every use of those maps lies within
 * scratch_capture(): a new one must too (py_lines, a cache whose slots
 * carry a check, is read there as well). Holding preemption off costs
 * two kfunc calls per walk: 50 to 60 ns on this machine's kernel
 * (docs/PERFORMANCE.md), which runs with preempt=none, where no overlap
 * was ever seen.
 */
#ifndef SCRATCH_BPF_H
#define SCRATCH_BPF_H

extern void bpf_preempt_disable(void) __ksym __weak;
extern void bpf_preempt_enable(void) __ksym __weak;

const volatile bool preempt_kfuncs = false;

/* Older kernels: the thread whose capture uses this CPU's scratch. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1);
} scratch_owner SEC(".maps");

/* The CPU's scratch marked as the thread's (mark: its call state's address). */
static __always_inline __u64 *scratch_mark(__u64 mark)
{
	__u32 zero = 0;
	__u64 *owner = bpf_map_lookup_elem(&scratch_owner, &zero);

	if (owner)
		*owner = mark;
	return owner;
}

/* No other thread's capture ran on this CPU since the thread marked it. */
static __always_inline bool scratch_mine(const __u64 *owner, __u64 mark)
{
	return !owner || *(volatile const __u64 *)owner == mark;
}

/*
 * What the thread remembered of a capture that was not its own alone:
 * the ways of the stack cache it used, its trail, its last Python stacks.
 */
static __always_inline void scratch_forget(struct pt_regs *ctx, struct call_state *st)
{
	struct stack_cache *set = stack_cache_set(st->stack, ctx);

	set[0].gen = 0;
	set[1].gen = 0;
	st->trail.gen = 0;
	py_last_forget(bpf_get_current_task_btf());
}

/*
 * The stack of the allocation the call in st made (at addr): its id, or
 * MEMLEAK_NO_STACK. A stack cache hit, which only reads, holds nothing:
 * checked by the mark, one that another thread's capture may have made up
 * walks. The walk and the Python frames, which write, hold preemption off
 * (or, before 6.10, are checked by the mark: counted, no stack).
 */
static __always_inline __u64 scratch_capture(struct pt_regs *ctx, struct call_state *st,
					       __u64 addr)
{
	__u64 mark = (__u64)st, *owner = scratch_mark(mark), id;
	struct capture x;

	id = capture_cached(ctx, stack_cache_set(st->stack, ctx), st->image, st->proc, &x);
	if (id != MEMLEAK_NO_STACK && !python_wanted(id, st->proc) && scratch_mine(owner, mark))
		return id;
	if (preempt_kfuncs)
		bpf_preempt_disable();
	/*
	 * A hit that another capture came in on, up to here, may be made up,
	 * and the Python frames read the window it filled: walk.
	 */
	if (!scratch_mine(owner, mark))
		id = MEMLEAK_NO_STACK;
	owner = scratch_mark(mark);
	if (id == MEMLEAK_NO_STACK) {
		if (x.r.win)
			x.r.win->len = 0;	/* what another thread's capture read */
		id = capture_walk(ctx, &x, &st->trail);
	}
	id = with_python(id, st->proc, st->image, st->api, addr);
	if (preempt_kfuncs) {
		bpf_preempt_enable();
		return id;
	}
	if (scratch_mine(owner, mark))
		return id;
	count(CNT_STACK_PREEMPTED);
	scratch_forget(ctx, st);
	return MEMLEAK_NO_STACK;
}

#endif
