// SPDX-License-Identifier: GPL-2.0
/*
 * The target's object files, remembered across its lifetime. Each snapshot of
 * its maps adds the loads not seen before; nothing is forgotten until
 * modules__clear, so stacks captured before a dlclose still resolve.
 *
 * The load bias comes from the ELF program headers (libelf directly: this
 * module must not depend on elfsym.c).
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "modules.h"
#include "modfiles.h"
#include "util/bound.h"
#include "util/elfsym.h"
#include "util/rootpath.h"
#include "util/vec.h"

struct mod {
	struct module pub;
	/* Its file, shared by every load of it in every set; NULL: unreadable. */
	struct modfile *file;
};

struct file_id {
	dev_t dev;
	ino_t inode;
};

/* A piece of the address space and the newest module over it (modules__find's answer). */
struct span {
	uint64_t start, end;
	const struct module *m;
};

struct modules {
	pid_t pid;
	struct modfiles *files;	/* shared with the other sets (modfiles.h) */
	/* A fork's: the modules of the process it forked from, for all it did not load itself. */
	const struct modules *under;
	size_t page_size;
	struct mod **mods;		/* oldest first; pointers stay valid until clear */
	size_t nr, cap;
	struct span *spans;		/* by address, disjoint; NULL: not indexed (a scan) */
	size_t nr_spans;
	struct file_id *not_elf;	/* files seen not to be ELF: never reopened */
	size_t nr_not_elf, cap_not_elf;
};

/* Mappings of one file next to each other in a snapshot: usually one load. */
struct group {
	const struct map_entry *first;	/* the mapping with the lowest offset */
	const struct map_entry *last;
	uint64_t start, end;
	bool executable;
	uint64_t code_start, code_end, code_offset;	/* its executable mappings */
};

/* A set whose files are open in files (taken: dropped on error). */
static struct modules *new_set(pid_t pid, struct modfiles *files)
{
	struct modules *mods = files ? calloc(1, sizeof(*mods)) : NULL;

	if (!mods) {
		modfiles__drop(files);
		return NULL;
	}
	mods->pid = pid;
	mods->files = files;
	mods->page_size = sysconf(_SC_PAGESIZE);
	elf_version(EV_CURRENT);
	return mods;
}

struct modules *modules__new_over(pid_t pid, const struct modules *under)
{
	struct modules *mods = new_set(pid, modfiles__share(under->files));

	if (mods)
		mods->under = under;
	return mods;
}

struct modules *modules__new_beside(pid_t pid, const struct modules *peer)
{
	return new_set(pid, modfiles__share(peer->files));
}

struct modules *modules__new(pid_t pid)
{
	return new_set(pid, modfiles__new());
}

static bool same_file(const struct map_entry *a, const struct map_entry *b)
{
	return a->dev == b->dev && a->inode == b->inode && !strcmp(a->path, b->path);
}

/*
 * Split the file mappings of a snapshot into groups: runs of one file,
 * anonymous mappings (.bss, gaps) allowed in between, offsets not going back
 * (a second load starts again at a lower offset). A load split in two groups
 * is harmless: both get the same bias and merge into one module.
 */
static int group_maps(const struct maps *maps, struct group **out, size_t *nr)
{
	struct group *groups = calloc(maps->nr ?: 1, sizeof(*groups)), *g = NULL;
	size_t n = 0;

	if (!groups)
		return -ENOMEM;
	for (size_t i = 0; i < maps->nr; i++) {
		const struct map_entry *e = &maps->entries[i];

		if (!e->path[0])
			continue;
		if (!map_entry__is_file(e)) {
			g = NULL;	/* [heap], [stack]... end a run */
			continue;
		}
		if (!g || !same_file(g->last, e) || e->offset < g->last->offset) {
			g = &groups[n++];
			*g = (struct group){ .first = e, .start = e->start };
		}
		if (e->offset < g->first->offset)
			g->first = e;
		g->last = e;
		g->end = e->end;
		g->executable |= e->executable;
		if (e->executable && !g->code_end) {
			g->code_start = e->start;
			g->code_offset = e->offset;
		}
		if (e->executable)
			g->code_end = e->end;
	}
	*out = groups;
	*nr = n;
	return 0;
}

/*
 * The bias of a mapping at file offset off. The loader maps a segment from
 * its page-aligned-down offset, so off can be below p_offset; a page shared
 * by two segments belongs to the one that starts there.
 */
static int mod_bias(const struct mod *m, const struct map_entry *e, size_t page, uint64_t *bias)
{
	if (!m->file) {
		/* The file could not be read: right for DSOs whose first PT_LOAD is at 0. */
		*bias = e->start - e->offset;
		return 0;
	}
	return elf__mapping_bias(m->file->segs, m->file->nr_segs, page, e->start, e->offset,
				 bias);
}

/* The newest module of e's file, or NULL. */
static struct mod *find_file(const struct modules *mods, const struct map_entry *e)
{
	for (size_t i = mods->nr; i-- > 0;) {
		struct mod *m = mods->mods[i];

		if (m->pub.dev == e->dev && m->pub.inode == e->inode)
			return m;
	}
	return NULL;
}

static struct mod *find_load(const struct modules *mods, const struct map_entry *e,
			     uint64_t bias)
{
	for (size_t i = mods->nr; i-- > 0;) {
		struct mod *m = mods->mods[i];

		if (m->pub.dev == e->dev && m->pub.inode == e->inode && m->pub.bias == bias)
			return m;
	}
	return NULL;
}

/* Make m the newest: it is the one mapped now. */
static void move_to_newest(struct modules *mods, struct mod *m)
{
	size_t i = mods->nr;

	while (i-- > 0 && mods->mods[i] != m)
		;
	memmove(&mods->mods[i], &mods->mods[i + 1], (mods->nr - i - 1) * sizeof(m));
	mods->mods[mods->nr - 1] = m;
}

static bool is_not_elf(const struct modules *mods, const struct map_entry *e)
{
	for (size_t i = 0; i < mods->nr_not_elf; i++)
		if (mods->not_elf[i].dev == e->dev && mods->not_elf[i].inode == e->inode)
			return true;
	return false;
}

static int remember_not_elf(struct modules *mods, const struct map_entry *e)
{
	if (vec__reserve(&mods->not_elf, &mods->cap_not_elf, mods->nr_not_elf + 1,
			 sizeof(*mods->not_elf)))
		return -ENOMEM;
	mods->not_elf[mods->nr_not_elf++] = (struct file_id){ e->dev, e->inode };
	return 0;
}

/*
 * Open the file as the target sees it: its mapping's own (a chroot's
 * paths mean nothing in ours, a deleted one's lead nowhere), or else its
 * path inside its root (rootpath.h).
 */
static int open_mapped(const struct modules *mods, const struct map_entry *e)
{
	int fd = rootpath__open_mapped(mods->pid, e);

	/* The target or the file went away, or a device is mapped: nothing to tell. */
	if (fd < 0 && fd != -ENOENT && fd != -ESRCH && fd != -ENODEV)
		fprintf(stderr, "memleakbpf: cannot open %s of pid %d: %s; its frames stay unnamed\n",
			e->path, (int)mods->pid, strerror(-fd));
	return fd < 0 ? -1 : fd;
}

static bool has_elf_magic(int fd)
{
	unsigned char ident[SELFMAG];

	return pread(fd, ident, SELFMAG, 0) == SELFMAG && !memcmp(ident, ELFMAG, SELFMAG);
}

static int modules__append(struct modules *mods, struct mod *m)
{
	if (vec__reserve_min(&mods->mods, &mods->cap, mods->nr + 1, sizeof(m), 32))
		return -ENOMEM;
	mods->mods[mods->nr++] = m;
	return 0;
}

static void mod_free(struct modules *mods, struct mod *m)
{
	if (!m)
		return;
	modfiles__put(mods->files, m->file);
	free(m->pub.path);
	free(m);
}

/* A module of g's load on file (its reference taken; NULL: unreadable). */
static struct mod *mod_alloc(const struct group *g, struct modfile *file)
{
	struct mod *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->pub.path = strdup(g->first->path);
	if (!m->pub.path) {
		free(m);
		return NULL;
	}
	m->pub.start = g->start;
	m->pub.end = g->end;
	m->pub.dev = g->first->dev;
	m->pub.inode = g->first->inode;
	m->file = file;
	m->pub.fd = file ? file->fd : -1;
	if (file)
		memcpy(m->pub.build_id, file->build_id, sizeof(m->pub.build_id));
	m->pub.code_start = g->code_start;
	m->pub.code_end = g->code_end;
	m->pub.code_offset = g->code_offset;
	return m;
}

/*
 * The file of g as another set has it open, or opened now: checked to be
 * ELF, its segments read. *file stays NULL when it cannot be read.
 */
static int file_of(struct modules *mods, const struct group *g, struct modfile **file)
{
	const struct map_entry *e = g->first;
	int fd, err;

	*file = modfiles__get(mods->files, e->dev, e->inode);
	if (*file)
		return 0;
	fd = open_mapped(mods, e);
	if (fd < 0)
		return 0;
	if (!has_elf_magic(fd)) {
		close(fd);
		return -ENOEXEC;
	}
	err = modfiles__add(mods->files, e->dev, e->inode, fd, file);
	if (err == -EINVAL) {
		/* Placed as if unreadable; nothing else could read it either. */
		fprintf(stderr, "memleakbpf: %s: bad ELF: %s; its frames stay unnamed\n",
			e->path, elf_errmsg(-1));
		err = 0;
	}
	return err;
}

/*
 * A file seen for the first time in this set: its module, with the file
 * shared. *out stays NULL when it is not a module.
 */
static int mod_open(struct modules *mods, const struct group *g, struct mod **out)
{
	struct modfile *file;
	int err = file_of(mods, g, &file);

	*out = NULL;
	if (err == -ENOEXEC)
		return remember_not_elf(mods, g->first);
	/* Unreadable: keep it only if it may hold code, to name it in reports. */
	if (err || (!file && !g->executable))
		return err;
	*out = mod_alloc(g, file);
	if (!*out) {
		modfiles__put(mods->files, file);
		return -ENOMEM;
	}
	return 0;
}

/* Another load of a file already known: the same file, once more. */
static int mod_clone(struct modules *mods, const struct mod *from, const struct group *g,
		     struct mod **out)
{
	if (from->file)
		modfiles__hold(mods->files, from->file);
	*out = mod_alloc(g, from->file);
	if (*out)
		return 0;
	modfiles__put(mods->files, from->file);
	return -ENOMEM;
}

static void mod_extend(struct mod *m, const struct group *g)
{
	if (g->start < m->pub.start)
		m->pub.start = g->start;
	if (g->end > m->pub.end)
		m->pub.end = g->end;
	if (g->code_end && !m->pub.code_end) {
		m->pub.code_start = g->code_start;
		m->pub.code_end = g->code_end;
		m->pub.code_offset = g->code_offset;
	}
}

static int modules__add_group(struct modules *mods, const struct group *g)
{
	struct mod *file = find_file(mods, g->first), *m = NULL, *known;
	uint64_t bias;
	int err;

	if (!file) {
		if (is_not_elf(mods, g->first))
			return 0;
		err = mod_open(mods, g, &m);
		if (err || !m)
			return err;
		file = m;
	}
	if (mod_bias(file, g->first, mods->page_size, &bias)) {
		mod_free(mods, m);
		return 0;
	}
	known = m ? NULL : find_load(mods, g->first, bias);
	if (known) {
		/* Kept with its fd; a later snapshot may show more of the load. */
		mod_extend(known, g);
		move_to_newest(mods, known);
		return 0;
	}
	if (!m) {
		err = mod_clone(mods, file, g, &m);
		if (err)
			return err;
	}
	m->pub.bias = bias;
	err = modules__append(mods, m);
	if (err)
		mod_free(mods, m);
	return err;
}

/* The newest module over addr, by a scan of them all. */
static const struct module *scan(const struct modules *mods, uint64_t addr)
{
	for (size_t i = mods->nr; i-- > 0;) {
		const struct module *m = &mods->mods[i]->pub;

		if (addr >= m->start && addr < m->end)
			return m;
	}
	return NULL;
}

static int cmp_addr(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Every module's start and end, sorted, each once: how many. */
static size_t boundaries(const struct modules *mods, uint64_t *b)
{
	size_t n = 0;

	for (size_t i = 0; i < mods->nr; i++) {
		b[2 * i] = mods->mods[i]->pub.start;
		b[2 * i + 1] = mods->mods[i]->pub.end;
	}
	qsort(b, 2 * mods->nr, sizeof(*b), cmp_addr);
	for (size_t i = 0; i < 2 * mods->nr; i++)
		if (!n || b[n - 1] != b[i])
			b[n++] = b[i];
	return n;
}

/*
 * The address space cut where any module starts or ends, each piece given
 * the newest module over it: a report resolves every frame of 200,000
 * stacks (10 million) through modules__find, which scanned 300 modules for
 * each. Without memory there is no index, and a scan answers the same.
 */
static void index_spans(struct modules *mods)
{
	uint64_t *b = malloc((2 * mods->nr ?: 1) * sizeof(*b));
	size_t nb = b ? boundaries(mods, b) : 0;
	struct span *v = b ? malloc((nb ?: 1) * sizeof(*v)) : NULL;
	size_t n = 0;

	free(mods->spans);
	mods->spans = NULL;
	mods->nr_spans = 0;
	for (size_t k = 0; v && k + 1 < nb; k++) {
		const struct module *m = scan(mods, b[k]);

		if (m && n && v[n - 1].m == m && v[n - 1].end == b[k])
			v[n - 1].end = b[k + 1];
		else if (m)
			v[n++] = (struct span){ b[k], b[k + 1], m };
	}
	free(b);
	mods->spans = v;
	mods->nr_spans = n;
}

/* A load the modules below have where the group is: not opened again. */
static bool below(const struct modules *mods, const struct group *g)
{
	const struct module *m = mods->under ? modules__find(mods->under, g->start) : NULL;

	return m && m->dev == g->first->dev && m->inode == g->first->inode;
}

int modules__update(struct modules *mods, const struct maps *maps)
{
	struct group *groups;
	size_t nr;
	int err;

	err = group_maps(maps, &groups, &nr);
	if (err)
		return err;
	for (size_t i = 0; i < nr && !err; i++)
		if (!below(mods, &groups[i]))
			err = modules__add_group(mods, &groups[i]);
	free(groups);
	index_spans(mods);
	return err;
}

bool modules__lacks_code(const struct modules *mods, const struct maps *maps)
{
	for (size_t i = 0; i < maps->nr; i++) {
		const struct map_entry *e = &maps->entries[i];
		const struct module *m;

		if (!e->executable || !e->path[0] || !map_entry__is_file(e) || is_not_elf(mods, e))
			continue;
		m = modules__find(mods, e->start);
		if (!m || m->dev != e->dev || m->inode != e->inode)
			return true;
	}
	return false;
}

static const struct module *find_own(const struct modules *mods, uint64_t addr)
{
	size_t n;

	if (!mods->spans)
		return scan(mods, addr);
	/* The last span starting at or below addr. */
	n = bound__upper_u64(mods->spans, mods->nr_spans, sizeof(*mods->spans),
			     offsetof(struct span, start), addr);
	return n && addr < mods->spans[n - 1].end ? mods->spans[n - 1].m : NULL;
}

size_t modules__count(const struct modules *mods)
{
	return mods ? mods->nr : 0;
}

const struct module *modules__find(const struct modules *mods, uint64_t addr)
{
	const struct module *m = find_own(mods, addr);

	return m || !mods->under ? m : modules__find(mods->under, addr);
}

static bool code_overlaps(const struct maps *maps, const struct module *m)
{
	for (size_t i = 0; i < maps->nr; i++)
		if (m->code_start < maps->entries[i].end && maps->entries[i].start < m->code_end)
			return true;
	return false;
}

static int by_start(const void *a, const void *b)
{
	const struct map_entry *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* mods' own code mappings not under one in maps yet, newest first. 0 or -ENOMEM. */
static int add_code_maps(const struct modules *mods, struct maps *maps)
{
	/* Newest first, so that an unloaded library yields to what replaced it. */
	for (size_t i = mods->nr; i-- > 0;) {
		const struct module *m = &mods->mods[i]->pub;
		struct map_entry *e = &maps->entries[maps->nr];

		if (!m->code_end || code_overlaps(maps, m))
			continue;
		*e = (struct map_entry){
			.start = m->code_start, .end = m->code_end, .offset = m->code_offset,
			.dev = m->dev, .inode = m->inode, .readable = true, .executable = true,
			.path = strdup(m->path),
			.build_id = m->build_id[0] ? strdup(m->build_id) : NULL,
		};
		if (!e->path || (m->build_id[0] && !e->build_id)) {
			free(e->path);
			free(e->build_id);
			return -ENOMEM;
		}
		maps->nr++;
	}
	return 0;
}

int modules__code_maps(const struct modules *mods, struct maps **out)
{
	struct maps *maps = calloc(1, sizeof(*maps));
	size_t nr = 0;

	*out = NULL;
	for (const struct modules *m = mods; m; m = m->under)
		nr += m->nr;
	if (maps)
		maps->entries = calloc(nr ?: 1, sizeof(*maps->entries));
	if (!maps || !maps->entries) {
		free(maps);
		return -ENOMEM;
	}
	/* A fork's own first, then those it did not load itself. */
	for (const struct modules *m = mods; m; m = m->under) {
		if (add_code_maps(m, maps)) {
			maps__free(maps);
			return -ENOMEM;
		}
	}
	qsort(maps->entries, maps->nr, sizeof(*maps->entries), by_start);
	*out = maps;
	return 0;
}

pid_t modules__pid(const struct modules *mods)
{
	return mods->pid;
}

void modules__set_pid(struct modules *mods, pid_t pid)
{
	mods->pid = pid;
}

void modules__clear(struct modules *mods)
{
	for (size_t i = 0; i < mods->nr; i++)
		mod_free(mods, mods->mods[i]);
	mods->nr = 0;
	index_spans(mods);
	free(mods->not_elf);
	mods->not_elf = NULL;
	mods->nr_not_elf = mods->cap_not_elf = 0;
}

void modules__free(struct modules *mods)
{
	if (!mods)
		return;
	modules__clear(mods);
	modfiles__drop(mods->files);
	free(mods->spans);
	free(mods->mods);
	free(mods);
}
