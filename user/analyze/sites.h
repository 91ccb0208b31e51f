/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sites: a report's stacks grouped by the innermost frame of the program's
 * own code, the line that allocated (pure).
 *
 * One leak is often reached through many stacks that differ only in frames
 * the program does not own: the native frames of a library under one
 * Python line (a PyTorch forward pass), the allocator's or the C library's
 * paths, or the callers. Grouped by that frame they are one site, whose
 * figures are the exact sums of its stacks', and the reports lead with it.
 *
 * A stack's site frame is its innermost frame of the user's own code:
 *  - in a stack with Python frames, its innermost Python frame in a file of
 *    the program's: not the standard library (a file under a library
 *    directory, .../lib/pythonX.Y/, or frozen: "<frozen os>"), not a
 *    package (site-packages, dist-packages: PyTorch's own Python). The
 *    importlib bootstrap among them is only how an import ran: the line
 *    that imported is the site. A stack with importlib's frames anywhere
 *    was allocated by an import (start-up), and its site says so. Code the
 *    interpreter no longer knows (a module's body, freed once it ran) is
 *    no user's line;
 *  - in a native stack, its innermost frame, inlined ones included, in an
 *    object of the program's own (sites__own_module: not a library, not
 *    the interpreter) whose source is not a system or compiler header
 *    (sites__system_source) and that is not the runtime's nor a standard
 *    container's code instantiated there (analyze/runtime_frames.h: a
 *    stripped program's std::map insert, named without a file): a
 *    std::vector's storage is sited at the line that called the container,
 *    not at new_allocator.h;
 *    a stripped program's own frame, which has no name, gives way to the
 *    innermost named frame inside it that is not the runtime's nor a
 *    container's (analyze/runtime_frames.h; symbolize/report_sites.c);
 *  - with --own, a frame is the user's when its source file (its object,
 *    for a native frame whose file is relative or unknown) is under one of
 *    the --own paths or matches one of them as a glob; the rules above are
 *    then not used;
 *  - when it has none of those, as before the rules: its innermost Python
 *    frame outside importlib's bootstrap, or its innermost named native
 *    frame that is not the runtime's nor a container's within a few
 *    addresses (fst::GenericRegister<...>::SetEntry, not the std::map
 *    insert under it), else the call of the allocation function
 *    (frames[0]), so that a library's own allocations (a constructor run by
 *    dlopen) are still told apart by where they are made.
 * A stack that could not be captured has no site frame: all of those are
 * one site. Two frames are one site when they name the same module,
 * function, file and line; without a line, the same instruction.
 *
 * -k: a kernel stack's site frame is its innermost frame outside the
 * kernel's allocators (analyze/kernel_sites.h), and one kernel function is
 * one site (kallsyms gives no lines).
 */
#ifndef SITES_H
#define SITES_H

#include <stdbool.h>
#include <stddef.h>
#include "model/report.h"

/*
 * What the JSON and folded files hold unless --all-stacks: the stacks of
 * every growing site and of the SITES_FILE_SITES biggest, at most
 * SITES_FILE_STACKS of each (its growing stacks first). Enough to read
 * every site and the paths that lead to it in a few MB, where every stack
 * of a PyTorch job took hundreds.
 */
#define SITES_FILE_SITES 50
#define SITES_FILE_STACKS 5

/* --own PATH...: the user's code, by directory or glob (fnmatch, '*' crossing '/'). */
struct sites_own {
	const char *const *paths;
	size_t nr;
	const char *cwd;	/* a relative path is also matched under it; may be NULL */
	/*
	 * --alloc-fn: the program's own allocation functions (redis's
	 * zmalloc*), by name or glob (fnmatch) on the demangled name without
	 * its arguments: never the user's frame, whatever the rules above say,
	 * so a block is sited at the caller that asked for it.
	 */
	const char *const *alloc_fns;
	size_t nr_alloc_fns;
};

/*
 * Is code in module (a path as the target sees it) the program's own? Not
 * when the address is in no module (NULL) or a pseudo-mapping ("[vdso]"),
 * nor in interp (the Python interpreter's object, NULL when none). An
 * executable is the program (wherever it is installed), and so is a JIT's
 * perf map; a shared object is the program's unless it is in a library
 * directory (/lib, /lib64, /usr/lib, /usr/lib64, /usr/local/lib and their
 * 32-bit kin, Debian's multiarch folders under them) or a Python package
 * directory (site-packages, dist-packages: PyTorch's libraries in a venv).
 * A static binary's C library is inside the program, so it counts as own.
 */
bool sites__own_module(const char *module, const char *interp);

/*
 * Is a native frame's source file a system or compiler header (NULL,
 * relative: no)? /usr/include, /usr/local/include, and a toolchain's
 * include/c++, lib/gcc and lib/clang wherever it is installed.
 */
bool sites__system_source(const char *file);

/* Is path under one of own's directories, or matched by one of its globs? */
bool sites__own_matches(const struct sites_own *own, const char *path);

/* Is native frame f the user's code (own NULL or empty: by the default rules)? */
bool sites__own_native(const struct report_frame *f, const struct sites_own *own,
		       const char *interp);

/* Is a Python frame of this source file the user's (NULL: unknown code, which is)? */
bool sites__own_python_file(const char *file, const struct sites_own *own);

/*
 * Is f the user's code, in a stack with Python frames (python: only they
 * count) or without?
 */
bool sites__own_frame(const struct report_frame *f, bool python, const struct sites_own *own,
		      const char *interp);

/* Is file importlib's frozen bootstrap, through which every import runs? */
bool sites__import_file(const char *file);

/*
 * Each stack's site before sites__group: group[i] is the first stack of
 * r->stacks whose site frame is stack i's (i itself when it is the first).
 * 0 or -ENOMEM.
 */
int sites__stack_groups(const struct report *r, size_t *group);
/* A site frame's key: equal frames (one site) have equal keys; NULL too has one. */
uint64_t sites__key(const struct report_frame *f);

/*
 * Group r's stacks (bytes descending, each with its site_frame set, or
 * NULL) into r->sites, biggest first: those made while the program ran,
 * then those every stack of which was made before main by an initializer
 * (report_site.preinit, start-up), then those every stack of which is the
 * runtime's own block (analyze/runtime_blocks.h); r->stacks[i].site says which. Each
 * site lists its growing stacks first, then the others, each by bytes. The
 * growing sites are ranked by their most leak-like stack's score, scores
 * equal to two decimals a tie broken by the faster growth (one leak's
 * stacks all score alike). The stacks beyond file_stacks of a site, and all those of a site
 * that neither grows nor is among the file_sites biggest, are left_out of
 * the files (SIZE_MAX for both keeps every one). 0 or -ENOMEM.
 */
int sites__group(struct report *r, size_t file_sites, size_t file_stacks);

/* Figures of what the files leave out: stacks, and their bytes and blocks. */
struct sites_left_out {
	size_t stacks;
	uint64_t bytes, allocs;
};

/* What r's files leave out, in all (site NULL) or of one site. */
struct sites_left_out sites__left_out(const struct report *r, const struct report_site *site);

#endif
