/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --follow, for memleak.bpf.c, which includes this once, before the
 * programs: the processes the target starts, and theirs, traced from their
 * first instruction. A child is tagged in the fork tracepoint, before it
 * runs, and stopped there until user space has given it uprobe links of
 * its own (a link filtered by pid never fires in another process, even one
 * that shares its file); at its exec it is held again until its new image
 * is probed; at its exit its tag goes, and user space closes its links. Without --follow (a const) the lookups fold away.
 */
#ifndef FOLLOW_BPF_H
#define FOLLOW_BPF_H

const volatile bool follow = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);	/* entries only for processes alive */
	__type(key, __u32);			/* tgid */
	__type(value, struct memleak_proc);
	__uint(max_entries, MEMLEAK_MAX_PROCS);
} procs SEC(".maps");

/*
 * The allocator code of each process that runs an image of its own (its
 * addresses are its own): its exec's, copied to its forks.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);			/* tgid */
	__type(value, struct internal_set);
	__uint(max_entries, MEMLEAK_MAX_PROCS);
} own_internal SEC(".maps");

__u32 last_proc;	/* the last tag given */
/*
 * The children stopped at their fork, by tag in a ring, until user space
 * resumes them and clears their slot: if the tracer dies meanwhile, its
 * watchdog resumes them (user/target/watchdog.c).
 */
__u32 held[MEMLEAK_HELD];

/* Linux 6.13; without it (a weak symbol, then NULL) no child can be held: none is followed. */
extern int bpf_send_signal_task(struct task_struct *task, int sig, enum pid_type type,
				__u64 value) __ksym __weak;

/* A followed process's entry; NULL for any other (and always without --follow). */
static __always_inline struct memleak_proc *followed(__u32 tgid)
{
	if (!follow)
		return NULL;
	return bpf_map_lookup_elem(&procs, &tgid);
}

static __always_inline void follow_event(__u32 tgid, __u32 kind, __u32 proc, __u32 image)
{
	struct memleak_event ev = { .tgid = tgid, .kind = kind, .proc = proc, .image = image,
				    .time_ns = bpf_ktime_get_ns() };

	bpf_ringbuf_output(&events, &ev, sizeof(ev), 0);
}

/*
 * The child of a process that runs an image of its own runs it too: its
 * allocator's code, copied (the child's entry goes with it at its exit or
 * exec); user space gives it the image's links and names (image_links.c).
 */
static __always_inline void inherit_image(const struct memleak_proc *from, __u32 parent,
					  __u32 child, struct memleak_proc *e)
{
	struct internal_set *set;

	if (!from || !from->image)
		return;
	e->image = from->image;
	set = bpf_map_lookup_elem(&own_internal, &parent);
	if (set && bpf_map_update_elem(&own_internal, &child, set, BPF_ANY))
		count(CNT_PROCS_MAP_FULL);
}

/*
 * A traced process started child: tag it and stop it before its first
 * instruction (a signal queued now is taken on its way to user mode). The
 * event that tells user space is reserved first: a child stopped without
 * one would stay stopped. from: the parent's entry, NULL for the target.
 */
static __always_inline void follow_child(struct task_struct *parent, struct task_struct *child,
					 const struct memleak_proc *from)
{
	struct memleak_proc e = { __sync_fetch_and_add(&last_proc, 1) + 1 };
	struct memleak_event *ev;
	__u32 tgid = child->tgid;

	if (!bpf_send_signal_task) {
		count(CNT_PROCS_MAP_FULL);
		return;
	}
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev) {
		count(CNT_PROCS_MAP_FULL);
		return;
	}
	inherit_image(from, parent->tgid, tgid, &e);
	if (bpf_map_update_elem(&procs, &tgid, &e, BPF_NOEXIST)) {
		count(CNT_PROCS_MAP_FULL);
		bpf_map_delete_elem(&own_internal, &tgid);
		bpf_ringbuf_discard(ev, 0);
		return;
	}
	if (bpf_send_signal_task(child, SIGSTOP, PIDTYPE_TGID, 0)) {
		bpf_map_delete_elem(&procs, &tgid);
		bpf_map_delete_elem(&own_internal, &tgid);
		count(CNT_PROCS_MAP_FULL);
		bpf_ringbuf_discard(ev, 0);
		return;
	}
	held[e.tag & (MEMLEAK_HELD - 1)] = tgid;
	*ev = (struct memleak_event){ .tgid = tgid, .kind = EVENT_FORK, .ppid = parent->tgid,
				      .proc = e.tag, .prev = from ? from->tag : 0,
				      .image = e.image, .time_ns = bpf_ktime_get_ns() };
	bpf_ringbuf_submit(ev, 0);
}

/* A followed process ends (exit), or cannot be held at its exec: let it go. */
static __always_inline bool follow_release(__u32 tgid)
{
	struct memleak_proc *e = followed(tgid);

	if (!e)
		return false;
	follow_event(tgid, EVENT_GONE, e->tag, e->image);
	bpf_map_delete_elem(&procs, &tgid);
	return true;
}

/*
 * A followed process (the current one) ran exec: from now on it is a process
 * of a new tag, with an image of its own, stopped before its first
 * instruction and then at each of its dynamic linker's events until user
 * space has found and probed its allocator (as -c does for the target). What
 * its old image held stays under the old tag. Without an event to tell user
 * space, it is let go (counted) rather than left stopped.
 */
static __always_inline bool follow_exec(__u32 tgid)
{
	struct memleak_proc *e = followed(tgid);
	struct memleak_event *ev;
	__u32 old;

	if (!e)
		return false;
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev) {
		count(CNT_PROCS_MAP_FULL);
		follow_release(tgid);
		return true;
	}
	old = e->tag;
	ev->image = e->image;
	e->tag = __sync_fetch_and_add(&last_proc, 1) + 1;
	e->frozen = 0;
	e->image = e->tag;
	e->loading = 1;
	count(CNT_FOLLOW_EXECS);
	bpf_send_signal(SIGSTOP);	/* the held ring, not CNT_STOP_REQUESTS: the watchdog's */
	held[e->tag & (MEMLEAK_HELD - 1)] = tgid;
	*ev = (struct memleak_event){ .tgid = tgid, .kind = EVENT_FOLLOW_EXEC, .proc = e->tag,
				      .prev = old, .image = ev->image,
				      .time_ns = bpf_ktime_get_ns() };
	bpf_ringbuf_submit(ev, 0);
	return true;
}

/* The last thread of a process exits (only attached with --follow). */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(exit_follow, struct task_struct *p)
{
	if (!p->signal->live.counter)
		follow_release(p->tgid);
	return 0;
}

#endif
