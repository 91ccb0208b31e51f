/* SPDX-License-Identifier: GPL-2.0 */
/* A stack's trend in the text report: its word and its figures (analyze/history.h's fit). */
#ifndef REPORT_TREND_H
#define REPORT_TREND_H

#include <stdio.h>
#include "model/report.h"

/*
 * "growing", "stable", ...: "stable" only for bytes that held what they did
 * since the stack's first interval; bytes that rose after it, not steadily
 * enough to be growing, "rose in steps, not steadily" (or "up and down").
 */
const char *report_trend__word(const struct report_growth *g);

/* Rose after its first interval, not steadily enough to grow (report_trend__word's words). */
bool report_trend__stepped(const struct report_growth *g);

/* "+40.0 KiB/s, grew in 16 of 16 intervals, R² 1.00; oldest block 7.9 s old" */
void report_trend__figures(const struct report_growth *g, FILE *f);

#endif
