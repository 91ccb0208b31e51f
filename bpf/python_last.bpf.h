/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A thread's PyThreadState and its last Python stacks, for python.bpf.h,
 * which includes this once, before its walk (py_step), which notes the
 * heads it reads in one of them.
 */
#ifndef PYTHON_LAST_BPF_H
#define PYTHON_LAST_BPF_H

/*
 * A thread's last Python stacks. The frames a walk finds follow from nothing
 * but the frame it starts from and what it reads in each frame's head
 * (previous, owner, code, instr, is_entry), and, for each code object, its
 * linetable and born: while no code object has been freed since the walk
 * began (py_code_frees, py_code_gen unmoved), a code object at an address
 * on the thread's frame chain is the one the walk saw there (a frame holds
 * a reference to its code). A thread allocates from the same Python stack
 * most of the time (96.6% of a torch job's 1.38 M allocations): the heads
 * read again and compared then stand in for the walk, the linetables, the
 * hash of the frames and, while stacks_cleared is unmoved, the look-up in
 * known_stacks. Walks of more than PY_LAST_STEPS heads are not kept.
 */
#define PY_LAST_STEPS 64

struct py_last_step {
	__u64 previous, code, instr;
	__u32 owner, is_entry;	/* head_u8() of each */
};

/*
 * A loop allocates from a few instructions of its innermost frame in turn
 * (tests/bench/pydeep.py: a dict, a list, the list's growth; alloc.py's
 * loop from six or more): a thread keeps its last stacks in PY_LAST_WAYS
 * ways, by (first frame, its code and instruction), direct-mapped.
 * 8 ways of 64 heads: 16 KiB a thread that runs Python.
 */
#define PY_LAST_WAYS 8

struct py_last {
	__u64 frame;		/* where the walk began; 0: no stack kept */
	__u64 frees, gen;	/* py_code_frees and py_code_gen before it began */
	__u64 id, check;	/* its stack's id and py_stack_check() */
	__u32 sent;		/* stacks_cleared + 1 when id was known sent; 0: look it up */
	__u32 nr;		/* heads the walk read; in its steps, the first PY_LAST_STEPS */
};

/* Per thread: the PyThreadState it was last seen running with, and its last stacks. */
struct py_thread {
	__u64 ts;
	struct py_last way[PY_LAST_WAYS];
	/*
	 * Way i's heads from step[i * PY_LAST_STEPS] on: one array, indexed by
	 * a number, so that the verifier does not follow a pointer to each way.
	 */
	struct py_last_step step[PY_LAST_WAYS * PY_LAST_STEPS];
};

#define PY_LAST_STEP_MASK (PY_LAST_WAYS * PY_LAST_STEPS - 1)

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct py_thread);
} py_threads SEC(".maps");

/*
 * The calling thread's PyThreadState, or 0, and in *hop the first pointer
 * on the way to its frame. A state is the thread's own only if its
 * thread_id is the thread's pthread_self(), its %fs base on x86-64: the
 * state the thread was last found with is tried first, then the GIL's
 * holder (3.11; the last holder from 3.12 on), which whoever runs Python
 * code is. Only the thread itself changes its frames, so they are
 * consistent here.
 */
static __always_inline __u64 py_thread_state(const struct py_offsets *o, __u64 *hop,
					     struct py_thread **thr)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 self = task->thread.fsbase, ts, tid;
	struct py_thread *seen;

	/* The state it last ran with, while still its own: one read, not the path's. */
	*thr = seen = bpf_task_storage_get(&py_threads, task, NULL, 0);
	if (seen && seen->ts && py_state_head(o, seen->ts, &tid, hop) && tid == self)
		return seen->ts;
	ts = py_follow(o->runtime, o->holder, o->nr_holder);
	if (!py_state_head(o, ts, &tid, hop) || tid != self)
		return 0;
	*thr = seen = bpf_task_storage_get(&py_threads, task, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (seen)
		seen->ts = ts;
	return ts;
}

/* Forget the thread's last stacks: a walk may have noted another thread's (scratch.bpf.h). */
static __always_inline void py_last_forget(struct task_struct *task)
{
	struct py_thread *thr = bpf_task_storage_get(&py_threads, task, NULL, 0);

	for (int i = 0; thr && i < PY_LAST_WAYS; i++)
		thr->way[i].frame = 0;
}

/* What a walk reads in a head, as py_same_step() compares it. */
static __always_inline void py_head_fields(const struct py_offsets *o, const __u64 *head,
					   struct py_last_step *f)
{
	f->previous = head_u64(head, o->previous);
	f->code = head_u64(head, o->code);
	f->instr = head_u64(head, o->instr);
	f->owner = head_u8(head, o->owner);
	/* 3.12+: no is_entry, and the owner's byte again, as py_same_head() reads it. */
	f->is_entry = head_u8(head, o->is_entry < MEMLEAK_PY_FRAME_HEAD ? o->is_entry : o->owner);
}

/*
 * Note a head the walk read in the thread's last stack, while there is
 * room. Counted there, in the map, not in w on the BPF stack: the
 * verifier would follow each count as a state of its own.
 */
static __always_inline void py_note_head(struct py_walk *w, const __u64 *head)
{
	struct py_thread *thr = w->thr;
	struct py_last *last;
	__u32 n;

	if (!thr)
		return;
	last = &thr->way[w->way & (PY_LAST_WAYS - 1)];
	n = last->nr;
	if (n < PY_LAST_STEPS)
		py_head_fields(w->o, head, &thr->step[(w->way * PY_LAST_STEPS + n) & PY_LAST_STEP_MASK]);
	last->nr = n + 1;
}

struct py_same {
	const struct py_thread *thr;
	struct stack_window *win;
	__u64 frame;
	__u32 first;		/* the way's first step */
	__u32 nr;
	/* Where py_head_fields() finds each field: a word of the head, and a byte's shift in it. */
	__u32 previous, code, instr, owner, is_entry, owner_shift, entry_shift;
	bool differs;
};

/*
 * Heads read by a round of py_same_stack(): a call of bpf_loop's callback
 * costs more than a head's compare.
 */
#define PY_SAME_ROUND 8

/* A word of the head at base (its first word's index) in the window. */
static __always_inline __u64 win_word(const struct stack_window *win, __u32 base, __u32 word)
{
	return win->w[(base + word) & (STACK_CACHE_WINDOW / 8 - 1)];
}

/*
 * Is the head at c->frame the one the last walk read as its step i? Read
 * in the window, without a copy; a head the window cannot hold answers
 * no, and the walk reads it its own way.
 */
static __always_inline bool py_same_head(struct py_same *c, __u32 i)
{
	const struct py_last_step *s = &c->thr->step[(c->first + i) & PY_LAST_STEP_MASK];
	struct stack_window *win = c->win;
	__u64 frame = c->frame, lo = frame & ~4095ULL;
	__u32 base;

	if (!in_window(win, frame, MEMLEAK_PY_FRAME_HEAD) &&
	    ((frame & 7) || !window_fill(win, lo, frame + MEMLEAK_PY_FRAME_HEAD - lo)))
		return false;
	base = (frame - win->lo) / 8;
	if (win_word(win, base, c->previous) != s->previous ||
	    win_word(win, base, c->code) != s->code || win_word(win, base, c->instr) != s->instr ||
	    (__u8)(win_word(win, base, c->owner) >> c->owner_shift) != s->owner ||
	    (__u8)(win_word(win, base, c->is_entry) >> c->entry_shift) != s->is_entry)
		return false;
	c->frame = s->previous;
	return true;
}

static long py_same_step(__u32 r, void *ctx)
{
	struct py_same *c = ctx;

	for (__u32 k = 0; k < PY_SAME_ROUND; k++) {
		__u32 i = r * PY_SAME_ROUND + k;

		if (i >= c->nr)
			return 1;
		if (!py_same_head(c, i)) {
			c->differs = true;
			return 1;
		}
	}
	return 0;
}

/*
 * Would a walk from frame find the thread's last stack? Yes when no code
 * object was freed since that walk began and every head it read reads
 * the same: the walk then takes the same steps to the same end.
 */
static __always_inline bool py_same_stack(const struct py_offsets *o, const struct py_thread *thr,
					  __u32 way, struct stack_window *win, __u64 frame,
					  __u64 frees, __u64 gen)
{
	const struct py_last *last = &thr->way[way & (PY_LAST_WAYS - 1)];
	__u32 entry = o->is_entry < MEMLEAK_PY_FRAME_HEAD ? o->is_entry : o->owner;
	struct py_same c = {
		thr, win, frame, way * PY_LAST_STEPS, last->nr, o->previous / 8, o->code / 8,
		o->instr / 8, o->owner / 8, entry / 8, (o->owner & 7) * 8, (entry & 7) * 8, false
	};

	/* Fields outside the head (user space refuses them): walk, as py_step() reads them. */
	if (o->previous > MEMLEAK_PY_FRAME_HEAD - 8 || o->code > MEMLEAK_PY_FRAME_HEAD - 8 ||
	    o->instr > MEMLEAK_PY_FRAME_HEAD - 8 || o->owner >= MEMLEAK_PY_FRAME_HEAD)
		return false;
	if (!frame || last->frame != frame || last->frees != frees || last->gen != gen ||
	    !c.nr || c.nr > PY_LAST_STEPS)
		return false;
	bpf_loop((c.nr + PY_SAME_ROUND - 1) / PY_SAME_ROUND, py_same_step, &c, 0);
	return !c.differs;
}

/* What a walk would begin from: py_last_id()'s question, and its answer in id and way. */
struct py_last_ask {
	__u64 frame, frees, gen;	/* py_code_frees and py_code_gen, read before */
	__u64 id;
	__u32 cleared;			/* stacks_cleared + 1, read before */
	__u32 way;			/* where a walk notes its stack */
};

/*
 * The way of the thread's last stacks for a walk from frame, whose head is
 * in the window: by its code and instruction, and frame (direct-mapped: a
 * loop that allocates from more places than there are ways keeps some of
 * them, where a round of the ways would keep none).
 */
static __always_inline __u32 py_last_way(const struct py_offsets *o,
					 const struct stack_window *win, __u64 frame)
{
	__u32 base = (frame - win->lo) / 8;
	__u64 k = mix(mix(frame, win_word(win, base, o->code / 8)), win_word(win, base, o->instr / 8));

	return (k >> 32) & (PY_LAST_WAYS - 1);
}

/*
 * The thread's last stack from a->frame, when a walk would find it again:
 * 1 and its id in a->id once known sent in this generation; 0 for a walk,
 * to note its stack in way a->way; -1 (an error, counted) for no Python
 * frames. A global function: the verifier checks it once, and the walk
 * after it once, not once for each way out of it.
 */
__noinline int py_last_id(const struct py_offsets *o, struct py_thread *thr,
			  struct py_last_ask *a)
{
	__u64 frame, lo, key;
	struct stack_window *win;
	struct py_last *last;
	struct known_set *s;
	__u32 zero = 0;
	int known;

	if (!o || !thr || !a)
		return 0;
	frame = a->frame;
	lo = frame & ~4095ULL;
	win = bpf_map_lookup_elem(&stack_window, &zero);
	if (!win || (!in_window(win, frame, MEMLEAK_PY_FRAME_HEAD) &&
		     ((frame & 7) || !window_fill(win, lo, frame + MEMLEAK_PY_FRAME_HEAD - lo)))) {
		a->way = 0;
		return 0;
	}
	a->way = py_last_way(o, win, frame);
	last = &thr->way[a->way & (PY_LAST_WAYS - 1)];
	if (!py_same_stack(o, thr, a->way, win, frame, a->frees, a->gen))
		return 0;
	a->id = last->id;
	if (last->sent == a->cleared)
		return 1;
	known = py_known(last->id, STACK_MSG_PYTHON, last->check, &s, &key);
	if (known > 0)
		last->sent = a->cleared;
	return known;
}

#endif
