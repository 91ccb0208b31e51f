/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sampling on a kernel with uprobe sessions (BPF_TRACE_UPROBE_SESSION,
 * Linux 6.13): each allocating function's entry and return in one program,
 * attached as a session (user/probe/probes_sample.c). The entry returns 1
 * for a call it does not sample (or does not track), and the kernel then
 * takes no return probe for it: one trap, not two, no return address
 * hijacked. The thread's call state is then left idle, as no return will
 * end the call; what that call hands on is told by sample_inside_skipped.
 * A nested or tail call inside a sampled call needs no return either:
 * call_end ignores those. Exact mode never loads these. Included at the
 * end of memleak.bpf.c.
 */
#ifndef SAMPLE_SESSION_BPF_H
#define SAMPLE_SESSION_BPF_H

extern bool bpf_session_is_return(void) __ksym __weak;

/*
 * The entry's answer for the outermost call in st (NULL: none tracked).
 * hands_on: the call may hand its allocation on to another probed
 * function (sample_skip); the allocator's malloc never does, and its
 * entry, the hottest, then reads no stack.
 */
static __always_inline int session_entry_done(struct call_state *st, bool hands_on)
{
	if (!st)
		return 1;
	/* The allocator's own mmap: nothing to do at its return. */
	if (st->flags & CALL_INTERNAL) {
		st->sp = 0;
		return 1;
	}
	/* A block to record, or a resize's old block to put back or let go. */
	if (st->flags & (CALL_SAMPLED | CALL_HAVE_OLD))
		return 0;
	if (hands_on) {
		sample_skip(st);
	} else {
		st->skip_sp = 0;
		st->sp = 0;
	}
	return 1;
}

/*
 * malloc: its own program, as api_malloc is; the hottest call takes no
 * switch. The allocator's malloc hands nothing on (what it calls inside,
 * its arenas' mmap, is its own), so a call sampled out is not remembered:
 * the calls it could be confused with are those it makes, none of the
 * same API and size.
 */
SEC("uprobe")
int api_malloc_session(struct pt_regs *ctx)
{
	if (bpf_session_is_return()) {
		call_end(ctx);
		return 0;
	}
	return session_entry_done(call_begin(ctx, bpf_get_current_task_btf(), API_MALLOC,
					     PT_REGS_PARM1(ctx), 0, false), false);
}

/*
 * Every other API function, as api_enter: the cookie's low half says which.
 * Releasing ones have no return to take.
 */
SEC("uprobe")
int api_session(struct pt_regs *ctx)
{
	__u64 cookie, size, ptr;
	struct task_struct *task;
	struct call_state *st;
	__u32 api;

	if (bpf_session_is_return()) {
		call_end(ctx);
		return 0;
	}
	cookie = bpf_get_attach_cookie(ctx);
	api = (__u32)cookie;
	if (api >= API__ALLOCATING) {
		on_enter(ctx, cookie);
		return 1;
	}
	call_args(api, PT_REGS_PARM1(ctx), PT_REGS_PARM2(ctx), PT_REGS_PARM3(ctx), &size, &ptr);
	task = bpf_get_current_task_btf();
	st = call_begin(ctx, task, api, size, ptr, false);
	if (st)
		call_begun(ctx, st, api, ptr);
	return session_entry_done(st, true);
}

#endif
