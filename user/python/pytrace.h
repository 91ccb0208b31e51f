/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Python side of a trace: find the interpreter when the allocator is
 * attached, tell BPF how to walk its frames, read its code objects while
 * the target lives (at every report, and when it stops at its exit), and
 * hand the report what it needs to show Python frames.
 */
#ifndef PYTRACE_H
#define PYTRACE_H

#include <stdbool.h>
#include <sys/types.h>
#include "allocator/allocator.h"
#include "opts.h"
#include "probe/probes.h"
#include "util/procmaps.h"
#include "pycode.h"
#include "model/report.h"
#include "probe/snapshot.h"

struct pytrace;

/*
 * -c with --python-malloc: the command's Python uses that allocator
 * (PYTHONMALLOC, set here for the command to inherit). NULL on ENOMEM.
 */
struct pytrace *pytrace__new(const struct opts *o);
/*
 * The target's objects as the allocator is attached: if one of them is a
 * Python interpreter that memleakbpf can walk, make BPF record its frames
 * and stop the target at its exit. Once per image. 0 or -ENOMEM: an
 * interpreter that cannot be followed keeps native stacks (one line says why).
 */
int pytrace__attach(struct pytrace *t, struct probes *p, pid_t pid, const struct maps *maps,
		    const struct lookup_order *lo);
/* The target exec'd: the new image is looked at afresh. */
void pytrace__forget(struct pytrace *t, struct probes *p);
/* Read the code objects of snap's Python frames not read yet, while the target lives. */
void pytrace__refresh(struct pytrace *t, const struct snapshot *snap);
/*
 * EVENT_PY_EXIT: pid is stopping at Py_FinalizeEx or _exit (stopped); read
 * every code object its stacks name, then let it go on. EVENT_PY_EXITING
 * (-p, not stopped): read what can be read before it is gone.
 */
void pytrace__on_exit(struct pytrace *t, struct probes *p, pid_t pid, bool stopped);
/* For report_meta: the code objects read, and the interpreter; NULL when not Python. */
const struct pycode *pytrace__code(const struct pytrace *t);
const struct report_python *pytrace__report(const struct pytrace *t);
void pytrace__free(struct pytrace *t);

#endif
