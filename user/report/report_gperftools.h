/* SPDX-License-Identifier: GPL-2.0 */
/* --pprof-format gperftools: its legacy text heap profile. Writers: 0 or -errno (from the FILE's error state). */
#ifndef REPORT_GPERFTOOLS_H
#define REPORT_GPERFTOOLS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "model/report.h"

int report_gperftools__write(const struct report *r, FILE *f);

#endif
