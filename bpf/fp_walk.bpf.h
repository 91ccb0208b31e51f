/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The walk by frame pointers, for stack.bpf.h, which includes this once,
 * after stack_cache.bpf.h (its reader).
 */
#ifndef FP_WALK_BPF_H
#define FP_WALK_BPF_H

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

#endif
