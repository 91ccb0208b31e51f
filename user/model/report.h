/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The report data model: what every report_*.c writer takes (const) and
 * writes to a FILE *. Built by report_build__report from a snapshot, owned here.
 */
#ifndef REPORT_H
#define REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/types.h>
#include "memleak.h"

enum report_language {
	FRAME_NATIVE,		/* machine code */
	FRAME_PYTHON,		/* a Python function, from the interpreter's own frames */
	FRAME_KERNEL,		/* kernel code (-k), named by /proc/kallsyms */
};

struct report_frame {
	uint64_t address;	/* as captured: a return address for all but frames[0]'s origin */
	char *function;		/* as the source names it, demangled; NULL when unknown */
	/*
	 * The linker symbol (pprof's system_name, JSON's symbol): for a
	 * function's frame the ELF symbol covering it, as is (a clone's:
	 * foo.part.0; mangled); else the mangled name function demangles.
	 * NULL: none.
	 */
	char *symbol;
	char *module;		/* object path; NULL when the address is in no known module */
	uint64_t module_offset;	/* address - module load bias, for module+0xoffset */
	char *file;		/* source file; NULL without line info */
	int line;		/* 0 when unknown */
	bool inlined;		/* an inlined call inside the next frame's function */
	bool own;		/* the user's code, by the sites' rules (analyze/sites.h) */
	/*
	 * FRAME_PYTHON (user/python/pystack.c): function is co_qualname, module and
	 * file the source file, address the instruction being executed and
	 * module_offset its byte offset in the code's bytecode.
	 */
	enum report_language language;
	/*
	 * Its strings are the symbolizer's cache's and the module table's,
	 * which outlive every report (both change only between reports), or
	 * Python's code table's (python/pystack.c; a kept site frame's too,
	 * symbolize/report_sites.c): not freed with it. A report at 210,000 stacks copied three or four
	 * strings for each of its ten million frames otherwise.
	 */
	bool borrowed;
};

/* How a stack's outstanding bytes moved over the run (user/analyze/history.c). */
enum report_trend {
	TREND_UNKNOWN,		/* too few intervals yet */
	TREND_GROWING,
	TREND_STABLE,
	TREND_SHRINKING,
	TREND_STARTUP,		/* held bytes during start-up, too few reports since to judge */
};

/*
 * A block the runtime allocated for itself, which the program neither asked
 * for nor can free (analyze/runtime_frames.h): held until exit, where
 * valgrind frees it (__libc_freeres, __gnu_cxx::__freeres).
 */
enum report_runtime {
	RUNTIME_NONE,
	RUNTIME_INIT,		/* a runtime library's own initializer, run by the dynamic linker */
	RUNTIME_STDIO,		/* libc's buffer of a stdio stream */
	RUNTIME_LOCALE,		/* libc's locale data and message catalogs */
	RUNTIME_NSS,		/* libc's name-service modules and state */
	RUNTIME_TZ,		/* libc's time-zone data */
	RUNTIME_ICONV,		/* libc's character-set conversion modules */
	RUNTIME_PYINIT,		/* the Python interpreter's own start-up, before any Python code */
	RUNTIME_SEVERAL,	/* a site's stacks: the runtime's, of more than one of the above */
	RUNTIME__COUNT,
};

struct report_growth {
	enum report_trend trend;
	unsigned rank;		/* 1: the most leak-like growing stack; 0: not growing */
	double slope;		/* bytes per second: least-squares line over the run */
	double r2;		/* how well that line fits, 0..1 (0: flat) */
	uint32_t grew;		/* intervals in which the bytes grew */
	uint32_t shrank;	/* intervals in which they fell */
	uint32_t intervals;	/* intervals since the stack first held bytes */
	/*
	 * Stable because its points all hold the same bytes, told without a
	 * fit: slope and r2 left 0 (history__trend_site) until it is shown.
	 */
	bool unfitted;
	/* Its bytes rose between two of the fitted points, those after start-up (its steps). */
	bool rose_since_startup;
	/*
	 * Growing, exact, and every block of it younger than a report interval:
	 * none of what it held a report ago is still held (insight.c).
	 */
	bool renewed;
	double age_s;		/* of its oldest outstanding block; < 0 when unknown */
	double score;		/* how leak-like, 0..1; growing stacks only */
};

/* How fast a stack allocates, freed or not (churn). */
struct report_rate {
	double allocs_per_s, bytes_per_s;		/* since tracing began */
	double last_allocs_per_s, last_bytes_per_s;	/* over the last interval */
};

/*
 * Reachability at a scan (analyze/reach.h, memcheck's meanings), by kind:
 * definitely lost, indirectly lost, possibly lost, still reachable.
 */
#define REPORT_REACH_KINDS 4

struct report_reach_figures {
	uint64_t bytes[REPORT_REACH_KINDS];
	uint64_t blocks[REPORT_REACH_KINDS];
};

struct report_reach {
	bool at_exit;		/* -c: at the command's _exit (or Python's shutdown); else on SIGUSR2 */
	double t_s;		/* since tracing began */
	double held_ms;		/* the target held for the scan, from the first thread stopped */
	double scan_ms;		/* of that, the scan itself */
	unsigned threads;
	uint64_t root_bytes, block_bytes, unread_bytes;	/* read (reach_stats) */
	struct report_reach_figures total;
	uint64_t mmap_bytes, mmap_blocks;	/* tracked mmaps: not heap blocks, scanned as roots */
};

/* -a/--show-allocs: one live block of a stack. */
struct report_block {
	uint64_t addr;
	uint64_t size;
	uint64_t age_ns;	/* at the snapshot */
};

/*
 * -a: a stack's live blocks (older than -o), the oldest first, at most
 * report.allocs_per_stack of the seen the table held. Beside the stack,
 * not in it: only -a has them.
 */
struct report_blocks {
	struct report_block *v;
	uint32_t nr, cap;	/* cap: the room while the table is read */
	uint64_t seen;
};

/* Its fields ordered to leave no holes: a torch job's report has 210,000 of them. */
struct report_stack {
	uint32_t api;		/* enum memleak_api */
	uint32_t proc;		/* --follow: its process's tag (0: the target) */
	uint64_t bytes;		/* outstanding */
	uint64_t allocs;	/* outstanding */
	/* Sampling (report.sampling): the sampled blocks behind bytes, and its variance. */
	uint64_t samples;
	double var;		/* bytes^2 */
	uint64_t total_bytes;	/* allocated since tracing began, freed or not */
	uint64_t total_allocs;
	/* Innermost first, owned; read through report__frame. */
	union {
		struct report_frame *frames;	/* !shared: copies of its own */
		/*
		 * shared: pointers to frames kept once in the report's frame
		 * table (model/frame_table.h), which outlives the report.
		 */
		const struct report_frame **refs;
	};
	size_t nr_frames;
	bool truncated;		/* deeper than MEMLEAK_MAX_STACK_DEPTH */
	bool unwind_pending;	/* cut where a file's unwind table was still loading (-p) */
	bool no_stack;		/* the stack could not be captured */
	bool python_arena;	/* pymalloc arenas: this stack needed them, any code fills them */
	uint8_t wrapper_ips;	/* innermost ips in operator new, left out of the frames */
	bool site_frame_kept;	/* site_frame is borrowed (symbolize/report_sites.c's carry) */
	bool site_keyed;	/* site_key is sites__key(site_frame), kept with it */
	bool site_own;		/* its site frame is the user's code; false: the rules' fallback */
	bool site_import;	/* allocated by an import: importlib's bootstrap among its Python frames */
	uint8_t site_runtime;	/* enum report_runtime: the runtime's own block, by its frames */
	/* Allocated before main by a library's initializer: outermost, the dynamic linker */
	bool site_preinit;
	bool left_out;		/* not in the JSON and folded files (analyze/sites.h) */
	bool shared;		/* its frames are refs, not frames */
	struct report_growth growth;	/* with an analysis only */
	struct report_rate rate;	/* churn stacks only */
	/*
	 * Its site's frame (analyze/sites.h), owned; NULL without a stack.
	 * Report stacks only: not those of the churn or the peak.
	 */
	struct report_frame *site_frame;
	uint64_t site_key;
	size_t site;		/* index into report.sites, once grouped */
	const struct report_reach_figures *reach;	/* at the scan; borrowed; NULL: none */
	/* -a: its live blocks; owned. NULL: none in the table (or no -a). */
	struct report_blocks *blocks;
};

/* Frame i of s (innermost first), from its frame table's or its own. */
static inline const struct report_frame *report__frame(const struct report_stack *s, size_t i)
{
	return s->shared ? s->refs[i] : &s->frames[i];
}

/*
 * The stacks that share their innermost frame of the program's own code
 * (analyze/sites.h): one leak reached through many stacks is one site. Its
 * figures are the exact sums of its stacks'.
 */
struct report_site {
	const struct report_frame *frame;	/* its first stack's site_frame; NULL: no stack */
	const size_t *stacks;	/* indices into report.stacks: the growing first, each by bytes */
	size_t nr_stacks;
	size_t kept;		/* the first kept of them go to the files; the others are left out */
	uint64_t bytes, allocs;	/* outstanding */
	uint64_t total_bytes, total_allocs;
	uint64_t samples;	/* sampling: its stacks' sums, as bytes */
	double var;
	size_t growing;		/* of its stacks, how many grow */
	double slope;		/* bytes per second: the sum of its growing stacks' slopes */
	double score;		/* its most leak-like stack's leak score */
	unsigned rank;		/* 1: the most leak-like growing site; 0: none of its stacks grows */
	bool own;		/* its frame is the user's code (analyze/sites.h); false: a fallback */
	bool import;		/* every stack of it allocated by an import (start-up) */
	/* enum report_runtime: every stack of it the runtime's own (sorted after the others) */
	uint8_t runtime;
	bool preinit;		/* every stack of it site_preinit (start-up) */
};

struct report_totals {
	uint64_t outstanding_bytes;
	uint64_t outstanding_allocs;
	uint64_t outstanding_samples;	/* sampling: the sampled blocks behind them */
	double outstanding_var;		/* sampling: the variance of outstanding_bytes, bytes^2 */
	uint64_t allocs;	/* tracked allocations since tracing began */
	uint64_t frees;		/* of those, freed (realloc counts as free + alloc) */
	uint64_t counters[CNT__COUNT];
	/* The outstanding figures of each enum memleak_kind: heap blocks and mmaps apart. */
	uint64_t kind_bytes[KIND__COUNT], kind_allocs[KIND__COUNT];
	/*
	 * The most live at once since tracing began, of each kind: exact,
	 * kept by the probes (bpf/peak.bpf.h); and when (CLOCK_MONOTONIC,
	 * to 5 ms; 0: never).
	 */
	uint64_t peak_bytes[KIND__COUNT];
	uint64_t peak_ns[KIND__COUNT];
	/*
	 * Of counters[CNT_STACKS_MAP_FULL], those that came while the live
	 * sites named at most half the stack room: new stacks came faster
	 * than the sweep let go of freed ones (probe/reclaim.c). With the
	 * most stacks live at a sweep, the room, and the stacks the sweep
	 * lets go of per second of its CPU (0: no sweep yet).
	 */
	uint64_t stacks_outran, stacks_live_max, stack_room, sweep_rate;
};

/* One row of the timeline: the figures at one report. */
struct report_sample {
	double t_s;		/* since tracing began */
	uint64_t live;		/* outstanding bytes */
	uint64_t allocs, frees;	/* since tracing began */
	bool mem;		/* the target's figures below could be read */
	double mem_t_s;		/* when they were: t_s, or the last reading before an exit */
	uint64_t mem_live;	/* the live bytes then */
	uint64_t rss, anon;	/* resident, and of that anonymous */
	uint64_t heap;		/* the [heap] (brk) segment */
	uint64_t arena, arena_reserved;	/* glibc's thread-arena heaps: in use, reserved */
	uint32_t arenas;	/* how many of those */
	uint64_t untracked;	/* allocations not tracked since tracing began (report__untracked) */
	uint64_t drops;		/* every drop counter added up (report__drops) */
};

enum report_verdict {
	VERDICT_UNKNOWN,	/* too few reports, or the target's figures unreadable */
	VERDICT_NO_LEAK,	/* live blocks not growing steadily, RSS following them */
	VERDICT_LEAK,
	VERDICT_FRAGMENTATION,	/* RSS the allocator keeps without live blocks in it */
	VERDICT_LEAK_AND_FRAGMENTATION,
	VERDICT_STARTUP,	/* still starting up, or too few reports since: no trend yet */
	/* No stack grows and nothing is retained, but drops made the figures incomplete. */
	VERDICT_INCOMPLETE,
	/* The live total grows steadily, though no stack does by itself. */
	VERDICT_GROWTH,
	/*
	 * No stack grows now, but earlier reports of this image named a leak:
	 * a leak that stopped, or memory a loop held until it ended.
	 */
	VERDICT_STOPPED,
};

/* The last leak the reports named (struct report_memory.grew). */
#define REPORT_GREW_NAME 256
struct report_grew {
	size_t stacks;		/* growing at the last report that named it; 0: none named */
	double from_s, to_s;	/* the first and the last report that named it */
	double slope;		/* their bytes per second added up, at the last */
	uint64_t live;		/* the outstanding bytes then */
	/* The most leak-like stack's site then: its frame's names, cut to fit ("": none). */
	char function[REPORT_GREW_NAME], file[REPORT_GREW_NAME];
	int line;		/* 0: unknown */
};

/* Who serves malloc in the target: each keeps freed memory its own way. */
enum report_allocator {
	ALLOCATOR_UNKNOWN,	/* a static program's, or one not named below */
	ALLOCATOR_GLIBC,
	ALLOCATOR_TCMALLOC,	/* gperftools' */
	ALLOCATOR_JEMALLOC,
};

/*
 * Start-up: the reports while the program ran code for the first time
 * (imports, library loads, a first request), which allocates from stacks
 * never seen before (user/analyze/history.c).
 */
struct report_startup {
	double end_s;		/* the last report whose interval did so in bulk; trends start there */
	bool ongoing;		/* the last interval did */
	uint32_t new_stacks;	/* stacks first seen in the last interval */
	/* Sampling: judged by site (analyze/history_sites.h); its sites first seen or importing. */
	bool by_site;
	uint32_t new_sites;
	uint64_t unstored;	/* its allocations whose stack the full stack map could not take */
	double new_share;	/* of its allocations, those of the two above (0..1) */
};

/* Live blocks against the target's memory (user/analyze/verdict.c). */
struct report_memory {
	enum report_verdict verdict;
	bool attached;		/* -p: what was allocated before the attach is unknown */
	bool released;		/* the retained memory went back later (the anonymous memory fell) */
	bool reused;		/* or the live blocks grew into it later (it did not fall) */
	size_t reports;		/* reports with the target's figures */
	struct report_sample base;	/* at the start of tracing (or the attach) */
	struct report_sample worst;	/* when the most was retained */
	struct report_sample now;	/* the last report with the target's figures */
	int64_t worst_retained;	/* anonymous growth since base not in live blocks */
	int64_t now_retained;
	int64_t worst_in_heap;	/* growth of [heap] and arenas from base to worst */
	struct report_growth live;	/* of the live total */
	size_t growing;		/* stacks growing */
	struct report_startup startup;
	bool pymalloc;		/* pymalloc's arenas are mostly free (analyze/verdict.h) */
	/* The target had exited by this report: what is outstanding was never freed. */
	bool exited;
	/* It exited with nothing outstanding, every allocation traced: no leak, whatever the trends. */
	bool all_freed;
	/*
	 * Drops (report_totals' dropped counters) make the figures incomplete:
	 * then no "no leak", "stable" or "not a leak". Allocations not tracked
	 * are in no figure; more of them in most intervals counts as growth
	 * (a leak the block table could not hold).
	 */
	bool incomplete;	/* some drop counter is not 0 */
	uint64_t drops;		/* all of them added up */
	uint64_t untracked;	/* of those, allocations not tracked */
	uint32_t untracked_rose;	/* intervals in which more went untracked */
	uint32_t untracked_intervals;	/* intervals since the first such */
	bool untracked_growing;
	/* The live blocks' trend was measured (not too early, not start-up) on complete figures. */
	bool trend_known;
	struct report_grew grew;	/* VERDICT_STOPPED: what grew before */
};

/*
 * The high-water mark of heap blocks: exact, kept by the probes
 * (bpf/peak.bpf.h); mmaps apart. Its stacks are those of the sample of the
 * sites that held the most (analyze/history.c): taken when the peak rose
 * by a 64th (BPF asks for it), every sample_s, and at each report.
 */
struct report_peak {
	bool known;
	bool exact;		/* bytes are the probes' (else the best sample's) */
	double t_s;		/* when the peak was reached (to 5 ms) */
	uint64_t bytes;		/* the peak of heap blocks */
	uint64_t allocs;	/* blocks in the stacks' sample */
	double sample_s;	/* the period of the samples when the peak does not rise */
	double stacks_t_s;	/* when the stacks below were read */
	uint64_t stacks_bytes;	/* what they held then: at most bytes */
	struct report_stack *stacks;	/* at that moment, bytes descending */
	size_t nr_stacks;
	uint64_t other_bytes, other_allocs;	/* of the stacks not listed */
	uint64_t mmap_bytes;	/* the peak of mmaps, apart (exact too) */
	double mmap_t_s;	/* when; < 0: no mmap traced */
};

/* What the run's history adds to a report (user/analyze/insight.c). */
struct report_analysis {
	size_t *growing;	/* indices into report.stacks, most leak-like first */
	size_t nr_growing;
	struct report_stack *churn;	/* most allocations per second first */
	size_t nr_churn;
	struct report_peak peak;
	struct report_memory memory;
	const struct report_sample *samples;	/* the timeline; borrowed */
	size_t nr_samples;
};

/* How full pymalloc's arenas are (python/pyarena.h), read from the target. */
struct report_pyarenas {
	bool known;		/* read at least once */
	double t_s;		/* when, since tracing began */
	uint64_t arenas, bytes;	/* arenas counted, and their 1 MiB each */
	uint64_t pools, used_pools;	/* their 16 KiB pools, and those handing out blocks */
	uint64_t used_blocks, used_bytes;	/* blocks handed out, by their size class */
	uint64_t skipped;	/* 1 MiB mmaps not counted: no pymalloc block in them */
};

/* The target's Python interpreter (user/python/pytrace.c). */
struct report_python {
	const char *version;	/* "3.11.2" */
	const char *path;	/* the object holding the interpreter, as the target sees it */
	const char *malloc;	/* who serves objects: "pymalloc" or "malloc" */
	const char *malloc_why;	/* "by default", "PYTHONMALLOC=malloc", ... */
	/*
	 * The interpreter began to shut down (Py_FinalizeEx), where tracing
	 * stopped: the figures are the program's at that moment, not at its
	 * exit (shutdown frees nearly everything, which would hide every leak).
	 */
	bool shutdown;
	bool objects;		/* --py-objects: pymalloc's API probed, every object a block */
	struct report_pyarenas arenas;	/* pymalloc only */
};

/*
 * --sample or -s (bpf/sample.h): outstanding bytes and blocks, totals and
 * rates are estimates, the sampled blocks weighted by the inverse of their
 * probability; calls and bytes asked for are counted exactly.
 */
struct report_sampling {
	bool by_bytes;		/* --sample (Poisson by bytes); false: -s (one call in N) */
	uint64_t mean;		/* --sample's bytes, -s's N */
	uint64_t seed;		/* MEMLEAKBPF_SAMPLE_SEED; 0: none */
	uint64_t calls;		/* heap allocation calls, exactly (failed ones too) */
	uint64_t bytes;		/* the bytes they asked for */
	uint64_t sampled;	/* of those calls, sampled */
};

/* The 95% interval's half-width of an estimate of variance var: 1.96 standard deviations. */
#define REPORT_Z95 1.959963984540054

/* --follow: one traced process's share of the report (analyze/per_process.h). */
struct report_process {
	uint32_t tag;		/* 0: the target */
	int pid, ppid;		/* ppid 0: unknown (the target's is not asked) */
	const char *command;	/* borrowed from the tracer's table; may be NULL */
	bool exited;
	bool execed;		/* ran exec: this image's figures end there */
	uint64_t exec_freed_bytes, exec_freed_allocs;	/* execed: what its image held then, freed by the exec */
	bool after_exec;	/* an image a followed process exec'd (its pid's earlier image: another entry) */
	bool traced;		/* its probes were in place before it ran */
	bool attached;		/* -p: running before the attach; its earlier blocks are unknown */
	struct report_totals totals;	/* counters left 0: they are the run's */
};

struct maps;

/*
 * --follow: the code mappings of a process that runs an image of its own
 * (one it exec'd, or its parent's), for the heap profiles' mappings.
 */
struct report_image_maps {
	uint32_t proc;			/* its tag */
	const struct maps *maps;	/* its image's: the same pointer for each of its processes */
};

struct report {
	int pid;
	bool kernel;		/* -k: the kernel's own allocations, by kernel stack (pid 0) */
	const char *command;	/* command line (-c) or /proc/PID/cmdline (-p); may be NULL */
	double duration_s;	/* since tracing began */
	bool final;
	/*
	 * A periodic text report: one line per site and no stacks, so that a
	 * long run's output stays small. The final report, and one asked for
	 * with SIGUSR1, show each site's biggest stacks with their frames.
	 */
	bool brief;
	bool show_allocs;	/* -a: each stack's blocks (report_stack.blocks) */
	uint32_t allocs_per_stack;	/* -a's bound; 0: all */
	bool sort_count;	/* --sort count: sites by outstanding allocations */
	bool full_names;	/* --full-names: the text's C++ names not shortened (report/cxx_names.h) */
	uint64_t older_ms;	/* only allocations older than this are outstanding (0: all) */
	size_t top;		/* the text report shows this many sites */
	struct report_totals totals;
	/*
	 * Outstanding only, bytes descending. A report written as text alone
	 * carries frames just for the stacks it prints (report_text__shown).
	 */
	struct report_stack *stacks;
	size_t nr_stacks;
	/*
	 * The stacks grouped (analyze/sites.h), the biggest first, the growing
	 * ones ranked. A report never grouped has none: the text then lists no
	 * stack, the files every one.
	 */
	struct report_site *sites;
	size_t nr_sites;
	size_t *site_stacks;	/* what sites[].stacks point into */
	bool all_stacks;	/* --all-stacks: the files hold every stack */
	/* For some writers only; borrowed (the caller frees them after the report), may be NULL. */
	const struct maps *maps;	/* the target's code mappings: the heap profiles' mappings */
	const struct report_image_maps *image_maps;	/* --follow: other images' (tag order) */
	size_t nr_image_maps;
	const struct report *freed;	/* stacks with nothing outstanding: pprof's alloc totals */
	bool folded_allocs;	/* --folded-weight allocs: folded lines count blocks, not bytes */
	bool folded_by_process;	/* --folded-by-process: each folded stack rooted at its process */
	const struct report_python *python;	/* borrowed; NULL: not a Python target */
	enum report_allocator allocator;	/* who serves malloc (the fragmentation advice) */
	struct report_analysis *analysis;	/* owned; NULL without a history (hand-made) */
	/* --follow: the target first, then the others in the order they began; owned. */
	struct report_process *processes;
	size_t nr_processes;
	const struct report_reach *reach;	/* the last reachability scan; borrowed; NULL: none */
	const struct report_sampling *sampling;	/* borrowed; NULL: exact */
};

/* Does s begin with prefix? */
bool report__starts(const char *s, const char *prefix);
/* strcmp, NULL sorting after any string: for the orders of names that may be unknown. */
int report__cmp_name(const char *a, const char *b);
/* -1, 0 or 1. */
int report__cmp_u64(uint64_t a, uint64_t b);
/* Two sites' keys, (stack id, api), in that order: -1, 0 or 1. */
int report__cmp_site(uint64_t a_id, uint32_t a_api, uint64_t b_id, uint32_t b_api);
/* A file name ("libfoo.so", "libfoo.so.1.2") that is a shared object's, not a program's. */
bool report__is_shared_object(const char *base);
/*
 * The marker a stack that does not reach its root hangs under in the flame
 * graphs ("[truncated]", "[stack unavailable]", ...); NULL: none.
 */
const char *report__marker(const struct report_stack *s);
/* What was traced, for a title: "pid 1234", or "the kernel" (-k); in buf (REPORT_TARGET_LEN). */
#define REPORT_TARGET_LEN 24
const char *report__target(const struct report *r, char *buf);
/* "native", "python". */
const char *report__language_name(enum report_language l);
/* "malloc", "new[]", ...; "?" for an unknown value. */
const char *report__api_name(uint32_t api);
/* Option that fixes a drop counter ("--max-allocs"), or NULL. */
const char *report__counter_fix(enum memleak_counter c);
/* JSON key of a drop counter shown in totals.dropped, or NULL when not a drop. */
const char *report__counter_name(enum memleak_counter c);
/* The drop counters of t added up. */
uint64_t report__drops(const struct report_totals *t);
/* Of those, the allocations not tracked: their blocks are in no figure. */
uint64_t report__untracked(const struct report_totals *t);
/* Which allocator the object at path (the one providing malloc) is; NULL: unknown. */
enum report_allocator report__allocator_of(const char *path);
/* "glibc", "tcmalloc", "jemalloc"; NULL for ALLOCATOR_UNKNOWN. */
const char *report__allocator_name(enum report_allocator a);
/*
 * Bytes of the well-formed UTF-8 sequence at s (RFC 3629: no overlong form,
 * surrogate, or code point above U+10FFFF), 1 for ASCII, 0 when there is none.
 */
int report__utf8_len(const char *s);
/* 1.96 sqrt(var): the half-width of an estimate's 95% interval (normal approximation). */
double report__margin(double var);
/* "1.5 MiB" style, into buf. */
const char *report__human_size(uint64_t bytes, char *buf, size_t len);
/* "1,234,567" into buf, which holds REPORT_COUNT_LEN bytes. */
#define REPORT_COUNT_LEN 32	/* UINT64_MAX with separators is 26 characters */
const char *report__count(uint64_t v, char *buf);
/* one when n is 1, else many. */
const char *report__plural(uint64_t n, const char *one, const char *many);
/* The strings a frame owns (not the frame itself). */
void report__frame_free(struct report_frame *f);
void report__free(struct report *r);

#endif
