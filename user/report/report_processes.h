/* SPDX-License-Identifier: GPL-2.0 */
/* --follow: each process's figures and top stacks, in the text and JSON reports. */
#ifndef REPORT_PROCESSES_H
#define REPORT_PROCESSES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "model/report.h"

void report_processes__text(const struct report *r, FILE *f);
/* " in 3 processes" when a site's stacks are of more than one. */
void report_processes__site(const struct report *r, const struct report_site *site, FILE *f);
/* JSON processes[]. */
void report_processes__json(const struct report *r, FILE *f);

#endif
