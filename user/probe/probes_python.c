// SPDX-License-Identifier: GPL-2.0
/*
 * Python frames (user/python/): the interpreter's offsets for BPF's walk,
 * the probes on its exit, and the code objects BPF copies.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "probes.h"
#include "probes_internal.h"
#include "python/pytrace.h"
#include "snapshot.h"
#include "model/stackcache.h"
#include "util/vec.h"

static void close_python_exits(struct probes *p)
{
	for (int i = 0; i < 2; i++) {
		if (p->py_exit.fds[i] >= 0)
			close(p->py_exit.fds[i]);
		if (p->py_exit.files[i] >= 0)
			close(p->py_exit.files[i]);
		p->py_exit.fds[i] = p->py_exit.files[i] = -1;
	}
}

/* BPF reads every linetable again: no probe tells it of code objects freed. */
static void close_python_dealloc(struct probes *p)
{
	bpfmaps__set_py_code_cache(p->skel, false);
	if (p->py_exit.dealloc_fd >= 0)
		close(p->py_exit.dealloc_fd);
	p->py_exit.dealloc_fd = -1;
}

static int set_python(void *ctx, const struct py_offsets *py, bool stop_at_exit)
{
	struct probes *p = ctx;
	int err;

	bpfmaps__python_off(p->skel);
	if (!py) {
		close_python_exits(p);
		close_python_dealloc(p);
		bpfmaps__set_python(p->skel, NULL, false);
		return 0;
	}
	if (!p->skel->rodata->py_walk)
		return -EOPNOTSUPP;
	err = bpfmaps__python_maps(p->skel);
	if (err)
		return err;
	p->py.used = true;
	bpfmaps__set_python(p->skel, py, stop_at_exit);
	return 0;
}

static int set_image(void *ctx, uint32_t tag, const struct py_offsets *py)
{
	struct probes *p = ctx;
	int err;

	if (!p->skel->rodata->py_walk)
		return -EOPNOTSUPP;
	err = bpfmaps__python_maps(p->skel) ?: bpfmaps__set_py_image(p->skel, tag, py);
	if (err)
		return err;
	p->py.used = true;
	return 0;
}

static void on_exec(void *ctx, void (*fn)(void *arg, pid_t pid, uint32_t tag,
					  const struct maps *maps, const struct lookup_order *lo),
		    void *arg)
{
	struct probes *p = ctx;

	p->py.exec_fn = fn;
	p->py.exec_ctx = arg;
}

/* The events' ring buffer hands the copies to fn (probes.c: on_py_code). */
static void on_code(void *ctx, void (*fn)(void *arg, const struct py_code *c), void *arg)
{
	struct probes *p = ctx;

	p->py.code_fn = fn;
	p->py.code_ctx = arg;
}

static int attach_exit(void *ctx, const char *path, uint64_t offset, bool finalize)
{
	struct probes *p = ctx;
	__u64 off = offset, cookie = finalize;
	int fd = probes_attach__link_uprobes(p, bpf_program__fd(p->skel->progs.py_exit), path, &off,
				      &cookie, 1, false);

	if (fd < 0) {
		fprintf(stderr, "memleakbpf: cannot probe %s in %s: %s\n",
			finalize ? "Py_FinalizeEx" : "_exit", path, strerror(-fd));
		return fd;
	}
	if (p->py_exit.fds[finalize] >= 0)
		close(p->py_exit.fds[finalize]);
	p->py_exit.fds[finalize] = fd;
	if (!p->follow.on)
		return 0;
	/* --follow: its children get the same links (follow.c), on this file. */
	if (p->py_exit.files[finalize] >= 0)
		close(p->py_exit.files[finalize]);
	p->py_exit.files[finalize] = open(path, O_PATH | O_CLOEXEC);
	p->py_exit.offsets[finalize] = (__u64)offset;
	return 0;
}

/*
 * The probe that notes code objects freed (py_code_freed, py_code_frees),
 * then py_lines in use; path NULL: none (this interpreter's code_dealloc is
 * not known). Before BPF walks the frames: a code object freed unnoticed
 * would let a later one at its address pass for it. The link is the
 * target's only: a followed process's frames do not use them
 * (bpf/python.bpf.h).
 */
static int attach_dealloc(void *ctx, const char *path, uint64_t offset)
{
	struct probes *p = ctx;
	__u64 off = offset, cookie = 0;
	int fd;

	close_python_dealloc(p);	/* another interpreter's, if any */
	if (!path)
		return 0;
	fd = probes_attach__link_uprobes(p, bpf_program__fd(p->skel->progs.py_code_dealloc), path,
					 &off, &cookie, 1, false);
	if (fd < 0) {
		fprintf(stderr, "memleakbpf: cannot probe code_dealloc in %s: %s; Python frames "
			"are read in full\n", path, strerror(-fd));
		return fd;
	}
	p->py_exit.dealloc_fd = fd;
	__sync_synchronize();
	bpfmaps__set_py_code_cache(p->skel, true);
	if (p->verbose)
		fprintf(stderr, "memleakbpf: code objects' line tables kept in BPF until freed "
			"(code_dealloc probed at +0x%llx)\n", (unsigned long long)offset);
	return 0;
}

/* A link of its own (closed at its end), which its forks get too (image_links.c). */
static int attach_image_exit(void *ctx, pid_t pid, const char *path, uint64_t offset)
{
	struct probes *p = ctx;
	__u64 off = offset, cookie = 1;	/* py_exit's cookie: Py_FinalizeEx */
	int fd = probes_attach__link_uprobes_pid(p, pid, bpf_program__fd(p->skel->progs.py_exit), path,
					  &off, &cookie, 1, false);

	return fd < 0 ? fd : follow__add_links(p, pid, &fd, 1);
}

/* The stacks of snap to give: those it read, when the last given were those of the reading it carries over. */
static int each_stack(void *ctx, const struct snapshot *snap, uint64_t *walked,
		      int (*fn)(void *arg, const struct py_stack *py), void *arg)
{
	struct snapshot *now = NULL;
	struct py_stack *buf = malloc(sizeof(*buf));
	bool fresh;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	if (!snap) {
		err = snapshot__collect(ctx, 0, &now);
		if (err) {
			free(buf);
			return err;
		}
		snap = now;
	}
	fresh = snap->follows && *walked == snap->follows;
	for (size_t i = 0; fresh && i < snap->nr_fresh && !err; i++) {
		const struct py_stack *py = stack_blob__py(snap->sites[snap->fresh[i]].pystack, buf);

		if (py)
			err = fn(arg, py);
	}
	for (size_t i = 0; !fresh && i < snap->nr && !err; i++) {
		const struct py_stack *py = stack_blob__py(snap->sites[i].pystack, buf);

		if (py)
			err = fn(arg, py);
	}
	*walked = err ? 0 : snap->reading;
	snapshot__free(now);
	free(buf);
	return err;
}

/* Every stack BPF sent before the target stopped taken in first: their frames are held then. */
static struct py_frame *py_frames(void *ctx, size_t *nr)
{
	stack_ring__drain(ctx);
	return stack_blob__py_frames(nr);
}

/* The live blocks of exactly size bytes from api (pymalloc's arenas: 1 MiB mmaps). */
/*
 * The live blocks of exactly size bytes, with their sites: then those whose
 * site is api's, looked up in slot order through a window (a few blocks, a
 * few windows: not a pass over the whole site table at every report).
 */
struct sized_block {
	uint64_t addr;
	uint32_t site;
};

struct sized_blocks {
	struct probes *p;
	uint64_t size;
	struct sized_block *v;
	size_t nr, cap;
};

static int add_sized(void *arg, struct alloc_bucket *bucket, size_t b, int i, uint64_t addr,
		     const struct alloc_info *info)
{
	struct sized_blocks *s = arg;

	if (info->size != s->size || info->site >= s->p->tables.slots)
		return 0;
	if (vec__reserve(&s->v, &s->cap, s->nr + 1, sizeof(*s->v)))
		return -ENOMEM;
	s->v[s->nr++] = (struct sized_block){ addr, info->site };
	return 0;
}

static int by_site(const void *a, const void *b)
{
	const struct sized_block *x = a, *y = b;

	return (x->site > y->site) - (x->site < y->site);
}

/* Those of api's sites, their addresses into addrs (room for s->nr): how many. */
static size_t of_api(struct sized_blocks *s, uint32_t api, uint64_t *addrs)
{
	const struct site_slot *slot;
	struct mapwin w;
	size_t n = 0;

	qsort(s->v, s->nr, sizeof(*s->v), by_site);
	probes_tables__sites(&s->p->tables, &w);
	for (size_t i = 0; i < s->nr; i++) {
		slot = mapwin__at(&w, s->v[i].site);
		if (slot && site_slot__live(slot) && slot->api == api)
			addrs[n++] = s->v[i].addr;
	}
	mapwin__end(&w);
	return n;
}

static int blocks(void *ctx, uint32_t api, uint64_t size, uint64_t **addrs, size_t *nr)
{
	struct sized_blocks s = { .p = ctx, .size = size };
	int err = snapshot__each_block(ctx, add_sized, &s);

	*addrs = err ? NULL : malloc((s.nr ?: 1) * sizeof(**addrs));
	*nr = *addrs ? of_api(&s, api, *addrs) : 0;
	free(s.v);
	return err ?: *addrs ? 0 : -ENOMEM;
}

void probes_python__ops(struct probes *p, struct pytrace_ops *ops)
{
	*ops = (struct pytrace_ops){
		.ctx = p,
		.set_python = set_python,
		.set_image = set_image,
		.on_exec = on_exec,
		.on_code = on_code,
		.attach_exit = attach_exit,
		.attach_dealloc = attach_dealloc,
		.attach_image_exit = attach_image_exit,
		.each_stack = each_stack,
		.py_frames = py_frames,
		.blocks = blocks,
	};
}
