/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The output files, one row each: adding a format is a writer of its own
 * in report/ and a row here (and its option in --help, docs/OPTIONS.md and
 * the manual page). The rows are read by opts.c (the options), main.c
 * (the files checked before tracing), reports.c (what a report must carry,
 * the files written at the end) and snapshot_dir.c.
 *
 * Columns:
 *   out     the enum's name, after REPORT_OUT_
 *   option  the long option that names its file (--OPTION FILE)
 *   write   its writer (NULL: the heap profile's, by --pprof-format)
 *   needs   what the report must carry for it: WRITER_ALL every stack with
 *           its frames; WRITER_KEPT the stacks the files keep (every one
 *           with --all-stacks); WRITER_MAPS the code mappings; WRITER_FREED
 *           the stacks with nothing outstanding (allocated totals)
 *   when    WRITER_FINAL: written at the end; WRITER_SNAPSHOT: and into
 *           each --snapshot-dir snapshot; WRITER_SNAPSHOT_HTML: there with
 *           --snapshot-html
 *
 * The order is that of the checks and of the writes.
 */
#ifndef WRITERS_H
#define WRITERS_H

#include <stdbool.h>
#include <stdio.h>

struct report;

/* X(out, option, write, needs, when) */
#define REPORT_WRITERS(X)							\
	X(JSON, "json", report_json__write, WRITER_KEPT, WRITER_FINAL)		\
	X(FOLDED, "folded", report_folded__write, WRITER_KEPT,			\
	  WRITER_FINAL | WRITER_SNAPSHOT)					\
	X(PPROF, "pprof", NULL, WRITER_ALL | WRITER_MAPS | WRITER_FREED,	\
	  WRITER_FINAL | WRITER_SNAPSHOT)					\
	X(FLAMEGRAPH, "flamegraph", report_svg__write, WRITER_ALL, WRITER_FINAL) \
	X(HTML, "html", report_html__write, WRITER_ALL | WRITER_FREED,		\
	  WRITER_FINAL | WRITER_SNAPSHOT_HTML)					\
	X(TIMELINE, "timeline", report_timeline__csv, 0, WRITER_FINAL)	\
	X(TIMELINE_SVG, "timeline-svg", report_timeline__svg, 0, WRITER_FINAL)

#define WRITERS_ENUM(out, ...) REPORT_OUT_##out,
enum report_output { REPORT_WRITERS(WRITERS_ENUM) REPORT_OUT__COUNT };
#undef WRITERS_ENUM

enum writer_needs {
	WRITER_ALL = 1,
	WRITER_KEPT = 2,
	WRITER_MAPS = 4,
	WRITER_FREED = 8,
};

enum writer_when {
	WRITER_FINAL = 1,
	WRITER_SNAPSHOT = 2,
	WRITER_SNAPSHOT_HTML = 4,
};

typedef int (*writer_fn)(const struct report *r, FILE *f);

struct writer {
	const char *option;	/* "json" */
	writer_fn write;
	unsigned needs;		/* enum writer_needs */
	unsigned when;		/* enum writer_when */
};

extern const struct writer writers[REPORT_OUT__COUNT];

/* The heap profile's writer and its extension in --snapshot-dir, by --pprof-format. */
writer_fn writers__profile(bool gperftools);
const char *writers__profile_ext(bool gperftools);
/* out's writer: its row's, or the heap profile's. */
writer_fn writers__of(enum report_output out, bool gperftools);
/* Do any of the files named in paths (one per row, NULL: not asked) need what needs says? */
bool writers__need(const char *const paths[REPORT_OUT__COUNT], unsigned needs);

#endif
