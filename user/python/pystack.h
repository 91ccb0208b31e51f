/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A stack with Python frames, as the report shows it: the Python functions
 * in place of the interpreter's evaluation loops that ran them (pure).
 */
#ifndef PYSTACK_H
#define PYSTACK_H

#include <linux/types.h>
#include "memleak.h"
#include "model/report.h"
#include "pycode.h"

/*
 * Merge the Python frames py (innermost first, as BPF recorded them) into
 * s's symbolized native frames. Every native frame of the evaluation loop
 * (_PyEval_EvalFrameDefault) stands for one run of it, and py->entries says
 * where each run's frames end: the innermost run replaces the innermost
 * loop frame, and so on outwards. Runs left over (native frames lost by the
 * unwinder) go after the outermost loop frame, or after all native frames
 * when none was found. Python frames beyond MEMLEAK_PY_MAX_FRAMES make the
 * stack truncated. A frame still being set up is left out: its caller's
 * line is the call. pc names the code objects; one it never read
 * shows by address only.
 *
 * Outside the innermost Python frame, the interpreter's own native frames
 * (those of the module interp: calls, vectorcalls, the startup) are only
 * how one Python frame called the next, and go; frames of other modules (a
 * C extension calling back into Python, an embedding program) stay. Inside
 * it, every native frame stays: that is how the allocation was made.
 * 0 or -ENOMEM.
 */
int pystack__merge(struct report_stack *s, const struct py_stack *py, const struct pycode *pc,
		   const char *interp);

/*
 * Python frame i of py (0: the innermost) as pystack__merge shows it, into
 * *f: 0, or 1 when the merge leaves it out (a frame still being set up).
 * Its names, as those of the frames pystack__merge adds, are pc's,
 * borrowed (report_frame.borrowed): valid while pc keeps its id
 * (pycode__id), which it does while a report is built and written.
 */
int pystack__frame(const struct py_stack *py, uint32_t i, const struct pycode *pc,
		   struct report_frame *f);

/*
 * Is s a pymalloc arena stack: mmap'd by the interpreter itself (interp),
 * in blocks of exactly its arena size, 1 MiB on 64-bit builds (3.10 on)?
 */
bool pystack__is_arena(const struct report_stack *s, const char *interp);
/* The same told by its figures alone, before its frames are named. */
bool pystack__arena_sized(const struct report_stack *s);

#endif
