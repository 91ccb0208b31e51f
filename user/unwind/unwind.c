// SPDX-License-Identifier: GPL-2.0
/*
 * CFI tables for the BPF unwinder. A table is keyed by the file's build id
 * (by device and inode when it has none), so a library mapped again after a
 * dlclose, the program after an exec, or a shell's child share what was
 * loaded; rows are never removed (the kernel memory is bounded by the
 * distinct files the run meets, and docs/PERFORMANCE.md gives the figures).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cfi.h"
#include "unwind.h"
#include "util/proc.h"
#include "util/rootpath.h"
#include "util/vec.h"

/* One file's rows in BPF, and what places them in a process. */
struct table {
	uint8_t build_id[64];
	size_t build_id_len;
	dev_t dev;
	ino_t ino;
	struct cfi_table *cfi;		/* its segments (rows freed once loaded); NULL if unread */
	uint32_t first_row, nr_rows;	/* nr_rows 0: frame pointers */
};

/* A published mapping, to recognize it next time without opening its file. */
struct published {
	struct unwind_mapping m;
	uint64_t offset;
	dev_t dev;
	ino_t ino;
};

struct unwind {
	struct unwind_ops ops;
	int verbose;
	struct table *tables;
	size_t nr_tables, cap_tables;
	struct published *pub;
	size_t nr_pub;
	bool said_too_many;
};

int unwind__choose(enum unwind_mode mode, bool (*can_walk)(void), bool *tables)
{
	*tables = false;
	if (mode == UNWIND_FP)
		return 0;
	if (can_walk()) {
		*tables = true;
		return 0;
	}
	if (mode == UNWIND_AUTO) {
		fprintf(stderr, "memleakbpf: this kernel cannot run the CFI unwinder (bpf_loop, Linux 5.17): stacks are walked by frame pointers\n");
		return 0;
	}
	fprintf(stderr, "memleakbpf: --unwind=dwarf needs bpf_loop (Linux 5.17 or later); use --unwind=fp\n");
	return -EOPNOTSUPP;
}

struct unwind *unwind__new(const struct unwind_ops *ops, int verbose)
{
	struct unwind *u = calloc(1, sizeof(*u));

	if (u) {
		u->ops = *ops;
		u->verbose = verbose;
	}
	return u;
}

static const struct published *find_published(const struct unwind *u, const struct map_entry *e)
{
	for (size_t i = 0; i < u->nr_pub; i++) {
		const struct published *pb = &u->pub[i];

		if (pb->m.start == e->start && pb->m.end == e->end && pb->offset == e->offset &&
		    pb->dev == e->dev && pb->ino == e->inode)
			return pb;
	}
	return NULL;
}

static struct table *find_table(struct unwind *u, const uint8_t *id, size_t len,
				const struct map_entry *e)
{
	for (size_t i = 0; i < u->nr_tables; i++) {
		struct table *t = &u->tables[i];

		if (len ? t->build_id_len == len && !memcmp(t->build_id, id, len) :
			  !t->build_id_len && t->dev == e->dev && t->ino == e->inode)
			return t;
	}
	return NULL;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* The file's rows into BPF; on any failure the table stays empty (frame pointers). */
static void load_rows(struct unwind *u, int fd, const struct map_entry *e, struct table *t)
{
	struct cfi_table *cfi = NULL;
	struct unwind_row *rows = NULL;
	size_t nr = 0;
	int err;

	err = cfi__read_fd(fd, &cfi);
	if (!err)
		err = cfi_table__pack(cfi, &rows, &nr);
	if (!err && nr > MEMLEAK_CFI_MAX_ROWS)
		err = -ENOSPC;	/* more than BPF's binary search reaches */
	if (!err && nr)
		err = u->ops.add_rows(u->ops.ctx, rows, nr, &t->first_row);
	if (!err)
		t->nr_rows = (uint32_t)nr;
	if (err)
		fprintf(stderr, "memleakbpf: %s: no unwind table (%s): its frames are walked by frame pointers\n",
			e->path, strerror(-err));
	else if (u->verbose && !nr)
		fprintf(stderr, "memleakbpf: %s: no call-frame information: frame pointers\n",
			e->path);
	else if (u->verbose)
		fprintf(stderr, "memleakbpf: unwind table %s: %zu rows from %s%s%s (%zu bytes); all tables: %llu rows, %llu KiB of kernel memory\n",
			base_name(e->path), nr, cfi->eh_frame ? ".eh_frame" : "",
			cfi->eh_frame && cfi->debug_frame ? " and " : "",
			cfi->debug_frame ? ".debug_frame" : "", nr * sizeof(*rows),
			(unsigned long long)u->ops.rows(u->ops.ctx),
			(unsigned long long)u->ops.bytes(u->ops.ctx) / 1024);
	free(rows);
	if (cfi) {
		free(cfi->rows);	/* in BPF now; only the segments are needed */
		cfi->rows = NULL;
		cfi->nr = 0;
	}
	t->cfi = cfi;
}

/* The mapped file as the target sees it: in its root, or through the mapping when deleted. */
static int open_mapped(pid_t pid, const struct map_entry *e)
{
	if (!e->deleted)
		return rootpath__open(pid, e->path, O_RDONLY | O_CLOEXEC);
	return proc__open_map_file(pid, e->start, e->end);
}

/* The table of e's file, loaded now if no file with its build id was. */
static struct table *table_of(struct unwind *u, pid_t pid, const struct map_entry *e)
{
	uint8_t id[64];
	struct table *t;
	int fd, len;

	fd = open_mapped(pid, e);
	if (fd < 0)
		return NULL;	/* gone, or not ours to read: frame pointers */
	len = elf__build_id_fd(fd, id, sizeof(id));
	t = find_table(u, id, len > 0 ? (size_t)len : 0, e);
	if (t || len < 0) {
		close(fd);
		return t;
	}
	if (vec__reserve(&u->tables, &u->cap_tables, u->nr_tables + 1, sizeof(*u->tables))) {
		close(fd);
		return NULL;
	}
	t = &u->tables[u->nr_tables++];
	*t = (struct table){ .build_id_len = (size_t)len, .dev = e->dev, .ino = e->inode };
	memcpy(t->build_id, id, (size_t)len);
	load_rows(u, fd, e, t);
	close(fd);
	return t;
}

/* Where e's rows are; none (frame pointers) when its table could not be had. */
static void place(struct unwind *u, pid_t pid, const struct map_entry *e, struct published *out)
{
	const struct published *known = find_published(u, e);
	const struct table *t;
	uint64_t base;

	if (known) {
		*out = *known;
		return;
	}
	t = table_of(u, pid, e);
	*out = (struct published){
		.m = { .start = e->start, .end = e->end },
		.offset = e->offset, .dev = e->dev, .ino = e->inode,
	};
	if (!t || !t->nr_rows || cfi_table__runtime_base(t->cfi, e->start, e->offset, &base))
		return;
	out->m.base = base;
	out->m.first_row = t->first_row;
	out->m.nr_rows = t->nr_rows;
}

/* Nothing changed since the last time: no need to switch halves. */
static bool same_as_published(const struct unwind *u, const struct published *pub, size_t nr)
{
	if (nr != u->nr_pub)
		return false;
	for (size_t i = 0; i < nr; i++)
		if (memcmp(&pub[i].m, &u->pub[i].m, sizeof(pub[i].m)))
			return false;
	return true;
}

int unwind__update(struct unwind *u, pid_t pid, const struct maps *maps)
{
	struct unwind_mapping m[MEMLEAK_UNWIND_MAPPINGS];
	struct published *pub;
	size_t nr = 0;
	int err = 0;

	if (!u)
		return 0;
	pub = calloc(MEMLEAK_UNWIND_MAPPINGS, sizeof(*pub));
	if (!pub)
		return -ENOMEM;
	/* /proc/PID/maps lists mappings by address: the order BPF searches. */
	for (size_t i = 0; i < maps->nr; i++) {
		const struct map_entry *e = &maps->entries[i];

		if (!e->executable || !map_entry__is_file(e))
			continue;
		if (nr == MEMLEAK_UNWIND_MAPPINGS) {
			if (!u->said_too_many)
				fprintf(stderr, "memleakbpf: more than %d executable mappings: the rest are walked by frame pointers\n",
					MEMLEAK_UNWIND_MAPPINGS);
			u->said_too_many = true;
			break;
		}
		place(u, pid, e, &pub[nr]);
		m[nr] = pub[nr].m;
		nr++;
	}
	if (!same_as_published(u, pub, nr))
		err = u->ops.set_mappings(u->ops.ctx, m, nr);
	free(u->pub);
	u->pub = pub;
	u->nr_pub = nr;
	return err;
}

void unwind__free(struct unwind *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->nr_tables; i++)
		cfi_table__free(u->tables[i].cfi);
	free(u->tables);
	free(u->pub);
	free(u);
}
