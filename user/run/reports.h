/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reports, and the work on the tables that feeds them, as jobs on a thread
 * of their own (reports.c: who may touch what meanwhile), over the state of
 * the run (tracer.h).
 */
#ifndef REPORTS_H
#define REPORTS_H

#include <stdbool.h>
#include <sys/types.h>
#include "tracer.h"

/* What tracer.c calls them through (tracer.h). */
extern const struct tracer_jobs reports__jobs;

/* A report now, on this thread: the text on stdout; when final, the files the options name. */
int reports__now(struct tracer *tr, bool final);
/* The interval's report: now, or once the job running is done. False: one waits already. */
bool reports__due(struct tracer *tr);
/* SIGUSR1: a snapshot, or without --snapshot-dir a report, now or after the job running. */
void reports__on_snapshot_signal(struct tracer *tr);
/* The insight timer: a sample of the peak (and symbols read ahead), unless a job runs. */
void reports__tick(struct tracer *tr);
/* BPF says the heap's peak rose: a sample of the sites, unless a job runs. */
void reports__sample_peak(struct tracer *tr);
/* The worker's descriptor was readable: take the job's end, start the next one due. */
void reports__job_done(struct tracer *tr);
/* A job that reads the loop's state runs (a report, symbols read ahead): the loop keeps off it. */
bool reports__working(const struct tracer *tr);
/* An exec: cancel the job running and wait for it; resume starts what is due. */
void reports__settle(struct tracer *tr);
void reports__resume(struct tracer *tr);
/*
 * Python is exiting: its code read while the target lives (stopped: -c holds
 * it meanwhile). finalize: at Py_FinalizeEx, where tracing ended.
 */
void reports__on_python_exit(struct tracer *tr, pid_t pid, bool stopped, bool finalize);
/* The end: the job running, and the reports asked for, done. */
void reports__finish(struct tracer *tr);
/* The relay's copies, freed at the end. */
void reports__free(struct tracer *tr);

#endif
