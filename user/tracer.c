// SPDX-License-Identifier: GPL-2.0
/*
 * One run of the tracer, the stages put together: probing the allocator as
 * the target's images come and go (-p attach; under -c the stops BPF makes
 * at each exec and dynamic-linker event, with the hand-over from a shell to
 * the program it starts), and producing reports (snapshot -> aggregate ->
 * analysis -> symbolized report, then the text on stdout and, at the end,
 * every file the options name; numbered snapshots for --snapshot-dir).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include "allocator/allocator.h"
#include "analyze/aggregate.h"
#include "analyze/insight.h"
#include "opts.h"
#include "probe/probes.h"
#include "probe/snapshot.h"
#include "python/pytrace.h"
#include "report/outfile.h"
#include "symbolize/report_build.h"
#include "symbolize/symbolize.h"
#include "target/modules.h"
#include "target/target.h"
#include "tracer.h"
#include "unwind/unwind.h"
#include "util/procmaps.h"

static double since(const struct timespec *t0);

/* ---------------------------------------------------------------- probing the allocator */

/* The interval timer starts when tracing does. */
static int start_timer(struct tracer *tr)
{
	double iv = tr->opts->interval_s;
	struct itimerspec its = {
		.it_interval = { (time_t)iv, (long)((iv - (double)(time_t)iv) * 1e9) },
	};

	its.it_value = its.it_interval;
	return timerfd_settime(tr->timerfd, 0, &its, NULL) ? -errno : 0;
}

#define STOP_WAIT_MS 1000

/* Tables pending, for a target whose stacks can still need them. */
bool tracer__tables_pending(const struct tracer *tr)
{
	return unwind__pending(tr->unw) && !tr->image_gone && !tr->target->exited;
}

#define BUILD_SLICE_MS 50	/* between two looks at the events */

/* -p: a slice of the unwind tables still pending; -v says when the last is in. */
void tracer__build_tables(struct tracer *tr)
{
	size_t files;
	uint64_t rows;
	int err = unwind__build(tr->unw, BUILD_SLICE_MS);

	if (err)
		fprintf(stderr, "memleakbpf: cannot publish the unwind tables of pid %d: %s\n",
			tr->target->pid, strerror(-err));
	if (unwind__pending(tr->unw) || !tr->opts->verbose || !tr->tracing)
		return;
	unwind__totals(tr->unw, &files, &rows);
	fprintf(stderr, "memleakbpf: unwind tables ready %.2f s after tracing began: %zu files, %llu rows\n",
		since(&tr->start), files, (unsigned long long)rows);
}

/* Remember the target's mappings while it is alive, for later reports. */
void tracer__refresh_modules(struct tracer *tr)
{
	struct maps *maps;

	/* After an exec (-p) the maps are the new program's, at the old one's addresses. */
	if (tr->image_gone || tr->target->exited || maps__read(tr->target->pid, &maps))
		return;
	modules__update(tr->mods, maps);
	unwind__update(tr->unw, tr->target->pid, maps);
	maps__free(maps);
}

/* The objects to search: the target's lookup order, or -O's one object. */
static int lookup_objects(struct tracer *tr, const struct lookup_order *lo,
			  struct allocator **out)
{
	struct lookup_object obj;
	int err;

	if (!tr->opts->obj) {
		err = allocator__resolve(lo->objects, lo->nr, lo->is_static, out);
		if (err == -ENOENT)
			fprintf(stderr, "memleakbpf: pid %d uses no traceable allocator: nothing in %s or its libraries defines malloc (use -O to name one)\n",
				tr->target->pid, lo->nr ? lo->objects[0].path : "it");
		return err;
	}
	err = lookup_object__init(&obj, tr->target->pid, tr->opts->obj, NULL);
	if (err) {
		fprintf(stderr, "memleakbpf: -O %s: %s in the target's file system\n", tr->opts->obj,
			strerror(-err));
		lookup_object__release(&obj);
		return err;
	}
	err = allocator__resolve(&obj, 1, true, out);
	if (err == -ENOENT)
		fprintf(stderr, "memleakbpf: -O %s: defines no malloc\n", tr->opts->obj);
	lookup_object__release(&obj);
	return err;
}

static void announce(struct tracer *tr, const struct allocator *a)
{
	fprintf(stderr, "memleakbpf: tracing pid %d: %zu allocation functions, malloc from %s; %s\n",
		tr->target->pid, a->nr, a->malloc_path,
		tr->opts->count ? "ends after COUNT reports" : "Ctrl-C to end");
	if (tr->opts->verbose)
		for (size_t i = 0; i < a->nr; i++)
			fprintf(stderr, "memleakbpf:   %s in %s +0x%llx\n", a->probes[i].symbol,
				a->probes[i].path, (unsigned long long)a->probes[i].offset);
}

/* The address of malloc's first instruction in the target, or 0. */
static uint64_t malloc_address(const struct allocator *a, const struct maps *maps)
{
	for (size_t i = 0; i < a->nr; i++) {
		const struct alloc_probe *p = &a->probes[i];

		if (p->api != API_MALLOC)
			continue;
		for (size_t j = 0; j < maps->nr; j++) {
			const struct map_entry *e = &maps->entries[j];

			if (!strcmp(e->path, p->path) && p->offset >= e->offset &&
			    p->offset - e->offset < e->end - e->start)
				return e->start + (p->offset - e->offset);
		}
	}
	return 0;
}

/* The allocator's unprobed operator new (allocator.h), for the reports to name. */
static void take_wrappers(struct tracer *tr, struct allocator *a)
{
	if (tr->opts->verbose && a->nr_wrappers && !tr->nr_wrappers)
		fprintf(stderr, "memleakbpf:   operator new and delete in %s: thin wrappers over malloc and free, not probed; their blocks are counted at malloc, and named new or new[]\n",
			a->wrappers[0].path);
	allocator__free_wrappers(tr->wrappers, tr->nr_wrappers);
	tr->wrappers = a->wrappers;
	tr->nr_wrappers = a->nr_wrappers;
	a->wrappers = NULL;
	a->nr_wrappers = 0;
}

/*
 * -p: the unwind tables of the files on nearly every allocating stack are
 * loaded before the probes go live: the executable (main, _start), the
 * allocator's files (its own callers of malloc, thread starts,
 * __libc_start_main), libstdc++ when its operator new is left unprobed, the
 * dynamic linker and the Python interpreter. The rest follow between events
 * (tracer__build_tables); a stack that reaches one of them before is cut
 * there, and says so. -c loaded them all already.
 */
static int build_core_tables(struct tracer *tr, const struct maps *maps,
			     const struct lookup_order *lo, const struct allocator *a)
{
	const struct report_python *py = pytrace__report(tr->py);
	const struct map_entry *ldso = lo->is_static ? NULL : maps__find(maps, lo->ldso_base);
	size_t nr = 0, max = 3 + a->nr_objects + a->nr_wrappers;
	const char **paths;
	int err;

	if (!unwind__pending(tr->unw))
		return 0;
	paths = calloc(max, sizeof(*paths));
	if (!paths)
		return -ENOMEM;
	if (lo->nr)
		paths[nr++] = lo->objects[0].path;	/* the executable: the link map's first */
	for (size_t i = 0; i < a->nr_objects; i++)
		paths[nr++] = a->objects[i].path;
	for (size_t i = 0; i < a->nr_wrappers; i++)
		paths[nr++] = a->wrappers[i].path;
	if (ldso)
		paths[nr++] = ldso->path;
	if (py)
		paths[nr++] = py->path;
	err = unwind__build_now(tr->unw, maps, paths, nr);
	free(paths);
	return err;
}

/* Resolve the allocator from the target's current state and probe it. */
static int attach_allocator(struct tracer *tr, const struct maps *maps,
			    const struct lookup_order *lo)
{
	struct addr_range ranges[MEMLEAK_MAX_INTERNAL];
	struct allocator *a;
	int err;

	err = lookup_objects(tr, lo, &a);
	if (err)
		return err;
	probes__set_internal(tr->probes, ranges,
			     allocator__internal_ranges(a, maps, ranges, MEMLEAK_MAX_INTERNAL));
	/* Python frames from the first allocation on. */
	err = pytrace__attach(tr->py, tr->target->pid, maps, lo);
	if (!err)
		err = build_core_tables(tr, maps, lo, a);
	if (!err)
		err = probes__attach_allocator(tr->probes, a);
	if (err >= 0 && !tr->tracing) {
		tr->tracing = true;
		clock_gettime(CLOCK_MONOTONIC, &tr->start);
		insight__start(tr->ins, tr->target->pid, &tr->start);
		tr->warm_addr = malloc_address(a, maps);
		announce(tr, a);
		err = start_timer(tr);
	}
	if (err >= 0)
		take_wrappers(tr, a);
	allocator__free(a);
	return err < 0 ? err : 0;
}

static int forget_image(struct tracer *tr)
{
	modules__clear(tr->mods);
	symbolizer__reset(tr->sym);
	insight__reset(tr->ins, tr->target->pid);
	pytrace__forget(tr->py);
	return probes__clear(tr->probes);
}

/*
 * The target is stopped: right after an exec, or at a dynamic-linker event.
 * Once the linker has mapped everything (or for a static binary at once),
 * probe the allocator before any of the program's code runs.
 */
static int on_stop(struct tracer *tr)
{
	uint64_t execs = probes__counter(tr->probes, CNT_EXECS);
	struct lookup_order *lo = NULL;
	struct maps *maps = NULL;
	int err;

	if (execs != tr->execs_seen) {
		/* A new image: what the old one allocated is gone with it. */
		tr->execs_seen = execs;
		err = forget_image(tr);
		if (err)
			return err;
		probes__set_follow_shell(tr->probes, target__runs_shell_command(tr->target->pid));
	}
	err = maps__read(tr->target->pid, &maps);
	if (!err)
		err = lookup_order__read(tr->target->pid, maps, &lo);
	if (tr->opts->verbose > 1 && !err)
		fprintf(stderr, "memleakbpf: stop: execs %llu, %zu objects, %s%s\n",
			(unsigned long long)execs, lo->nr, lo->is_static ? "static, " : "",
			lo->complete ? "complete" : "loading");
	if (!err && !lo->is_static) {
		err = probes__attach_dl(tr->probes, lo->ldso_open_path);
		probes__set_stop_on_dl(tr->probes, true);
	}
	if (!err && lo->complete)
		err = attach_allocator(tr, maps, lo);
	if (!err) {
		modules__update(tr->mods, maps);
		unwind__update(tr->unw, tr->target->pid, maps);
	} else if (err != -ENOENT)
		fprintf(stderr, "memleakbpf: cannot inspect pid %d: %s\n", tr->target->pid,
			strerror(-err));
	lookup_order__free(lo);
	maps__free(maps);
	return err;
}

int tracer__attach_pid(struct tracer *tr)
{
	struct lookup_order *lo = NULL;
	struct maps *maps = NULL;
	int err;

	err = maps__read(tr->target->pid, &maps);
	if (!err)
		err = lookup_order__read(tr->target->pid, maps, &lo);
	if (err)
		fprintf(stderr, "memleakbpf: cannot read the link map of pid %d: %s%s\n",
			tr->target->pid, strerror(-err),
			err == -EACCES ? " (another user's process: memleakbpf needs root or CAP_DAC_READ_SEARCH too)" : "");
	/* Hear of dlopen/dlclose, so that their mappings are kept for reports. */
	if (!err && !lo->is_static && !probes__attach_dl(tr->probes, lo->ldso_open_path))
		probes__set_notify_dl(tr->probes, true);
	/* The tables first: the target runs, and allocates as soon as probed. */
	if (!err)
		unwind__update(tr->unw, tr->target->pid, maps);
	if (!err)
		err = attach_allocator(tr, maps, lo);
	if (!err)
		modules__update(tr->mods, maps);
	lookup_order__free(lo);
	maps__free(maps);
	return err;
}

/* The shell's child execs the program: trace that process from now on. */
static int hand_over(struct tracer *tr, pid_t pid)
{
	if (tr->opts->verbose)
		fprintf(stderr, "memleakbpf: following pid %d, started by the shell %d\n", pid,
			tr->target->pid);
	probes__retarget(tr->probes, pid);
	tr->target->pid = pid;
	modules__set_pid(tr->mods, pid);	/* its files, its perf map */
	/* Its exec is a new image to on_stop, which forgets the shell's. */
	tr->execs_seen = 0;
	return 0;
}

/* BPF stopped pid at an exec or a dynamic-linker event: look, attach, resume. */
void tracer__on_stopped(struct tracer *tr, pid_t pid)
{
	int err;

	if (target__wait_stopped(pid, STOP_WAIT_MS))
		return;
	err = 0;
	if (pid != tr->target->pid)
		err = pid == probes__handoff(tr->probes) ? hand_over(tr, pid) : -ESRCH;
	if (!err)
		err = on_stop(tr);
	if (err && err != -ESRCH) {
		target__signal(tr->target, SIGKILL);
		exit(EXIT_FAILURE);
	}
	target__continue(pid);
}

/* ---------------------------------------------------------------- reports */

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

/*
 * Whether this report goes where every stack is written: a heap profile (a
 * snapshot's too), a flame graph, or files with --all-stacks.
 */
static bool all_stacks(const struct tracer *tr, bool final, bool text)
{
	const struct opts *o = tr->opts;

	return !text || o->snapshot_dir ||
	       (final && (o->pprof_path || o->flamegraph_path ||
			  (o->all_stacks && (o->json_path || o->folded_path))));
}

/*
 * The frames of the stacks that will be written: all of them, or only those
 * the text prints and the files keep (a few of thousands, which spares
 * resolving and copying every frame of every stack).
 */
static int symbolize(struct tracer *tr, bool final, bool text, const struct report_meta *meta,
		     struct built *b)
{
	bool files = final && (tr->opts->json_path || tr->opts->folded_path);
	bool *want = NULL;
	int err;

	if (!all_stacks(tr, final, text)) {
		want = calloc(b->r->nr_stacks ?: 1, sizeof(*want));
		if (!want)
			return -ENOMEM;
		report_text__shown(b->r, want);
		for (size_t i = 0; files && i < b->r->nr_stacks; i++)
			want[i] |= !b->r->stacks[i].left_out;
	}
	err = report__symbolize(b->r, b->agg, tr->sym, tr->mods, meta, want);
	free(want);
	return err;
}

/* The churn and peak stacks insight__fill picks, built as the report's. */
struct stacks_ctx {
	struct tracer *tr;
	const struct report_meta *meta;
};

static int build_stacks(const struct aggregate *sites, void *ctx, struct report_stack **out,
			size_t *nr)
{
	const struct stacks_ctx *c = ctx;

	return report__build_stacks(sites, c->tr->sym, c->tr->mods, c->meta, out, nr);
}

/* brief: a periodic text report, whose sites show no stacks (report.h). */
static int build(struct tracer *tr, bool final, bool text, bool brief, struct built *b)
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
		.wrappers = tr->wrappers,
		.nr_wrappers = tr->nr_wrappers,
		.all_stacks = tr->opts->all_stacks,
		.brief = brief,
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
		err = report__build_figures(b->agg, &meta, &b->r);
	/* Before the frames: the text prints the growing stacks too. */
	if (!err)
		err = insight__fill(tr->ins, b->snap, b->agg, build_stacks,
				    &(struct stacks_ctx){ tr, &meta }, b->r);
	/* And before them too: the sites say which stacks are shown and kept. */
	if (!err)
		err = report__sites(b->r, b->agg, tr->sym, tr->mods, &meta);
	if (!err)
		err = symbolize(tr, final, text, &meta, b);
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
	int err = build(tr, final, text, text && !final && !asked, &b);

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
