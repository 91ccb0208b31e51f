/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The state of one run, shared by main.c (lifecycle and event loop) and
 * tracer.c (probing the allocator as the target's images come and go, and
 * building and writing reports).
 */
#ifndef TRACER_H
#define TRACER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

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

struct tracer {
	const struct opts *opts;
	struct target *target;
	struct probes *probes;
	struct modules *mods;
	struct symbolizer *sym;
	struct insight *ins;	/* growth, churn, peak, memory verdict, timeline */
	struct snap_live *live;	/* insight's samples, read into this buffer (grown) */
	size_t live_cap;
	struct unwind *unw;	/* CFI tables for BPF; NULL with frame pointers */
	struct pytrace *py;	/* Python frames; idle unless the target is Python */
	struct alloc_wrapper *wrappers;	/* operator new left unprobed (allocator.h) */
	size_t nr_wrappers;
	bool tracing;		/* allocator probes attached */
	bool done;
	bool image_gone;	/* -p: the target ran exec; its old image is what we report */
	bool output_failed;	/* a report could not be written: exit status 1 */
	struct watchdog *wd;	/* -c: resumes the command if we die while it is stopped */
	uint64_t execs_seen;
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
};

/* Probing the allocator. */
/* -p: probe the running target's allocator. */
int tracer__attach_pid(struct tracer *tr);
/* BPF stopped pid at an exec or a dynamic-linker event: look, attach, resume. */
void tracer__on_stopped(struct tracer *tr, pid_t pid);
/* Remember the target's mappings while it is alive, for later reports. */
void tracer__refresh_modules(struct tracer *tr);
/* -p: unwind tables still to load for the target (a slice at a time, between events). */
bool tracer__tables_pending(const struct tracer *tr);
void tracer__build_tables(struct tracer *tr);

/* Reports. */
/* A report: the text on stdout; when final, the files the options name. */
int tracer__report(struct tracer *tr, bool final);
/* SIGUSR1: a snapshot now, or without --snapshot-dir a report now. */
void tracer__on_snapshot_signal(struct tracer *tr);

#endif
