/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The copies of Python code objects BPF sends come on the loop's thread;
 * they go to pytrace when no report is reading its code, and wait
 * otherwise, to be handed over in order by the report itself before it
 * reads the target (the copies of the stacks it reads come while it reads
 * the tables; the code objects of a module's body are freed by then), or
 * once it is done (pyrelay__flush). The relay sits between pytrace and the
 * probes' own operations: every other operation passes straight through.
 */
#ifndef PYRELAY_H
#define PYRELAY_H

#include <pthread.h>
#include <stddef.h>
#include "pytrace.h"

struct worker;

struct pyrelay {
	struct pytrace_ops inner;	/* the probes' own */
	struct worker *const *worker;	/* the reports' (may be set after the relay) */
	void (*fn)(void *arg, const struct py_code *c);	/* pytrace's */
	void *arg;
	pthread_mutex_t lock;	/* kept, handed over by the loop or by the report */
	struct py_code *kept;	/* arrived while a report read the code, in order */
	size_t nr_kept, cap_kept;
};

/* *ops become the relay's, which calls the ones they were; *worker says when a report runs. */
void pyrelay__wrap(struct pyrelay *r, struct worker *const *worker, struct pytrace_ops *ops);
/*
 * The copies kept while a report had the code, to pytrace: on the loop's
 * thread once none has it, or on the report's, which has it.
 */
void pyrelay__flush(struct pyrelay *r);
void pyrelay__free(struct pyrelay *r);

#endif
