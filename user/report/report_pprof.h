/* SPDX-License-Identifier: GPL-2.0 */
/* --pprof: pprof's profile.proto, gzipped. Writers: 0 or -errno (from the FILE's error state). */
#ifndef REPORT_PPROF_H
#define REPORT_PPROF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "model/report.h"

int report_pprof__write(const struct report *r, FILE *f);

#endif
