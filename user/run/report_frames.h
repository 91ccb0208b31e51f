/* SPDX-License-Identifier: GPL-2.0 */
/* Which stacks of a report get their frames, resolved for the writers (report_frames.c). */
#ifndef REPORT_FRAMES_H
#define REPORT_FRAMES_H

#include <stdbool.h>
#include "analyze/aggregate.h"
#include "model/report.h"
#include "probe/snapshot.h"
#include "symbolize/report_build.h"
#include "tracer.h"

/*
 * Whether this report goes where every stack is written: a heap profile (a
 * snapshot's too), a flame graph, or files with --all-stacks.
 */
bool report_frames__all(const struct tracer *tr, const struct report_job *job);
/*
 * The frames of r's stacks that will be written: all of them, or only those
 * the text prints and the files keep (a few of thousands, which spares
 * resolving every frame of every stack); kept in meta's frame table. And
 * the slope of the flat stacks written (insight__fit). 0 or -errno.
 */
int report_frames__resolve(struct tracer *tr, const struct report_job *job,
			   const struct report_meta *meta, const struct snapshot *snap,
			   const struct aggregate *agg, struct report *r);

#endif
