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
 * in its stack cache. So preemption is off for the capture, by the
 * kfuncs of Linux 6.10 (user space sets preempt_kfuncs). An older kernel
 * has none: each capture marks the CPU's scratch as its thread's, and one
 * that finds another's mark at its end is counted (CNT_STACK_PREEMPTED)
 * and gives no stack. Every use of those maps lies within
 * scratch_capture(): a new one must too (py_lines, a cache whose slots
 * carry a check, is read there as well). Holding preemption off costs
 * two kfunc calls per block recorded: about 50 ns on this machine's
 * (docs/PERFORMANCE.md), whose kernel runs with preempt=none, where no
 * overlap was ever seen.
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

/* Before a capture: the mark it leaves (0 with preemption off). */
static __always_inline __u64 scratch_hold(void)
{
	__u32 zero = 0;
	__u64 *owner, me;

	if (preempt_kfuncs) {
		bpf_preempt_disable();
		return 0;
	}
	me = bpf_get_current_pid_tgid();
	owner = bpf_map_lookup_elem(&scratch_owner, &zero);
	if (owner)
		*owner = me;
	return me;
}

/*
 * After it: false, counted, when another thread's capture ran on this CPU
 * meanwhile (an older kernel's preemption). A stack its walk sent may then
 * be wrong too: the count says how many allocations were exposed.
 */
static __always_inline bool scratch_release(__u64 mark)
{
	__u64 *owner;
	__u32 zero = 0;

	if (preempt_kfuncs) {
		bpf_preempt_enable();
		return true;
	}
	owner = bpf_map_lookup_elem(&scratch_owner, &zero);
	if (!owner || *(volatile __u64 *)owner == mark)
		return true;
	count(CNT_STACK_PREEMPTED);
	return false;
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

/* The stack of the allocation the call in st made: its id, or MEMLEAK_NO_STACK. */
static __always_inline __u64 scratch_capture(struct pt_regs *ctx, struct call_state *st)
{
	__u64 mark = scratch_hold(), id;

	id = with_python(capture_stack(ctx, stack_cache_set(st->stack, ctx), &st->trail,
				       st->image, st->proc),
			 st->proc, st->image);
	if (scratch_release(mark))
		return id;
	scratch_forget(ctx, st);
	return MEMLEAK_NO_STACK;
}

#endif
