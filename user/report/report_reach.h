/* SPDX-License-Identifier: GPL-2.0 */
/* Reachability: the totals after the headline, a stack's line, JSON fields. */
#ifndef REPORT_REACH_H
#define REPORT_REACH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "model/report.h"

void report_reach__text_head(const struct report *r, FILE *f);
void report_reach__text_stack(const struct report_stack *s, FILE *f);
void report_reach__json(const struct report *r, FILE *f);
void report_reach__json_stack(const struct report_stack *s, FILE *f);

#endif
