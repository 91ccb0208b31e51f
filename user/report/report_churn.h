/* SPDX-License-Identifier: GPL-2.0 */
/* The churn and the peak in the text report, after its stacks. */
#ifndef REPORT_CHURN_H
#define REPORT_CHURN_H

#include <stdio.h>
#include "model/report.h"

void report_churn__print(const struct report *r, FILE *f);

#endif
