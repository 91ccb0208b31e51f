// SPDX-License-Identifier: GPL-2.0
/*
 * --follow through exec: a followed process that runs exec is stopped by
 * BPF before the new image's first instruction, under a new tag
 * (bpf/follow.bpf.h: follow_exec), and again at each event of its dynamic
 * linker until its link map is complete; then its allocator is looked up
 * as the target's is under -c (allocator/), probed for its pid alone, its
 * files remembered for its stacks' names (target/images.h), and it runs on,
 * no call of its new image unseen. Its old image's links are closed at the
 * exec, before the new image maps anything, and the blocks the old image
 * held are freed by the exec: gone with its address space, not leaked.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "clock.h"
#include "probes.h"
#include "probes_internal.h"
#include "sample.h"
#include "allocator/allocator.h"
#include "model/processes.h"
#include "target/images.h"
#include "target/modules.h"
#include "target/target.h"
#include "util/procmaps.h"
#include "util/vec.h"

#define EXEC_STOP_WAIT_MS 1000

/* pid's entry in BPF's table of followed processes: false when it has none. */
static bool proc_entry(struct probes *p, pid_t pid, struct memleak_proc *e)
{
	return bpfmaps__proc_lookup(p->skel, pid, e);
}

/* Its image is probed (or cannot be): its dynamic linker's events no longer stop it. */
static void loaded(struct probes *p, pid_t pid, uint32_t tag)
{
	struct memleak_proc e;

	if (proc_entry(p, pid, &e) && e.tag == tag) {
		e.loading = 0;
		bpfmaps__proc_update(p->skel, pid, &e);
	}
	/* Not the watchdog's any more (unless a later event took the slot). */
	bpfmaps__release_held(p->skel, tag, pid);
}

void follow_exec__forget(struct probes *p, pid_t pid, uint32_t tag, uint32_t image)
{
	bpfmaps__forget_own_internal(p->skel, pid);
	/* Its image's links and interpreter, if no other process runs it (image_links.c). */
	if (image)
		image_links__release(p, image);
	else if (p->follow.image_fn)
		p->follow.image_fn(p->follow.image_ctx, tag, 0, NULL);
}

/* Its allocator's code, whose own mmaps (thread stacks, arenas) are not its program's. */
static int set_internal(struct probes *p, pid_t pid, const struct allocator *a,
			const struct maps *maps)
{
	struct internal_set set = {};

	set.nr = (__u32)allocator__internal_ranges(a, maps, set.r, MEMLEAK_MAX_INTERNAL);
	return bpfmaps__set_own_internal(p->skel, pid, &set);
}

static int link_dl(struct probes *p, pid_t pid, const struct lookup_order *lo)
{
	int fd = probes_attach__link_dl_pid(p, lo->ldso_open_path, pid);

	return fd < 0 ? fd : follow__add_links(p, pid, &fd, 1);
}

/* The allocator of pid's complete image, probed for pid; its files kept for the names. */
static int probe_image(struct probes *p, struct images *im, pid_t pid, uint32_t tag,
		       const struct maps *maps, struct lookup_order *lo)
{
	struct allocator *a;
	struct modules *mods;
	size_t n = 0;
	int *fds, err = allocator__resolve(lo->objects, lo->nr, lo->is_static,
						 p->follow.symbols_prefix, &a);

	if (!err)
		err = set_internal(p, pid, a, maps);
	if (err) {
		allocator__free(a);
		return err;
	}
	fds = calloc(probes_attach__allocator_links_max(a) ?: 1, sizeof(*fds));
	err = fds ? probes_attach__link_allocator_pid(p, a, pid, fds, &n) : -ENOMEM;
	if (fds) {
		int added = follow__add_links(p, pid, fds, n);

		err = err ?: added;
	}
	free(fds);
	allocator__free(a);
	mods = err ? NULL : images__new_modules(im, pid);
	if (!err && !mods)
		err = -ENOMEM;
	if (!err && (err = modules__update(mods, maps)))
		modules__free(mods);
	return err ?: images__add(im, tag, mods);
}

/*
 * pid, stopped, at its exec (first) or at a dynamic-linker event: probe its
 * allocator once the link map is complete. 1 when probed, 0 when it is to
 * be stopped again, or -errno.
 */
static int look(struct probes *p, struct images *im, pid_t pid, uint32_t tag, bool first)
{
	struct lookup_order *lo = NULL;
	struct maps *maps = NULL;
	int err = maps__read(pid, &maps);

	/* The links made here are the image's: its forks get them too (image_links.c). */
	image_links__record(p, tag);
	if (!err)
		err = lookup_order__read(pid, maps, NULL, &lo);
	if (!err && first && !lo->is_static)
		err = link_dl(p, pid, lo);
	if (!err && (lo->complete || lo->is_static))
		err = probe_image(p, im, pid, tag, maps, lo) ?: 1;
	/* A Python interpreter in it: its frames, before it runs any (python/pytrace.c). */
	if (err > 0 && p->py.exec_fn)
		p->py.exec_fn(p->py.exec_ctx, pid, tag, maps, lo);
	/* Its unwind tables, before it runs (tracer.c). */
	if (err > 0 && p->follow.image_fn)
		p->follow.image_fn(p->follow.image_ctx, tag, pid, maps);
	image_links__record(p, 0);
	lookup_order__free(lo);
	maps__free(maps);
	return err;
}

static void looked(struct probes *p, struct processes *ps, pid_t pid, uint32_t tag,
		   uint64_t exec_ns, int res)
{
	if (res > 0)
		processes__probed(ps, tag, clock__ms_since_ns(exec_ns));
	if (res < 0)
		fprintf(stderr, "memleakbpf: cannot probe the image pid %d exec'd: %s: it runs untraced from there\n",
			pid, strerror(-res));
	if (res)
		loaded(p, pid, tag);
}

/*
 * The buckets before dist from addr's home no longer count it as stored
 * past them: through a window of their own, the walk's being at bucket at.
 */
static void unspill(struct probes *p, struct mapwin *w, uint64_t addr, uint32_t tag, size_t at)
{
	size_t mask = p->tables.buckets - 1;
	size_t home = (size_t)(((addr ^ ((uint64_t)tag << 47)) * 0x9e3779b97f4a7c15ULL) >>
			       p->skel->rodata->alloc_bucket_shift);
	size_t dist = (at - home) & mask;

	for (size_t d = 0; d < dist; d++) {
		struct alloc_bucket *b = mapwin__at(w, (home + d) & mask);

		if (b)	/* else a lookup goes on past it: slower, never wrong */
			__sync_fetch_and_sub(&b->spill, 1);
	}
}

/*
 * The blocks of tag, whose image an exec replaced: gone with its address
 * space, as a free would take them out of the table (bpf/tables.bpf.h:
 * forget), of their sites' figures and of the live bytes (site_sub). No
 * program touches tag any more: the process has a new one, and its other
 * threads are gone. A walk of the whole table, so made once the process
 * runs on. The sites' figures are taken back after it, in the order of
 * their slots: one window's pass, not one per block.
 */
struct gone_block {
	uint32_t site;
	uint64_t size;
};

struct image_blocks {
	struct probes *p;
	uint32_t tag;
	uint64_t bytes, blocks;
	struct mapwin spill;
	struct gone_block *gone;
	size_t nr, cap;
};

static int free_block(void *arg, struct alloc_bucket *bk, size_t b, int i, uint64_t addr,
		      const struct alloc_info *info)
{
	struct image_blocks *im = arg;
	struct probes *p = im->p;

	if (info->proc != im->tag || !__sync_bool_compare_and_swap(&bk->addr[i], addr, 0))
		return 0;
	unspill(p, &im->spill, addr, im->tag, b);
	/* No room to note it: its site keeps the block as live (the report shows it). */
	if (info->site < p->tables.slots &&
	    !vec__reserve(&im->gone, &im->cap, im->nr + 1, sizeof(*im->gone)))
		im->gone[im->nr++] = (struct gone_block){ info->site, info->size };
	im->bytes += info->size;
	im->blocks++;
	return 0;
}

static int gone_cmp(const void *a, const void *b)
{
	const struct gone_block *x = a, *y = b;

	return (x->site > y->site) - (x->site < y->site);
}

/* What BPF's free takes back from a block's site: under sampling, the block's weight. */
static void site_sub(struct probes *p, struct site_slot *slot, uint64_t size)
{
	struct sample_weight w;

	probes_sample__block_weight(p, slot->api, size, &w);
	bpfmaps__live_sub(p->skel, MEMLEAK_KIND_OF(slot->api), w.bytes);
	__sync_fetch_and_add(&slot->counts[0].freed_bytes, w.bytes);
	__sync_fetch_and_add(&slot->counts[0].freed_allocs, w.blocks);
	if (p->sample.mode) {
		__sync_fetch_and_add(&slot->counts[0].freed_samples, 1);
		__sync_fetch_and_add(&slot->counts[0].freed_var, w.var);
	}
}

static void sites_sub(struct image_blocks *im)
{
	struct mapwin w;
	struct site_slot *slot;

	qsort(im->gone, im->nr, sizeof(*im->gone), gone_cmp);
	probes_tables__sites(&im->p->tables, &w);
	for (size_t i = 0; i < im->nr; i++)
		if ((slot = mapwin__at(&w, im->gone[i].site)))
			site_sub(im->p, slot, im->gone[i].size);
	mapwin__end(&w);
}

static void free_image(struct probes *p, uint32_t tag, uint64_t *bytes, uint64_t *blocks)
{
	struct image_blocks im = { .p = p, .tag = tag };

	probes_tables__allocs(&p->tables, &im.spill);
	pthread_mutex_lock(&p->rc.tables_lock);	/* not while a site is retired */
	snapshot__each_block(p, free_block, &im);
	sites_sub(&im);
	pthread_mutex_unlock(&p->rc.tables_lock);
	mapwin__end(&im.spill);
	free(im.gone);
	*bytes += im.bytes;
	*blocks += im.blocks;
}

void follow_exec__on_exec(struct probes *p, struct processes *ps, struct images *im,
			  int verbose, const struct memleak_event *ev)
{
	uint64_t gone_bytes = 0, gone_blocks = 0;
	struct process_info old = {}, info = { .tag = ev->proc, .pid = (pid_t)ev->tgid,
					       .exec_of = ev->prev, .traced = true,
					       .exec_ns = ev->time_ns };
	int res = target__stop_queued(info.pid) ? 0 :
		  target__wait_stopped(info.pid, EXEC_STOP_WAIT_MS);

	follow__close_now(p, info.pid);
	follow_exec__forget(p, info.pid, ev->prev, ev->image);	/* the old image's ranges */
	if (image_links__hold(p, info.tag))
		res = -ENOMEM;
	processes__get(ps, ev->prev, &old);
	info.ppid = old.ppid;
	target__cmdline(info.pid, &info.command);
	/* Named before it runs, as at a fork. */
	processes__add(ps, &info);
	free(info.command);
	if (!res)
		res = look(p, im, info.pid, info.tag, true);
	looked(p, ps, info.pid, info.tag, ev->time_ns, res);
	if (verbose > 1)
		fprintf(stderr, "memleakbpf: pid %d exec'd: %s\n", info.pid,
			res > 0 ? "probed" : res ? "untraced" : "held at its libraries' loads");
	target__continue(info.pid);
	free_image(p, ev->prev, &gone_bytes, &gone_blocks);
	processes__execed(ps, ev->prev, gone_bytes, gone_blocks);
}

void follow_exec__on_image(struct probes *p,
		      void (*fn)(void *ctx, uint32_t image, pid_t pid, const struct maps *maps),
		      void *ctx)
{
	p->follow.image_fn = fn;
	p->follow.image_ctx = ctx;
}

bool follow_exec__stopped(struct probes *p, struct processes *ps, struct images *im,
			    pid_t pid, uint32_t *image, struct maps **libs)
{
	struct memleak_proc e;
	struct process_info info;
	int res;

	*libs = NULL;
	if (!p->follow.children || !proc_entry(p, pid, &e) || !e.tag)
		return false;
	/* A fork of the target's: its modules are its own once it loads a library. */
	*image = e.image ?: e.tag;
	/* Probed: a library comes or goes; the caller opens its files while it is mapped. */
	if (!e.loading && !target__wait_stopped(pid, EXEC_STOP_WAIT_MS) && !maps__read(pid, libs))
		return true;
	*libs = NULL;
	res = e.loading ? target__wait_stopped(pid, EXEC_STOP_WAIT_MS) : 1;
	if (!res)
		res = look(p, im, pid, e.tag, false);
	if (e.loading && processes__get(ps, e.tag, &info))
		looked(p, ps, pid, e.tag, info.exec_ns, res);
	target__continue(pid);
	return true;
}
