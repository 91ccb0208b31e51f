// SPDX-License-Identifier: GPL-2.0
/*
 * Reports: snapshot -> aggregate -> analysis -> symbolized report, then the
 * text on stdout and, at the end, every file the options name; numbered
 * snapshots for --snapshot-dir.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "aggregate.h"
#include "insight.h"
#include "modules.h"
#include "opts.h"
#include "outfile.h"
#include "procmaps.h"
#include "pytrace.h"
#include "report_build.h"
#include "snapshot.h"
#include "symbolize.h"
#include "target.h"
#include "tracer.h"

static double since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

static void write_file(struct tracer *tr, const char *path,
		       int (*writer)(const struct report *, FILE *), const struct report *r)
{
	int err;

	if (!path)
		return;
	err = outfile__write(path, writer, r);
	if (err) {
		/* The text report is on stdout already: nothing else is lost. */
		fprintf(stderr, "memleakbpf: cannot write %s: %s (the text report is on standard output)\n",
			path, strerror(-err));
		tr->output_failed = true;
	}
}

/* The text report; a full disk or a closed pipe is said once, not at every report. */
static void write_text(struct tracer *tr, const struct report *r)
{
	int err = report_text__write(r, stdout);

	if (!err && fflush(stdout))
		err = -errno;
	if (err && !tr->output_failed)
		fprintf(stderr, "memleakbpf: cannot write the report to standard output: %s\n",
			strerror(err == -EIO && errno ? errno : -err));
	if (err) {
		tr->output_failed = true;
		clearerr(stdout);
	}
}

/* A report, and what a heap profile of it borrows. */
struct built {
	struct snapshot *snap;
	struct aggregate *agg;
	struct maps *maps;	/* the target's code mappings */
	struct report *freed;	/* sites with nothing outstanding, for the alloc totals */
	struct report *r;
};

/* Whether this report goes where every stack is written: a file or a snapshot. */
static bool all_stacks(const struct tracer *tr, bool final, bool text)
{
	const struct opts *o = tr->opts;

	return !text || o->snapshot_dir ||
	       (final && (o->json_path || o->folded_path || o->pprof_path || o->flamegraph_path));
}

/*
 * The frames of the stacks that will be written: all of them, or only those
 * the text prints (a few of thousands, which spares resolving and copying
 * every frame of every stack).
 */
static int symbolize(struct tracer *tr, bool all, const struct report_meta *meta,
		     struct built *b)
{
	bool *want = NULL;
	int err;

	if (!all) {
		want = calloc(b->r->nr_stacks ?: 1, sizeof(*want));
		if (!want)
			return -ENOMEM;
		report_text__shown(b->r, want);
	}
	err = report__symbolize(b->r, b->agg, tr->sym, tr->mods, meta, want);
	free(want);
	return err;
}

static int build(struct tracer *tr, bool final, bool text, struct built *b)
{
	struct report_meta meta = {
		.pid = tr->target->pid,
		.command = tr->target->command,
		.duration_s = since(&tr->start),
		.final = final,
		.older_ms = tr->opts->older_ms,
		.top = tr->opts->top,
		.folded_allocs = tr->opts->folded_allocs,
		.python = pytrace__report(tr->py),
		.pycode = pytrace__code(tr->py),
	};
	bool pprof = tr->opts->snapshot_dir || (final && tr->opts->pprof_path);
	int err;

	tracer__refresh_modules(tr);
	err = snapshot__collect(tr->probes, tr->opts->older_ms * 1000000ull, &b->snap);
	if (!err && final)
		err = snapshot__ages(tr->probes, b->snap);
	if (!err)
		pytrace__refresh(tr->py, b->snap);	/* while the target lives */
	if (!err)
		err = aggregate__build(b->snap, &b->agg);
	if (!err)
		err = insight__add(tr->ins, tr->target->exited ? 0 : tr->target->pid, b->snap, b->agg);
	if (!err && pprof)
		err = modules__code_maps(tr->mods, &b->maps);
	if (!err && pprof)
		err = report__build_freed(b->snap, tr->sym, tr->mods, &meta, &b->freed);
	meta.maps = b->maps;
	meta.freed = b->freed;
	if (!err)
		err = report__build_figures(b->agg, tr->mods, &meta, &b->r);
	/* Before the frames: the text prints the growing stacks too. */
	if (!err)
		err = insight__fill(tr->ins, b->snap, b->agg, tr->sym, tr->mods, &meta, b->r);
	if (!err)
		err = symbolize(tr, all_stacks(tr, final, text), &meta, b);
	return err;
}

static void built_free(struct built *b)
{
	report__free(b->r);
	report__free(b->freed);
	maps__free(b->maps);
	aggregate__free(b->agg);
	snapshot__free(b->snap);
}

/*
 * The snapshot's name in --snapshot-dir: memleak.PID.NNNN.EXT for those
 * taken every INTERVAL (and the final one), memleak.PID.usr1-NNNN.EXT for
 * those asked for with SIGUSR1, each kind numbered on its own, so that a
 * user finds the ones they asked for by name.
 */
static void snapshot_name(const struct tracer *tr, bool asked, unsigned n, const char *ext,
			  char *buf, size_t len)
{
	snprintf(buf, len, "memleak.%d.%s%04u.%s", tr->target->pid, asked ? "usr1-" : "", n, ext);
}

/*
 * --snapshot-dir: the heap profile and the folded stacks under the next free
 * number. Numbers already taken (by an earlier run on the same pid) are
 * skipped, and a file is never replaced.
 */
static void write_snapshot(struct tracer *tr, const struct report *r, bool asked, bool say)
{
	unsigned *n = asked ? &tr->asked_snapshots : &tr->snapshots;
	char heap[NAME_MAX + 1], folded[NAME_MAX + 1];
	const char *failed = heap;
	int dirfd = tr->snapshot_dirfd, err;

	do {
		++*n;
		snapshot_name(tr, asked, *n, "heap", heap, sizeof(heap));
		snapshot_name(tr, asked, *n, "folded", folded, sizeof(folded));
		err = outfile__exists_at(dirfd, heap) || outfile__exists_at(dirfd, folded) ?
		      -EEXIST : outfile__write_new(dirfd, heap, report_pprof__write, r);
	} while (err == -EEXIST);
	if (!err) {
		failed = folded;
		err = outfile__write_new(dirfd, folded, report_folded__write, r);
	}
	if (err)
		fprintf(stderr, "memleakbpf: cannot write snapshot %s/%s: %s\n",
			tr->opts->snapshot_dir, failed, strerror(-err));
	else if (say)
		fprintf(stderr, "memleakbpf: snapshot %s/%s %s/%s\n", tr->opts->snapshot_dir,
			heap, tr->opts->snapshot_dir, folded);
}

/*
 * The text report (unless text is false), the final files, a snapshot
 * (asked: for SIGUSR1).
 */
static int produce(struct tracer *tr, bool final, bool text, bool asked)
{
	struct built b = { 0 };
	int err = build(tr, final, text, &b);

	if (err) {
		fprintf(stderr, "memleakbpf: cannot build the report: %s\n", strerror(-err));
	} else {
		if (text)
			write_text(tr, b.r);
		if (final) {
			write_file(tr, tr->opts->json_path, report_json__write, b.r);
			write_file(tr, tr->opts->folded_path, report_folded__write, b.r);
			write_file(tr, tr->opts->pprof_path, report_pprof__write, b.r);
			write_file(tr, tr->opts->flamegraph_path, report_svg__write, b.r);
			write_file(tr, tr->opts->timeline_path, report_timeline_csv__write, b.r);
			write_file(tr, tr->opts->timeline_svg_path, report_timeline_svg__write, b.r);
		}
		if (tr->opts->snapshot_dir)
			write_snapshot(tr, b.r, asked, asked || tr->opts->verbose);
	}
	built_free(&b);
	return err;
}

int tracer__report(struct tracer *tr, bool final)
{
	return produce(tr, final, true, false);
}

/* SIGUSR1: a snapshot now, or without --snapshot-dir a report now. */
void tracer__on_snapshot_signal(struct tracer *tr)
{
	if (!tr->tracing) {
		fprintf(stderr, "memleakbpf: SIGUSR1: not tracing yet, no snapshot\n");
		return;
	}
	produce(tr, false, !tr->opts->snapshot_dir, true);
}
