/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tables of a pprof profile (report_pprof.c): its strings, functions
 * and locations, each entered once however many stacks share it, in the
 * order first seen. String 0 is "", as profile.proto requires; function
 * and location ids start at 1 (0 means none). Errors are sticky (err):
 * after a failed allocation every call returns 0 and does nothing.
 */
#ifndef PPROF_TABLES_H
#define PPROF_TABLES_H

#include <stddef.h>
#include <stdint.h>
#include "util/idmap.h"

struct pprof_function {
	uint64_t name, system_name, filename;	/* indices into strings */
};

struct pprof_line {
	uint64_t function;	/* id */
	int64_t line;		/* 0: unknown */
};

struct pprof_location {
	uint64_t mapping;	/* id; 0: none */
	uint64_t address;
	size_t line, nr_lines;	/* its lines[], innermost (the inlined call) first */
};

struct pprof_tables {
	char **strings;
	size_t nr_strings, cap_strings;
	struct pprof_function *functions;	/* function id i + 1 */
	size_t nr_functions, cap_functions;
	struct pprof_location *locations;	/* location id i + 1 */
	size_t nr_locations, cap_locations;
	struct pprof_line *lines;
	size_t nr_lines, cap_lines;
	struct idmap string_ix, function_ix, location_ix;	/* content hash -> index */
	int err;	/* 0 or -ENOMEM */
};

/* Empty tables but for string 0. 0 or -ENOMEM. */
int pprof_tables__init(struct pprof_tables *t);
/* s's index (s copied the first time, invalid UTF-8 made U+FFFD). */
uint64_t pprof_tables__string(struct pprof_tables *t, const char *s);
/* The id of the function of these string indices. */
uint64_t pprof_tables__function(struct pprof_tables *t, const struct pprof_function *fn);
/* The id of the location at address in mapping with these lines (copied). */
uint64_t pprof_tables__location(struct pprof_tables *t, uint64_t mapping, uint64_t address,
				const struct pprof_line *lines, size_t nr_lines);
void pprof_tables__free(struct pprof_tables *t);

#endif
