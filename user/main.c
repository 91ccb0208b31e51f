// SPDX-License-Identifier: GPL-2.0
/*
 * memleakbpf: outstanding allocations of a process, by user stack.
 *
 * Wires the pipeline probes -> BPF maps -> snapshot -> aggregate ->
 * symbolize -> report, and owns the lifecycle: start or attach, the event
 * loop (signals, interval timer, target stops and exit), the one cleanup.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include "aggregate.h"
#include "allocator.h"
#include "modules.h"
#include "opts.h"
#include "outfile.h"
#include "probes.h"
#include "procmaps.h"
#include "report_build.h"
#include "snapshot.h"
#include "support.h"
#include "symbolize.h"
#include "target.h"

#define EXIT_USAGE 2
#define SIGINT_GRACE_MS 2000

struct tracer {
	const struct opts *opts;
	struct target *target;
	struct probes *probes;
	struct modules *mods;
	struct symbolizer *sym;
	bool tracing;		/* allocator probes attached */
	bool done;
	uint64_t stops_handled;
	uint64_t execs_seen;
	struct timespec start;
	unsigned reports;
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

	if (tr->target->exited || maps__read(tr->target->pid, &maps))
		return;
	modules__update(tr->mods, maps);
	maps__free(maps);
}

/* The objects to search: the target's lookup order, or -O's one object. */
static int lookup_objects(struct tracer *tr, const struct lookup_order *lo,
			  struct allocator **out)
{
	struct lookup_object obj;
	char buf[4200];
	int err;

	if (!tr->opts->obj) {
		err = allocator__resolve(lo->objects, lo->nr, lo->is_static, out);
		if (err == -ENOENT)
			fprintf(stderr, "memleakbpf: pid %d uses no traceable allocator: nothing in %s or its libraries defines malloc (use -O to name one)\n",
				tr->target->pid, lo->nr ? lo->objects[0].path : "it");
		return err;
	}
	snprintf(buf, sizeof(buf), "/proc/%d/root%s", tr->target->pid, tr->opts->obj);
	obj.path = (char *)tr->opts->obj;
	obj.open_path = buf;
	if (access(buf, R_OK)) {
		fprintf(stderr, "memleakbpf: -O %s: %s in the target's file system\n", tr->opts->obj,
			strerror(errno));
		return -errno;
	}
	err = allocator__resolve(&obj, 1, true, out);
	if (err == -ENOENT)
		fprintf(stderr, "memleakbpf: -O %s: defines no malloc\n", tr->opts->obj);
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
	err = probes__attach_allocator(tr->probes, a);
	if (err >= 0 && !tr->tracing) {
		tr->tracing = true;
		clock_gettime(CLOCK_MONOTONIC, &tr->start);
		announce(tr, a);
		err = start_timer(tr);
	}
	allocator__free(a);
	return err < 0 ? err : 0;
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
		err = probes__clear(tr->probes);
		modules__clear(tr->mods);
		symbolizer__reset(tr->sym);
		if (err)
			return err;
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
	if (!err)
		modules__update(tr->mods, maps);
	else if (err != -ENOENT)
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
	if (!err)
		err = attach_allocator(tr, maps, lo);
	if (!err)
		modules__update(tr->mods, maps);
	lookup_order__free(lo);
	maps__free(maps);
	return err;
}

static void write_file(const char *path, int (*writer)(const struct report *, FILE *),
		       const struct report *r)
{
	int err;

	if (!path)
		return;
	err = outfile__write(path, writer, r);
	if (err)
		fprintf(stderr, "memleakbpf: cannot write %s: %s\n", path, strerror(-err));
}

static int report(struct tracer *tr, bool final)
{
	struct report_meta meta = {
		.pid = tr->target->pid,
		.command = tr->target->command,
		.duration_s = since(&tr->start),
		.final = final,
		.older_ms = tr->opts->older_ms,
		.top = tr->opts->top,
	};
	struct snapshot *snap = NULL;
	struct aggregate *agg = NULL;
	struct report *r = NULL;
	int err;

	refresh_modules(tr);
	err = snapshot__collect(tr->probes, tr->opts->older_ms * 1000000ull, &snap);
	if (!err)
		err = aggregate__build(snap, &agg);
	if (!err)
		err = report__build(agg, tr->sym, tr->mods, &meta, &r);
	if (err) {
		fprintf(stderr, "memleakbpf: cannot build the report: %s\n", strerror(-err));
	} else {
		report_text__write(r, stdout);
		fflush(stdout);
		if (final) {
			write_file(tr->opts->json_path, report_json__write, r);
			write_file(tr->opts->folded_path, report_folded__write, r);
		}
	}
	report__free(r);
	aggregate__free(agg);
	snapshot__free(snap);
	return err;
}

static void on_target_events(struct tracer *tr)
{
	enum target_event ev;

	while ((ev = target__poll(tr->target)) != TARGET_NONE) {
		if (ev == TARGET_EXITED) {
			tr->done = true;
			return;
		}
		/* Resume only stops we asked for; a user's SIGSTOP stays. */
		if (probes__counter(tr->probes, CNT_STOP_REQUESTS) == tr->stops_handled)
			continue;
		tr->stops_handled = probes__counter(tr->probes, CNT_STOP_REQUESTS);
		if (on_stop(tr)) {
			target__signal(tr->target, SIGKILL);
			exit(EXIT_FAILURE);
		}
		target__continue(tr->target);
	}
}

/* Ctrl-C on -c: the command gets the signal too; give it a moment to end. */
static void on_interrupt(struct tracer *tr, int sig)
{
	tr->done = true;
	if (!tr->target->spawned || tr->target->exited)
		return;
	target__signal(tr->target, sig);
	for (int ms = 0; ms < SIGINT_GRACE_MS && !tr->target->exited; ms += 10) {
		usleep(10000);
		target__poll(tr->target);
	}
}

static void on_signal(struct tracer *tr)
{
	struct signalfd_siginfo si;

	while (read(tr->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			on_target_events(tr);
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

	on_target_events(tr);	/* a stop may already be pending */
	while (!tr->done) {
		int n = epoll_wait(tr->epfd, &ev, 1, -1);

		if (n < 0 && errno != EINTR)
			break;
		if (n <= 0)
			continue;
		if (ev.data.fd == tr->sigfd)
			on_signal(tr);
		else if (ev.data.fd == tr->timerfd)
			on_timer(tr);
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

	return probes__load(&cfg, &tr->probes);
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
	if (start_target(&tr) || setup_events(&tr) || load_probes(&tr))
		goto cleanup;
	tr.mods = modules__new(tr.target->pid);
	tr.sym = symbolizer__new();
	if (!tr.mods || !tr.sym)
		goto cleanup;
	if (tr.target->spawned ? target__release(tr.target) : attach_pid(&tr))
		goto cleanup;
	run(&tr);
	if (tr.tracing)
		report(&tr, true);
	else if (tr.target->exited)
		fprintf(stderr, "memleakbpf: pid %d exited before tracing began\n", tr.target->pid);
	status = tr.target->spawned && tr.target->exited ? tr.target->exit_code : EXIT_SUCCESS;
	if (!tr.tracing && !tr.target->exited)
		status = EXIT_FAILURE;
cleanup:
	probes__free(tr.probes);
	symbolizer__free(tr.sym);
	modules__free(tr.mods);
	target__free(tr.target);
	if (tr.epfd >= 0)
		close(tr.epfd);
	if (tr.timerfd >= 0)
		close(tr.timerfd);
	if (tr.sigfd >= 0)
		close(tr.sigfd);
	return status;
}
