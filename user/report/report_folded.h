/* SPDX-License-Identifier: GPL-2.0 */
/* --folded. Writers: 0 or -errno (from the FILE's error state). */
#ifndef REPORT_FOLDED_H
#define REPORT_FOLDED_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "model/report.h"

int report_folded__write(const struct report *r, FILE *f);

#endif
