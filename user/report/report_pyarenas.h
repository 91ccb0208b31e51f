/* SPDX-License-Identifier: GPL-2.0 */
/* pymalloc's arenas: a line on them; the verdict's reason; JSON or null. */
#ifndef REPORT_PYARENAS_H
#define REPORT_PYARENAS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "model/report.h"

void report_text__pyarenas(const struct report_pyarenas *a, FILE *f);
void report_text__pymalloc_verdict(const struct report_pyarenas *a, FILE *f);
void report_json__pyarenas(const struct report_pyarenas *a, FILE *f);

#endif
