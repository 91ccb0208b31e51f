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

#endif
