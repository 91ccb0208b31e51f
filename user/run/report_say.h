/* SPDX-License-Identifier: GPL-2.0 */
/* What the report thread says on stderr beside a report (report_say.c). */
#ifndef REPORT_SAY_H
#define REPORT_SAY_H

#include "model/frame_table.h"
#include "model/report.h"
#include "probe/snapshot.h"
#include "tracer.h"

/* The steps of a report whose CPU time -v says (the thread's), in order. */
enum report_step {
	STEP_READING, STEP_AGGREGATE, STEP_HISTORY, STEP_FIGURES, STEP_SITE_FRAMES, STEP_GROWTH,
	STEP_SITES, STEP_FRAMES, STEP_WRITING, STEP__COUNT
};

struct report_steps {
	double ms[STEP__COUNT];	/* the thread's CPU time in each step */
	double at;		/* the thread's CPU time (ms) when the last step ended */
};

/* From now on, the steps' CPU time counted (none so far). */
void report_say__start(struct report_steps *s);
/* The step that just ended: its CPU time, from the end of the one before. */
void report_say__step(struct report_steps *s, enum report_step step);
/* -v: "its CPU by step: reading N ms, ...", after the report's "built in" line. */
void report_say__steps(const struct report_steps *s);
/* Once, when it is much: what exact tracing costs the target, at r's rate. */
void report_say__cost(struct tracer *tr, const struct report *r);
/* -v: what our memory is for, at each report (the peak comes with one). */
void report_say__memory(struct tracer *tr, const struct snapshot *snap);
/*
 * -v: what the frames of the stacks written take (a flame graph's: every
 * stack's), kept once in t (model/frame_table.h); freed: its stacks too.
 */
void report_say__frames(const struct report *r, const struct report *freed,
			const struct frame_table *t);

#endif
