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

#endif
