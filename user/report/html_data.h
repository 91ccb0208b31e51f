/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The --html page's data (html_data.c): the report's figures, sites, the
 * stacks the JSON keeps of each, processes and reachability, as the keys
 * of one JSON object the page's script reads. Pure.
 */
#ifndef HTML_DATA_H
#define HTML_DATA_H

#include <stdio.h>
#include "html_pool.h"
#include "model/report.h"

/* Keys and values, no braces; strings and frames through p. 0 or -ENOMEM. */
int html_data__write(const struct report *r, struct html_pool *p, FILE *f);

#endif
