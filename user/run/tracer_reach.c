// SPDX-License-Identifier: GPL-2.0
/*
 * Reachability scans of one run (tracer.h): at the target's exit (-c
 * --reach), on SIGUSR2, and at the end of -p, each with the target held.
 */
#include <stdio.h>
#include <time.h>
#include "analyze/reach_run.h"
#include "analyze/reach_sum.h"
#include "cli/opts.h"
#include "probe/probes.h"
#include "probe/probes_reach.h"
#include "target/target.h"
#include "tracer.h"
#include "tracer_reach.h"

static int live_blocks(void *ctx, struct live_block **out, size_t *nr)
{
	return probes_reach__blocks(ctx, out, nr);
}

/* Scan pid now, held for it (no job runs: the reports borrow tr->reach). */
static void reach_now(struct tracer *tr, pid_t pid, bool final)
{
	struct reach_run_ops ops = { tr->probes, live_blocks, 0, tr->reach ? &tr->reach->head : NULL };
	struct memleak_live live[KIND__COUNT];
	struct reach_sum *s;
	char err[256];

	peak__live(tr->probes, live);
	ops.heap_bytes = live[KIND_HEAP].bytes;
	if (reach_run__scan(pid, &ops, &s, err, sizeof(err))) {
		fprintf(stderr, "memleakbpf: %s: no reachability figures\n", err);
		return;
	}
	s->head.at_exit = final && tr->target->spawned;
	s->head.t_s = tracer__since(&tr->start);
	reach_sum__free(tr->reach);
	tr->reach = s;
	tr->reach_final = final;
	reach_run__say(tr->target->pid, &s->head);
}

void tracer_reach__on_exit_stop(struct tracer *tr, pid_t pid, bool python)
{
	/* Once: Python stops at Py_FinalizeEx and at _exit, and its figures froze at the first. */
	bool scan = tr->opts->reach && !tr->reach_final && pid == tr->target->pid;
	struct timespec t0 = tr->awake;	/* as a stop's: the latest it can have begun */

	if (scan)
		tr->jobs->settle(tr);
	if (scan && !target__wait_stopped(pid, STOP_WAIT_MS))
		reach_now(tr, pid, true);
	if (python)
		return;	/* reports__on_python_exit goes on, and resumes it */
	target__continue(pid);
	holds__add(&tr->holds, tracer__since(&t0) * 1e3, "the reachability scan at _exit");
	clock_gettime(CLOCK_MONOTONIC, &tr->awake);
	if (scan)
		tr->jobs->resume(tr);
}

void tracer_reach__on_signal(struct tracer *tr)
{
	if (!tr->tracing || tr->target->exited || tr->image_gone || tr->reach_final ||
	    target__gone(tr->target)) {
		/* After the scan at exit, the blocks of a Python shutting down are frozen: no other. */
		fprintf(stderr, "memleakbpf: SIGUSR2: %s: no reachability scan\n",
			!tr->tracing ? "not tracing yet" :
			tr->reach_final ? "the target's exit was scanned already" : "the target is gone");
		return;
	}
	tr->jobs->settle(tr);
	reach_now(tr, tr->target->pid, false);
	tr->reach_due = tr->reach != NULL;
	tr->jobs->resume(tr);
}

void tracer_reach__final(struct tracer *tr)
{
	if (!tr->opts->reach || tr->reach_final || !tr->tracing || tr->image_gone ||
	    target__gone(tr->target))
		return;
	reach_now(tr, tr->target->pid, true);
}
