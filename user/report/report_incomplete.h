/* SPDX-License-Identifier: GPL-2.0 */
/* Drops: the lines that say the figures are incomplete (none when they are
 * not); and, within a verdict's sentence, the untracked allocations' growth. */
#ifndef REPORT_INCOMPLETE_H
#define REPORT_INCOMPLETE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "model/report.h"

void report_incomplete__text(const struct report *r, FILE *f);
void report_incomplete__untracked_growth(const struct report_memory *m, FILE *f);
/*
 * Sampling, when no leak was named: the least growth a site can be told
 * from the noise of its estimate, so that "no leak" is read as "none that
 * big" (none in exact mode, or after a leak verdict).
 */
void report_incomplete__sampling(const struct report *r, FILE *f);
/* That growth in bytes (--sample) or blocks (-s): REPORT_Z95^2 times a sampled block's weight. */
double report_incomplete__least_growth(const struct report_sampling *s);

#endif
