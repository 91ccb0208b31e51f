/* SPDX-License-Identifier: GPL-2.0 */
/* The analysis in the text report: growth and the verdict (churn and peak: report_churn.h). */
#ifndef REPORT_INSIGHT_H
#define REPORT_INSIGHT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "model/report.h"

/* Which stacks it prints (report_text__shown's part). */
void report_insight__shown(const struct report *r, bool *shown);
void report_insight__growth(const struct report *r, const struct report_stack *s, FILE *f);
/* " (the 2nd under Growing)" for a growing site, nothing for another. */
void report_insight__site_rank(const struct report_site *site, FILE *f);
void report_insight__head(const struct report *r, FILE *f);
/* The target's memory and the verdict, in words (of report_insight__head). */
void report_insight__verdict(const struct report *r, FILE *f);

#endif
