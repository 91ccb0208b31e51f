/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A sample of the peak (a scan of every site's outstanding figures, for
 * the stacks that hold the heap's peak), within a budget of CPU.
 */
#ifndef REPORTS_PEAK_H
#define REPORTS_PEAK_H

#include <time.h>

struct tracer;

/* The heap is past its sampled peak (at, CLOCK_MONOTONIC): a sample, if the budget allows. */
void reports_peak__sample(struct tracer *tr, const struct timespec *at);

#endif
