// SPDX-License-Identifier: GPL-2.0
/*
 * Probing the allocator as the target's images come and go: -p attach, and
 * under -c the stops BPF makes at each exec and dynamic-linker event, with
 * the hand-over from a shell to the program it starts.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "allocator.h"
#include "insight.h"
#include "modules.h"
#include "opts.h"
#include "probes.h"
#include "procmaps.h"
#include "pytrace.h"
#include "symbolize.h"
#include "target.h"
#include "tracer.h"
#include "unwind.h"

#define STOP_WAIT_MS 1000

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
		tr->warm_addr = malloc_address(a, maps);
		announce(tr, a);
		err = tracer__start_timer(tr);
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
