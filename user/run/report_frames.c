// SPDX-License-Identifier: GPL-2.0
/*
 * Which stacks of a report get their frames (reports.c): a report that
 * writes every stack resolves every frame, ten million at 210,000 torch
 * stacks, each distinct one kept once (model/frame_table.h).
 */
#include <errno.h>
#include <stdlib.h>
#include "analyze/insight.h"
#include "cli/opts.h"
#include "report/report_text.h"
#include "report/writers.h"
#include "report_frames.h"

bool report_frames__all(const struct tracer *tr, const struct report_job *job)
{
	const struct opts *o = tr->opts;

	return !job->text || o->snapshot_dir ||
	       (job->final && writers__need(o->outputs, WRITER_ALL |
					     (o->all_stacks ? WRITER_KEPT : 0)));
}

int report_frames__resolve(struct tracer *tr, const struct report_job *job,
			   const struct report_meta *meta, const struct snapshot *snap,
			   const struct aggregate *agg, struct report *r)
{
	bool files = job->final && writers__need(tr->opts->outputs, WRITER_KEPT);
	bool *want = NULL;
	int err;

	if (!report_frames__all(tr, job)) {
		want = calloc(r->nr_stacks ?: 1, sizeof(*want));
		if (!want)
			return -ENOMEM;
		report_text__shown(r, want);
		for (size_t i = 0; files && i < r->nr_stacks; i++)
			want[i] |= !r->stacks[i].left_out;
	}
	/* The slope and R² of the flat stacks written, left unfitted (reports.c's analyze()). */
	insight__fit(tr->ins, snap, agg, r, want);
	err = report_build__symbolize(r, agg, tr->sym, tr->mods, meta, want);
	free(want);
	return err;
}
