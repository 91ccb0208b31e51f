/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Python side of a trace: find the interpreter when the allocator is
 * attached, tell BPF how to walk its frames, read its code objects while
 * the target lives (at every report, and when it stops at its exit), and
 * hand the report what it needs to show Python frames. BPF is reached only
 * through struct pytrace_ops, which probe/ fills: python/ knows nothing of it.
 */
#ifndef PYTRACE_H
#define PYTRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "allocator/allocator.h"
#include "model/report.h"
#include "pycode.h"
#include "util/procmaps.h"

struct pytrace;
struct snapshot;	/* the BPF tables copied (probe/), only handed back to each_stack */

/* What a trace takes from the command line. */
struct pytrace_settings {
	bool spawned;			/* -c: the target is ours to stop at its exit */
	const char *python_malloc;	/* --python-malloc: "pymalloc", "malloc"; NULL: unset */
	bool no_frames;			/* benchmarking: what the Python frames cost (opts.h) */
	bool objects;			/* --py-objects: probe pymalloc's API (pyobjects.h) */
};

/* What pytrace asks of BPF; each gets ctx back. */
struct pytrace_ops {
	void *ctx;
	/*
	 * Where the target's interpreter keeps its state, or NULL to stop
	 * walking it (and drop the exit probes). At its exit the target is
	 * stopped (EVENT_PY_EXIT) with stop_at_exit, else only announced
	 * (EVENT_PY_EXITING). 0, or -EOPNOTSUPP when the kernel cannot run
	 * the walk (no bpf_loop: Linux 5.17).
	 */
	int (*set_python)(void *ctx, const struct py_offsets *py, bool stop_at_exit);
	/*
	 * --follow: the interpreter of the image a followed process (tag)
	 * exec'd. 0, -EOPNOTSUPP as above, or -errno (-E2BIG: too many).
	 */
	int (*set_image)(void *ctx, uint32_t tag, const struct py_offsets *py);
	/*
	 * --follow: fn(arg, pid, tag, maps, lo) with each image a followed
	 * process exec'd, once its objects are loaded and before it runs on.
	 */
	void (*on_exec)(void *ctx, void (*fn)(void *arg, pid_t pid, uint32_t tag,
					     const struct maps *maps,
					     const struct lookup_order *lo), void *arg);
	/* fn(arg, copy) for every copy of a code object BPF sends; fn NULL: dropped. */
	void (*on_code)(void *ctx, void (*fn)(void *arg, const struct py_code *c), void *arg);
	/*
	 * EVENT_PY_EXIT (or _EXITING) when the target calls the function at
	 * offset in path: Py_FinalizeEx (finalize: tracing ends there) or
	 * _exit. 0 or -errno.
	 */
	int (*attach_exit)(void *ctx, const char *path, uint64_t offset, bool finalize);
	/*
	 * Code objects' deallocation (code_dealloc at offset in path; path
	 * NULL: not known): BPF notes each address freed, which tells a code
	 * object from a later one at its address, and keeps each code
	 * object's linetable pointer until one is freed instead of reading it
	 * at every frame. 0 or -errno (then neither, as without it).
	 */
	int (*attach_dealloc)(void *ctx, const char *path, uint64_t offset);
	/*
	 * --follow: pid, which exec'd a Python image, is no longer traced
	 * from its call of Py_FinalizeEx (at offset in path), nor are its
	 * forks: its figures end where a Python target's do. 0 or -errno.
	 */
	int (*attach_image_exit)(void *ctx, pid_t pid, const char *path, uint64_t offset);
	/*
	 * fn(arg, stack) for the Python stack of each site of snap, or of the
	 * tables as they are now when snap is NULL, until fn returns non-zero:
	 * that value, 0, or -errno. *walked (kept by the caller, 0 at first)
	 * says which reading fn was given last: of a reading that carries
	 * that one over (probe/snapshot_kept.h), only the stacks it read are
	 * given, the others were then. Set to snap's reading when every stack
	 * was given, else 0.
	 */
	int (*each_stack)(void *ctx, const struct snapshot *snap, uint64_t *walked,
			  int (*fn)(void *arg, const struct py_stack *py), void *arg);
	/*
	 * Every Python frame of every stack held now (a site's stack among
	 * them: the frames each_stack(NULL) would give, and those of stacks
	 * no site names any more), each stack's frames once per caller they
	 * are met under, in an array of *nr the caller frees; NULL without
	 * memory. For Python's exit, where the target waits: no reading of
	 * the tables, each frame shared by many stacks given once. NULL op:
	 * each_stack is used.
	 */
	struct py_frame *(*py_frames)(void *ctx, size_t *nr);
	/*
	 * The addresses of the live blocks of exactly size bytes allocated
	 * through api (enum memleak_api), in *addrs (the caller frees it).
	 * 0 or -ENOMEM.
	 */
	int (*blocks)(void *ctx, uint32_t api, uint64_t size, uint64_t **addrs, size_t *nr);
};

/*
 * -c with --python-malloc: the command's Python uses that allocator
 * (PYTHONMALLOC, set here for the command to inherit). NULL on ENOMEM.
 */
struct pytrace *pytrace__new(const struct pytrace_settings *s);
/* Once BPF is loaded, before pytrace__attach: ops is copied. */
void pytrace__set_ops(struct pytrace *t, const struct pytrace_ops *ops);
/*
 * The target's objects as the allocator is attached: if one of them is a
 * Python interpreter that memleakbpf can walk, make BPF record its frames
 * and stop the target at its exit. Once per image. 0 or -ENOMEM: an
 * interpreter that cannot be followed keeps native stacks (one line says why).
 */
int pytrace__attach(struct pytrace *t, pid_t pid, const struct maps *maps,
		    const struct lookup_order *lo);
/*
 * --py-objects, once pytrace__attach found Python with pymalloc: add its
 * object allocator's API to a's probes (lo: where its file is open), if
 * that is exact; else one line says why, and its objects stay in arenas.
 * 0 or -ENOMEM.
 */
int pytrace__probe_objects(struct pytrace *t, const struct lookup_order *lo, struct allocator *a);
/* The target exec'd: the new image is looked at afresh. */
void pytrace__forget(struct pytrace *t);
/*
 * Read the code objects of snap's Python frames not read yet, while the
 * target lives (snap NULL: of the tables as they are now).
 */
void pytrace__refresh(struct pytrace *t, const struct snapshot *snap);
/*
 * EVENT_PY_EXIT: pid is stopping at Py_FinalizeEx or _exit (stopped); read
 * every code object its stacks name, then let it go on. EVENT_PY_EXITING
 * (-p, not stopped): read what can be read before it is gone. finalize: at
 * Py_FinalizeEx, where BPF stopped tracing (the report says so). t_s: since
 * tracing began (stopped: pymalloc's arenas are read then).
 */
void pytrace__on_exit(struct pytrace *t, pid_t pid, bool stopped, bool finalize, double t_s);
/*
 * pymalloc's arenas read from the target's memory (while it lives; at a
 * stop at its exit, the figures of the final report), seconds t_s into the
 * trace. A reading that fails keeps the one before.
 */
void pytrace__read_arenas(struct pytrace *t, double t_s);
/* For report_meta: the code objects read, and the interpreter; NULL when not Python. */
const struct pycode *pytrace__code(const struct pytrace *t);
const struct report_python *pytrace__report(const struct pytrace *t);
void pytrace__free(struct pytrace *t);

#endif
