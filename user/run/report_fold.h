/* SPDX-License-Identifier: GPL-2.0 */
/*
 * After a report, the retired sites it took in that no later report needs
 * by themselves fold into the totals (report_fold.c): the tracer's memory
 * follows what is live, not every stack the run ever had.
 */
#ifndef REPORT_FOLD_H
#define REPORT_FOLD_H

#include "probe/snapshot.h"
#include "tracer.h"

/*
 * snap's report, its history merged, is about to be built: fold what it
 * allows (the final report's too: what folds holds nothing, and no output
 * that lists freed stacks is asked for).
 */
void report_fold__run(struct tracer *tr, const struct snapshot *snap);
/*
 * Before a report's reading: a sweep, waited for, so that the sites freed
 * since the last one fold at this report.
 */
void report_fold__sweep_first(struct tracer *tr);
/*
 * Between reports (a job on the reports' thread): once the retired store
 * has grown past a bound since the last reading, fold what a reading would
 * fold unread (snapshot_kept_fold__unread).
 */
void report_fold__loop(struct tracer *tr);
/*
 * Before a carried reading: what it may fold unread (into *rule), or NULL
 * when nothing may fold.
 */
struct snap_fold;
const struct snap_fold *report_fold__rule(struct tracer *tr, struct snap_fold *rule);

#endif
