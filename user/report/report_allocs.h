/* SPDX-License-Identifier: GPL-2.0 */
/* -a: a stack's live blocks, its lines under the frames and its JSON fields. */
#ifndef REPORT_ALLOCS_H
#define REPORT_ALLOCS_H

#include <stdio.h>
#include "model/report.h"

void report_allocs__text(const struct report *r, const struct report_stack *s, FILE *f);
void report_allocs__json(const struct report *r, const struct report_stack *s, FILE *f);

#endif
