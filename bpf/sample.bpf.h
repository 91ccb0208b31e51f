/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sampling (--sample, -s) in BPF: whether an outermost call's block is
 * recorded, decided at its entry, and what a block adds to its site (its
 * weight: bpf/sample.h has the arithmetic both sides share). Included by
 * memleak.bpf.c after struct call_state.
 */
#ifndef SAMPLE_BPF_H
#define SAMPLE_BPF_H

/* A uniform 32-bit draw: the kernel's, or the thread's own under a seed. */
static __always_inline __u32 sample_rand(struct call_state *st, struct task_struct *task)
{
	if (!sample_seed)
		return bpf_get_prandom_u32();
	/* The main thread's draws are the same in every run. */
	if (!st->rng)
		st->rng = sample_seed_of(sample_seed, (__u32)(task->pid - task->tgid));
	return sample_xorshift(&st->rng);
}

/*
 * Is this outermost call's block sampled? Decided at the entry, before
 * anything else is done for it; every call counted, exactly. By bytes: the
 * thread's countdown to its next sample point, drawn afresh after each
 * sample (bpf/sample.h); a block of 0 bytes holds no point. Heap calls
 * only: mmap and mremap regions are few and large, always taken.
 */
static __always_inline bool sample_decide(struct call_state *st, struct task_struct *task,
					  __u32 api, __u64 size)
{
	struct memleak_calls *c;
	__u64 need;
	bool take;

	if (sample_mode == SAMPLE_NONE || MEMLEAK_KIND_OF(api) == KIND_MMAP)
		return true;
	c = &entry_calls[bpf_get_smp_processor_id() & (MEMLEAK_SITE_SHARDS - 1)];
	__sync_fetch_and_add(&c->calls, 1);
	__sync_fetch_and_add(&c->bytes, size);
	if (sample_mode == SAMPLE_COUNT) {
		take = sample_rand(st, task) < sample_threshold;
	} else {
		if (!st->sample_ready) {
			st->sample_left = sample_exp_draw(sample_mean, sample_rand(st, task));
			st->sample_ready = 1;
		}
		need = size << MEMLEAK_SAMPLE_FRAC;
		take = size && (size >= (1ULL << 40) || need >= st->sample_left);
		if (take)
			st->sample_left = sample_exp_draw(sample_mean, sample_rand(st, task));
		else
			st->sample_left -= need;
	}
	if (take)
		__sync_fetch_and_add(&c->sampled, 1);
	return take;
}

/*
 * What a block of size bytes adds to its site: its size and one block, or
 * under sampling its weight, computed again at its free from its size (the
 * same integers). mmap regions are always taken: weight 1.
 */
static __always_inline void block_weight(struct sample_weight *w, __u32 api, __u64 size)
{
	if (sample_mode == SAMPLE_NONE || MEMLEAK_KIND_OF(api) == KIND_MMAP) {
		w->bytes = size;
		w->blocks = sample_mode == SAMPLE_NONE ? 1 : MEMLEAK_WEIGHT_ONE;
		w->var = 0;
	} else if (sample_mode == SAMPLE_BYTES) {
		sample_bytes_weight(w, size, sample_mean);
	} else {
		sample_count_weight(w, size, sample_per_block);
	}
}

/*
 * Uprobe sessions (sample_session.bpf.h): a call sampled out asks for no
 * return probe, so nothing tells when it ends, and the calls it makes are
 * not seen as nested. Those that matter are the same allocation handed on:
 * realloc(NULL, n) and memalign(8, n) to malloc(n), reallocarray to
 * realloc, PyObject_Malloc(n) or operator new(n) to malloc(n). Deciding
 * again there would take the block about twice as often as its weight
 * says. So the call sampled out is remembered: its entry stack pointer,
 * the return address it left there, its API.
 */
static __always_inline void sample_skip(struct call_state *st)
{
	if (bpf_probe_read_user(&st->skip_ret, sizeof(st->skip_ret), (void *)st->sp))
		st->skip_sp = 0;
	else
		st->skip_sp = st->sp;
	st->skip_api = st->api;
	st->sp = 0;
}

/*
 * A return address at the top of the 47-bit user space: the uprobe
 * trampoline (the "[uprobes]" page), put there by a return probe. Another
 * tracer's return probes on the same function hijack this call's return
 * address though ours asked for none: the kernel takes a return for every
 * consumer of the probe that did not refuse it, whatever process it filters.
 */
#define SAMPLE_TRAMPOLINE_LOW 0x7ffffff00000ULL

/*
 * Is this entry the call sampled out handing its allocation on? Of the
 * same size, made while that call runs: below its entry stack pointer
 * (or at it, a tail call into another API) while its return address is
 * still there, or the trampoline that took its place. Once that call has
 * returned, its caller's next call overwrites the slot. Any other entry
 * forgets it: one read of the stack, only after a call sampled out, and
 * only under sampling.
 */
static __always_inline bool sample_inside_skipped(struct pt_regs *ctx, struct call_state *st,
						  __u32 api, __u64 size)
{
	__u64 sp = PT_REGS_SP(ctx), skip_sp = st->skip_sp, ret;

	if (sample_mode == SAMPLE_NONE || !skip_sp)
		return false;
	if (size == st->size && (sp < skip_sp || (sp == skip_sp && api != st->skip_api)) &&
	    !bpf_probe_read_user(&ret, sizeof(ret), (void *)skip_sp) &&
	    (ret == st->skip_ret || ret >= SAMPLE_TRAMPOLINE_LOW))
		return true;
	st->skip_sp = 0;
	return false;
}

#endif
