// SPDX-License-Identifier: GPL-2.0
/*
 * memleakbpf: outstanding allocations of a process, by user stack.
 *
 * Owns the lifecycle: start or attach, the event loop (signals, interval
 * timer, BPF's events, the target's exit, the reports' worker) and the one
 * cleanup. Probing the allocator as images come and go is tracer.c's, the
 * reports reports.c's.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include "analyze/insight.h"
#include "analyze/memuse.h"
#include "analyze/reach_sum.h"
#include "cli/opts.h"
#include "model/stackcache.h"
#include "probe/kmem.h"
#include "probe/probes.h"
#include "probe/support.h"
#include "python/pytrace.h"
#include "report/outfile.h"
#include "symbolize/symbolize.h"
#include "target/images.h"
#include "target/modules.h"
#include "target/target.h"
#include "target/watchdog.h"
#include "run/reports.h"
#include "run/tracer.h"
#include "run/tracer_reach.h"
#include "unwind/unwind.h"
#include "util/fatal.h"
#include "util/proc.h"
#include "util/worker.h"

#define EXIT_USAGE 2
#define SIGINT_GRACE_MS 2000

static void die_usage(const char *msg)
{
	fprintf(stderr, "memleakbpf: %s\n", msg);
	exit(EXIT_USAGE);
}

/*
 * -p: the target ran exec, and BPF stopped tracing it. We do not stop a
 * process we did not start (its parent would see it stop), so the new
 * program would run before probes could be placed on its allocator: tracing
 * ends, with the report of the program that was traced.
 */
static void on_exec(struct tracer *tr)
{
	char exe[PATH_MAX];

	if (tr->image_gone)
		return;
	tr->image_gone = tr->done = true;
	if (proc__readlink(tr->target->pid, "exe", exe, sizeof(exe)) <= 0)
		snprintf(exe, sizeof(exe), "a new program");
	fprintf(stderr, "memleakbpf: pid %d executed %s: tracing ends with the program it replaced (-p does not follow exec: run memleakbpf -p %d again, or use -c)\n",
		tr->target->pid, exe, tr->target->pid);
}

static void on_events(struct tracer *tr)
{
	struct memleak_event evs[64];
	size_t n = probes__take_events(tr->probes, evs, 64);

	follow_events__handle(tr->probes, &tr->procs, tr->images, tr->opts->verbose);	/* a child waits, stopped */
	if (tr->target_ended && !follow__count(tr->probes))
		tr->done = true;
	for (size_t i = 0; i < n; i++) {
		if (evs[i].kind == EVENT_STOPPED) {
			tracer__on_stopped(tr, (pid_t)evs[i].tgid);
			watchdog__stop_handled(tr->wd);
		} else if (evs[i].kind == EVENT_EXEC) {
			on_exec(tr);
		} else if (evs[i].kind == EVENT_EXIT_STOP) {
			tracer_reach__on_exit_stop(tr, (pid_t)evs[i].tgid, false);
			watchdog__stop_handled(tr->wd);
		} else if (evs[i].kind == EVENT_PY_EXIT) {
			tracer_reach__on_exit_stop(tr, (pid_t)evs[i].tgid, true);
			reports__on_python_exit(tr, (pid_t)evs[i].tgid, true, evs[i].finalize);
			watchdog__stop_handled(tr->wd);
		} else if (evs[i].kind == EVENT_PY_EXITING) {
			reports__on_python_exit(tr, (pid_t)evs[i].tgid, false, evs[i].finalize);
		} else if (evs[i].kind == EVENT_PEAK) {
			reports__sample_peak(tr);	/* the stacks of a new peak, while it lasts */
		} else {
			tracer__refresh_modules(tr);	/* a dlopen under -p: keep its mappings */
		}
	}
}

/*
 * The target ended. So does the run, but with --follow not before the
 * processes followed have ended too (a daemon's parent exits at once).
 */
static void target_ended(struct tracer *tr)
{
	size_t n;

	if (tr->target_ended)
		return;
	tr->target_ended = true;
	on_events(tr);	/* the fork of a child may still wait in the ring */
	n = follow__count(tr->probes);
	if (n)
		fprintf(stderr, "memleakbpf: pid %d exited: tracing goes on until the %zu %s followed %s ended (Ctrl-C ends it now)\n",
			tr->target->pid, n, n == 1 ? "process" : "processes", n == 1 ? "has" : "have");
	/* -p: its pidfd stays readable: no more waking for it. */
	if (!tr->target->spawned)
		epoll_ctl(tr->epfd, EPOLL_CTL_DEL, tr->target->pidfd, NULL);
	tr->done |= !n;
}

/* Ctrl-C on -c: the command gets the signal too; give it a moment to end. */
static void on_interrupt(struct tracer *tr, int sig)
{
	tr->done = true;
	tr->interrupted = tr->interrupted ?: sig;
	if (!tr->target->spawned || tr->target->exited)
		return;
	target__interrupt(tr->target, sig);
	for (int ms = 0; ms < SIGINT_GRACE_MS && !target__reap(tr->target); ms += 10)
		usleep(10000);
}

/*
 * -c's status: the command's. One still running when an interrupted run
 * ends (it handles the signal, or the machine is slow) has none yet: the
 * run was interrupted, and says it leaves the command running, rather
 * than exit 0 or wait for it without end.
 */
static int command_status(struct tracer *tr)
{
	if (!tr->target->spawned)
		return EXIT_SUCCESS;
	if (tr->target->exited || target__reap(tr->target))
		return tr->target->exit_code;
	if (!tr->interrupted)
		return EXIT_SUCCESS;
	fprintf(stderr, "memleakbpf: pid %d still runs %d s after SIG%s: left running, untraced\n",
		tr->target->pid, SIGINT_GRACE_MS / 1000, sigabbrev_np(tr->interrupted) ?: "?");
	return 128 + tr->interrupted;
}

static void on_signal(struct tracer *tr)
{
	struct signalfd_siginfo si;

	while (read(tr->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			if (target__reap(tr->target))
				target_ended(tr);
		} else if (si.ssi_signo == SIGUSR1) {
			reports__on_snapshot_signal(tr);
		} else if (si.ssi_signo == SIGUSR2) {
			tracer_reach__on_signal(tr);
		} else {
			on_interrupt(tr, (int)si.ssi_signo);
		}
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
	if (reports__due(tr))
		tr->reports++;
}

static int watch(int epfd, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return fd < 0 ? 0 : epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

/* The insight timer fired: a sample of the peak (reports.c); room in the tables is the sweeper's. */
static void sample(struct tracer *tr)
{
	if (!insight__due(tr->ins))
		return;
	reports__tick(tr);
}

/*
 * One event, waiting for it if none is ready (unless poll_only). A wait ends
 * the loop's busy stretch: a stop seen after it may have waited since
 * (tracer.h: awake).
 */
static int next_event(struct tracer *tr, struct epoll_event *ev, bool poll_only)
{
	int n = epoll_wait(tr->epfd, ev, 1, 0);

	if (n || poll_only)
		return n;
	n = epoll_wait(tr->epfd, ev, 1, -1);
	clock_gettime(CLOCK_MONOTONIC, &tr->awake);
	return n;
}

static void run(struct tracer *tr)
{
	struct epoll_event ev;

	clock_gettime(CLOCK_MONOTONIC, &tr->awake);
	while (!tr->done) {
		/* Unwind tables still to load (-p): a slice at a time, between events. */
		bool build = tracer__tables_pending(tr);
		int n = next_event(tr, &ev, build);

		if (n < 0 && errno != EINTR)
			break;
		if (n == 0 && build)
			tracer__build_tables(tr);
		if (n <= 0)
			continue;
		if (ev.data.fd == tr->sigfd)
			on_signal(tr);
		else if (ev.data.fd == probes__events_fd(tr->probes))
			on_events(tr);
		else if (ev.data.fd == probes__codes_fd(tr->probes))
			probes__take_codes(tr->probes);
		else if (ev.data.fd == tr->timerfd)
			on_timer(tr);
		else if (ev.data.fd == insight__fd(tr->ins))
			sample(tr);
		else if (ev.data.fd == worker__fd(tr->worker))
			reports__job_done(tr);
		else if (target__gone(tr->target))
			target_ended(tr);
	}
}

/*
 * SIGHUP (the terminal of a -p session closed) ends tracing with the final
 * report too, as SIGTERM does; under nohup it stays ignored: a blocked
 * signal is queued even when ignored, and would end the run after all.
 */
static bool hangup_ignored(void)
{
	struct sigaction sa;

	return !sigaction(SIGHUP, NULL, &sa) && sa.sa_handler == SIG_IGN;
}

static void signal_set(sigset_t *set, bool interrupts)
{
	sigemptyset(set);
	sigaddset(set, SIGCHLD);
	sigaddset(set, SIGUSR1);
	sigaddset(set, SIGUSR2);
	if (interrupts) {
		sigaddset(set, SIGINT);
		sigaddset(set, SIGTERM);
		if (!hangup_ignored())
			sigaddset(set, SIGHUP);
	}
}

/*
 * SIGINT and SIGTERM end tracing however the tracer was started. A shell
 * starts a script's background job (`memleakbpf -c cmd &`) with SIGINT
 * ignored, and an ignored signal that comes before hold_interrupts() is
 * lost: `kill -INT` then never ended that tracer, nor the command it ran
 * (which inherited the ignore). An ignored SIGHUP stays ignored (nohup).
 */
static void interrupts_default(void)
{
	static const int sigs[] = { SIGINT, SIGTERM };
	struct sigaction sa;

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (!sigaction(sigs[i], NULL, &sa) && sa.sa_handler == SIG_IGN)
			signal(sigs[i], SIG_DFL);
}

/*
 * Ctrl-C, SIGTERM and SIGHUP keep their default action until the probes are loaded:
 * a fatal signal ends even a long map creation in the kernel at once, and
 * before the target runs under us there is no report to lose (a -c command
 * waiting at the gate sees it close and exits without running). From here
 * on they come through the signalfd, and end tracing with a report.
 */
static int hold_interrupts(void)
{
	sigset_t set;

	signal_set(&set, true);
	return sigprocmask(SIG_BLOCK, &set, NULL) ? -errno : 0;
}

static int setup_events(struct tracer *tr)
{
	sigset_t set;

	signal_set(&set, false);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -errno;
	/* Reads the interrupts too, once hold_interrupts() blocks them. */
	signal_set(&set, true);
	tr->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	tr->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	tr->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (tr->sigfd < 0 || tr->timerfd < 0 || tr->epfd < 0)
		return -errno;
	if (watch(tr->epfd, tr->sigfd) || watch(tr->epfd, tr->timerfd))
		return -errno;
	/* -p: the pidfd becomes readable when the target exits. */
	return tr->target->spawned ? 0 : watch(tr->epfd, tr->target->pidfd);
}

/*
 * Every output file can be written, no two options name one file (one report
 * would silently replace the other), and --snapshot-dir is opened once.
 */
static void check_outputs(struct tracer *tr)
{
	const struct opts *o = tr->opts;
	const char *const *paths = o->outputs;
	char err[512];
	int fd;

	for (size_t i = 0; i < REPORT_OUT__COUNT; i++) {
		if (!paths[i])
			continue;
		if (outfile__check(paths[i], err, sizeof(err)))
			die_usage(err);
		for (size_t j = 0; j < i; j++)
			if (paths[j] && outfile__same(paths[i], paths[j])) {
				snprintf(err, sizeof(err), "--%s %s and --%s %s name one file: give each report a file of its own",
					 writers[j].option, paths[j], writers[i].option, paths[i]);
				die_usage(err);
			}
	}
	if (!o->snapshot_dir)
		return;
	fd = outfile__open_dir(o->snapshot_dir, err, sizeof(err));
	if (fd < 0)
		die_usage(err);
	tr->snapshot_dirfd = fd;
}

static int start_target(struct tracer *tr)
{
	const struct opts *o = tr->opts;
	struct rlimit nofile;
	char err[512] = "";
	int e = target__raise_fd_limit(&nofile, o->verbose);

	/* Not fatal: a run that opens few files does not need more. */
	if (e)
		fprintf(stderr, "memleakbpf: cannot raise the limit of open files: %s\n",
			strerror(-e));
	if (o->kernel)
		e = target__kernel(&tr->target);
	else if (o->command)
		e = target__spawn(o->command, o->user, o->verbose, e ? NULL : &nofile,
				  &tr->target, err, sizeof(err));
	else
		e = target__attach(o->pid, &tr->target, err, sizeof(err));
	if (e && err[0])
		fprintf(stderr, "memleakbpf: %s\n", err);
	else if (e)
		fprintf(stderr, "memleakbpf: cannot start the target: %s\n", strerror(-e));
	return e;
}

static struct probes_config probes_config_of(const struct opts *o, const struct target *t)
{
	return (struct probes_config){
		.tgid = t ? t->pid : 0,
		.min_size = o->min_size,
		.max_size = o->max_size,
		.max_allocs = o->max_allocs,
		.stack_storage_size = o->stack_storage_size,
		.stack_ring = o->stack_ring,
		.py_code_ring = o->py_code_ring,
		.stop_on_exec = t && t->spawned,
		.bench_floor = o->bench_floor,
		.probe_at_entry = o->probe_at_entry,
		.follow = o->follow,
		.sample_mode = o->sample_mode,
		.sample_value = o->sample_value,
		.sample_seed = o->sample_seed,
		.symbols_prefix = o->symbols_prefix,
		.trace = o->trace,
		.trace_buffer = o->trace_buffer,
		.no_session = o->bench_no_session,
		.no_preempt_off = o->bench_no_preempt_off,
		.verbose = o->verbose,
	};
}

/*
 * Tables larger than the machine can give are refused before anything
 * starts; the default room for stacks, sized for a PyTorch job, shrinks to
 * what fits instead, and says so.
 */
static struct kmem_config kmem_config_of(const struct opts *o)
{
	return (struct kmem_config){
		.max_allocs = o->max_allocs,
		.stacks = o->stack_storage_size,
		.min_size = o->min_size,
		.max_size = o->max_size,
		.bench_floor = o->bench_floor,
		.bench_no_stack = o->bench_no_stack,
		.verbose = o->verbose,
	};
}

static void check_memory(struct opts *o)
{
	struct probes_config cfg = probes_config_of(o, NULL);
	struct kmem_config kcfg = kmem_config_of(o);
	char err[512];
	uint32_t fit;

	if (o->kernel && kmem__check_memory(&kcfg, err, sizeof(err)))
		die_usage(err);
	if (o->kernel || !probes__check_memory(&cfg, err, sizeof(err)))
		return;
	fit = o->stack_storage_given ? 0 : probes__fitting_stacks(&cfg);
	if (fit >= OPTS_MIN_DEFAULT_STACKS) {
		fprintf(stderr, "memleakbpf: room for %u stacks, not the default %u: the memory available holds no more (--stack-storage-size)\n",
			fit, o->stack_storage_size);
		o->stack_storage_size = fit;
		return;
	}
	die_usage(err);
}

/* -k: the kernel's probes, and its symbols for the reports. */
static int load_kernel(struct tracer *tr)
{
	struct kmem_config cfg = kmem_config_of(tr->opts);

	/* The symbols after the load: its programs are in kallsyms then. */
	return kmem__load(&cfg, &tr->kmem) ?: symbolizer__kernel(tr->sym);
}

static int load_probes(struct tracer *tr)
{
	const struct opts *o = tr->opts;
	struct probes_config cfg = probes_config_of(o, tr->target);
	int err = o->kernel ? 0 : unwind__choose(o->unwind, probes_unwind__can_walk_tables,
						  &cfg.unwind_tables);
	struct pytrace_ops py_ops;
	struct unwind_ops ops;

	if (o->kernel)
		return load_kernel(tr);
	if (!err)
		err = probes__load(&cfg, &tr->probes);
	if (err)
		return err;
	probes_python__ops(tr->probes, &py_ops);
	/* Python's code objects through tr->relay, held while a report reads the code. */
	pyrelay__wrap(&tr->relay, &tr->worker, &py_ops);
	pytrace__set_ops(tr->py, &py_ops);
	if (cfg.unwind_tables) {
		probes_unwind__ops(tr->probes, &ops);
		/* -p: the target runs while we load; -c: it waits for every table. */
		tr->unw = unwind__new(&ops, !o->command, o->verbose);
		err = tr->unw ? 0 : -ENOMEM;
		unwind__cache(tr->unw, o->unwind_cache);
		if (o->follow)
			follow_exec__on_image(tr->probes, tracer__image_tables, tr);
	}
	return err;
}

/* -k: the probes are live: tracing began. */
static int begin_kernel(struct tracer *tr)
{
	size_t n = kmem__points(tr->kmem);

	tr->tracing = true;
	clock_gettime(CLOCK_MONOTONIC, &tr->start);
	insight__kernel(tr->ins);
	insight__start(tr->ins, 0, &tr->start);
	fprintf(stderr, "memleakbpf: tracing the kernel's allocations: %zu tracepoints (", n);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%s%s", i ? ", " : "", kmem__point(tr->kmem, i));
	fprintf(stderr, "); %s\n", tr->opts->count ? "ends after COUNT reports" : "Ctrl-C to end");
	return tracer__start_timer(tr);
}

/* -p: attach. -c: start the watchdog, then let the command exec. */
static int begin(struct tracer *tr)
{
	struct watchdog_view view;
	int err;

	/*
	 * -p: before attaching, which says it is tracing: a signal just after
	 * that line still ends with the final report, not the default action.
	 */
	err = hold_interrupts();
	if (err)
		return err;
	if (tr->kmem)
		return begin_kernel(tr);
	/* -c, and -p --follow (children held at their fork): resumed if we die. */
	probes__stop_view(tr->probes, &view);
	if (tr->target->spawned || tr->opts->follow)
		tr->wd = watchdog__start(&view);
	if (!tr->target->spawned)
		return tracer__attach_pid(tr);
	return target__release(tr->target);
}

/*
 * -c: the command has ended, and whatever it handed over to or we followed:
 * no probe can fire any more (they are filtered on those processes).
 */
static bool targets_gone(const struct tracer *tr)
{
	char st = proc__state(tr->target->pid);

	return tr->target->spawned && tr->target->exited && !follow__count(tr->probes) &&
	       (!st || st == 'Z' || st == 'X');
}

static struct pytrace *new_pytrace(const struct opts *o)
{
	struct pytrace_settings s = {
		.spawned = o->command != NULL,
		.python_malloc = o->python_malloc,
		.no_frames = o->bench_no_python,
		.objects = o->py_objects,
	};

	return pytrace__new(&s);
}

int main(int argc, char **argv)
{
	static char cwd[PATH_MAX];
	struct tracer tr = { .sigfd = -1, .timerfd = -1, .epfd = -1, .snapshot_dirfd = -1 };
	struct opts opts;
	char err[512];
	int status = EXIT_FAILURE;

	interrupts_default();
	fatal__setup();	/* a death by signal says so: nothing is lost without a word */
	memuse__setup();
	processes__init(&tr.procs);
	int e = opts__parse(argc, argv, &opts, err, sizeof(err));
	if (e > 0)
		return 0;
	if (e < 0)
		die_usage(err);
	if (support__check(err, sizeof(err))) {
		fprintf(stderr, "memleakbpf: %s\n", err);
		return EXIT_FAILURE;
	}
	tr.opts = &opts;
	tr.jobs = &reports__jobs;
	tr.cwd = getcwd(cwd, sizeof(cwd));
	check_outputs(&tr);
	check_memory(&opts);
	tr.py = new_pytrace(&opts);	/* before the command starts: PYTHONMALLOC */
	if (!tr.py)
		return EXIT_FAILURE;
	/* Before the target starts: an unusable --debug-dir is a usage error (it said why). */
	tr.sym = symbolizer__new(opts.debug_dirs, opts.nr_debug_dirs);
	if (!tr.sym)
		return EXIT_USAGE;
	if (start_target(&tr) || setup_events(&tr) || load_probes(&tr) ||
	    (!opts.kernel && (watch(tr.epfd, probes__events_fd(tr.probes)) ||
			      watch(tr.epfd, probes__codes_fd(tr.probes)))))
		goto cleanup;
	tr.mods = modules__new(tr.target->pid);
	tr.images = tr.mods ? images__new(tr.mods) : NULL;
	tr.ins = insight__new(!tr.target->spawned);
	tr.worker = worker__new();
	if (!tr.mods || !tr.images || !tr.ins || !tr.worker || watch(tr.epfd, insight__fd(tr.ins)) ||
	    watch(tr.epfd, worker__fd(tr.worker)))
		goto cleanup;
	if (begin(&tr))
		goto cleanup;
	run(&tr);
	reports__finish(&tr);
	tracer_reach__final(&tr);
	probes__trace_flush(tr.probes);	/* -t's last lines, then the final report */
	if (tr.tracing && !tr.untraced)
		reports__now(&tr, true);
	else if (tr.target->exited && !tr.untraced)	/* that said why already */
		fprintf(stderr, "memleakbpf: pid %d exited before tracing began\n", tr.target->pid);
	if (opts.verbose)
		holds__say(&tr.holds, tr.py_exit_ms);
	if (opts.verbose && tr.probes)	/* -k has none */
		follow__say(tr.probes, &tr.procs);
	if (opts.verbose && opts.follow)
		fprintf(stderr, "memleakbpf: files of %zu images closed once their processes had ended with no site left\n",
			tr.images_released);
	status = command_status(&tr);
	if ((!tr.tracing && !tr.target->exited) || tr.untraced ||
	    (tr.output_failed && status == EXIT_SUCCESS))
		status = EXIT_FAILURE;
	stack_blob__exiting();	/* everything written: the exit gives the stacks back */
cleanup:
	worker__free(tr.worker);	/* first: a report may still be using everything else */
	tracer__free(&tr);
	reports__free(&tr);
	unwind__free(tr.unw);
	allocator__free_wrappers(tr.wrappers, tr.nr_wrappers);
	if (tr.wd && targets_gone(&tr))
		probes__hand_links(tr.probes, tr.wd);	/* its exit would wait for their closes */
	probes__free(tr.probes);
	kmem__free(tr.kmem);
	watchdog__free(tr.wd);	/* after the probes: no stop can come any more */
	symbolizer__free(tr.sym);
	images__free(tr.images);	/* a fork's modules may be over the target's */
	modules__free(tr.mods);
	insight__free(tr.ins);
	free(tr.live);
	pytrace__free(tr.py);
	reach_sum__free(tr.reach);
	target__free(tr.target);
	processes__free(&tr.procs);
	if (tr.epfd >= 0)
		close(tr.epfd);
	if (tr.timerfd >= 0)
		close(tr.timerfd);
	if (tr.sigfd >= 0)
		close(tr.sigfd);
	if (tr.snapshot_dirfd >= 0)
		close(tr.snapshot_dirfd);
	return status;
}
