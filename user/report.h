/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The report data model: what every report_*.c writer takes (const) and
 * writes to a FILE *. Built by report__build from a snapshot, owned here.
 */
#ifndef REPORT_H
#define REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/types.h>
#include "memleak.h"

struct report_frame {
	uint64_t address;	/* as captured: a return address for all but frames[0]'s origin */
	char *function;		/* demangled; NULL when unknown */
	char *module;		/* object path; NULL when the address is in no known module */
	uint64_t module_offset;	/* address - module load bias, for module+0xoffset */
	char *file;		/* source file; NULL without line info */
	int line;		/* 0 when unknown */
	bool inlined;		/* an inlined call inside the next frame's function */
};

struct report_stack {
	uint32_t api;		/* enum memleak_api */
	uint64_t bytes;		/* outstanding */
	uint64_t allocs;	/* outstanding */
	uint64_t total_bytes;	/* allocated since tracing began, freed or not */
	uint64_t total_allocs;
	struct report_frame *frames;	/* innermost first */
	size_t nr_frames;
	bool truncated;		/* deeper than MEMLEAK_MAX_STACK_DEPTH */
	bool no_stack;		/* the stack could not be captured */
};

struct report_totals {
	uint64_t outstanding_bytes;
	uint64_t outstanding_allocs;
	uint64_t allocs;	/* tracked allocations since tracing began */
	uint64_t frees;		/* of those, freed (realloc counts as free + alloc) */
	uint64_t counters[CNT__COUNT];
};

struct maps;

struct report {
	int pid;
	const char *command;	/* command line (-c) or /proc/PID/cmdline (-p); may be NULL */
	double duration_s;	/* since tracing began */
	bool final;
	uint64_t older_ms;	/* only allocations older than this are outstanding (0: all) */
	size_t top;		/* the text report shows this many stacks */
	struct report_totals totals;
	struct report_stack *stacks;	/* outstanding only, bytes descending */
	size_t nr_stacks;
	/* For some writers only; borrowed (the caller frees them after the report), may be NULL. */
	const struct maps *maps;	/* the target's code mappings: pprof's MAPPED_LIBRARIES */
	const struct report *freed;	/* stacks with nothing outstanding: pprof's alloc totals */
	bool folded_allocs;	/* --folded-weight allocs: folded lines count blocks, not bytes */
};

/* "malloc", "new[]", ...; "?" for an unknown value. */
const char *report__api_name(uint32_t api);
/* Option that fixes a drop counter ("--max-allocs"), or NULL. */
const char *report__counter_fix(enum memleak_counter c);
/* JSON key of a drop counter shown in totals.dropped, or NULL when not a drop. */
const char *report__counter_name(enum memleak_counter c);
/* "1.5 MiB" style, into buf. */
const char *report__human_size(uint64_t bytes, char *buf, size_t len);
void report__free(struct report *r);

/* Writers: 0 or -errno (from the FILE's error state). */
int report_text__write(const struct report *r, FILE *f);
int report_json__write(const struct report *r, FILE *f);
int report_folded__write(const struct report *r, FILE *f);
int report_pprof__write(const struct report *r, FILE *f);
int report_svg__write(const struct report *r, FILE *f);

#endif
