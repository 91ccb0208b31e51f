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
 * A stack's site frame is its innermost frame that is the program's own:
 *  - in a stack with Python frames, its innermost Python frame (the line of
 *    Python that allocated, be it in the program's files or a package's),
 *    leaving out importlib's bootstrap (<frozen importlib._bootstrap> and
 *    _bootstrap_external), which is only how an import ran: the line that
 *    imported is the site;
 *  - in a native stack, its innermost frame in an object of the program's
 *    own (sites__own_module): not a library, not the interpreter;
 *  - when it has none of those, its innermost frame (frames[0]: the call of
 *    the allocation function), so that a library's own allocations (a
 *    constructor run by dlopen) are still told apart by where they are made.
 * A stack that could not be captured has no site frame: all of those are
 * one site. Two frames are one site when they name the same module,
 * function, file and line; without a line, the same instruction.
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

/* Is a Python frame of this source file the program's own (NULL: unknown code, which is)? */
bool sites__own_python_file(const char *file);

/*
 * Is f the program's own code, for a stack with Python frames (python) or
 * without? See above: with them only Python frames count.
 */
bool sites__own_frame(const struct report_frame *f, bool python, const char *interp);

/*
 * Group r's stacks (bytes descending, each with its site_frame set, or
 * NULL) into r->sites, biggest first; r->stacks[i].site says which. Each
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
