/* SPDX-License-Identifier: GPL-2.0 */
/* pymalloc's arenas: a line on them; the verdict's reason; JSON or null. */
#ifndef REPORT_PYARENAS_H
#define REPORT_PYARENAS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "model/report.h"

void report_pyarenas__text(const struct report_pyarenas *a, FILE *f);
void report_pyarenas__verdict(const struct report_pyarenas *a, FILE *f);
void report_pyarenas__json(const struct report_pyarenas *a, FILE *f);

#endif
