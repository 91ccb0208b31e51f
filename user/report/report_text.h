/* SPDX-License-Identifier: GPL-2.0 */
/* The text report, printed at every interval and at the end. Writers: 0 or -errno (from the FILE's error state). */
#ifndef REPORT_TEXT_H
#define REPORT_TEXT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "model/report.h"

int report_text__write(const struct report *r, FILE *f);
/*
 * Which of r->stacks the text report prints with their frames: shown[i] set
 * for each (shown holds r->nr_stacks, cleared by the caller), so that only
 * those need symbolizing (report_build__symbolize). After the analysis is filled
 * in: its growing stacks are printed too.
 */
void report_text__shown(const struct report *r, bool *shown);
/* The text report's head: the header, totals, reachability, Python, the verdict (--html). */
void report_text__summary(const struct report *r, FILE *f);

#endif
