/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Python frames for memleak.bpf.c, which includes this once, after
 * stack.bpf.h: the interpreter's frame chain of the allocating thread.
 */
#ifndef PYTHON_BPF_H
#define PYTHON_BPF_H

/*
 * Python frames. When user space finds an interpreter in the target, it
 * fills py and sets py_enabled before it attaches the allocator; for any
 * other target their whole cost is the test of py_enabled.
 */
__u32 py_enabled;
struct py_offsets py;
/* The kernel has bpf_loop (5.17): without it the walk is left out, unverified. */
const volatile bool py_walk = false;

/*
 * --follow: the interpreter of each image exec'd, by its tag (memleak_proc:
 * image; user/probe/probes_python.c: set_image), which its forks share. The
 * frames' linetables carry the process's own tag above the user half of the
 * address space, so that its code objects are told from another process's
 * at the same addresses.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct py_offsets);
	__uint(max_entries, MEMLEAK_PY_IMAGES);
} py_images SEC(".maps");

#define PY_LINETABLE_TAGS (~0ULL << MEMLEAK_PY_TAG_SHIFT)

/*
 * A thread's Python frames and the pairs (native, Python, process) go to
 * user space through the stack ring, as native stacks do (stack.bpf.h),
 * and known_stacks remembers them sent: no hash-map insert, an allocation
 * and a memory-cgroup charge each, for a new one (user/probe/stack_ring.c).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct py_msg);
	__uint(max_entries, 1);
} py_scratch SEC(".maps");

static __always_inline __u64 py_read(__u64 addr, __u32 off)
{
	__u64 v;

	if (!addr || bpf_probe_read_user(&v, sizeof(v), (void *)(addr + off)))
		return 0;
	return v;
}

/* From addr along the pointers at these offsets; 0 where one is NULL. */
static __always_inline __u64 py_follow(__u64 addr, const __u32 *path, __u32 nr)
{
	for (int i = 0; i < MEMLEAK_PY_PATH; i++) {
		if (i >= nr)
			break;
		addr = py_read(addr, path[i]);
	}
	return addr;
}

/*
 * From a state's first pointer on the path to its frame (hop) to the
 * frame. In 3.11 and 3.12 hop is the evaluation loop's _PyCFrame, a local
 * of its C frame: on the native stack, which the native capture has just
 * read into win (this thread's memory, read in this program; the thread
 * is stopped in it), so the frame is there without a user read of its own.
 */
static __always_inline __u64 py_follow_stack(__u64 hop, const __u32 *path, __u32 nr,
					     const struct stack_window *win)
{
	__u64 at = hop + path[0];

	if (nr == 1 && hop && win && in_window(win, at, 8))
		return win->w[((at - win->lo) / 8) & (STACK_CACHE_WINDOW / 8 - 1)];
	return py_follow(hop, path, nr);
}

/*
 * A state's thread_id and the first pointer on the path to its current
 * frame (PyThreadState.cframe or .current_frame). From 3.11 to 3.13 they
 * lie within 104 bytes of each other: one read for both, not two.
 */
#define PY_STATE_SPAN 128

static __always_inline bool py_state_head(const struct py_offsets *o, __u64 ts, __u64 *tid,
					  __u64 *hop)
{
	__u32 a = o->thread_id, b = o->frame[0], lo = a < b ? a : b, n;
	__u64 buf[PY_STATE_SPAN / 8];

	if (!ts || !o->nr_frame)
		return false;
	n = (a < b ? b : a) + 8 - lo;
	if ((a | b) & 7 || n > PY_STATE_SPAN) {
		*tid = py_read(ts, a);
		*hop = py_read(ts, b);
		return true;
	}
	if (bpf_probe_read_user(buf, n, (void *)(ts + lo)))
		return false;
	*tid = buf[((a - lo) / 8) & (PY_STATE_SPAN / 8 - 1)];
	*hop = buf[((b - lo) / 8) & (PY_STATE_SPAN / 8 - 1)];
	return true;
}

/*
 * Code objects freed. User space probes the interpreter's code_dealloc
 * (PyCode_Type.tp_dealloc), which runs before a code object's memory can
 * be freed and given to a new one: it counts the free (py_code_frees) and
 * notes, by address, that count as the address was last freed. A frame's
 * code is then known by (address, linetable, that count: born): a later
 * code object at the same address is told from it even when its
 * linetable took the freed one's address too (as both do when a program
 * compiles one small module after another).
 *
 * Each code object's linetable and born are kept per CPU by code address
 * (py_lines), read once instead of at every frame of every allocation (a
 * user read each, 80 to 160 ns here, most of a Python stack's cost). The
 * probe clears the freed address's entry on every CPU before the memory
 * can go to another object; a code object on the walking thread's frame
 * chain is alive (its frame holds a reference), so an entry written from
 * it is true until then. (Voiding every entry at each free, as a first
 * version did, left a torch import, which frees a code object every 70
 * allocations, nearly nothing cached.) py_code_gen voids them all: user
 * space moves it when another interpreter comes. py_code_cache is set
 * once the probe is in place; the target's own interpreter only: a
 * followed process's code_dealloc is not probed (its frames' born is 0).
 */
#define PY_LINE_CACHE 1024	/* 32 KiB a CPU, what a per-CPU value holds at most */

#include "python_codes.bpf.h"

struct py_line_slot {
	__u64 code, linetable, born;
	/*
	 * The three and py_code_gen mixed: a slot of another generation, or
	 * half written by a preempted program, fails it.
	 */
	__u64 check;
};

struct py_line_cache {
	struct py_line_slot slot[PY_LINE_CACHE];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct py_line_cache);
	__uint(max_entries, 1);
} py_lines SEC(".maps");

__u64 py_code_gen;	/* moved by user space: every py_lines entry of an older one is void */
__u64 py_code_frees;	/* code objects freed (born) */
__u32 py_code_cache;	/* the code_dealloc probe is in place: py_lines may be used */
const volatile __u32 nr_cpus = 1;	/* possible CPUs: py_lines' copies */
#define PY_LINES_CPUS 1024

struct py_forget {
	__u64 code;
	__u32 idx;
};

/* Clear code's entry in one CPU's py_lines. */
static long py_forget_on(__u32 cpu, void *ctx)
{
	struct py_forget *f = ctx;
	struct py_line_cache *c;
	__u32 zero = 0;

	if (cpu >= nr_cpus)
		return 1;
	c = bpf_map_lookup_percpu_elem(&py_lines, &zero, cpu);
	if (c && c->slot[f->idx & (PY_LINE_CACHE - 1)].code == f->code)
		c->slot[f->idx & (PY_LINE_CACHE - 1)].code = 0;	/* one store: its check fails */
	return 0;
}

static __always_inline __u32 py_line_idx(__u64 code)
{
	return (code >> 4 ^ code >> 14) & (PY_LINE_CACHE - 1);
}

static __always_inline __u64 py_line_check(__u64 code, __u64 linetable, __u64 gen, __u64 born)
{
	return mix(mix(mix(code, linetable), gen), born);
}

/* Attached to the entry of the target's code_dealloc (user/probe/probes_python.c). */
SEC("uprobe")
int py_code_dealloc(struct pt_regs *ctx)
{
	__u64 code = PT_REGS_PARM1(ctx), born = __sync_fetch_and_add(&py_code_frees, 1) + 1;
	struct py_forget f = { code, py_line_idx(code) };
	void *freed = py_inner(&py_code_freed);

	if (!freed || bpf_map_update_elem(freed, &code, &born, BPF_ANY))
		count(CNT_PY_CODES_UNTOLD);
	bpf_loop(PY_LINES_CPUS, py_forget_on, &f, 0);
	return 0;
}

struct py_walk {
	const struct py_offsets *o;	/* the interpreter's: the target's, or an exec'd image's */
	__u64 tag;		/* or'd into each linetable: its process's (PY_LINETABLE_TAG) */
	__u64 frame;		/* the next _PyInterpreterFrame */
	struct py_stack *st;
	struct stack_window *win;	/* the native walk's, free by now */
	bool fault;
	struct py_line_cache *lines;	/* NULL: read every linetable */
	__u64 gen;		/* py_code_gen as the walk began */
	struct py_thread *thr;	/* where the heads read are noted (and counted), or NULL */
	__u32 way;		/* in which of its last stacks */
	bool ended;		/* at a frame without code or previous: the chain's end */
	__u64 h;		/* the hash of its frames, as py_hash_step() goes */
};

/*
 * A frame's head. From 3.11 on the frames of a thread lie side by side in
 * its data stack, each caller below its callee: one read from the start of
 * a frame's page serves the frames under it in that page too.
 */
static __always_inline long read_head(struct stack_window *win, __u64 *head, __u64 frame)
{
	__u64 lo = frame & ~4095ULL;

	if (!win || (frame & 7) || (!in_window(win, frame, MEMLEAK_PY_FRAME_HEAD) &&
		     !window_fill(win, lo, frame + MEMLEAK_PY_FRAME_HEAD - lo)))
		return bpf_probe_read_user(head, MEMLEAK_PY_FRAME_HEAD, (void *)frame);
	window_copy(win, head, MEMLEAK_PY_FRAME_HEAD / 8, frame);
	return 0;
}

/* A field of a frame's head (offsets from user space, checked there too). */
static __always_inline __u64 head_u64(const __u64 *head, __u32 off)
{
	return off <= MEMLEAK_PY_FRAME_HEAD - 8 ? head[(off >> 3) & 15] : 0;
}

static __always_inline __u32 head_u8(const __u64 *head, __u32 off)
{
	return off < MEMLEAK_PY_FRAME_HEAD ? ((const __u8 *)head)[off & 127] : MEMLEAK_PY_NONE;
}

/*
 * code's co_linetable, and in *born when its address was last freed: from
 * this CPU's py_lines when it holds them.
 */
static __always_inline __u64 py_linetable(struct py_walk *w, __u64 code, __u64 *born)
{
	struct py_line_slot *e;
	__u64 lt, *freed;
	void *m;

	*born = 0;
	if (!w->lines)
		return py_read(code, w->o->code_linetable);
	e = &w->lines->slot[py_line_idx(code)];
	if (e->code == code && e->check == py_line_check(code, e->linetable, w->gen, e->born)) {
		*born = e->born;
		return e->linetable;
	}
	lt = py_read(code, w->o->code_linetable);
	m = py_inner(&py_code_freed);
	freed = m ? bpf_map_lookup_elem(m, &code) : NULL;
	if (freed)
		*born = *freed;
	if (lt) {
		e->code = code;
		e->linetable = lt;
		e->born = *born;
		e->check = py_line_check(code, lt, w->gen, *born);
	}
	return lt;
}

/*
 * Is id of kind (check: what tells it apart) sent in this generation?
 * Then 1; 0 to send it, with *set and *key to remember it by; -1: another
 * under its id, or no set (counted).
 */
static __always_inline int py_known(__u64 id, __u32 kind, __u64 check, struct known_set **set,
				    __u64 *key)
{
	enum known k;

	*set = known_set_of(id, kind, key);
	if (!*set) {
		count(CNT_PY_STACK_ERRORS);
		return -1;
	}
	k = known_find(*set, *key, check);
	if (k == KNOWN_OTHER)
		count(CNT_PY_STACK_ERRORS);
	return k == KNOWN_SENT ? 1 : k == KNOWN_OTHER ? -1 : 0;
}

#include "python_last.bpf.h"

/* One frame per bpf_loop round: the verifier checks the step once. */
static long py_step(__u32 i, void *ctx)
{
	__u64 head[MEMLEAK_PY_FRAME_HEAD / 8] = {};
	struct py_walk *w = ctx;
	const struct py_offsets *o = w->o;
	struct py_stack *st = w->st;
	__u32 n = st->nr;
	__u64 code, born;

	if (!w->frame) {
		w->ended = true;
		return 1;
	}
	if (read_head(w->win, head, w->frame)) {
		w->fault = true;
		return 1;
	}
	w->frame = head_u64(head, o->previous);
	py_note_head(w, head);
	/* 3.12+: a shim frame on the C stack ends the evaluation above it. */
	if (head_u8(head, o->owner) == o->owner_cstack) {
		if (n)
			st->entries |= 1ULL << ((n - 1) & 63);
		return 0;
	}
	code = head_u64(head, o->code);
	if (!code) {
		w->ended = true;
		return 1;
	}
	if (n >= MEMLEAK_PY_MAX_FRAMES) {
		st->flags |= PY_STACK_TRUNCATED;
		return 1;
	}
	st->frames[n & (MEMLEAK_PY_MAX_FRAMES - 1)].code = code;
	st->frames[n & (MEMLEAK_PY_MAX_FRAMES - 1)].instr = head_u64(head, o->instr);
	st->frames[n & (MEMLEAK_PY_MAX_FRAMES - 1)].linetable = py_linetable(w, code, &born) | w->tag;
	st->frames[n & (MEMLEAK_PY_MAX_FRAMES - 1)].born = born;
	/* 3.11: the frame an evaluation loop was entered with. */
	if (o->is_entry != MEMLEAK_PY_NONE && head_u8(head, o->is_entry))
		st->entries |= 1ULL << (n & 63);
	st->nr = n + 1;
	return 0;
}

/*
 * struct py_code for user space (user/python/pytrace.c), cut after its
 * table (py_code_reserve): room for about 700 of a torch job's at once
 * (1.5 KiB on average), where 230 whole ones took it all.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);	/* --py-code-buffer */
} py_codes SEC(".maps");

/* A compact ASCII str's text into buf, whole; false for anything else. */
static __always_inline bool py_ascii(const struct py_offsets *o, __u64 str, char *buf, __u32 len)
{
	__u32 state;
	long n;

	buf[0] = '\0';
	if (!str || bpf_probe_read_user(&state, sizeof(state), (void *)(str + 32)))
		return false;
	if ((state & 0x60) != 0x60)	/* PyASCIIObject.state: compact, ascii */
		return false;
	n = bpf_probe_read_user_str(buf, len, (void *)(str + o->ascii_size));
	return n > 0 && n < len;
}

/*
 * What names a code object, into c, whose table has room for cap bytes
 * (n of them the code object's, n <= cap). Inlined once per size below.
 */
static __always_inline void py_code_fill(struct py_code *c, const struct py_offsets *o,
					 const struct py_code_key *key, __u64 table, __u64 n,
					 __u32 flags)
{
	c->code = key->code;
	c->linetable = key->linetable;
	c->born = key->born;
	c->flags = flags;
	c->firstlineno = (__s32)py_read(key->code, o->code_firstlineno);
	c->firsttraceable = (__s32)py_read(key->code, o->code_firsttraceable);
	/* Both, even when the first fails: user space takes what it can. */
	if (!py_ascii(o, py_read(key->code, o->code_qualname), c->qualname, sizeof(c->qualname)))
		c->flags |= PY_CODE_NAMES_UNREAD;
	if (!py_ascii(o, py_read(key->code, o->code_filename), c->filename, sizeof(c->filename)))
		c->flags |= PY_CODE_NAMES_UNREAD;
	c->table_len = 0;
	if (n && !bpf_probe_read_user(c->table, n, (void *)(table + o->bytes_data)))
		c->table_len = n;
}

/*
 * A record of the size the table needs: of a torch job's 1,330 code
 * objects half have a table of 256 bytes at most, 36% of 1 KiB at most,
 * and a whole record (4.5 KiB) each would let the ring hold 230. A copy
 * that finds it full is lost, and a module's body, run once and freed,
 * may then stay unnamed (counted by user space, CNT_PY_CODES_UNNAMED).
 * The sizes are constants: the verifier wants one for each reservation.
 */
static __always_inline struct py_code *py_code_reserve(const struct py_offsets *o,
						       const struct py_code_key *key, __u64 table)
{
	const __u64 head = sizeof(struct py_code) - MEMLEAK_PY_TABLE_LEN;
	__u64 n = py_read(table, 16);	/* PyVarObject.ob_size */
	struct py_code *c;

	if (n <= MEMLEAK_PY_TABLE_LEN / 16) {
		c = bpf_ringbuf_reserve(&py_codes, head + MEMLEAK_PY_TABLE_LEN / 16, 0);
		if (c)
			py_code_fill(c, o, key, table, n, 0);
	} else if (n <= MEMLEAK_PY_TABLE_LEN / 4) {
		c = bpf_ringbuf_reserve(&py_codes, head + MEMLEAK_PY_TABLE_LEN / 4, 0);
		if (c)
			py_code_fill(c, o, key, table, n, 0);
	} else {
		c = bpf_ringbuf_reserve(&py_codes, sizeof(*c), 0);
		if (c)
			py_code_fill(c, o, key, table, n > MEMLEAK_PY_TABLE_LEN ?
				     MEMLEAK_PY_TABLE_LEN : n, n > MEMLEAK_PY_TABLE_LEN ?
				     PY_CODE_TABLE_CUT : 0);
	}
	return c;
}

/* Copy what names frame i's code object, unless that was done already. */
static long py_send_code(__u32 i, void *ctx)
{
	struct py_walk *w = ctx;
	struct py_stack *st = w->st;
	struct py_frame *f = &st->frames[i & (MEMLEAK_PY_MAX_FRAMES - 1)];
	struct py_code_key key = { f->code, f->linetable, f->born };
	static const __u8 one = 1;
	void *sent = py_inner(&py_codes_sent);
	struct py_code *c;

	if (i >= st->nr || !sent)
		return 1;
	if (bpf_map_lookup_elem(sent, &key) ||
	    bpf_map_update_elem(sent, &key, &one, BPF_NOEXIST))
		return 0;
	fill_add(&fill.py_codes, &fill_mark.py_codes);
	c = py_code_reserve(w->o, &key, f->linetable & ~PY_LINETABLE_TAGS);
	if (!c) {
		/*
		 * Let a later stack send it; user space reads the target
		 * meanwhile, and counts the code objects it could not name
		 * (CNT_PY_CODES_UNNAMED: a module's body runs once).
		 */
		if (!bpf_map_delete_elem(sent, &key))
			__sync_fetch_and_sub(&fill.py_codes, 1);
		return 0;
	}
	bpf_ringbuf_submit(c, 0);
	return 0;
}

/*
 * What tells two Python stacks of one id apart, hashed (its depth, flags,
 * loops' entries and both ends), as comparing them with the Python stack
 * map's entry once did.
 */
static __always_inline __u64 py_stack_check(const struct py_stack *st)
{
	__u32 last = (st->nr - 1) & (MEMLEAK_PY_MAX_FRAMES - 1);
	const struct py_frame *f = &st->frames[0], *l = &st->frames[last];

	return mix(mix(mix(mix(mix(0x5851f42d4c957f2dULL, st->nr | (__u64)st->flags << 32),
			       st->entries), f->instr ^ f->born), f->code), l->instr ^ l->code) | 1;
}

/* Frame i into the hash of a stack: a round of bpf_loop, checked once. */
static long py_hash_step(__u32 i, void *ctx)
{
	struct py_walk *w = ctx;
	const struct py_frame *f = &w->st->frames[i & (MEMLEAK_PY_MAX_FRAMES - 1)];

	w->h = mix(mix(mix(mix(w->h, f->code), f->instr), f->linetable), f->born);
	return 0;
}

/*
 * The id of the frames the walk put in msg, sent once a generation, and in
 * *check what tells them apart (py_stack_check); 0 if it could not be kept.
 */
static __always_inline __u64 py_stack_id(struct py_walk *w, struct py_msg *msg, __u64 *check)
{
	struct py_stack *st = &msg->st;
	struct known_set *s;
	__u64 h, key;
	int known;
	__u32 nr;

	w->h = mix(mix(0x7f4a7c159e3779b9ULL, st->nr | (__u64)st->flags << 32), st->entries);
	bpf_loop(st->nr & (2 * MEMLEAK_PY_MAX_FRAMES - 1), py_hash_step, w, 0);
	h = w->h ?: 1;
	*check = py_stack_check(st);
	known = py_known(h, STACK_MSG_PYTHON, *check, &s, &key);
	if (known)
		return known > 0 ? h : 0;
	msg->h.id = h;
	msg->h.kind = STACK_MSG_PYTHON;
	nr = st->nr;
	if (nr > MEMLEAK_PY_MAX_FRAMES)
		nr = MEMLEAK_PY_MAX_FRAMES;
	if (!stack_ring_put(msg, sizeof(*msg) - sizeof(st->frames) + nr * sizeof(st->frames[0]))) {
		/* Not remembered: the next allocation from it sends it again. */
		count(CNT_PY_RING_FULL);
		return 0;
	}
	known_add(s, key, *check);
	/* Sent the first time this generation: its code objects may be new too, and alive now. */
	bpf_loop(MEMLEAK_PY_MAX_FRAMES, py_send_code, w, 0);
	return h;
}

/*
 * The calling thread's Python frames, sent once a generation; their hash,
 * or 0 for none.
 */
static __always_inline __u64 capture_python(const struct py_offsets *o, __u64 tag, bool own)
{
	struct py_thread *thr = NULL;
	struct py_last *last = NULL;
	struct py_walk w = {};
	struct py_msg *msg;
	__u64 ts, id, check = 0, frees = 0, frame, hop = 0;
	__u32 zero = 0, cleared;
	int known;

	ts = py_thread_state(o, &hop, &thr);
	if (!ts)
		return 0;
	w.o = o;
	w.tag = tag;
	w.win = bpf_map_lookup_elem(&stack_window, &zero);
	frame = w.frame = py_follow_stack(hop, &o->frame[1], o->nr_frame - 1, w.win);
	if (w.win)
		w.win->len = 0;
	if (own && py_code_cache) {
		/* Before any head is read: a code object freed after this moves it. */
		frees = *(volatile __u64 *)&py_code_frees;
		w.gen = *(volatile __u64 *)&py_code_gen;
		w.lines = bpf_map_lookup_elem(&py_lines, &zero);
	}
	/* A followed process's code objects: no probe tells when they are freed. */
	if (!w.lines || !w.win)
		thr = NULL;
	cleared = *(volatile __u32 *)&stacks_cleared + 1;
	if (thr) {
		struct py_last_ask a = { frame, frees, w.gen, 0, cleared, 0 };

		known = py_last_id(o, thr, &a);
		if (known)
			return known > 0 ? a.id : 0;
		/* Its heads are noted again as this walk reads them. */
		last = &thr->way[a.way & (PY_LAST_WAYS - 1)];
		last->frame = 0;
		last->nr = 0;
		w.thr = thr;
		w.way = a.way & (PY_LAST_WAYS - 1);
	}
	msg = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!msg)
		return 0;
	w.st = &msg->st;
	w.st->nr = w.st->flags = 0;
	w.st->entries = 0;
	/* Twice the frames: from 3.12 on, each evaluation adds a shim frame. */
	bpf_loop(2 * MEMLEAK_PY_MAX_FRAMES, py_step, &w, 0);
	if (w.fault) {
		count(CNT_PY_STACK_ERRORS);
		return 0;
	}
	if (!w.st->nr)
		return 0;
	id = py_stack_id(&w, msg, &check);
	if (last && id && w.ended && last->nr <= PY_LAST_STEPS) {
		last->frees = frees;
		last->gen = w.gen;
		last->id = id;
		last->check = check;
		last->sent = cleared;
		last->frame = frame;
	}
	return id;
}

/*
 * The calling thread's Python frames (0: none). image: an exec'd image,
 * whose interpreter (if any) is its own. The target's is walked by a copy
 * of the walk of its own, where &py is a constant.
 */
static __always_inline __u64 python_of(__u32 proc, __u32 image)
{
	const struct py_offsets *o;

	if (!follow || !image)
		return py_enabled ? capture_python(&py, 0, !proc) : 0;
	o = bpf_map_lookup_elem(&py_images, &image);
	return o ? capture_python(o, (__u64)proc << MEMLEAK_PY_TAG_SHIFT, false) : 0;
}

/*
 * The id of the triple (native stack, Python frames, process), stored once;
 * the native id alone for the target (process 0) when the thread runs no
 * Python or its frames could not be kept. api and addr: the allocation's,
 * whose site and block record() looks up next, touched together with the
 * pair's set (record_touch). A global function: the verifier checks it
 * once, not at every record().
 */
__noinline __u64 py_pair_id(__u64 native, __u32 proc, __u32 image, __u32 api, __u64 addr)
{
	struct pair_msg msg = { .h.kind = STACK_MSG_PAIR, .pair.native = native, .pair.proc = proc };
	struct known_set *s;
	__u64 id, key, check;
	int known;

	if (py_walk && native != MEMLEAK_NO_STACK)
		msg.pair.python = python_of(proc, image);
	if (!msg.pair.python && !proc)
		return native;
	id = mix(mix(0x94d049bb133111ebULL, native), msg.pair.python);
	if (proc)
		id = mix(id, proc);
	id = id ?: 1;
	/* The three fields, hashed otherwise: a pair of another under id is told apart. */
	check = mix(mix(mix(0xbf58476d1ce4e5b9ULL, native), msg.pair.python), proc) | 1;
	record_touch(id, api, addr, proc);
	known = py_known(id, STACK_MSG_PAIR, check, &s, &key);
	if (known)
		return known > 0 ? id : native;
	msg.h.id = id;
	if (!stack_ring_put(&msg, sizeof(msg))) {
		count(CNT_PY_RING_FULL);
		return native;
	}
	known_add(s, key, check);
	return id;
}

/* Does an allocation's stack id take Python frames (or its process's tag)? */
static __always_inline bool python_wanted(__u64 native, __u32 proc)
{
	return proc || (py_walk && py_enabled && native != MEMLEAK_NO_STACK);
}

/* The stack id of an allocation (api, addr): for a thread running Python, with its frames. */
static __always_inline __u64 with_python(__u64 native, __u32 proc, __u32 image, __u32 api,
					 __u64 addr)
{
	if (!python_wanted(native, proc))
		return native;
	return py_pair_id(native, proc, image, api, addr);
}

#endif
