/* SPDX-License-Identifier: GPL-2.0 */
/* --json. Writers: 0 or -errno (from the FILE's error state). */
#ifndef REPORT_JSON_H
#define REPORT_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "model/report.h"

int report_json__write(const struct report *r, FILE *f);

#endif
