/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The --html page's flame graphs (html_flame.c): the report's stacks merged
 * into one tree from the root, pruned to what can be seen. Pure.
 */
#ifndef HTML_FLAME_H
#define HTML_FLAME_H

#include <stdio.h>
#include "html_pool.h"
#include "model/report.h"

/*
 * "flame": {"outstanding": [...], "allocated": [...], ...}: each tree in
 * preorder, five numbers a node: depth, frame index (-1: none), name index
 * (-1: the frame's), bytes, allocations; siblings by bytes descending.
 * 0 or -ENOMEM.
 */
int html_flame__write(const struct report *r, struct html_pool *p, FILE *f);

#endif
