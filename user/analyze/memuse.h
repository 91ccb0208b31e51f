/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the tracer's own memory is for (-v): its resident set beside the
 * parts it can count, the rest named by what it holds; the caller hands
 * in the parts (the tables' readings, the history). And how malloc keeps
 * it: one arena, what it keeps free given back after each report.
 */
#ifndef MEMUSE_H
#define MEMUSE_H

#include <stddef.h>
#include <stdio.h>
#include "probe/snapshot.h"


/* One line on out: the resident set, malloc's share, each part, the history's besides. */
void memuse__say(FILE *out, const struct snapshot_memory *m, size_t history, size_t history_bytes);
/*
 * Before any thread starts, on the loop's thread: one malloc arena for all
 * our threads, so that what the report's worker frees serves the stack
 * reader and back. The calling thread is the one that drops pages.
 */
void memuse__setup(void);
/*
 * After a report, on the loop's thread while no other thread maps or
 * unmaps a file (no report's job runs): the pages malloc keeps free go back
 * to the system, and those of the files only read leave our resident set
 * (-v: out says how many).
 */
void memuse__give_back(FILE *out);
/*
 * The pages of the files we only read (mapped read-only, of no object
 * loaded into us) out of our resident set: read again, they come back
 * from the page cache. Bytes of the mappings dropped. Only on the thread
 * of memuse__setup (0 elsewhere): what it drops is what /proc/self/maps
 * said a moment before, and a file unmapped meanwhile by another thread
 * may have left its addresses to a block of ours (memuse.c).
 */
size_t memuse__drop_read_pages(void);

#endif
