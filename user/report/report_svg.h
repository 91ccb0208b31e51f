/* SPDX-License-Identifier: GPL-2.0 */
/* --flamegraph: an SVG flame graph. Writers: 0 or -errno (from the FILE's error state). */
#ifndef REPORT_SVG_H
#define REPORT_SVG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "model/report.h"

int report_svg__write(const struct report *r, FILE *f);

#endif
