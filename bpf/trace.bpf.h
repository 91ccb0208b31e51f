/* SPDX-License-Identifier: GPL-2.0 */
/*
 * -t/--trace: each allocation and free of the target, a record each, through
 * a ring buffer of its own that user space prints (user/probe/trace_ring.c).
 * bpf_ringbuf_reserve never waits: a full ring loses the record, counted
 * in CNT_TRACE_DROPS. Without -t, trace_calls is false in rodata and the
 * verifier drops every use of the ring: the programs pay nothing. Included
 * by memleak.bpf.c after struct call_state.
 */
#ifndef TRACE_BPF_H
#define TRACE_BPF_H

const volatile bool trace_calls = false;
/*
 * Wake user space only once this much waits in the ring: a wake-up per
 * record would cost the target an interrupt each; the reader also looks
 * every few milliseconds by itself.
 */
const volatile __u64 trace_wake_bytes = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);	/* --trace-buffer (user/probe/trace_ring.c) */
} trace_ring SEC(".maps");

static __always_inline void trace_emit(__u32 api, __u64 size, __u64 addr, __u64 old, __u32 flags)
{
	struct memleak_trace *t;

	if (!trace_calls)
		return;
	t = bpf_ringbuf_reserve(&trace_ring, sizeof(*t), 0);
	if (!t) {
		count(CNT_TRACE_DROPS);
		return;
	}
	t->time_ns = bpf_ktime_get_ns();
	t->pid_tgid = bpf_get_current_pid_tgid();
	t->size = size;
	t->addr = addr;
	t->old = old;
	t->api = api;
	t->flags = flags;
	bpf_ringbuf_submit(t, bpf_ringbuf_query(&trace_ring, BPF_RB_AVAIL_DATA) >= trace_wake_bytes ?
			      BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
}

/*
 * The call in st returned addr (0: it failed): traced as the figures count
 * it, within -z/-Z and, under sampling, when sampled.
 */
static __always_inline void trace_call(const struct call_state *st, __u64 addr)
{
	__u32 api = st->api;

	/* trace_calls first: without -t the verifier then drops all of it. */
	if (!trace_calls || !(st->flags & CALL_SAMPLED) || !size_wanted(st->size))
		return;
	trace_emit(api, st->size, addr, api_resizes(api) ? st->ptr : 0, 0);
}

#endif /* TRACE_BPF_H */
