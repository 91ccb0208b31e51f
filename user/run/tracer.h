/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The state of one run, shared by main.c (lifecycle and event loop),
 * tracer.c (probing the allocator as the target's images come and go) and
 * reports.c (building and writing reports, on a thread of their own: who
 * may touch what meanwhile is said there).
 */
#ifndef TRACER_H
#define TRACER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include "model/processes.h"
#include "python/pyrelay.h"
#include "python/pytrace.h"
#include "target/holds.h"
#include "util/strset.h"

struct opts;
struct target;
struct probes;
struct modules;
struct symbolizer;
struct insight;
struct unwind;
struct pytrace;
struct watchdog;
struct snap_live;
struct maps;
struct alloc_wrapper;
struct worker;
struct tracer;
struct reach_sum;
struct kmem;
struct report_sites_carry;

/* A job for the worker (reports.c): what was asked, and what it took from the loop's side. */
enum job_kind { JOB_REPORT, JOB_TICK };

/*
 * Where a job is: reading the tables only (a report's snapshot), when the
 * loop may take everything else back (yielded: the job then stops); or
 * anywhere else, when the loop must wait for it.
 */
enum job_phase { PHASE_ALL, PHASE_TABLES, PHASE_YIELDED };

struct report_job {
	enum job_kind kind;
	/* JOB_TICK */
	bool sample;		/* the sites' figures, for the peak, taken at */
	struct timespec at;
	uint64_t warm_addr;	/* symbols to read ahead (tracer.h: warm_addr) */
	/* JOB_REPORT */
	bool final, text, asked;
	pid_t pid;		/* the target's memory to read; 0 once it has exited */
	const struct report_python *python;	/* NULL: no Python known when it began */
	enum report_allocator allocator;	/* who served malloc when it began */
	const struct pycode *pycode;
	const struct reach_sum *reach;	/* the scan it shows; NULL: none */
	atomic_bool cancel;	/* an exec, Python's exit: the loop needs what it holds */
	atomic_int phase;	/* enum job_phase */
};

/*
 * Maps of the target (image 0) or of a followed process (--follow: its
 * exec'd image's tag, or a fork of the target's own tag).
 */
struct learned_maps {
	uint32_t image;
	pid_t pid;		/* image: the process whose maps they are */
	struct maps *maps;
};

/*
 * The jobs (reports.h) as the stops see them: a stop that needs the state a
 * job reads settles it (cancels it and waits), and resumes what is due
 * after; while a job works, the maps a stop learns wait aside. The reports
 * are built above the tracer, which reaches them only through these (set by
 * main.c).
 */
struct tracer_jobs {
	bool (*working)(const struct tracer *tr);
	void (*settle)(struct tracer *tr);
	void (*resume)(struct tracer *tr);
};

struct tracer {
	const struct opts *opts;
	const struct tracer_jobs *jobs;
	struct target *target;
	struct probes *probes;
	struct kmem *kmem;	/* -k: the kernel's probes (probe/kmem.h); probes is NULL then */
	struct modules *mods;
	struct images *images;	/* --follow: the files of the processes that exec'd */
	struct symbolizer *sym;
	struct insight *ins;	/* growth, churn, peak, memory verdict, timeline */
	struct report_sites_carry *site_carry;	/* site frames kept from report to report */
	struct snap_live *live;	/* insight's samples, read into this buffer (grown) */
	size_t live_cap;
	int64_t live_budget_ns;	/* the CPU the peak's samples may take now (reports.c, tick) */
	uint64_t live_budget_at;	/* when it was counted (CLOCK_MONOTONIC ns) */
	struct unwind *unw;	/* CFI tables for BPF; NULL with frame pointers */
	struct pytrace *py;	/* Python frames; idle unless the target is Python */
	struct alloc_wrapper *wrappers;	/* operator new left unprobed (allocator.h) */
	const char *cwd;	/* the tracer's, for a relative --own; NULL: unknown */
	size_t nr_wrappers;
	enum report_allocator allocator;	/* who serves malloc in the image traced */
	bool tracing;		/* allocator probes attached */
	bool done;
	bool image_gone;	/* -p: the target ran exec; its old image is what we report */
	bool untraced;		/* -c: a stop failed; the command runs on untraced, no report */
	bool target_ended;	/* --follow: the run goes on while followed processes run */
	int interrupted;	/* the signal that ended the run (Ctrl-C: SIGINT), or 0 */
	bool output_failed;	/* a report could not be written: exit status 1 */
	bool cost_said;		/* exact tracing's cost said (reports.c): once */
	struct watchdog *wd;	/* -c: resumes the command if we die while it is stopped */
	uint64_t execs_seen;
	struct strset link_paths;	/* the link map at the last stop: the others are new */
	struct lookup_order *last_order;	/* ... its objects, open (allocator.h) */
	struct holds holds;	/* how long the stops held the target */
	struct processes procs;	/* --follow: the processes traced besides the target */
	/*
	 * When the loop last came out of an idle wait, or resumed the target:
	 * a stop it sees has waited since then at most. Measured from there,
	 * a hold counts whatever the loop was busy with when the stop came.
	 */
	struct timespec awake;
	double py_exit_ms;	/* and its stop at Python's exit */
	/* Reports, and the work on the tables that feeds them (reports.c). */
	struct worker *worker;	/* runs them */
	struct report_job job;	/* the one it runs */
	struct pyrelay relay;
	bool report_due, snapshot_due;	/* asked for while a job ran */
	/* What stops learned while a job ran (tracer__catch_up). */
	struct learned_maps *learned;
	size_t nr_learned, cap_learned;
	struct alloc_wrapper *next_wrappers;
	size_t nr_next_wrappers;
	bool wrappers_learned;
	/* --follow: the tags with sites in the report just built, ascending (images.h). */
	uint32_t *site_tags;
	size_t nr_site_tags, cap_site_tags;
	bool site_tags_new;
	/*
	 * The sites the last report picked to fold that could not fold yet
	 * (report_fold.c), indexes into its carried reading (fold_reading):
	 * tried again between reports.
	 */
	uint32_t *fold_later;
	size_t nr_fold_later;
	uint64_t fold_reading;
	uint64_t ends_before;	/* processes__ends when that report's job began */
	size_t images_released;	/* module sets freed, their processes ended */
	/*
	 * Where malloc is in the target, until the first sampling tick: then
	 * the tracer reads the symbols and debug information of its library
	 * while the target runs, not in the first report. For most targets
	 * that is libc, whose start code ends every stack; its compressed
	 * debug sections took 45 ms of a 190 ms final report here. 0: done.
	 */
	uint64_t warm_addr;
	struct timespec start;
	unsigned reports;
	unsigned snapshots;	/* the last --snapshot-dir number used */
	unsigned asked_snapshots;	/* the same for SIGUSR1's */
	int snapshot_dirfd;	/* --snapshot-dir, opened once before tracing */
	int sigfd, timerfd, epfd;
	/* Reachability (analyze/reach_run.h): replaced only while no job runs. */
	struct reach_sum *reach;	/* the last scan */
	bool reach_final;	/* it is the end's (-c at _exit): the final report shows it */
	bool reach_due;		/* SIGUSR2: a report that shows it, once no job runs */
};

/* How long a stop waits for the target to be stopped, at most. */
#define STOP_WAIT_MS 1000

/* Probing the allocator. */
/* The interval timer, started when tracing begins. */
int tracer__start_timer(struct tracer *tr);
/* -p: probe the running target's allocator. */
int tracer__attach_pid(struct tracer *tr);
/* BPF stopped pid at an exec or a dynamic-linker event: look, attach, resume. */
void tracer__on_stopped(struct tracer *tr, pid_t pid);
/* Remember the target's mappings while it is alive, for later reports. */
void tracer__refresh_modules(struct tracer *tr);
/* -p: unwind tables still to load for the target (a slice at a time, between events). */
bool tracer__tables_pending(const struct tracer *tr);
void tracer__build_tables(struct tracer *tr);
/* --follow (follow_exec__on_image): an exec'd image's unwind tables, published or forgotten. */
void tracer__image_tables(void *ctx, uint32_t image, pid_t pid, const struct maps *maps);

/* What stops learned while a job ran, taken in now that it is done. */
void tracer__catch_up(struct tracer *tr);
/* And the images done with, freed (the loop's, no report running). */
void tracer__release_images(struct tracer *tr);
/* What the stops kept, freed at the end. */
void tracer__free(struct tracer *tr);

/* Seconds since t0 (CLOCK_MONOTONIC). */
static inline double tracer__since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

#endif
