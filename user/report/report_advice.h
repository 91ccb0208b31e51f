/* SPDX-License-Identifier: GPL-2.0 */
/* Retained memory, per r->allocator: where it keeps what was freed, and the
 * knobs that give it back; whole lines. */
#ifndef REPORT_ADVICE_H
#define REPORT_ADVICE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "model/report.h"

void report_advice__retained_where(const struct report *r, FILE *f);
void report_advice__text(const struct report *r, FILE *f);

#endif
