// SPDX-License-Identifier: GPL-2.0
/*
 * memleakbpf: outstanding allocations of a process, by user stack.
 *
 * Wires the pipeline probes -> BPF maps -> snapshot -> aggregate ->
 * symbolize -> report, and owns the lifecycle: start or attach, the event
 * loop (signals, interval timer, target stops and exit), the one cleanup.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include "aggregate.h"
#include "allocator.h"
#include "insight.h"
#include "modules.h"
#include "opts.h"
#include "outfile.h"
#include "probes.h"
#include "procmaps.h"
#include "pytrace.h"
#include "report_build.h"
#include "snapshot.h"
#include "support.h"
#include "symbolize.h"
#include "target.h"
#include "watchdog.h"
#include "unwind.h"

#define EXIT_USAGE 2
#define SIGINT_GRACE_MS 2000
#define STOP_WAIT_MS 1000

struct tracer {
	const struct opts *opts;
	struct target *target;
	struct probes *probes;
	struct modules *mods;
	struct symbolizer *sym;
	struct insight *ins;	/* growth, churn, peak, memory verdict, timeline */
	struct unwind *unw;	/* CFI tables for BPF; NULL with frame pointers */
	struct pytrace *py;	/* Python frames; idle unless the target is Python */
	bool tracing;		/* allocator probes attached */
	bool done;
	bool image_gone;	/* -p: the target ran exec; its old image is what we report */
	bool output_failed;	/* a report could not be written: exit status 1 */
	struct watchdog *wd;	/* -c: resumes the command if we die while it is stopped */
	uint64_t execs_seen;
	struct timespec start;
	unsigned reports;
	unsigned snapshots;	/* the last --snapshot-dir number used */
	int sigfd, timerfd, epfd;
};

static void die_usage(const char *msg)
{
	fprintf(stderr, "memleakbpf: %s\n", msg);
	exit(EXIT_USAGE);
}

static double since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Remember the target's mappings while it is alive, for later reports. */
static void refresh_modules(struct tracer *tr)
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

static int start_timer(struct tracer *tr)
{
	double iv = tr->opts->interval_s;
	struct itimerspec its = {
		.it_interval = { (time_t)iv, (long)((iv - (double)(time_t)iv) * 1e9) },
	};

	its.it_value = its.it_interval;
	return timerfd_settime(tr->timerfd, 0, &its, NULL) ? -errno : 0;
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
	err = pytrace__attach(tr->py, tr->probes, tr->target->pid, maps, lo);
	if (!err)
		err = probes__attach_allocator(tr->probes, a);
	if (err >= 0 && !tr->tracing) {
		tr->tracing = true;
		clock_gettime(CLOCK_MONOTONIC, &tr->start);
		insight__start(tr->ins, tr->target->pid, &tr->start);
		announce(tr, a);
		err = start_timer(tr);
	}
	allocator__free(a);
	return err < 0 ? err : 0;
}

static int forget_image(struct tracer *tr)
{
	modules__clear(tr->mods);
	symbolizer__reset(tr->sym);
	insight__reset(tr->ins, tr->target->pid);
	pytrace__forget(tr->py, tr->probes);
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

static int attach_pid(struct tracer *tr)
{
	struct lookup_order *lo = NULL;
	struct maps *maps = NULL;
	int err;

	err = maps__read(tr->target->pid, &maps);
	if (!err)
		err = lookup_order__read(tr->target->pid, maps, &lo);
	if (err)
		fprintf(stderr, "memleakbpf: cannot read the link map of pid %d: %s\n",
			tr->target->pid, strerror(-err));
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

static int build(struct tracer *tr, bool final, struct built *b)
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

	refresh_modules(tr);
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
		err = report__build(b->agg, tr->sym, tr->mods, &meta, &b->r);
	if (!err)
		err = insight__fill(tr->ins, b->snap, b->agg, tr->sym, tr->mods, &meta, b->r);
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

/* DIR/memleak.PID.NNNN.EXT */
static void snapshot_path(const struct tracer *tr, const char *ext, char *buf, size_t len)
{
	const char *dir = tr->opts->snapshot_dir;
	size_t n = strlen(dir);

	snprintf(buf, len, "%s%smemleak.%d.%04u.%s", dir, n && dir[n - 1] == '/' ? "" : "/",
		 tr->target->pid, tr->snapshots, ext);
}

static bool taken(const char *path)
{
	struct stat st;

	/* Only existence: any other trouble is for the write to report. */
	return !lstat(path, &st);
}

/*
 * --snapshot-dir: the heap profile and the folded stacks under the next free
 * number. Numbers already taken (by an earlier run on the same pid) are
 * skipped, and a file is never replaced.
 */
static void write_snapshot(struct tracer *tr, const struct report *r, bool say)
{
	char heap[PATH_MAX], folded[PATH_MAX];
	const char *failed = heap;
	int err;

	do {
		tr->snapshots++;
		snapshot_path(tr, "heap", heap, sizeof(heap));
		snapshot_path(tr, "folded", folded, sizeof(folded));
		err = taken(heap) || taken(folded) ? -EEXIST :
		      outfile__write_new(heap, report_pprof__write, r);
	} while (err == -EEXIST);
	if (!err) {
		failed = folded;
		err = outfile__write_new(folded, report_folded__write, r);
	}
	if (err)
		fprintf(stderr, "memleakbpf: cannot write snapshot %s: %s\n", failed, strerror(-err));
	else if (say)
		fprintf(stderr, "memleakbpf: snapshot %s %s\n", heap, folded);
}

/* The text report (unless text is false), the final files, a snapshot. */
static int produce(struct tracer *tr, bool final, bool text)
{
	struct built b = { 0 };
	int err = build(tr, final, &b);

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
			write_snapshot(tr, b.r, !text || tr->opts->verbose);
	}
	built_free(&b);
	return err;
}

static int report(struct tracer *tr, bool final)
{
	return produce(tr, final, true);
}

/* SIGUSR1: a snapshot now, or without --snapshot-dir a report now. */
static void on_snapshot_signal(struct tracer *tr)
{
	if (!tr->tracing) {
		fprintf(stderr, "memleakbpf: SIGUSR1: not tracing yet, no snapshot\n");
		return;
	}
	produce(tr, false, !tr->opts->snapshot_dir);
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
static void on_stopped(struct tracer *tr, pid_t pid)
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

/*
 * -p: the target ran exec, and BPF stopped tracing it. We do not stop a
 * process we did not start (its parent would see it stop), so the new
 * program would run before probes could be placed on its allocator: tracing
 * ends, with the report of the program that was traced.
 */
static void on_exec(struct tracer *tr)
{
	char link[64], exe[PATH_MAX] = "a new program";
	ssize_t n;

	if (tr->image_gone)
		return;
	tr->image_gone = tr->done = true;
	snprintf(link, sizeof(link), "/proc/%d/exe", tr->target->pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n > 0)
		exe[n] = '\0';
	fprintf(stderr, "memleakbpf: pid %d executed %s: tracing ends with the program it replaced (-p does not follow exec: run memleakbpf -p %d again, or use -c)\n",
		tr->target->pid, exe, tr->target->pid);
}

static void on_events(struct tracer *tr)
{
	struct memleak_event evs[64];
	size_t n = probes__take_events(tr->probes, evs, 64);

	for (size_t i = 0; i < n; i++) {
		if (evs[i].kind == EVENT_STOPPED) {
			on_stopped(tr, (pid_t)evs[i].tgid);
			watchdog__stop_handled(tr->wd);
		} else if (evs[i].kind == EVENT_EXEC) {
			on_exec(tr);
		} else if (evs[i].kind == EVENT_PY_EXIT) {
			pytrace__on_exit(tr->py, tr->probes, (pid_t)evs[i].tgid, true);
			watchdog__stop_handled(tr->wd);
		} else if (evs[i].kind == EVENT_PY_EXITING) {
			pytrace__on_exit(tr->py, tr->probes, (pid_t)evs[i].tgid, false);
		} else {
			refresh_modules(tr);	/* a dlopen under -p: keep its mappings */
		}
	}
}

/* Ctrl-C on -c: the command gets the signal too; give it a moment to end. */
static void on_interrupt(struct tracer *tr, int sig)
{
	tr->done = true;
	if (!tr->target->spawned || tr->target->exited)
		return;
	target__interrupt(tr->target, sig);
	for (int ms = 0; ms < SIGINT_GRACE_MS && !target__reap(tr->target); ms += 10)
		usleep(10000);
}

static void on_signal(struct tracer *tr)
{
	struct signalfd_siginfo si;

	while (read(tr->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			tr->done |= target__reap(tr->target);
		else if (si.ssi_signo == SIGUSR1)
			on_snapshot_signal(tr);
		else
			on_interrupt(tr, (int)si.ssi_signo);
	}
}

static void on_timer(struct tracer *tr)
{
	uint64_t ticks;

	if (read(tr->timerfd, &ticks, sizeof(ticks)) != sizeof(ticks))
		return;
	if (tr->opts->count && tr->reports + 1 >= tr->opts->count) {
		tr->done = true;	/* the last one is the final report */
		return;
	}
	tr->reports++;
	report(tr, false);
}

static int watch(int epfd, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return fd < 0 ? 0 : epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

static void run(struct tracer *tr)
{
	struct epoll_event ev;

	while (!tr->done) {
		int n = epoll_wait(tr->epfd, &ev, 1, -1);

		if (n < 0 && errno != EINTR)
			break;
		if (n <= 0)
			continue;
		if (ev.data.fd == tr->sigfd)
			on_signal(tr);
		else if (ev.data.fd == probes__events_fd(tr->probes))
			on_events(tr);
		else if (ev.data.fd == tr->timerfd)
			on_timer(tr);
		else if (ev.data.fd == insight__fd(tr->ins))
			insight__tick(tr->ins, tr->probes);
		else if (target__gone(tr->target))
			tr->done = true;
	}
}

static int setup_events(struct tracer *tr)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &mask, NULL))
		return -errno;
	tr->sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	tr->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	tr->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (tr->sigfd < 0 || tr->timerfd < 0 || tr->epfd < 0)
		return -errno;
	if (watch(tr->epfd, tr->sigfd) || watch(tr->epfd, tr->timerfd))
		return -errno;
	/* -p: the pidfd becomes readable when the target exits. */
	return tr->target->spawned ? 0 : watch(tr->epfd, tr->target->pidfd);
}

static void check_outputs(const struct opts *o)
{
	char err[512];

	if (o->json_path && outfile__check(o->json_path, err, sizeof(err)))
		die_usage(err);
	if (o->folded_path && outfile__check(o->folded_path, err, sizeof(err)))
		die_usage(err);
	if (o->pprof_path && outfile__check(o->pprof_path, err, sizeof(err)))
		die_usage(err);
	if (o->flamegraph_path && outfile__check(o->flamegraph_path, err, sizeof(err)))
		die_usage(err);
	if (o->timeline_path && outfile__check(o->timeline_path, err, sizeof(err)))
		die_usage(err);
	if (o->timeline_svg_path && outfile__check(o->timeline_svg_path, err, sizeof(err)))
		die_usage(err);
	if (o->snapshot_dir && outfile__check_dir(o->snapshot_dir, err, sizeof(err)))
		die_usage(err);
}

static int start_target(struct tracer *tr)
{
	const struct opts *o = tr->opts;
	char err[512] = "";
	int e;

	if (o->command)
		e = target__spawn(o->command, o->user, o->verbose, &tr->target, err, sizeof(err));
	else
		e = target__attach(o->pid, &tr->target, err, sizeof(err));
	if (e && err[0])
		fprintf(stderr, "memleakbpf: %s\n", err);
	else if (e)
		fprintf(stderr, "memleakbpf: cannot start the target: %s\n", strerror(-e));
	return e;
}

static int load_probes(struct tracer *tr)
{
	const struct opts *o = tr->opts;
	struct probes_config cfg = {
		.tgid = tr->target->pid,
		.min_size = o->min_size,
		.max_size = o->max_size,
		.max_allocs = o->max_allocs,
		.stack_storage_size = o->stack_storage_size,
		.stop_on_exec = tr->target->spawned,
		.verbose = o->verbose,
	};
	int err = unwind__choose(o->unwind, &cfg.unwind_tables);

	if (!err)
		err = probes__load(&cfg, &tr->probes);
	if (!err && cfg.unwind_tables) {
		tr->unw = unwind__new(tr->probes, o->verbose);
		err = tr->unw ? 0 : -ENOMEM;
	}
	return err;
}

/* Ctrl-C or SIGTERM while loading: the command has not run, and will not. */
static bool interrupted(void)
{
	sigset_t set;

	return !sigpending(&set) && (sigismember(&set, SIGINT) || sigismember(&set, SIGTERM));
}

/* -p: attach. -c: start the watchdog, then let the command exec. */
static int begin(struct tracer *tr)
{
	struct watchdog_view view;

	if (!tr->target->spawned)
		return attach_pid(tr);
	if (interrupted()) {
		fprintf(stderr, "memleakbpf: interrupted before the command ran\n");
		return -EINTR;
	}
	probes__stop_view(tr->probes, &view);
	tr->wd = watchdog__start(&view);
	return target__release(tr->target);
}

int main(int argc, char **argv)
{
	struct tracer tr = { .sigfd = -1, .timerfd = -1, .epfd = -1 };
	struct opts opts;
	char err[512];
	int status = EXIT_FAILURE;

	int e = opts__parse(argc, argv, &opts, err, sizeof(err));
	if (e > 0)
		return 0;
	if (e < 0)
		die_usage(err);
	if (support__check(err, sizeof(err))) {
		fprintf(stderr, "memleakbpf: %s\n", err);
		return EXIT_FAILURE;
	}
	check_outputs(&opts);
	tr.opts = &opts;
	tr.py = pytrace__new(&opts);	/* before the command starts: PYTHONMALLOC */
	if (!tr.py)
		return EXIT_FAILURE;
	/* Before the target starts: an unusable --debug-dir is a usage error (it said why). */
	tr.sym = symbolizer__new(opts.debug_dirs, opts.nr_debug_dirs);
	if (!tr.sym)
		return EXIT_USAGE;
	if (start_target(&tr) || setup_events(&tr) || load_probes(&tr) ||
	    watch(tr.epfd, probes__events_fd(tr.probes)))
		goto cleanup;
	tr.mods = modules__new(tr.target->pid);
	tr.ins = insight__new(!tr.target->spawned);
	if (!tr.mods || !tr.ins || watch(tr.epfd, insight__fd(tr.ins)))
		goto cleanup;
	if (begin(&tr))
		goto cleanup;
	run(&tr);
	if (tr.tracing)
		report(&tr, true);
	else if (tr.target->exited)
		fprintf(stderr, "memleakbpf: pid %d exited before tracing began\n", tr.target->pid);
	status = tr.target->spawned && tr.target->exited ? tr.target->exit_code : EXIT_SUCCESS;
	if ((!tr.tracing && !tr.target->exited) || (tr.output_failed && status == EXIT_SUCCESS))
		status = EXIT_FAILURE;
cleanup:
	unwind__free(tr.unw);
	probes__free(tr.probes);
	watchdog__free(tr.wd);	/* after the probes: no stop can come any more */
	symbolizer__free(tr.sym);
	modules__free(tr.mods);
	insight__free(tr.ins);
	pytrace__free(tr.py);
	target__free(tr.target);
	if (tr.epfd >= 0)
		close(tr.epfd);
	if (tr.timerfd >= 0)
		close(tr.timerfd);
	if (tr.sigfd >= 0)
		close(tr.sigfd);
	return status;
}
