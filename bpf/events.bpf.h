/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The programs that follow the target's life rather than its allocations,
 * for memleak.bpf.c, which includes this once, last: the dynamic linker's
 * library loads, Python's exit, exec and the fork of a shell's child.
 */
#ifndef EVENTS_BPF_H
#define EVENTS_BPF_H

/*
 * Stop the current process and tell user space, which may not be its parent
 * (a shell's child) and so cannot see the stop through waitpid.
 */
static __always_inline void stop_current(void)
{
	struct memleak_event ev = { bpf_get_current_pid_tgid() >> 32, EVENT_STOPPED };

	count(CNT_STOP_REQUESTS);
	bpf_send_signal(SIGSTOP);
	bpf_ringbuf_output(&events, &ev, sizeof(ev), 0);
}

/* r_debug.r_state (x86-64: after r_version, r_map and r_brk) and its value RT_ADD. */
#define DL_R_STATE_OFF 24
#define DL_RT_ADD 1

/*
 * The dynamic linker is about to map objects (RT_ADD): none of their code
 * runs before it says RT_CONSISTENT (relocation and constructors come
 * after), where the target stops and all of them are seen to; a stop here
 * too cost a torch job some twenty stops of 5 to 7 ms, one per dlopen.
 * Unknown (no address, an unreadable word): not adding, the target stops.
 */
static __always_inline bool dl_adding(void)
{
	__u64 at = dl_r_debug;
	__s32 state;

	return at && !bpf_probe_read_user(&state, sizeof(state), (void *)(at + DL_R_STATE_OFF)) &&
	       state == DL_RT_ADD;
}

/*
 * The dynamic linker calls _dl_debug_state() around every change of its
 * list of loaded objects. Stopping the target there lets user space attach
 * to a freshly loaded allocator before any of its code (or a constructor
 * that allocates) runs.
 */
SEC("uprobe")
int dl_debug_state(struct pt_regs *ctx)
{
	struct memleak_event ev = { bpf_get_current_pid_tgid() >> 32, EVENT_LIBRARIES };

	struct memleak_proc *child = followed(ev.tgid);

	if (child) {
		/*
		 * A followed process: one of an exec'd image is held while
		 * it loads the image until probed; then, as a fork of the
		 * target always, at each change of its libraries until user
		 * space has read its maps (their names: a library dlclose'd
		 * before a report is named all the same).
		 */
		stop_current();
		return 0;
	}
	if (proc_of(bpf_get_current_task_btf()))
		return 0;	/* not the target */
	if (stop_on_dl) {
		if (!dl_adding())
			stop_current();
	} else if (notify_dl)
		bpf_ringbuf_output(&events, &ev, sizeof(ev), 0);
	return 0;
}

/*
 * A Python target at Py_FinalizeEx (cookie 1) or at _exit (cookie 0): stop
 * it (-c) so that user space reads its code objects while they still exist;
 * a -p target is not stopped (its parent would see it), only announced.
 * From Py_FinalizeEx on nothing is traced: the interpreter frees its
 * objects as it shuts down, which would make every leak look freed.
 */
SEC("uprobe")
int py_exit(struct pt_regs *ctx)
{
	struct memleak_event ev = { bpf_get_current_pid_tgid() >> 32, EVENT_PY_EXITING };
	struct memleak_proc *child;
	__s64 proc;

	proc = proc_of(bpf_get_current_task_btf());
	if (proc < 0)
		return 0;
	if (proc) {
		/*
		 * A followed child (of the target's Python, or one that
		 * exec'd its own): frozen on its own; what it copied of its
		 * code is enough.
		 */
		child = followed(ev.tgid);
		if (child && bpf_get_attach_cookie(ctx))
			child->frozen = 1;
		return 0;
	}
	if (!py_enabled)
		return 0;
	if (bpf_get_attach_cookie(ctx)) {
		py_frozen = 1;
		ev.finalize = 1;
	}
	if (py_exit_stop) {
		ev.kind = EVENT_PY_EXIT;
		count(CNT_STOP_REQUESTS);
		bpf_send_signal(SIGSTOP);
	}
	bpf_ringbuf_output(&events, &ev, sizeof(ev), 0);
	return 0;
}

/*
 * -c --reach: the command at _exit (exit() has run its handlers, exit_group
 * has not torn its memory down): stop it for the reachability scan, where
 * memcheck makes its leak check. A Python target stops at py_exit instead.
 */
SEC("uprobe")
int exit_stop(struct pt_regs *ctx)
{
	struct memleak_event ev = { bpf_get_current_pid_tgid() >> 32, EVENT_EXIT_STOP };

	if (!is_target(bpf_get_current_task_btf()) || (py_enabled && py_exit_stop))
		return 0;
	count(CNT_STOP_REQUESTS);
	bpf_send_signal(SIGSTOP);
	bpf_ringbuf_output(&events, &ev, sizeof(ev), 0);
	return 0;
}

/* Stop a traced command right after exec, before its first instruction. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(exec_stop, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	if (p->tgid != targ_tgid && (!handoff_tgid || p->tgid != handoff_tgid)) {
		/* What its threads remember (stacks, a call in flight) is the old image's. */
		if (follow_exec(p->tgid))
			bpf_task_storage_delete(&calls, p);
		return 0;
	}
	count(CNT_EXECS);
	dl_r_debug = 0;
	if (stop_on_exec) {
		stop_current();
	} else {
		/*
		 * -p: the image we traced is gone and a new one starts, which
		 * we did not stop for: trace nothing more of it, and tell user
		 * space, which ends with the old image's report.
		 */
		struct memleak_event ev = { p->tgid, EVENT_EXEC };

		targ_tgid = 0;
		bpf_ringbuf_output(&events, &ev, sizeof(ev), 0);
	}
	return 0;
}

/*
 * A process the target starts: `sh -c './app'` forks and the child execs the
 * program, so the first child a traced shell forks is the one to follow;
 * with --follow any other is traced too, as are those of followed
 * processes; without, it is counted, for the report to say that it was not.
 */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(fork_follow, struct task_struct *parent, struct task_struct *child)
{
	if (child->pid != child->tgid)
		return 0;	/* a thread */
	if (parent->tgid != targ_tgid) {
		struct memleak_proc *from = followed(parent->tgid);

		if (from)
			follow_child(parent, child, from);
		return 0;
	}
	if (follow_shell && !handoff_tgid)
		handoff_tgid = child->tgid;
	else if (follow)
		follow_child(parent, child, NULL);
	else
		count(CNT_UNTRACED_CHILDREN);
	return 0;
}

#endif
