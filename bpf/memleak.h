/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one header shared by the BPF programs and the user side. Plain
 * fixed-width types only: it is included both after vmlinux.h (BPF) and after
 * <linux/types.h> (user space).
 */
#ifndef MEMLEAK_H
#define MEMLEAK_H

#define MEMLEAK_MAX_STACK_DEPTH 127	/* PERF_MAX_STACK_DEPTH */
#define MEMLEAK_STACK_SLOTS 128		/* power of two above it, for masked indexing */
#define MEMLEAK_MAX_INTERNAL 8		/* address ranges of allocator code */
#define MEMLEAK_NO_STACK 0		/* stack id of allocations whose stack failed */

#include "alloc_apis.h"

/*
 * Allocation APIs, from their table (alloc_apis.h). The allocating ones come
 * first: a site is keyed by one of them. The releasing ones (>= API_FREE)
 * never name a site.
 */
#define MEMLEAK_API_ENUM(api, ...) API_##api,
enum memleak_api {
	MEMLEAK_APIS(MEMLEAK_API_ENUM)
	API__COUNT,
};
#undef MEMLEAK_API_ENUM

#define API__ALLOCATING API_FREE

/*
 * A row that reads an argument its entry probe does not keep (regs), or an
 * allocating API without a size, does not compile. regs 0: no probe at all
 * (-k's tracepoints, bpf/kmem.bpf.c), and no argument read.
 */
#define MEMLEAK_API_CHECK(api, name, kind, size, nmemb, ptr, bytes, regs, ...)		\
	_Static_assert((regs) == 0 ? (size) == 0 && (nmemb) == 0 && (ptr) == 0 :		\
		       (regs) <= 3 && (size) <= (regs) && (nmemb) <= (regs) &&		\
		       (ptr) <= (regs) && (API_##api >= API__ALLOCATING || (size) > 0),	\
		       "alloc_apis.h: the row of " #api);
MEMLEAK_APIS(MEMLEAK_API_CHECK)
#undef MEMLEAK_API_CHECK

/*
 * Heap blocks and mmaps are counted apart: a program's mapped files (git's
 * pack files) are not heap, and heap tools (massif) count only blocks.
 */
enum memleak_kind {
	KIND_HEAP,
	KIND_MMAP,		/* mmap and mremap regions (and munmap) */
	KIND__COUNT,
};

/*
 * The APIs of kind MMAP, a bit each, from their rows. api is always one of
 * the enum (a site's, from the attach cookie); the mask keeps the shift
 * defined for any value, and the verifier's work as small as a compare.
 */
#define MEMLEAK_API_KIND_HEAP 0u
#define MEMLEAK_API_KIND_MMAP 1u
#define MEMLEAK_API_MMAP_BIT(api, name, kind, ...) | MEMLEAK_API_KIND_##kind << API_##api
#define MEMLEAK_MMAP_APIS (0u MEMLEAK_APIS(MEMLEAK_API_MMAP_BIT))
#define MEMLEAK_KIND_OF(api) \
	(MEMLEAK_MMAP_APIS >> ((api) & 31) & 1u ? KIND_MMAP : KIND_HEAP)
_Static_assert(API__COUNT <= 32, "MEMLEAK_MMAP_APIS holds a bit per API");

/* Drop and anomaly counters, indexed in the BPF .bss array `counters`. */
enum memleak_counter {
	CNT_ALLOCS_MAP_FULL,	/* live-allocation map full: allocation not tracked */
	CNT_SITES_MAP_FULL,	/* per-site map full: allocation not tracked */
	CNT_STACK_ERRORS,	/* user stack capture failed: tracked, stack unknown */
	CNT_STACKS_MAP_FULL,	/* stack map full: tracked, stack unknown */
	CNT_STACK_COLLISIONS,	/* two stacks with one hash: tracked, stack unknown */
	CNT_MISSED_RETURNS,	/* return probe without its entry */
	CNT_STATE_ERRORS,	/* no per-thread call state could be created */
	CNT_REPLACED,		/* new block at an address still tracked (a free was missed) */
	CNT_STOP_REQUESTS,	/* SIGSTOPs sent to the target at exec or library load */
	CNT_EXECS,		/* exec()s seen in the target */
	CNT_UNWIND_STOPS,	/* CFI unwinding met a frame it could not follow: stack cut short */
	CNT_UNTRACKED_FREES,	/* free of a block not tracked (allocated before tracing, filtered,
				   dropped, or freed twice): ignored; informational, not a drop */
	CNT_PY_STACKS_MAP_FULL,	/* no longer counted: Python stacks and pairs go through the stack
				   ring (CNT_PY_RING_FULL); kept for the reports' keys */
	CNT_PY_STACK_ERRORS,	/* Python frames unreadable or colliding: tracked, without them */
	CNT_UNWIND_PENDING,	/* CFI unwinding met a module whose rows were not loaded yet (-p,
				   just after attaching): stack cut short there, marked */
	CNT_UNTRACED_CHILDREN,	/* processes the target started, not traced (no --follow);
				   informational, not a drop */
	CNT_PROCS_MAP_FULL,	/* --follow: a child not followed, the process table full */
	CNT_FOLLOW_EXECS,	/* --follow: a followed process ran exec: traced on in its new image */
	CNT_TRACE_DROPS,	/* -t: lines lost, the trace ring full (--trace-buffer); the
				   figures are whole: shown with the trace, not as a drop */
	/*
	 * -k: tracepoint hits not handled: the kernel skipped a program while
	 * one of ours ran on that CPU (an interrupt's allocation or free), or a
	 * table's bucket was locked by it. A missed allocation is in no figure,
	 * a missed free leaves its block outstanding.
	 */
	CNT_KERNEL_MISSED,
	CNT_PY_CODES_UNTOLD,	/* a code object freed without note (py_code_freed full): frames
				   at its address may be named after it */
	CNT_STACK_RING_FULL,	/* a new stack's frames found the stack ring full: tracked, stack
				   unknown (the stack is sent again when met again) */
	CNT_STACK_MERGED,	/* user space: a stack sent under the id of another one already
				   received (a 64-bit hash collision BPF's check missed) */
	CNT_PY_RING_FULL,	/* a new Python stack or pair found the stack ring full: tracked,
				   without Python frames (sent again when met again) */
	CNT_STACK_PREEMPTED,	/* before Linux 6.10, on a preemptible kernel: another thread's
				   capture ran on the CPU meanwhile: tracked, stack unknown */
	CNT_STACKS_LOST,	/* user space, at a reading: sites whose stack BPF sent and the
				   tracer no longer holds (its fault): tracked, "[stack unavailable]" */
	CNT_PY_CODES_UNNAMED,	/* user space, at a report: code objects it could not name, freed
				   before it read them, BPF's copy lost (py_codes ring full) or
				   not taken yet (it came during the report): frames by address */
	CNT__COUNT,
};

/*
 * The live blocks: a table of buckets in a BPF array (mapped by user space
 * a window at a time),
 * each of MEMLEAK_BUCKET_SLOTS addresses and their records. A block goes into
 * the bucket its address hashes to or, when that is full, one of the next
 * MEMLEAK_BUCKET_PROBES; every bucket passed over counts it in `spill`, so
 * that a lookup goes past a bucket only when something did. Slots are
 * claimed and released with compare-and-exchange on the address: no locks,
 * no helper calls.
 */
#define MEMLEAK_BUCKET_SLOTS 7	/* the addresses and spill fill one cache line */
#define MEMLEAK_BUCKET_PROBES 8
#define MEMLEAK_ADDR_BUSY 1	/* addr bit 0 while its record is written */

struct alloc_info {
	__u64 size;
	__u64 timestamp_ns;	/* CLOCK_MONOTONIC to 5 ms (user/probe/clock.c) when the call returned */
	__u32 site;		/* index of its site in the site table */
	__u32 proc;		/* --follow: the process's tag (0: the target); part of the key */
};

struct alloc_bucket {
	__u64 addr[MEMLEAK_BUCKET_SLOTS];	/* 0: free */
	__u32 spill;		/* blocks stored past this bucket that hash to it or before */
	__u32 pad;
	struct alloc_info info[MEMLEAK_BUCKET_SLOTS];
};

#define STACK_TRUNCATED 1	/* stack_trace.flags: deeper than MEMLEAK_MAX_STACK_DEPTH */
#define STACK_CUT 2		/* the unwinder stopped at a frame it could not follow */
#define STACK_PENDING 4		/* ... at a frame whose module's rows were still being loaded */

/* A user stack's frames, as a walk finds them (-k: the value of its stack map). */
struct stack_trace {
	__u32 nr;		/* frames in ips */
	__u32 flags;		/* STACK_* */
	__u64 ips[MEMLEAK_STACK_SLOTS];	/* innermost first */
};

/*
 * What BPF sends through the stack ring (bpf/stack.bpf.h), each the first
 * time it meets it in a generation: a native stack (its first 24 + 8 *
 * st.nr bytes), a Python stack (24 + 32 * nr) or a (native, Python,
 * process) pair. id is what names it: a 64-bit hash of what it holds.
 */
enum stack_msg_kind {
	STACK_MSG_NATIVE,	/* struct stack_msg */
	STACK_MSG_PYTHON,	/* struct py_msg */
	STACK_MSG_PAIR,		/* struct pair_msg */
};

struct stack_msg_head {
	__u64 id;
	__u32 kind;		/* enum stack_msg_kind */
	__u32 pad;
};

struct stack_msg {
	struct stack_msg_head h;
	struct stack_trace st;
};

/*
 * The stacks and pairs BPF sent lately, remembered so that each is sent
 * once: a set of MEMLEAK_KNOWN_WAYS per hash, a cache line. key is the id
 * mixed with its kind and the generation (stacks_cleared), so that a new
 * generation forgets them all at once; check is a hash of what tells two
 * of one id apart (a stack's depth, flags and both ends; a pair's three
 * fields), as the stack maps' compares once did.
 */
#define MEMLEAK_KNOWN_WAYS 4

struct known_stack {
	__u64 key;		/* 0: empty */
	__u64 check;
};

struct known_set {
	struct known_stack way[MEMLEAK_KNOWN_WAYS];
};

/*
 * Figures of one site, a (user stack, API) pair, as user space reports them.
 * Under sampling (bpf/sample.h) they are estimates: the sampled blocks
 * weighted, samples of them outstanding, whose variance is outstanding_var.
 */
struct site_stats {
	__u64 outstanding_bytes;
	__u64 outstanding_allocs;
	__u64 total_bytes;
	__u64 total_allocs;
	__u64 outstanding_samples;	/* sampling: sampled blocks still live */
	__u64 outstanding_var;	/* sampling: in units of 2^MEMLEAK_VAR_SHIFT bytes^2 */
};

/*
 * What BPF counts per site: two atomic adds per allocation and two per free.
 * Outstanding is what was allocated less what was freed (user/probe/snapshot.c).
 * Each CPU adds into one of the slot's copies, a cache line each: threads
 * allocating from one stack on several CPUs would otherwise pass the line
 * back and forth at every call. As many copies as the machine has CPUs, up
 * to MEMLEAK_SITE_SHARDS (user/probe/probes.c, size_maps): the site table's
 * entries are a slot's first MEMLEAK_SITE_SLOT_BYTES(shards) bytes.
 */
#define MEMLEAK_SITE_SHARDS 4

struct site_counts {
	__u64 total_bytes;
	__u64 total_allocs;	/* sampling: in units of 1/MEMLEAK_WEIGHT_ONE (bpf/sample.h) */
	__u64 freed_bytes;
	__u64 freed_allocs;
	/* Sampling only: the sampled blocks, and their variance (sample_weight.var). */
	__u64 total_samples;
	__u64 freed_samples;
	__u64 total_var;
	__u64 freed_var;
};

/*
 * Sampling: every outermost allocating call, counted exactly at its entry
 * (failed ones too), and those sampled; a cache line per shard, as sites'.
 */
struct memleak_calls {
	__u64 calls;
	__u64 bytes;		/* requested */
	__u64 sampled;
	__u64 pad[5];
};

/*
 * The sites: an open-addressed table in a BPF array (mapped by user space
 * a window at a time).
 * A lookup ends at the first empty slot. User space reclaims a site none of
 * whose blocks is left (user/probe/reclaim.c): it marks the slot RETIRING,
 * makes sure no allocation counted itself there meanwhile, keeps the site's
 * figures, and leaves a RETIRED slot, which lookups pass over and a new
 * site may take.
 *
 * A lookup gives up after MEMLEAK_SITE_PROBES slots (sites_map_full).
 * Linear probing clusters: with 128, a table filled with random keys
 * found no room for some once 76% of its slots held a site (a model of
 * 524,288 slots), with 256 at 84%; a new site's probe stops at the first
 * EMPTY or RETIRED slot, so only those in a long cluster go further (205
 * of 700,000 past 64 on a torch job).
 */
#define MEMLEAK_SITE_PROBES 256
#define MEMLEAK_SITE_EMPTY 0ULL
#define MEMLEAK_SITE_RETIRED (~0ULL)
#define MEMLEAK_SITE_RETIRING (~0ULL - 1)
#define MEMLEAK_SITE_NONE (~0U)	/* no slot */

struct site_slot {
	__u64 key;		/* hash of (stack_id, api), or MEMLEAK_SITE_* */
	__u64 stack_id;
	__u32 api;
	__u32 ready;		/* stack_id and api are written */
	/*
	 * What the slot's earlier sites allocated, all of it freed: their
	 * counts stay in counts[] (an allocation racing with a reclaim may
	 * still add and take back its own there), so readers subtract these
	 * from both the totals and the frees. Written by user space only.
	 */
	__u64 base_allocs;
	__u64 base_bytes;
	__u64 pad[3];		/* the counts start on a cache line of their own */
	struct site_counts counts[MEMLEAK_SITE_SHARDS];	/* at most: the table's have shards */
};

/*
 * A live slot of the site table as a report reads it, copied out by BPF
 * (bpf/site_scan.bpf.h) with its copies of the counts summed, frees first.
 * The kernel reads the table in place; user space reads only these, from
 * a small array it keeps mapped (user/probe/site_scan.c): mapping the
 * whole table afresh at each report cost about 4 us a page on the test
 * machine, 100-170 ms at 96 MiB.
 */
struct site_scan_rec {
	__u32 slot;
	__u32 api;
	__u64 stack_id;
	__u64 base_allocs;
	__u64 base_bytes;
	struct site_counts sum;
};

/* A scan's range, in and out: slots [next, to); n records written from 0. */
struct site_scan_ctx {
	__u32 next;
	__u32 to;
	__u32 n;
	__u32 pad;
};

#define MEMLEAK_SCAN_RECS 16384	/* a scan's records at most: 1.5 MiB */

/*
 * An entry of the site table with n copies of the counts: on 2 CPUs 192
 * bytes, not 320, and the table of the default --stack-storage-size 96 MiB,
 * not 160, which each report and each sweep reads whole.
 */
#define MEMLEAK_SITE_SLOT_BYTES(n) \
	(__builtin_offsetof(struct site_slot, counts) + (n) * sizeof(struct site_counts))

/*
 * The groups of site slots (2^site_group_shift each) that held a site since
 * the tables were last emptied: a bit each, set by BPF when it takes an
 * EMPTY slot (once per new site, never per allocation), before the site is
 * ready. User space reads the table a window at a time and passes over the
 * groups that never held one without mapping them (user/probe/site_slot.c):
 * a small target's sites are a few groups of a table of 96 MiB (2 CPUs) or 160.
 *
 * The buckets of live blocks likewise (2^alloc_group_shift each), marked
 * when a block is stored, before its record is: once all are marked, a
 * load per allocation and no write. A short command's final report read
 * the whole 58 MiB table for the few groups its blocks touched: 62 ms of
 * the 0.4 s that `-c /bin/true` took.
 */
#define MEMLEAK_SITE_GROUP_WORDS 64	/* 4,096 groups */
#define MEMLEAK_ALLOC_GROUP_WORDS 64	/* 4,096 groups */

/*
 * How full the tables that reclaiming empties are: BPF adds one for each
 * entry it stores, user space takes one off for each it deletes. BPF sends
 * EVENT_RECLAIM when one reaches the mark user space sets for it.
 */
struct memleak_fill {
	__u64 py_codes;		/* py_codes_sent */
	__u64 site_slots;	/* slots of sites that are not EMPTY */
	/*
	 * Slots that hold a site (neither EMPTY nor RETIRED): what a new
	 * site's probe passes over without taking. A new site takes a RETIRED
	 * slot before an EMPTY one, which site_slots does not count: after a
	 * few sweeps of a torch import, 75,000 RETIRED slots let the sites
	 * grow by that many unseen before site_slots reached its mark.
	 */
	__u64 sites;
};

/*
 * The live bytes of one kind and their exact high-water mark, kept by BPF
 * (bpf/peak.bpf.h): an atomic add per allocation and per free, and a
 * compare-and-swap only when the peak rises. A cache line each, apart from
 * what the programs only read.
 */
struct memleak_live {
	__u64 bytes;		/* live now */
	__u64 peak;		/* the most live at once since tracing began */
	__u64 peak_ns;		/* now_ns when the peak was last raised */
	/*
	 * When the peak reaches this, BPF sends EVENT_PEAK once and sets it
	 * to 0 (off); user space samples the sites and sets it again.
	 */
	__u64 mark;
	__u64 pad[4];
};

/* What the BPF side tells user space through its ring buffer. */
enum memleak_event_kind {
	EVENT_STOPPED,		/* the process is being stopped for us: attach, then resume */
	EVENT_LIBRARIES,	/* the dynamic linker changed its list: reread the maps */
	EVENT_EXEC,		/* -p: the process executed a new program; BPF stopped tracing it */
	EVENT_PY_EXIT,		/* a Python target is stopped at its exit: read its code, then resume */
	EVENT_PY_EXITING,	/* -p: a Python target is exiting, not stopped: read what can be */
	EVENT_RECLAIM,		/* a table reached its mark (memleak_fill): sweep it now */
	EVENT_EXIT_STOP,	/* -c --reach: stopped at _exit, its memory whole: scan it, resume */
	EVENT_FORK,		/* --follow: a traced process started tgid, stopped: probe it, resume */
	EVENT_GONE,		/* --follow: a followed process exited */
	EVENT_FOLLOW_EXEC,	/* --follow: a followed process ran exec, stopped: probe its image */
	EVENT_PEAK,		/* the heap's peak reached its mark: sample the sites now */
};

struct memleak_event {
	__u32 tgid;
	__u32 kind;		/* enum memleak_event_kind */
	__u32 finalize;		/* EVENT_PY_EXIT, _EXITING: 1 at Py_FinalizeEx, 0 at _exit */
	__u32 ppid;		/* EVENT_FORK: the parent's tgid */
	__u32 proc;		/* EVENT_FORK and after: the process's tag (memleak_proc) */
	/*
	 * EVENT_FOLLOW_EXEC: its tag before the exec (proc: after); EVENT_FORK:
	 * the parent's tag (0: the target).
	 */
	__u32 prev;
	/*
	 * EVENT_FORK: the image the child runs (its parent's: memleak_proc);
	 * EVENT_GONE, _FOLLOW_EXEC: the image it ran until then.
	 */
	__u32 image;
	__u32 pad;
	__u64 time_ns;		/* EVENT_FORK, _FOLLOW_EXEC: bpf_ktime_get_ns() at the event */
};

/*
 * -t/--trace: one record per allocation or free as it happens, through a
 * ring buffer of its own (bpf/trace.bpf.h, user/probe/trace_ring.c).
 */
#define TRACE_SIZE_UNKNOWN 1	/* memleak_trace.flags: a free of a block not tracked */

struct memleak_trace {
	__u64 time_ns;		/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 pid_tgid;		/* bpf_get_current_pid_tgid() */
	__u64 size;		/* requested, or the block's when freed */
	__u64 addr;		/* the block returned or released; 0: the call failed */
	__u64 old;		/* realloc, mremap, xallocx: the block resized; else 0 */
	__u32 api;		/* enum memleak_api */
	__u32 flags;		/* TRACE_* */
};

/*
 * --follow: each traced process other than the target has a tag, given in
 * order from 1 and never reused (a pid may be): blocks are keyed by (tag,
 * address), and the stacks of a tagged process are pairs (struct
 * stack_pair) that carry it, so that its sites are its own.
 */
#define MEMLEAK_MAX_PROCS 65536	/* followed processes alive at once */
#define MEMLEAK_HELD 64		/* children held at their fork, for the watchdog (a ring) */

struct memleak_proc {
	__u32 tag;
	__u32 frozen;		/* Python's shutdown began: not traced from then on */
	/*
	 * Not 0: it runs an image of its own, walked by its own unwind
	 * mappings and Python offsets (cfi_walk.bpf.h, python.bpf.h): the tag
	 * of the exec that started it, which its forks share (its
	 * interpreter, its files) ...
	 */
	__u32 image;
	__u32 loading;		/* ... stopped at its dynamic linker's events until probed */
};

/* Address range of code whose own mmap/munmap calls are the allocator's. */
struct addr_range {
	__u64 start;
	__u64 end;
};

/* --follow: an exec'd process's own allocator code (addr_range), by tgid. */
struct internal_set {
	__u32 nr;
	__u32 pad;
	struct addr_range r[MEMLEAK_MAX_INTERNAL];
};

/*
 * CFI unwinding (--unwind). User space turns each module's call-frame
 * information into rows (user/unwind/cfi.c), loads them once per build id into
 * fixed-size chunks, and lists the target's executable mappings with where
 * their rows are; BPF binary-searches a mapping, then its rows.
 */
#define MEMLEAK_CFI_CHUNK_SHIFT 14
#define MEMLEAK_CFI_CHUNK_ROWS (1u << MEMLEAK_CFI_CHUNK_SHIFT)	/* 128 KiB of rows a chunk */
#define MEMLEAK_CFI_CHUNKS 1024		/* 16M rows at most */
#define MEMLEAK_CFI_MAX_ROWS (1u << 24)	/* per module: 24 binary-search steps */
#define MEMLEAK_UNWIND_MAPPINGS 512	/* executable mappings, per half (see unwind_active) */
/*
 * --follow: the mappings of each exec'd image alive, and of each fork with
 * libraries of its own, in slots 1.. of unwind_mappings (slot 0: the
 * target's), two halves each, as the target's.
 */
#define MEMLEAK_UNWIND_SLOTS 32

enum memleak_unwind_mode {
	UNWIND_MODE_FP,		/* frame pointers only */
	UNWIND_MODE_TABLES,	/* CFI rows; frame pointers for mappings without */
};

/* unwind_row.kind & UNWIND_CFA_MASK: how the CFA (the caller's %rsp) is found. */
enum unwind_cfa {
	UNWIND_CFA_NONE,	/* no CFI for the address */
	UNWIND_CFA_RSP,		/* %rsp + cfa_off */
	UNWIND_CFA_RBP,		/* %rbp + cfa_off */
	UNWIND_CFA_PLT,		/* %rsp + 8, + 8 when (ip & 15) >= cfa_off */
	UNWIND_CFA_SIGNAL,	/* signal trampoline: registers in the rt_sigframe at %rsp */
	UNWIND_CFA_END,		/* the outermost frame: the stack ends cleanly */
	UNWIND_CFA_OTHER,	/* a rule BPF cannot follow */
	UNWIND_CFA_PENDING,	/* BPF only: the module's rows are not loaded yet */
};

#define UNWIND_CFA_MASK 7
#define UNWIND_RBP_SAVED 8	/* the caller's %rbp is at CFA + 8 * rbp_off */
#define UNWIND_RBP_LOST 16	/* the caller's %rbp is unknown */
#define UNWIND_CFA_X8 32	/* cfa_off counts 8-byte words */
#define UNWIND_FP_GUESS 64	/* no CFI: a frame-pointer frame, if %rbp is not 0 */

/* From pc (relative to the mapping's base) up to the next row's pc. */
struct unwind_row {
	__u32 pc;
	__u16 cfa_off;
	__u8 kind;
	__s8 rbp_off;
};

/* An executable mapping of the target, sorted by start. */
struct unwind_mapping {
	__u64 start;
	__u64 end;
	__u64 base;		/* runtime address of its rows' pc 0 */
	__u32 first_row;	/* global row index in the chunks, or MEMLEAK_ROWS_PENDING */
	__u32 nr_rows;		/* 0: no CFI: frame pointers (unless pending) */
};

/* unwind_mapping.first_row of a module whose rows user space is still loading. */
#define MEMLEAK_ROWS_PENDING 0xffffffffu

/*
 * Python frames (user/python/python.c, user/python/pytrace.c). User space finds an
 * interpreter in the target and tells BPF where its state lies, as chains
 * of pointer offsets: from _PyRuntime to the PyThreadState of the thread
 * that holds (or last held) the GIL, and from a PyThreadState to the
 * innermost _PyInterpreterFrame. Each allocation then records the frames of
 * its thread: the code object and the instruction being executed.
 */
#define MEMLEAK_PY_MAX_FRAMES 64	/* Python frames kept per stack, innermost first */
#define MEMLEAK_PY_PATH 4		/* pointers followed at most to reach a state */
/*
 * --follow: interpreters of exec'd images walked at once (bpf/python.bpf.h:
 * py_images), and where their frames' linetables carry their process's tag.
 */
#define MEMLEAK_PY_IMAGES 256
#define MEMLEAK_PY_TAG_SHIFT 47
#define MEMLEAK_PY_FRAME_HEAD 72	/* bytes of _PyInterpreterFrame read per frame */
#define MEMLEAK_PY_NONE 0xffffffffu	/* an offset the interpreter does not have */

struct py_offsets {
	__u64 runtime;			/* address of _PyRuntime in the target */
	__u32 holder[MEMLEAK_PY_PATH];	/* _PyRuntime -> the GIL holder's PyThreadState */
	__u32 nr_holder;
	__u32 frame[MEMLEAK_PY_PATH];	/* PyThreadState -> its current frame */
	__u32 nr_frame;
	__u32 thread_id;	/* PyThreadState.thread_id: pthread_self() of its thread */
	__u32 code;		/* _PyInterpreterFrame: f_code (f_executable in 3.13) */
	__u32 previous;
	__u32 instr;		/* prev_instr (instr_ptr in 3.13): the instruction running */
	__u32 owner;		/* char */
	__u32 is_entry;		/* bool: the first frame of an evaluation (3.11), or NONE */
	__u32 owner_cstack;	/* owner of the C stack's shim frames (3.12+), or NONE */
	__u32 code_linetable;	/* PyCodeObject.co_linetable */
	/* For the copy of a code object (struct py_code): */
	__u32 code_filename;	/* PyCodeObject.co_filename */
	__u32 code_qualname;
	__u32 code_firstlineno;	/* int */
	__u32 code_firsttraceable;	/* int */
	__u32 ascii_size;	/* sizeof(PyASCIIObject): where a compact ASCII str's text is */
	__u32 bytes_data;	/* offsetof(PyBytesObject, ob_sval) */
	__u32 pad;
};

struct py_frame {
	__u64 code;		/* PyCodeObject * */
	__u64 instr;		/* _Py_CODEUNIT * inside its bytecode */
	/*
	 * Its co_linetable, a bytes object of its own: tells the code object
	 * from one created later at the same address, once it is freed.
	 */
	__u64 linetable;
	/*
	 * When the code object's address was last freed (py_code_gen then;
	 * 0: not while its code_dealloc was probed): the linetable's address
	 * may be freed and reused with it, this cannot.
	 */
	__u64 born;
};

#define PY_STACK_TRUNCATED 1	/* py_stack.flags: deeper than MEMLEAK_PY_MAX_FRAMES */

/* A thread's Python frames, named by the hash of them (their id). */
struct py_stack {
	__u32 nr;
	__u32 flags;		/* PY_STACK_* */
	__u64 entries;		/* bit i: frames[i] is the outermost of one evaluation loop */
	struct py_frame frames[MEMLEAK_PY_MAX_FRAMES];
};

/* A Python stack on its way to user space: its first 32 + 32 * st.nr bytes. */
struct py_msg {
	struct stack_msg_head h;
	struct py_stack st;
};

/*
 * The first time a stack shows a code object, BPF sends user space a copy of
 * what names it, through a ring buffer: module code and exec'd code are
 * freed long before a report could read them from the target.
 */
#define MEMLEAK_PY_NAME_LEN 128
#define MEMLEAK_PY_FILE_LEN 256
#define MEMLEAK_PY_TABLE_LEN 4096	/* bytes of co_linetable copied */
#define PY_CODE_NAMES_UNREAD 1	/* py_code.flags: a name is not compact ASCII */
#define PY_CODE_TABLE_CUT 2	/* co_linetable is longer than the copy */

/* py_codes_sent's key (bpf/python.bpf.h): a code object copied to user space. */
struct py_code_key {
	__u64 code;
	__u64 linetable;
	__u64 born;
};

struct py_code {
	__u64 code;		/* with linetable and born, the key of struct py_frame */
	__u64 linetable;
	__u64 born;
	__s32 firstlineno;
	__s32 firsttraceable;
	__u32 table_len;	/* bytes in table */
	__u32 flags;		/* PY_CODE_* */
	char qualname[MEMLEAK_PY_NAME_LEN];	/* NUL-terminated, maybe cut */
	char filename[MEMLEAK_PY_FILE_LEN];
	__u8 table[MEMLEAK_PY_TABLE_LEN];
};

/* The stack id of an allocation with Python frames stands for this pair. */
struct stack_pair {
	__u64 native;		/* a native stack's id */
	__u64 python;		/* a Python stack's id; 0: no Python frames */
	__u64 proc;		/* --follow: the tag of the process that allocated (0: the target) */
};

struct pair_msg {
	struct stack_msg_head h;
	struct stack_pair pair;
};

#endif /* MEMLEAK_H */
