// SPDX-License-Identifier: GPL-2.0
/*
 * One run of the tracer: probing the allocator as the target's images come
 * and go (-p attach; under -c the stops BPF makes at each exec and
 * dynamic-linker event, with the hand-over from a shell to the program it
 * starts), while reports are built on a thread of their own (reports.c). A
 * stop holds the target until its new images are probed, and no longer: it
 * never waits for a report, and what it learns for the reports' modules
 * waits for the job running instead (tracer__catch_up). How long each stop
 * held the target is kept, to say the longest (-v).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include "allocator/allocator.h"
#include "analyze/insight.h"
#include "analyze/reach_run.h"
#include "cli/opts.h"
#include "sample.h"
#include "probe/probes.h"
#include "probe/probes_reach.h"
#include "python/pytrace.h"
#include "symbolize/symbolize.h"
#include "target/images.h"
#include "target/modules.h"
#include "target/target.h"
#include "tracer.h"
#include "unwind/unwind.h"
#include "util/elfsym.h"
#include "util/proc.h"
#include "util/procmaps.h"
#include "util/vec.h"

/* The interval timer starts when tracing does. */
int tracer__start_timer(struct tracer *tr)
{
	double iv = tr->opts->interval_s;
	struct itimerspec its = {
		.it_interval = { (time_t)iv, (long)((iv - (double)(time_t)iv) * 1e9) },
	};

	its.it_value = its.it_interval;
	return timerfd_settime(tr->timerfd, 0, &its, NULL) ? -errno : 0;
}

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
		tracer__since(&tr->start), files, (unsigned long long)rows);
}

/*
 * The mappings of the target, or of a process followed (--follow: of an
 * image it exec'd, or a fork of the target's that loaded a library), for
 * the reports' modules: taken in now, or kept until the job running is
 * done (reports.c: the modules are its). Kept in order, they make the same
 * modules as if taken in one by one.
 */
static void take_maps(struct tracer *tr, const struct learned_maps *l)
{
	int err;

	if (l->image) {
		images__update(tr->images, l->image, l->pid, l->maps, tr->mods);
		/* Its unwind tables too, once it has files of its own (a fork may not). */
		err = unwind_image__update(tr->unw, l->image, l->pid, l->maps,
					   images__of(tr->images, l->image, tr->mods) != tr->mods);
		if (err)
			fprintf(stderr, "memleakbpf: cannot publish the unwind tables of pid %d: %s\n",
				l->pid, strerror(-err));
	} else {
		modules__update(tr->mods, l->maps);
	}
	maps__free(l->maps);
}

void tracer__image_tables(void *ctx, uint32_t image, pid_t pid, const struct maps *maps)
{
	struct tracer *tr = ctx;
	int err;

	if (!maps) {
		unwind_image__forget(tr->unw, image);
		return;
	}
	err = unwind_image__update(tr->unw, image, pid, maps, true);
	if (err)
		fprintf(stderr, "memleakbpf: cannot publish the unwind tables of pid %d: %s: it is walked by frame pointers\n",
			pid, strerror(-err));
}

static void learn_maps(struct tracer *tr, uint32_t image, pid_t pid, struct maps *maps)
{
	struct learned_maps l = { image, pid, maps };

	if (!tr->jobs->working(tr)) {
		take_maps(tr, &l);
		return;
	}
	if (vec__reserve(&tr->learned, &tr->cap_learned, tr->nr_learned + 1,
			 sizeof(*tr->learned))) {
		maps__free(maps);	/* a library unloaded before the next report stays unnamed */
		return;
	}
	tr->learned[tr->nr_learned++] = l;
}

static void set_wrappers(struct tracer *tr, struct alloc_wrapper *w, size_t nr)
{
	allocator__free_wrappers(tr->wrappers, tr->nr_wrappers);
	tr->wrappers = w;
	tr->nr_wrappers = nr;
}

/* Did tag end before the report's tables were read? One that ended later may have sites since. */
static bool proc_ended(void *ctx, uint32_t tag)
{
	return processes__ended_by(&((struct tracer *)ctx)->procs, tag,
				   ((struct tracer *)ctx)->ends_before);
}

/* --follow: the files of images whose processes all ended and the last report did not name. */
void tracer__release_images(struct tracer *tr)
{
	if (!tr->site_tags_new)
		return;
	tr->site_tags_new = false;
	tr->images_released += images__release(tr->images, proc_ended, tr, tr->site_tags,
						tr->nr_site_tags);
}

void tracer__catch_up(struct tracer *tr)
{
	tracer__release_images(tr);
	for (size_t i = 0; i < tr->nr_learned; i++)
		take_maps(tr, &tr->learned[i]);
	tr->nr_learned = 0;
	if (tr->wrappers_learned)
		set_wrappers(tr, tr->next_wrappers, tr->nr_next_wrappers);
	tr->wrappers_learned = false;
	tr->next_wrappers = NULL;
	tr->nr_next_wrappers = 0;
}

/* Remember the target's mappings while it is alive, for later reports. */
void tracer__refresh_modules(struct tracer *tr)
{
	struct maps *maps;

	/* After an exec (-p) the maps are the new program's, at the old one's addresses. */
	if (tr->image_gone || tr->target->exited || maps__read(tr->target->pid, &maps))
		return;
	unwind__update(tr->unw, tr->target->pid, maps);
	learn_maps(tr, 0, 0, maps);
}

/* The objects to search: the target's lookup order, or -O's one object. */
static int lookup_objects(struct tracer *tr, struct lookup_order *lo,
			  struct allocator **out)
{
	const char *pfx = tr->opts->symbols_prefix;
	struct lookup_object obj;
	int err;

	if (!tr->opts->obj) {
		err = allocator__resolve(lo->objects, lo->nr, lo->is_static, pfx, out);
		if (err == -ENOENT)
			fprintf(stderr, "memleakbpf: pid %d uses no traceable allocator: nothing in %s or its libraries defines %smalloc (use -O to name one)\n",
				tr->target->pid, lo->nr ? lo->objects[0].path : "it", pfx ?: "");
		return err;
	}
	err = lookup_object__init(&obj, tr->target->pid, tr->opts->obj, NULL);
	if (err) {
		fprintf(stderr, "memleakbpf: -O %s: %s in the target's file system\n", tr->opts->obj,
			strerror(-err));
		lookup_object__release(&obj);
		return err;
	}
	err = allocator__resolve(&obj, 1, true, pfx, out);
	if (err == -ENOENT)
		fprintf(stderr, "memleakbpf: -O %s: defines no %smalloc\n", tr->opts->obj, pfx ?: "");
	lookup_object__release(&obj);
	return err;
}

/* -v: which mode runs, exact or sampled (docs/SAMPLING.md). */
static void say_sampling(const struct opts *o)
{
	if (o->sample_mode == SAMPLE_BYTES)
		fprintf(stderr, "memleakbpf:   sampling: --sample %llu: a block of s bytes with probability 1-exp(-s/%llu), per thread%s\n",
			(unsigned long long)o->sample_value, (unsigned long long)o->sample_value,
			o->sample_seed ? ", seeded (MEMLEAKBPF_SAMPLE_SEED)" : "");
	else if (o->sample_mode == SAMPLE_COUNT)
		fprintf(stderr, "memleakbpf:   sampling: -s %llu: each allocation with probability 1/%llu%s\n",
			(unsigned long long)o->sample_value, (unsigned long long)o->sample_value,
			o->sample_seed ? ", seeded (MEMLEAKBPF_SAMPLE_SEED)" : "");
	else
		fputs("memleakbpf:   exact: every block traced (--sample to sample)\n", stderr);
}

static void announce(struct tracer *tr, const struct allocator *a)
{
	fprintf(stderr, "memleakbpf: tracing pid %d: %zu allocation functions, %smalloc from %s; %s\n",
		tr->target->pid, a->nr, a->prefix ?: "", a->malloc_path,
		tr->opts->count ? "ends after COUNT reports" : "Ctrl-C to end");
	if (tr->opts->verbose)
		say_sampling(tr->opts);
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
	if (tr->opts->verbose && a->nr_wrappers && !tr->nr_wrappers && !tr->nr_next_wrappers)
		fprintf(stderr, "memleakbpf:   operator new and delete in %s: thin wrappers over malloc and free, not probed; their blocks are counted at malloc, and named new or new[]\n",
			a->wrappers[0].path);
	if (tr->jobs->working(tr)) {
		/* The job running may read them: the new ones wait for it. */
		allocator__free_wrappers(tr->next_wrappers, tr->nr_next_wrappers);
		tr->next_wrappers = a->wrappers;
		tr->nr_next_wrappers = a->nr_wrappers;
		tr->wrappers_learned = true;
	} else {
		set_wrappers(tr, a->wrappers, a->nr_wrappers);
	}
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

/*
 * -c --reach: a stop at _exit, in the first object of the lookup order that
 * defines it (the C library; the executable when static). Without it the
 * final report has no scan, and says nothing of reachability: not fatal.
 */
static void attach_exit_stop(struct tracer *tr, const struct lookup_order *lo)
{
	for (size_t i = 0; i < lo->nr; i++) {
		struct elf_file *ef;
		uint64_t vaddr, off;
		int err;

		if (!lo->objects[i].open_path || elf_file__open(lo->objects[i].open_path, &ef))
			continue;
		err = elf_file__find_func(ef, "_exit", false, &vaddr, &off);
		elf_file__close(ef);
		if (!err) {
			probes_reach__attach_exit_stop(tr->probes, lo->objects[i].open_path, off);
			return;
		}
	}
	fprintf(stderr, "memleakbpf: --reach: no _exit in pid %d's objects: no scan at its exit\n",
		tr->target->pid);
}

/* -p --follow: the descendants found running are followed from now on. */
static void say_running(const struct tracer *tr, int n)
{
	if (n < 0)
		fprintf(stderr, "memleakbpf: cannot list the processes pid %d started: %s\n",
			tr->target->pid, strerror(-n));
	else if (n)
		fprintf(stderr, "memleakbpf: following %d %s pid %d started before the attach too (what they allocated before is unknown)\n",
			n, n == 1 ? "process" : "processes", tr->target->pid);
}

/*
 * -p --follow: the libraries of the descendants taken in running, those
 * the target has not loaded itself (images.h), named as if seen loaded.
 */
static void learn_running(struct tracer *tr)
{
	struct maps *maps;

	/* Only this thread adds processes, and no report runs yet. */
	for (size_t i = 0; i < tr->procs.nr; i++) {
		const struct process_info *info = &tr->procs.v[i];

		if (info->attached && !maps__read(info->pid, &maps))
			take_maps(tr, &(struct learned_maps){ info->tag, info->pid, maps });
	}
}

/* -p --follow: the descendants running now, followed from now on, their libraries named. */
static void follow_running(struct tracer *tr)
{
	say_running(tr, follow__running(tr->probes, &tr->procs, tr->target->pid));
	learn_running(tr);
}

/* Resolve the allocator from the target's current state and probe it. */
static int attach_allocator(struct tracer *tr, const struct maps *maps,
			    struct lookup_order *lo)
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
		err = pytrace__probe_objects(tr->py, lo, a);
	if (!err)
		err = build_core_tables(tr, maps, lo, a);
	if (!err)
		err = probes_attach__allocator(tr->probes, a);
	if (err >= 0 && !tr->tracing) {
		tr->tracing = true;
		clock_gettime(CLOCK_MONOTONIC, &tr->start);
		insight__start(tr->ins, tr->target->pid, &tr->start);
		tr->warm_addr = malloc_address(a, maps);
		/* Before the line that says tracing began: they are traced too from then. */
		if (tr->opts->follow && !tr->target->spawned)
			follow_running(tr);
		announce(tr, a);
		err = tracer__start_timer(tr);
	}
	if (err >= 0) {
		take_wrappers(tr, a);
		tr->allocator = report__allocator_of(a->malloc_path);
	}
	if (err >= 0 && tr->opts->reach && tr->target->spawned)
		attach_exit_stop(tr, lo);
	allocator__free(a);
	return err < 0 ? err : 0;
}

/* After an exec: tracer__on_stopped waited for the job running. */
static int forget_image(struct tracer *tr)
{
	strset__clear(&tr->link_paths);
	lookup_order__free(tr->last_order);
	tr->last_order = NULL;
	modules__clear(tr->mods);
	symbolizer__reset(tr->sym);
	insight__reset(tr->ins, tr->target->pid);
	pytrace__forget(tr->py);
	return probes__clear(tr->probes);
}

/* The link map's paths, for the next stop to see what is new. */
static void remember_paths(struct tracer *tr, const struct lookup_order *lo)
{
	strset__clear(&tr->link_paths);
	for (size_t i = 0; i < lo->nr; i++)
		strset__add(&tr->link_paths, lo->objects[i].path);
}

/*
 * What a stop was for, to name the longest: the objects that are new in the
 * link map (a dlopen'ed library first, then what it needs; the dynamic
 * linker keeps itself last, so new ones are not always at the end).
 */
static void name_stop(struct tracer *tr, const struct lookup_order *lo, char *what, size_t len)
{
	const char *first = NULL, *base;
	size_t fresh = 0;

	for (size_t i = 0; i < lo->nr; i++) {
		const char *path = lo->objects[i].path;

		if (!strset__has(&tr->link_paths, path) && !fresh++)
			first = path;
	}
	remember_paths(tr, lo);
	if (!first) {
		snprintf(what, len, "%s", lo->complete ? "no new object" : "a load beginning");
		return;
	}
	base = strrchr(first, '/');
	base = base ? base + 1 : first;
	if (fresh == 1)
		snprintf(what, len, "image %s", base);
	else
		snprintf(what, len, "image %s and %zu more", base, fresh - 1);
}

/*
 * The target is stopped: right after an exec, or at a dynamic-linker event.
 * Once the linker has mapped everything (or for a static binary at once),
 * probe the allocator before any of the program's code runs.
 */
static int on_stop(struct tracer *tr, char *what, size_t len)
{
	uint64_t execs = counters__read(tr->probes, CNT_EXECS);
	const struct report_python *py;
	struct lookup_order *lo = NULL;
	struct maps *maps = NULL;
	int err;

	if (execs != tr->execs_seen) {
		/* A new image: what the old one allocated is gone with it. */
		tr->execs_seen = execs;
		err = forget_image(tr);
		if (err)
			return err;
		/* --follow traces the shell's children, each through its exec, instead. */
		probes__set_follow_shell(tr->probes, !tr->opts->follow &&
					 target__runs_shell_command(tr->target->pid));
	}
	err = maps__read(tr->target->pid, &maps);
	if (!err)
		err = lookup_order__read(tr->target->pid, maps, tr->last_order, &lo);
	if (err && proc__state(tr->target->pid))
		fprintf(stderr, "memleakbpf: cannot read the link map of pid %d: %s\n",
			tr->target->pid, strerror(-err));
	if (!err)
		name_stop(tr, lo, what, len);
	if (tr->opts->verbose > 1 && !err)
		fprintf(stderr, "memleakbpf: stop: execs %llu, %zu objects, %s%s\n",
			(unsigned long long)execs, lo->nr, lo->is_static ? "static, " : "",
			lo->complete ? "complete" : "loading");
	if (!err && !lo->is_static) {
		err = probes_attach__dl(tr->probes, lo->ldso_open_path);
		probes__set_stop_on_dl(tr->probes, true);
		probes__set_dl_r_debug(tr->probes, lo->r_debug);
	}
	/* Not again once Python's shutdown began: reports__on_python_exit detached them. */
	py = pytrace__report(tr->py);	/* the new image's, after an exec */
	if (!err && lo->complete && !(py && py->shutdown))
		err = attach_allocator(tr, maps, lo);
	if (!err) {
		unwind__update(tr->unw, tr->target->pid, maps);
		learn_maps(tr, 0, 0, maps);
		maps = NULL;
	}
	/* The next stop's objects are mostly these: taken from them. */
	lookup_order__free(tr->last_order);
	tr->last_order = err ? NULL : lo;
	if (err)
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
		err = lookup_order__read(tr->target->pid, maps, NULL, &lo);
	if (err)
		fprintf(stderr, "memleakbpf: cannot read the link map of pid %d: %s%s\n",
			tr->target->pid, strerror(-err),
			err == -EACCES ? " (another user's process: memleakbpf needs root or CAP_DAC_READ_SEARCH too)" : "");
	/* Hear of dlopen/dlclose, so that their mappings are kept for reports. */
	if (!err && !lo->is_static && !probes_attach__dl(tr->probes, lo->ldso_open_path))
		probes__set_notify_dl(tr->probes, true);
	/*
	 * The tables first: the target runs, and allocates as soon as probed.
	 * The modules too: its running descendants' are set against them.
	 */
	if (!err)
		unwind__update(tr->unw, tr->target->pid, maps);
	if (!err)
		modules__update(tr->mods, maps);
	if (!err)
		err = attach_allocator(tr, maps, lo);
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

/* A new image (an exec, or the shell's child): the job running must give everything back. */
static bool new_image(struct tracer *tr, pid_t pid)
{
	return pid != tr->target->pid || counters__read(tr->probes, CNT_EXECS) != tr->execs_seen;
}

/*
 * A stop that could not be handled (what failed said why): the command is
 * the user's, not ours to kill. It runs on, untraced from here to its end,
 * which the run waits for as usual; no report: what it allocates is unknown.
 */
static void let_run_untraced(struct tracer *tr)
{
	static const struct itimerspec off;

	fprintf(stderr, "memleakbpf: pid %d runs on untraced to its end: no report will be made\n",
		tr->target->pid);
	probes__retarget(tr->probes, 0);	/* no more stops, nothing counted */
	timerfd_settime(tr->timerfd, 0, &off, NULL);
	tr->untraced = tr->image_gone = true;
}

/*
 * BPF stopped pid at an exec or a dynamic-linker event: look, attach,
 * resume. How long the target waited counts from the latest moment it can
 * have stopped without the loop seeing it at once (tracer.h: awake).
 */
void tracer__on_stopped(struct tracer *tr, pid_t pid)
{
	char what[HOLD_WHAT_LEN] = "?";
	bool image = new_image(tr, pid);
	struct maps *libs;
	uint32_t img;
	struct timespec t0 = tr->awake;
	double ms;
	int err;

	/* A followed process of an image it exec'd: its own stop. */
	if (pid != tr->target->pid && pid != probes__handoff(tr->probes) &&
	    follow_exec__stopped(tr->probes, &tr->procs, tr->images, pid, &img, &libs)) {
		if (!libs)
			return;
		/* Its files, opened while the library is mapped: not after a job. */
		tr->jobs->settle(tr);
		learn_maps(tr, img, pid, libs);
		target__continue(pid);
		tr->jobs->resume(tr);
		return;
	}
	if (image)
		tr->jobs->settle(tr);
	err = target__wait_stopped(pid, STOP_WAIT_MS);
	if (err == -ESRCH) {
		if (image)
			tr->jobs->resume(tr);
		return;
	}
	/*
	 * Not stopped after a second (a machine that busy): the stop's work is
	 * done all the same, while it runs, and the SIGCONT below drops the
	 * SIGSTOP still pending, so that it never stays stopped with no one
	 * to resume it.
	 */
	if (err)
		fprintf(stderr, "memleakbpf: pid %d did not stop for the tracer within %d ms: "
			"looked at while it ran (a stack through what it just mapped may be cut short "
			"meanwhile)\n", (int)pid, STOP_WAIT_MS);
	err = 0;
	if (pid != tr->target->pid)
		err = pid == probes__handoff(tr->probes) ? hand_over(tr, pid) : -ESRCH;
	if (!err)
		err = on_stop(tr, what, sizeof(what));
	if (err && err != -ESRCH && proc__state(pid))
		let_run_untraced(tr);
	target__continue(pid);
	clock_gettime(CLOCK_MONOTONIC, &tr->awake);	/* its next stop comes after this */
	ms = tracer__since(&t0) * 1e3;
	holds__add(&tr->holds, ms, what);
	if (tr->opts->verbose > 1)
		fprintf(stderr, "memleakbpf: stop: held %.1f ms (%s)\n", ms, what);
	if (image)
		tr->jobs->resume(tr);
}

void tracer__free(struct tracer *tr)
{
	for (size_t i = 0; i < tr->nr_learned; i++)
		maps__free(tr->learned[i].maps);
	free(tr->learned);
	free(tr->site_tags);
	free(tr->fold_later);
	allocator__free_wrappers(tr->next_wrappers, tr->nr_next_wrappers);
	strset__clear(&tr->link_paths);
	lookup_order__free(tr->last_order);
}
