// SPDX-License-Identifier: GPL-2.0
/*
 * Producing reports (snapshot -> aggregate -> analysis -> symbolized report,
 * then the text on stdout and, at the end, every file the options name;
 * numbered snapshots for --snapshot-dir), and the work on the BPF tables
 * that feeds them (a sample of the peak every 100 ms, reading symbols
 * ahead), as jobs on a thread of their own: one job
 * can take seconds in a big target, and the event loop must go on serving
 * the target's stops meanwhile (tracer.c), or the target waits.
 *
 * No lock of ours but the relay's: ownership is handed over (the tables'
 * own lock keeps a reading apart from the sweeps that reclaim their room,
 * which run on a thread of the probes: probe/reclaim.c). While a job runs,
 * it has the BPF tables' reading, the modules, the symbolizer, the
 * insight, pytrace's code, the wrappers and the outputs; the loop keeps to
 * the target: it attaches probes, loads unwind tables, and keeps what it
 * learns for the job's state (mappings, wrappers, Python's code copies)
 * until the job is done (tracer__catch_up, pyrelay__flush; the copies
 * also before the job reads the target, python/pyrelay.h). The loop
 * starts a job and joins it, so each side sees what the other did before.
 * The one thing both may touch is the probes' flag that Python was found
 * (py.used, set once, on the loop, when it finds an interpreter): a job's
 * snapshot that reads it stale sees no Python frames, which no stack has
 * yet.
 *
 * What cannot wait for a job (an exec forgets the image; Python's exit
 * reads its code while the target lives) cancels it, waits for it to stop
 * at its next step, and has it built again later. The final report is
 * built on the loop's thread, once no job runs.
 */
#include <errno.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/aggregate.h"
#include "analyze/insight.h"
#include "analyze/memuse.h"
#include "analyze/per_process.h"
#include "analyze/reach_sum.h"
#include "cli/opts.h"
#include "probe/clock.h"
#include "probe/kmem.h"
#include "probe/probes.h"
#include "probe/snapshot.h"
#include "probe/snapshot_kept.h"
#include "sample.h"
#include "python/pytrace.h"
#include "report/outfile.h"
#include "report/snapshot_dir.h"
#include "report/writers.h"
#include "symbolize/report_build.h"
#include "symbolize/symbolize.h"
#include "target/images.h"
#include "target/modules.h"
#include "target/target.h"
#include "report_fold.h"
#include "report_frames.h"
#include "report_say.h"
#include "reports.h"
#include "reports_peak.h"
#include "tracer.h"
#include "util/procmaps.h"
#include "util/vec.h"
#include "util/worker.h"
#include "report/report_text.h"

static void write_file(struct tracer *tr, const char *path,
		       int (*writer)(const struct report *, FILE *), const struct report *r)
{
	char err[512];
	struct timespec t0, cpu0, cpu1;
	struct stat st;

	if (!path)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
	if (outfile__write(path, writer, r, err, sizeof(err))) {
		/* The text report is on stdout already: nothing else is lost. */
		fprintf(stderr, "memleakbpf: %s (the text report is on standard output)\n", err);
		tr->output_failed = true;
	} else if (tr->opts->verbose) {
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu1);
		fprintf(stderr, "memleakbpf: wrote %s in %.0f ms, %.0f ms on the CPU", path,
			tracer__since(&t0) * 1e3,
			((cpu1.tv_sec - cpu0.tv_sec) * 1e9 + (cpu1.tv_nsec - cpu0.tv_nsec)) / 1e6);
		if (!stat(path, &st) && S_ISREG(st.st_mode))
			fprintf(stderr, ", %lld bytes", (long long)st.st_size);
		fputc('\n', stderr);
	}
}

/* The text report; a full disk or a closed pipe is said once, not at every report. */
static void write_text(struct tracer *tr, const struct report *r)
{
	int err;

	flockfile(stdout);	/* -t's lines wait: none inside the report (probe/trace_ring.h) */
	err = report_text__write(r, stdout);
	if (!err && fflush(stdout))
		err = -errno;
	funlockfile(stdout);
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
	struct report_image_maps *image_maps;	/* --follow: those of exec'd images' processes */
	size_t nr_image_maps;
	struct report *freed;	/* sites with nothing outstanding, for the alloc totals */
	struct report *r;
	/* Every stack's frames, each distinct one once: the stacks above point into it. */
	struct frame_table *frames;
	double maps_s;		/* reading the maps took this long */
	double frames_s;	/* and the frames of the stacks written (symbolize) */
	struct report_sampling sampling;	/* --sample, -s: the calls at the snapshot */
	struct report_steps steps;	/* -v: the thread's CPU time in each step */
};

/* The churn and peak stacks insight__fill picks, built as the report's. */
struct stacks_ctx {
	struct tracer *tr;
	const struct report_meta *meta;
};

static int build_stacks(const struct aggregate *sites, void *ctx, struct report_stack **out,
			size_t *nr)
{
	const struct stacks_ctx *c = ctx;

	return report_build__stacks(sites, c->tr->sym, c->tr->mods, c->meta, out, nr);
}

/* Between two steps: an exec made this report moot. */
static int go_on(const struct report_job *job)
{
	return atomic_load(&job->cancel) ? -ECANCELED : 0;
}

/* The tables read: the rest of the report's state, unless the loop took it meanwhile. */
static int take_all(struct report_job *job)
{
	int tables = PHASE_TABLES;

	return atomic_compare_exchange_strong(&job->phase, &tables, PHASE_ALL) ? 0 : -ECANCELED;
}

/* From the snapshot to the symbolized report. */
static int analyze(struct tracer *tr, const struct report_job *job, struct report_meta *meta,
		   struct built *b)
{
	bool pprof = tr->opts->snapshot_dir ||
		     (job->final && writers__need(tr->opts->outputs, WRITER_MAPS));
	struct timespec t0;
	int err = 0;

	if (job->python) {
		/* Copies that came while the tables were read: their code may be gone (a module's body). */
		pyrelay__flush(&tr->relay);
		pytrace__refresh(tr->py, b->snap);	/* while the target lives */
	}
	if (!tr->site_carry)	/* none: every report works out its site frames */
		tr->site_carry = report_sites__carry_new();
	report_say__step(&b->steps, STEP_READING);	/* Python's code with the tables */
	err = go_on(job) ?: aggregate__build(b->snap, &b->agg);
	report_say__step(&b->steps, STEP_AGGREGATE);
	if (!err)
		err = insight__add(tr->ins, job->pid, b->snap, b->agg);
	/* Folded before it is built: what folds holds nothing, and goes before its arrays come. */
	if (!err)
		report_fold__run(tr, b->snap);
	report_say__step(&b->steps, STEP_HISTORY);
	if (!err && pprof)	/* -k: the kernel's and its modules' */
		err = tr->kmem ? symbolizer__kernel_maps(tr->sym, &b->maps) :
				 modules__code_maps(tr->mods, &b->maps);
	if (!err && pprof && tr->opts->follow)
		err = images__code_maps(tr->images, &b->image_maps, &b->nr_image_maps);
	/* The allocated bytes of --html's flame graph count the stacks freed since, too. */
	if (!err && (pprof || (job->final && writers__need(tr->opts->outputs, WRITER_FREED))))
		err = report_build__freed(b->snap, tr->sym, tr->mods, meta, &b->freed);
	meta->maps = b->maps;
	meta->image_maps = b->image_maps;
	meta->nr_image_maps = b->nr_image_maps;
	meta->freed = b->freed;
	err = err ?: go_on(job);
	if (!err)
		err = report_build__figures(b->agg, tr->mods, meta, b->snap, tr->site_carry, &b->r);
	report_say__step(&b->steps, STEP_FIGURES);
	if (!err && tr->opts->follow)
		err = per_process__build(b->snap, &tr->procs, meta->pid, meta->command,
					 job->pid <= 0, b->r);
	if (!err)
		reach_sum__fill(job->reach, b->agg, b->r);
	/* Each stack's site first: under sampling, start-up and growth are judged by site. */
	if (!err)
		err = report_sites__frames(b->r, b->agg, tr->sym, tr->mods, meta, b->snap,
					   tr->site_carry);
	report_say__step(&b->steps, STEP_SITE_FRAMES);
	/* Before the frames: the text prints the growing stacks too. */
	/*
	 * A report that writes a few of its stacks leaves the flat ones'
	 * lines unfitted: most of 200,000 stacks hold what they did, and only
	 * those written show a slope (report_frames__resolve).
	 */
	if (!err)
		err = (report_frames__all(tr, job) || job->final ? insight__fill : insight__fill_unfitted)(
			tr->ins, b->snap, b->agg, build_stacks, &(struct stacks_ctx){ tr, meta },
			b->r);
	report_say__step(&b->steps, STEP_GROWTH);
	/* And before them too: the sites say which stacks are shown and kept. */
	if (!err)
		err = report_sites__group(b->r, meta);
	report_say__step(&b->steps, STEP_SITES);
	err = err ?: go_on(job);
	if (!err) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		err = report_frames__resolve(tr, job, meta, b->snap, b->agg, b->r);
		b->frames_s = tracer__since(&t0);
	}
	report_say__step(&b->steps, STEP_FRAMES);
	return err;
}

static int build(struct tracer *tr, struct report_job *job, struct built *b)
{
	uint64_t at_ns = clock__now_ns();	/* the moment of "N s traced" */
	struct report_meta meta = {
		.pid = tr->target->pid,
		.kernel = tr->kmem != NULL,
		.command = tr->target->command,
		.duration_s = tracer__since(&tr->start),
		.final = job->final,
		.older_ms = tr->opts->older_ms,
		.top = tr->opts->top,
		.folded_allocs = tr->opts->folded_allocs,
		.python = job->python,
		.allocator = job->allocator,
		.pycode = job->pycode,
		.wrappers = tr->wrappers,
		.nr_wrappers = tr->nr_wrappers,
		.all_stacks = tr->opts->all_stacks,
		.folded_by_process = tr->opts->folded_by_process,
		/* A periodic text report: its sites show no stacks (report.h). */
		.brief = job->text && !job->final && !job->asked && !tr->opts->show_allocs,
		.show_allocs = tr->opts->show_allocs,
		.allocs_per_stack = tr->opts->allocs_per_stack,
		.sort_count = tr->opts->sort_count,
		.full_names = tr->opts->full_names,
		.images = tr->images,
		.own = { tr->opts->own, tr->opts->nr_own, tr->cwd, tr->opts->alloc_fns,
			 tr->opts->nr_alloc_fns },
	};
	struct snap_fold fold;
	struct timespec t0;
	int err;

	meta.frames = b->frames = frame_table__new();
	if (!b->frames)
		return -ENOMEM;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	atomic_store(&job->phase, PHASE_TABLES);
	if (tr->kmem) {	/* -k: the kernel's tables, the ages read at the end */
		err = kmem_snapshot__collect(tr->kmem, tr->opts->older_ms * 1000000ull, job->final, &b->snap);
	} else if (!tr->opts->older_ms && !tr->opts->show_allocs) {	/* carried over */
		report_fold__sweep_first(tr);
		err = snapshot_kept__collect(tr->probes, report_fold__rule(tr, &fold), &b->snap);
	} else {
		err = snapshot__collect(tr->probes, tr->opts->older_ms * 1000000ull, &b->snap);
	}
	if (!err && tr->opts->show_allocs)
		err = snapshot_blocks__read(tr->probes, b->snap, tr->opts->allocs_per_stack,
				       tr->opts->older_ms * 1000000ull);
	if (tr->opts->sample_mode) {
		b->sampling = (struct report_sampling){
			.by_bytes = tr->opts->sample_mode == SAMPLE_BYTES,
			.mean = tr->opts->sample_value,
			.seed = tr->opts->sample_seed,
		};
		probes_sample__calls(tr->probes, &b->sampling.calls, &b->sampling.bytes,
				     &b->sampling.sampled);
		meta.sampling = &b->sampling;
	}
	if (!err && job->final && !tr->kmem)
		err = snapshot__ages(tr->probes, b->snap);
	/*
	 * The final report's blocks are those of its start (the target's end,
	 * mostly): their ages are taken then, not after the sweep and the
	 * reading, which put a block 1.0 s older than the run on a slow machine.
	 */
	if (!err && job->final && b->snap->time_ns > at_ns)
		b->snap->time_ns = at_ns;
	b->maps_s = tracer__since(&t0);
	err = err ?: take_all(job) ?: go_on(job);
	if (err)
		return err;
	return analyze(tr, job, &meta, b);
}

/* All but the snapshot, which the fold after a report still reads. */
static void built_free_report(struct built *b)
{
	report__free(b->r);
	report__free(b->freed);
	maps__free(b->maps);
	images__free_code_maps(&b->image_maps, &b->nr_image_maps);
	aggregate__free(b->agg);
	frame_table__free(b->frames);	/* after the stacks that point into it */
	b->frames = NULL;
	b->r = b->freed = NULL;
	b->maps = NULL;
	b->agg = NULL;
}

/* --snapshot-dir: the heap profile and the folded stacks under the next free number. */
static void write_snapshot(struct tracer *tr, const struct report *r, bool asked, bool say)
{
	struct snapshot_files files;
	int err = snapshot_dir__write(tr->snapshot_dirfd, tr->target->pid, asked,
				      asked ? &tr->asked_snapshots : &tr->snapshots,
				      tr->opts->pprof_gperftools, tr->opts->snapshot_html, r,
				      &files);

	if (err) {
		fprintf(stderr, "memleakbpf: cannot write snapshot %s/%s: %s\n",
			tr->opts->snapshot_dir, files.failed, strerror(-err));
		tr->output_failed = true;	/* as for any report file: exit status 1 */
	} else if (say) {
		fprintf(stderr, "memleakbpf: snapshot %s/%s %s/%s", tr->opts->snapshot_dir,
			files.profile, tr->opts->snapshot_dir, files.folded);
		if (files.html[0])
			fprintf(stderr, " %s/%s", tr->opts->snapshot_dir, files.html);
		fputc('\n', stderr);
	}
}

static void write_all(struct tracer *tr, const struct report_job *job, const struct report *r)
{
	if (job->text)
		write_text(tr, r);
	if (job->final) {
		for (int i = 0; i < REPORT_OUT__COUNT; i++)
			if (writers[i].when & WRITER_FINAL)
				write_file(tr, tr->opts->outputs[i],
					   writers__of(i, tr->opts->pprof_gperftools), r);
	}
	if (tr->opts->snapshot_dir)
		write_snapshot(tr, r, job->asked, job->asked || tr->opts->verbose);
}

/*
 * --follow: whose sites this report has, for the loop to free the files of
 * the images it no longer needs (tracer__release_images). Not with -o: a
 * site of young blocks left out now may be in a later report.
 */
static void keep_site_tags(struct tracer *tr, const struct snapshot *snap)
{
	tr->site_tags_new = tr->opts->follow && !tr->opts->older_ms &&
			    !snapshot__tags(snap, &tr->site_tags, &tr->cap_site_tags, &tr->nr_site_tags);
}

/* The text report (unless job->text is false), the final files, a snapshot. */
static int produce(struct tracer *tr, struct report_job *job)
{
	struct built b = { 0 };
	struct timespec t0, cpu0, cpu1;
	size_t nr_stacks;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
	report_say__start(&b.steps);
	err = build(tr, job, &b);
	if (err && err != -ECANCELED)
		fprintf(stderr, "memleakbpf: cannot build the report: %s\n", strerror(-err));
	if (!err)
		write_all(tr, job, b.r);
	report_say__step(&b.steps, STEP_WRITING);
	if (!err)
		report_say__cost(tr, b.r);
	nr_stacks = b.r ? b.r->nr_stacks : 0;
	/* -v: our memory with the report built, before it goes: the peak comes with one. */
	if (!err && tr->opts->verbose)
		report_say__memory(tr, b.snap);
	if (!err && tr->opts->verbose)
		report_say__frames(b.r, b.freed, b.frames);
	built_free_report(&b);
	if (!err && !job->final)
		keep_site_tags(tr, b.snap);
	/* The CPU time beside the wall time: on a busy machine the two part. */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu1);
	if (!err && tr->opts->verbose)
		fprintf(stderr, "memleakbpf: %s built in %.0f ms, %.0f ms on the CPU (reading the maps %.0f ms, the frames %.0f ms), %zu stacks\n",
			job->final ? "final report" : "report", tracer__since(&t0) * 1e3,
			((cpu1.tv_sec - cpu0.tv_sec) * 1e9 + (cpu1.tv_nsec - cpu0.tv_nsec)) / 1e6,
			b.maps_s * 1e3, b.frames_s * 1e3, nr_stacks);
	if (!err && tr->opts->verbose)
		report_say__steps(&b.steps);
	snapshot__free(b.snap);
	return err;
}

/* ---------------------------------------------------------------- jobs */

/* A report's job, set while none runs: what it takes from the loop's side. */
static void report_job(struct tracer *tr, struct report_job *job, bool final, bool text,
		       bool asked)
{
	*job = (struct report_job){ .kind = JOB_REPORT, .final = final, .text = text,
				    .asked = asked };
	/* Before its tables are read: the processes ended by then can have no new site. */
	tr->ends_before = processes__ends(&tr->procs);
	job->pid = tr->target->exited ? 0 : tr->target->pid;
	/* Python found later is the next report's: attach writes it meanwhile. */
	if (job->pid)
		pytrace__read_arenas(tr->py, tracer__since(&tr->start));
	job->python = pytrace__report(tr->py);
	job->allocator = tr->allocator;
	job->pycode = pytrace__code(tr->py);
	/* A scan shows in the report SIGUSR2 asked for, and the end's in the final one. */
	if ((final && tr->reach_final) || (asked && tr->reach_due))
		job->reach = tr->reach;
	tracer__refresh_modules(tr);
}

int reports__now(struct tracer *tr, bool final)
{
	struct report_job job;

	report_job(tr, &job, final, true, false);
	return produce(tr, &job);
}

/* A sample of the peak, symbols read ahead. */
static int tick(struct tracer *tr, const struct report_job *job)
{
	struct memleak_live live[KIND__COUNT];
	uint64_t all = 0;

	if (tr->kmem)
		kmem_stats__live(tr->kmem, live);
	else
		peak__live(tr->probes, live);
	for (int k = 0; k < KIND__COUNT; k++)
		all += live[k].bytes;
	insight__tick(tr->ins, &job->at, all);
	/*
	 * A scan of every site (a torch job's 400,000 slots) only when the heap
	 * passed the peak sampled so far: not 10 times a second for nothing.
	 * A failed sample only costs precision: the next one comes soon.
	 */
	if (job->sample && !tr->kmem && insight__peak_due(tr->ins, live[KIND_HEAP].bytes))
		reports_peak__sample(tr, &job->at);
	/* The next rise of the heap's peak asks for a sample at once (main.c). */
	if (job->sample && !tr->kmem)
		peak__arm(tr->probes);
	if (job->warm_addr)
		symbolizer__warm(tr->sym, tr->mods, job->warm_addr);	/* a report says what fails */
	report_fold__loop(tr);	/* the retired store kept small between reports */
	return 0;
}

static int run_job(void *arg)
{
	struct tracer *tr = arg;
	struct report_job *job = &tr->job;

	return job->kind == JOB_REPORT ? produce(tr, job) : tick(tr, job);
}

static void start(struct tracer *tr)
{
	if (worker__start(tr->worker, run_job, tr))
		run_job(tr);	/* no thread to be had: on this one, then */
}

/* The next job asked for, if none runs: a snapshot or a report. */
static void start_due(struct tracer *tr)
{
	bool asked = tr->snapshot_due || tr->reach_due;

	if (worker__busy(tr->worker))
		return;
	if (tr->report_due || asked) {
		/* SIGUSR2's report is text, snapshot directory or not. */
		report_job(tr, &tr->job, false,
			   !asked || !tr->opts->snapshot_dir || tr->reach_due, asked);
		if (tr->reach_due)
			tr->reach_due = false;
		else if (asked)
			tr->snapshot_due = false;
		else
			tr->report_due = false;
	} else {
		return;
	}
	start(tr);
}

/* Wait for the job (a report cancelled is built again later); take in what it kept out. */
static void finish_job(struct tracer *tr, bool cancel)
{
	if (!worker__busy(tr->worker))
		return;
	if (cancel)
		atomic_store(&tr->job.cancel, true);
	if (worker__wait(tr->worker) == -ECANCELED) {
		if (tr->job.asked && tr->job.reach)
			tr->reach_due = true;
		else if (tr->job.asked)
			tr->snapshot_due = true;
		else
			tr->report_due = true;
	}
	pyrelay__flush(&tr->relay);
	tracer__catch_up(tr);
	/* What a report freed, here (it raced our stops on the job's thread: memuse.h), not in a stop. */
	if (!cancel && tr->job.kind == JOB_REPORT)
		memuse__give_back(tr->opts->verbose ? stderr : NULL);
}

bool reports__working(const struct tracer *tr)
{
	/*
	 * A sample alone reads only the BPF tables and the history: the loop
	 * may take in maps meanwhile. Samples come often (at every rise of the
	 * peak): held back behind one, a library's mappings could be learnt
	 * only after the target exited, too late to open its file.
	 */
	return tr->worker && worker__busy(tr->worker) &&
	       (tr->job.kind == JOB_REPORT || tr->job.warm_addr);
}

bool reports__due(struct tracer *tr)
{
	if (tr->report_due)
		return false;	/* one is waiting already: ticks coalesce, as a timer's do */
	tr->report_due = true;
	start_due(tr);
	return true;
}

/* A sample of the sites, and with warm the symbols to read ahead, unless a job runs. */
static void tick_job(struct tracer *tr, bool warm)
{
	struct timespec now;

	/* Skipped while a job runs: a report's snapshot is a sample of the peak too. */
	if (worker__busy(tr->worker))
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	tr->job = (struct report_job){ .kind = JOB_TICK, .sample = true, .at = now };
	if (warm && tr->warm_addr) {
		tracer__refresh_modules(tr);
		tr->job.warm_addr = tr->warm_addr;
		tr->warm_addr = 0;
	}
	start(tr);
}

void reports__tick(struct tracer *tr)
{
	tick_job(tr, true);
}

/*
 * No symbols read ahead here: the first rise of the peak comes with the
 * first allocations, and a long read then would hold back the maps the
 * loop learns meanwhile (learn_maps), a library's among them.
 */
void reports__sample_peak(struct tracer *tr)
{
	tick_job(tr, false);
}

void reports__job_done(struct tracer *tr)
{
	finish_job(tr, false);
	start_due(tr);
}

void reports__settle(struct tracer *tr)
{
	finish_job(tr, true);
}

void reports__resume(struct tracer *tr)
{
	start_due(tr);
}

void reports__finish(struct tracer *tr)
{
	finish_job(tr, false);
	/*
	 * What was asked for before the end is made: a snapshot, and with COUNT
	 * the interval's report (COUNT reports are COUNT). Else the final
	 * report, right after, says all it would have.
	 */
	tr->report_due &= tr->opts->count > 0;
	while (tr->report_due || tr->snapshot_due || tr->reach_due) {
		start_due(tr);
		finish_job(tr, false);
	}
}

/* SIGUSR1: a snapshot now, or without --snapshot-dir a report now. */
void reports__on_snapshot_signal(struct tracer *tr)
{
	if (!tr->tracing || tr->untraced) {
		fprintf(stderr, "memleakbpf: SIGUSR1: %s, no snapshot\n",
			tr->untraced ? "the command runs untraced" : "not tracing yet");
		return;
	}
	tr->snapshot_due = true;
	start_due(tr);
}

/* A report that only reads the tables leaves everything else to the loop, and stops after. */
static bool yield_job(struct tracer *tr)
{
	int was = PHASE_TABLES;

	if (!worker__busy(tr->worker))
		return false;
	/* On failure was is the phase it is in: yielded already is as good. */
	atomic_compare_exchange_strong(&tr->job.phase, &was, PHASE_YIELDED);
	return was != PHASE_ALL;
}

void reports__on_python_exit(struct tracer *tr, pid_t pid, bool stopped, bool finalize)
{
	struct timespec t0 = tr->awake;	/* as a stop's (tracer.c) */
	double ms;

	/*
	 * Its code is the job's while it runs: a report reading the tables
	 * yields it at once (the reading of the tables goes on beside, as
	 * two readings may); anything else gives it back at its next step.
	 */
	if (!yield_job(tr))
		finish_job(tr, true);
	pytrace__on_exit(tr->py, pid, stopped, finalize, tracer__since(&tr->start));
	/*
	 * BPF traces it no more from Py_FinalizeEx on, but every probe hit
	 * would still trap: under --py-objects each object freed at shutdown,
	 * 10 to 30 s where it takes 0.03. Its figures stay those of that moment.
	 */
	if (finalize && pid == tr->target->pid)
		probes_attach__detach_allocator(tr->probes);
	ms = tracer__since(&t0) * 1e3;
	clock_gettime(CLOCK_MONOTONIC, &tr->awake);
	if (stopped && ms > tr->py_exit_ms)
		tr->py_exit_ms = ms;
	start_due(tr);
}

void reports__free(struct tracer *tr)
{
	pyrelay__free(&tr->relay);
	report_sites__carry_free(tr->site_carry);	/* after the last report, which borrowed */
	tr->site_carry = NULL;
}

const struct tracer_jobs reports__jobs = {
	.working = reports__working,
	.settle = reports__settle,
	.resume = reports__resume,
};
