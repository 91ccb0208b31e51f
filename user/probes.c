// SPDX-License-Identifier: GPL-2.0
/* BPF skeleton lifecycle and uprobe attachment from the allocator's table. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "probes.h"
#include "probes_internal.h"

/* One attached function: its entry probe and, for allocating ones, its return. */
struct attachment {
	dev_t dev;
	ino_t ino;
	uint64_t offset;
	uint32_t api;
	struct bpf_link *entry;
	struct bpf_link *exit;
	bool wanted;
};

static int verbosity;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG && verbosity < 3)
		return 0;
	if (verbosity < 2)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static void size_maps(struct memleak_bpf *skel, const struct probes_config *cfg)
{
	bpf_map__set_max_entries(skel->maps.allocs, cfg->max_allocs);
	bpf_map__set_max_entries(skel->maps.stack_traces, cfg->stack_storage_size);
	/* A stack belongs to one API (its innermost frame is the call), so
	 * sites need one entry per stack, plus the per-API failed-stack sites. */
	bpf_map__set_max_entries(skel->maps.sites, cfg->stack_storage_size + API__COUNT);
}

int probes__load(const struct probes_config *cfg, struct probes **out)
{
	struct probes *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return -ENOMEM;
	verbosity = cfg->verbose;
	libbpf_set_print(libbpf_print);
	p->tgid = cfg->tgid;
	p->skel = memleak_bpf__open();
	if (!p->skel) {
		err = -errno;
		fprintf(stderr, "memleakbpf: cannot open the BPF object: %s\n", strerror(-err));
		goto fail;
	}
	p->skel->rodata->targ_tgid = cfg->tgid;
	p->skel->rodata->min_size = cfg->min_size;
	p->skel->rodata->max_size = cfg->max_size;
	p->skel->rodata->page_size = (uint64_t)sysconf(_SC_PAGESIZE);
	size_maps(p->skel, cfg);
	err = memleak_bpf__load(p->skel);
	if (err) {
		fprintf(stderr, "memleakbpf: cannot load the BPF programs: %s (run with -vv for the verifier log)\n",
			strerror(-err));
		goto fail;
	}
	p->skel->bss->stop_on_exec = cfg->stop_on_exec;
	p->skel->links.exec_stop = bpf_program__attach(p->skel->progs.exec_stop);
	if (!p->skel->links.exec_stop) {
		err = -errno;
		fprintf(stderr, "memleakbpf: cannot attach to sched_process_exec: %s\n", strerror(-err));
		goto fail;
	}
	*out = p;
	return 0;
fail:
	probes__free(p);
	return err;
}

/* The entry program for an API; they differ in where the size is. */
static struct bpf_program *entry_prog(struct memleak_bpf *skel, uint32_t api)
{
	switch (api) {
	case API_CALLOC:
		return skel->progs.calloc_enter;
	case API_REALLOC:
		return skel->progs.realloc_enter;
	case API_REALLOCARRAY:
		return skel->progs.reallocarray_enter;
	case API_POSIX_MEMALIGN:
		return skel->progs.posix_memalign_enter;
	case API_ALIGNED_ALLOC:
	case API_MEMALIGN:
		return skel->progs.memalign_enter;
	case API_PVALLOC:
		return skel->progs.pvalloc_enter;
	case API_MMAP:
		return skel->progs.mmap_enter;
	case API_MREMAP:
		return skel->progs.mremap_enter;
	case API_FREE:
	case API_DELETE:
	case API_DELETE_ARRAY:
		return skel->progs.free_enter;
	case API_MUNMAP:
		return skel->progs.munmap_enter;
	default:	/* malloc, valloc, new, new[]: size first */
		return skel->progs.size_enter;
	}
}

static struct bpf_link *attach_one(struct probes *p, struct bpf_program *prog, bool retprobe,
				   const struct alloc_probe *ap)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = retprobe, .bpf_cookie = ap->api);
	struct bpf_link *link;

	link = bpf_program__attach_uprobe_opts(prog, p->tgid, ap->open_path, ap->offset, &opts);
	if (!link)
		fprintf(stderr, "memleakbpf: cannot attach %s to %s in %s: %s\n",
			retprobe ? "a return probe" : "a probe", ap->symbol, ap->path, strerror(errno));
	return link;
}

static struct attachment *find_attachment(struct probes *p, const struct stat *st,
					  const struct alloc_probe *ap)
{
	for (size_t i = 0; i < p->nr_attached; i++) {
		struct attachment *at = &p->attached[i];

		if (at->dev == st->st_dev && at->ino == st->st_ino && at->offset == ap->offset &&
		    at->api == ap->api)
			return at;
	}
	return NULL;
}

static void detach(struct attachment *at)
{
	bpf_link__destroy(at->entry);
	bpf_link__destroy(at->exit);
	at->entry = at->exit = NULL;
}

static int attach_new(struct probes *p, const struct alloc_probe *ap, const struct stat *st)
{
	struct attachment *at, *arr;

	arr = realloc(p->attached, (p->nr_attached + 1) * sizeof(*arr));
	if (!arr)
		return -ENOMEM;
	p->attached = arr;
	at = &arr[p->nr_attached];
	*at = (struct attachment){ .dev = st->st_dev, .ino = st->st_ino, .offset = ap->offset,
				   .api = ap->api, .wanted = true };
	if (ap->api < API__ALLOCATING) {
		at->exit = attach_one(p, p->skel->progs.alloc_exit, true, ap);
		if (!at->exit)
			return -errno ? -errno : -EINVAL;
	}
	at->entry = attach_one(p, entry_prog(p->skel, ap->api), false, ap);
	if (!at->entry) {
		int err = -errno ? -errno : -EINVAL;

		detach(at);
		return err;
	}
	p->nr_attached++;
	return 0;
}

/* Detach what is no longer wanted, compacting the array. */
static void detach_unwanted(struct probes *p)
{
	size_t kept = 0;

	for (size_t i = 0; i < p->nr_attached; i++) {
		if (!p->attached[i].wanted) {
			detach(&p->attached[i]);
			continue;
		}
		p->attached[kept++] = p->attached[i];
	}
	p->nr_attached = kept;
}

int probes__attach_allocator(struct probes *p, const struct allocator *a)
{
	int err;

	for (size_t i = 0; i < p->nr_attached; i++)
		p->attached[i].wanted = false;
	for (size_t i = 0; i < a->nr; i++) {
		const struct alloc_probe *ap = &a->probes[i];
		struct attachment *at;
		struct stat st;

		if (stat(ap->open_path, &st)) {
			err = -errno;
			fprintf(stderr, "memleakbpf: cannot read %s: %s\n", ap->path, strerror(errno));
			return err;
		}
		at = find_attachment(p, &st, ap);
		if (at) {
			at->wanted = true;
			continue;
		}
		err = attach_new(p, ap, &st);
		if (err)
			return err;
	}
	detach_unwanted(p);
	return (int)p->nr_attached;
}

int probes__attach_dl(struct probes *p, const char *path)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .func_name = "_dl_debug_state");
	struct stat st;

	if (stat(path, &st))
		return -errno;
	if (p->dl_link && p->dl_dev == st.st_dev && p->dl_ino == st.st_ino)
		return 0;
	bpf_link__destroy(p->dl_link);
	p->dl_link = bpf_program__attach_uprobe_opts(p->skel->progs.dl_debug_state, p->tgid,
						     path, 0, &opts);
	if (!p->dl_link) {
		int err = -errno;

		fprintf(stderr, "memleakbpf: cannot probe the dynamic linker %s: %s\n", path,
			strerror(-err));
		return err;
	}
	p->dl_dev = st.st_dev;
	p->dl_ino = st.st_ino;
	return 0;
}

void probes__set_internal(struct probes *p, const struct addr_range *ranges, size_t nr)
{
	/* Shrink first, so that BPF never reads a half-written range. */
	p->skel->bss->nr_internal = 0;
	__sync_synchronize();
	for (size_t i = 0; i < nr && i < MEMLEAK_MAX_INTERNAL; i++)
		p->skel->bss->internal[i] = ranges[i];
	__sync_synchronize();
	p->skel->bss->nr_internal = nr < MEMLEAK_MAX_INTERNAL ? nr : MEMLEAK_MAX_INTERNAL;
}

void probes__set_stop_on_dl(struct probes *p, bool on)
{
	p->skel->bss->stop_on_dl = on;
}

uint64_t probes__counter(const struct probes *p, enum memleak_counter c)
{
	return __atomic_load_n(&p->skel->bss->counters[c], __ATOMIC_RELAXED);
}

/* Delete every key of a map; the target is stopped, so nothing races. */
static int clear_map(struct bpf_map *map)
{
	int fd = bpf_map__fd(map);
	size_t key_size = bpf_map__key_size(map);
	char key[64];

	if (key_size > sizeof(key))
		return -EINVAL;
	while (!bpf_map_get_next_key(fd, NULL, key))
		if (bpf_map_delete_elem(fd, key))
			return -errno;
	return 0;
}

int probes__clear(struct probes *p)
{
	int err;

	err = clear_map(p->skel->maps.allocs);
	if (!err)
		err = clear_map(p->skel->maps.sites);
	if (!err)
		err = clear_map(p->skel->maps.stack_traces);
	for (int c = 0; c < CNT__COUNT; c++)
		if (c != CNT_STOP_REQUESTS && c != CNT_EXECS)
			p->skel->bss->counters[c] = 0;
	return err;
}

void probes__free(struct probes *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nr_attached; i++)
		detach(&p->attached[i]);
	free(p->attached);
	bpf_link__destroy(p->dl_link);
	memleak_bpf__destroy(p->skel);
	free(p);
}
