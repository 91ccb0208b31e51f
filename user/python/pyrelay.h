/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The copies of Python code objects BPF sends come with the stop events,
 * on the loop's thread; they go to pytrace when no report is reading its
 * code, and wait otherwise, to be handed over in order once the report is
 * done (pyrelay__flush). The relay sits between pytrace and the probes'
 * own operations: every other operation passes straight through.
 */
#ifndef PYRELAY_H
#define PYRELAY_H

#include <stddef.h>
#include "pytrace.h"

struct worker;

struct pyrelay {
	struct pytrace_ops inner;	/* the probes' own */
	struct worker *const *worker;	/* the reports' (may be set after the relay) */
	void (*fn)(void *arg, const struct py_code *c);	/* pytrace's */
	void *arg;
	struct py_code *kept;	/* arrived while a report read the code, in order */
	size_t nr_kept, cap_kept;
};

/* *ops become the relay's, which calls the ones they were; *worker says when a report runs. */
void pyrelay__wrap(struct pyrelay *r, struct worker *const *worker, struct pytrace_ops *ops);
/* The copies kept while a report had the code, to pytrace: none has it now. */
void pyrelay__flush(struct pyrelay *r);
void pyrelay__free(struct pyrelay *r);

#endif
