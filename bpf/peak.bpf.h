/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The live bytes and their exact high-water mark, heap blocks and mmaps
 * apart, for memleak.bpf.c, which includes this once. Per-CPU counters
 * would cost less but cannot give the global maximum: the most live at
 * once is a property of the order of every thread's allocations and
 * frees, which one shared counter, updated atomically, has. A block is
 * added when its call returns and taken off when its free is entered, so
 * the counter never holds more than the process held.
 */
#ifndef PEAK_BPF_H
#define PEAK_BPF_H

/* Each on a cache line of its own (memleak.h). */
struct memleak_live live[KIND__COUNT] SEC(".bss") __attribute__((aligned(64)));

/* Compare-and-swap rounds at most: each lost round is another CPU raising the peak. */
#define PEAK_CAS_ROUNDS 8

static __always_inline struct memleak_live *live_of(__u32 kind)
{
	return &live[kind & (KIND__COUNT - 1)];
}

/* The peak reached user space's mark: one event, until user space sets the mark again. */
static __always_inline void peak_reached(struct memleak_live *l, __u64 now)
{
	struct memleak_event ev = { bpf_get_current_pid_tgid() >> 32, EVENT_PEAK };
	__u64 mark = *(volatile __u64 *)&l->mark;

	if (!mark || now < mark || __sync_val_compare_and_swap(&l->mark, mark, 0) != mark)
		return;
	bpf_ringbuf_output(&events, &ev, sizeof(ev), 0);
}

/* bytes more are live: raise the peak when they pass it. */
static __always_inline void live_add(__u32 kind, __u64 bytes)
{
	struct memleak_live *l = live_of(kind);
	__u64 now = __sync_fetch_and_add(&l->bytes, bytes) + bytes;
	__u64 peak = *(volatile __u64 *)&l->peak, old;

	for (int i = 0; i < PEAK_CAS_ROUNDS && now > peak; i++) {
		old = __sync_val_compare_and_swap(&l->peak, peak, now);
		if (old == peak) {
			l->peak_ns = stamp_ns();
			if (kind == KIND_HEAP)
				peak_reached(l, now);
			return;
		}
		peak = old;
	}
}

static __always_inline void live_sub(__u32 kind, __u64 bytes)
{
	__sync_fetch_and_add(&live_of(kind)->bytes, -bytes);
}

#endif
