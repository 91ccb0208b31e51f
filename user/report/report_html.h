/* SPDX-License-Identifier: GPL-2.0 */
/* --html: one self-contained page. Writers: 0 or -errno (from the FILE's error state). */
#ifndef REPORT_HTML_H
#define REPORT_HTML_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "model/report.h"

int report_html__write(const struct report *r, FILE *f);

#endif
