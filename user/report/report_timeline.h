/* SPDX-License-Identifier: GPL-2.0 */
/* --timeline (CSV) and --timeline-svg, from r->analysis. Writers: 0 or -errno (from the FILE's error state). */
#ifndef REPORT_TIMELINE_H
#define REPORT_TIMELINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "model/report.h"

int report_timeline__csv(const struct report *r, FILE *f);
int report_timeline__svg(const struct report *r, FILE *f);

#endif
