/* SPDX-License-Identifier: GPL-2.0 */
/* Command-line options: parsed once into an immutable struct opts. */
#ifndef OPTS_H
#define OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "report/writers.h"	/* enum report_output */
#include "unwind/unwind.h"	/* enum unwind_mode */

#define OPTS_DEFAULT_INTERVAL_S 5.0
#define OPTS_DEFAULT_TOP 10
#define OPTS_DEFAULT_MAX_ALLOCS (1u << 20)
#define OPTS_DEFAULT_STACK_STORAGE (1u << 18)
#define OPTS_MIN_DEFAULT_STACKS (1u << 12)	/* the default shrinks to fit, not below */
/* -k: the kernel's defaults; its stacks are fewer, and its tables are preallocated. */
#define OPTS_KERNEL_MAX_ALLOCS (1u << 18)
#define OPTS_KERNEL_STACK_STORAGE (1u << 14)
#define OPTS_MAX_DEBUG_DIRS 16
#define OPTS_MAX_OWN 32
#define OPTS_DEFAULT_ALLOCS_PER_STACK 10
#define OPTS_DEFAULT_TRACE_BUFFER (4u << 20)
#define OPTS_DEFAULT_STACK_RING (16u << 20)	/* 4M lost stacks on a torch job under load */
#define OPTS_DEFAULT_PY_CODE_RING (1u << 20)

struct opts {
	pid_t pid;			/* -p/--pid; 0 when not given */
	const char *command;		/* -c/--command; NULL when not given */
	double interval_s;		/* positional INTERVAL (> 0), default 5 */
	unsigned count;			/* positional COUNT; 0: until the target ends */
	unsigned top;			/* -T/--top, default 10 */
	uint64_t older_ms;		/* -o/--older; 0: all */
	uint64_t min_size;		/* -z/--min-size, default 0 */
	uint64_t max_size;		/* -Z/--max-size, default UINT64_MAX */
	const char *obj;		/* -O/--obj: allocator object override */
	int verbose;			/* -v/--verbose, repeatable */
	bool kernel;			/* -k, or neither -p nor -c: the kernel's allocations */
	const char *outputs[REPORT_OUT__COUNT];	/* --json FILE, --folded FILE, ...: NULL if not
						   given (report/writers.h) */
	uint32_t max_allocs;		/* --max-allocs N */
	bool max_allocs_given;
	uint32_t stack_storage_size;	/* --stack-storage-size N */
	bool stack_storage_given;	/* N was given, not the default */
	const char *user;		/* -u/--user USER: run -c as this user */
	bool snapshot_html;		/* --snapshot-html: each snapshot's HTML page too */
	const char *snapshot_dir;	/* --snapshot-dir DIR */
	bool folded_allocs;		/* --folded-weight allocs (default bytes) */
	bool pprof_gperftools;		/* --pprof-format gperftools (default proto) */
	bool pprof_format_given;
	bool all_stacks;		/* --all-stacks: every stack in the JSON and folded files */
	bool prealloc_stacks;		/* --prealloc-stacks: accepted, a no-op (no stack table is left to preallocate) */
	bool follow;			/* -f/--follow: trace the processes the target starts */
	bool folded_by_process;		/* --folded-by-process: root folded stacks at their process */
	bool reach;			/* --reach: the final report scans for reachability */
	bool show_allocs;		/* -a/--show-allocs: each stack's live blocks in the reports */
	uint32_t allocs_per_stack;	/* --allocs-per-stack N: of them, at most N a stack
					   (default 10; 0: all) */
	bool allocs_per_stack_given;
	bool trace;			/* -t/--trace: each allocation and free, a line each */
	uint64_t trace_buffer;		/* --trace-buffer BYTES: the ring -t's lines go through */
	bool trace_buffer_given;
	uint64_t stack_ring;		/* --new-stack-buffer BYTES: the ring new stacks go through */
	bool stack_ring_given;
	uint64_t py_code_ring;		/* --py-code-buffer BYTES: the ring Python's code copies go through */
	bool py_code_ring_given;
	bool full_names;		/* --full-names: the text's C++ names whole (report.full_names) */
	bool sort_count;		/* --sort count: sites by outstanding allocations, not bytes */
	const char *symbols_prefix;	/* -S/--symbols-prefix: the allocator's names carry it */
	const char *debug_dirs[OPTS_MAX_DEBUG_DIRS];	/* --debug-dir DIR, repeatable */
	size_t nr_debug_dirs;
	const char *own[OPTS_MAX_OWN];	/* --own PATH, repeatable: the user's code (analyze/sites.h) */
	size_t nr_own;
	/* --alloc-fn NAME, repeatable: the program's allocation functions, never a site */
	const char *alloc_fns[OPTS_MAX_OWN];
	size_t nr_alloc_fns;
	const char *python_malloc;	/* --python-malloc: "pymalloc" or "malloc" (-c only); NULL:
					   as the environment says */
	bool py_objects;		/* --py-objects: probe pymalloc's API (python/pyobjects.h) */
	enum unwind_mode unwind;	/* --unwind, default auto */
	const char *unwind_cache;	/* --unwind-cache DIR or "off"; NULL: UNWIND_CACHE_DIR */
	/*
	 * --sample BYTES (sample_mode SAMPLE_BYTES, sample_value the mean) or
	 * -s N (SAMPLE_COUNT, N): bpf/sample.h; SAMPLE_NONE: exact.
	 */
	int sample_mode;
	uint64_t sample_value;
	/* MEMLEAKBPF_SAMPLE_SEED, for tests: reproducible draws; 0: none. */
	uint64_t sample_seed;
	/*
	 * Knobs for `make bench` and the placement tests, not for users, from
	 * the environment: MEMLEAKBPF_BENCH_FLOOR=1 makes the BPF programs
	 * return at once (the cost of the probes alone);
	 * MEMLEAKBPF_PROBE_AT_ENTRY=1 keeps every probe at its function's entry
	 * (allocator/placement.h); MEMLEAKBPF_BENCH_NO_PYTHON=1 leaves a Python
	 * target's frames unwalked (what they cost); MEMLEAKBPF_BENCH_NO_SESSION=1
	 * samples without uprobe sessions (what they save); -k:
	 * MEMLEAKBPF_BENCH_NO_STACK=1 takes no kernel stack (what the unwinder costs);
	 * MEMLEAKBPF_BENCH_NO_PREEMPT_OFF=1 guards the CPU's scratch as a kernel
	 * before 6.10 must (bpf/scratch.bpf.h: that path, and what holding
	 * preemption off costs).
	 */
	bool bench_floor, probe_at_entry, bench_no_python, bench_no_session, bench_no_stack;
	bool bench_no_preempt_off;
};

/*
 * Parse argv. Returns 0 on success, 1 when --help was printed (exit 0), or
 * -EINVAL with a one-line message (no "memleakbpf: " prefix, no newline) in err.
 */
int opts__parse(int argc, char **argv, struct opts *o, char *err, size_t errlen);
void opts__usage(FILE *f);

#endif
