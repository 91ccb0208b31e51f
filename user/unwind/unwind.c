// SPDX-License-Identifier: GPL-2.0
/*
 * CFI tables for the BPF unwinder. A table is keyed by the file's build id
 * (by device and inode when it has none), so a library mapped again after a
 * dlclose, the program after an exec, or a shell's child share what was
 * loaded; rows are never removed (the kernel memory is bounded by the
 * distinct files the run meets, and docs/PERFORMANCE.md gives the figures).
 * This file keeps the tables and publishes the target's mappings; reading
 * and loading the rows is unwind_build.c's.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "unwind_internal.h"
#include "util/rootpath.h"
#include "util/vec.h"

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

struct unwind *unwind__new(const struct unwind_ops *ops, bool lazy, int verbose)
{
	struct unwind *u = calloc(1, sizeof(*u));

	if (u) {
		u->ops = *ops;
		u->lazy = lazy;
		u->verbose = verbose;
	}
	return u;
}

void unwind__cache(struct unwind *u, const char *dir)
{
	struct unwind_cache *c;
	uint8_t tag[64];
	size_t len = unwind_cache__self_tag(tag, sizeof(tag));
	char err[PATH_MAX + 128];

	if (!u || (dir && !strcmp(dir, "off")))
		return;
	if (unwind_cache__open(dir ?: UNWIND_CACHE_DIR, tag, len, &c, err, sizeof(err))) {
		if (dir || u->verbose)
			fprintf(stderr, "memleakbpf: unwind cache not used: %s\n", err);
		return;
	}
	u->save = unwind_save__new(c);
	if (!u->save) {
		unwind_cache__free(c);
		return;
	}
	u->cache = c;
	if (u->verbose)
		fprintf(stderr, "memleakbpf: unwind tables cached in %s\n", unwind_cache__dir(c));
}

static const struct published *find_published(const struct unwind *u, const struct map_entry *e)
{
	for (size_t i = 0; i < u->nr_pub; i++) {
		const struct published *pb = &u->pub[i];

		if (pb->start == e->start && pb->end == e->end && pb->offset == e->offset &&
		    pb->dev == e->dev && pb->ino == e->inode)
			return pb;
	}
	return NULL;
}

static size_t find_table(const struct unwind *u, const uint8_t *id, size_t len,
			 const struct map_entry *e)
{
	for (size_t i = 0; i < u->nr_tables; i++) {
		const struct table *t = &u->tables[i];

		if (len ? t->build_id_len == len && !memcmp(t->build_id, id, len) :
			  !t->build_id_len && t->dev == e->dev && t->ino == e->inode)
			return i;
	}
	return NO_TABLE;
}

/* A pending table for the file open at fd (taken): its index, or NO_TABLE. */
static size_t new_table(struct unwind *u, int fd, const uint8_t *id, size_t len,
			const struct map_entry *e)
{
	struct table *t;
	char *path = strdup(e->path);

	if (!path || vec__reserve(&u->tables, &u->cap_tables, u->nr_tables + 1, sizeof(*t))) {
		free(path);
		close(fd);
		return NO_TABLE;
	}
	t = &u->tables[u->nr_tables];
	*t = (struct table){ .build_id_len = len, .dev = e->dev, .ino = e->inode, .fd = fd,
			     .path = path };
	memcpy(t->build_id, id, len);
	u->nr_pending++;
	return u->nr_tables++;
}

/* The table of e's file, pending if no file with its build id was seen. */
static size_t table_of(struct unwind *u, pid_t pid, const struct map_entry *e)
{
	uint8_t id[64];
	size_t t;
	int fd, len;

	fd = rootpath__open_mapped(pid, e);
	if (fd < 0)
		return NO_TABLE;	/* gone, or not ours to read: frame pointers */
	len = elf__build_id_fd(fd, id, sizeof(id));
	t = find_table(u, id, len > 0 ? (size_t)len : 0, e);
	if (t != NO_TABLE || len < 0) {
		close(fd);
		return t;
	}
	return new_table(u, fd, id, (size_t)len, e);
}

/* What BPF is told of a mapping: where its rows are, pending, or none (frame pointers). */
struct unwind_mapping unwind__mapping_of(const struct unwind *u, const struct published *pb)
{
	struct unwind_mapping m = { .start = pb->start, .end = pb->end };
	const struct table *t = pb->table == NO_TABLE ? NULL : &u->tables[pb->table];
	uint64_t base;

	if (t && table__pending(t))
		m.first_row = MEMLEAK_ROWS_PENDING;
	else if (t && t->nr_rows && !cfi_table__runtime_base(t->cfi, pb->start, pb->offset, &base))
		m = (struct unwind_mapping){ pb->start, pb->end, base, t->first_row, t->nr_rows };
	return m;
}

/* The mappings to BPF, unless they are what it has already: one switch of halves. */
int unwind__publish(struct unwind *u)
{
	struct unwind_mapping *m = calloc(u->nr_pub ? u->nr_pub : 1, sizeof(*m));
	int err = 0;

	if (!m)
		return -ENOMEM;
	for (size_t i = 0; i < u->nr_pub; i++)
		m[i] = unwind__mapping_of(u, &u->pub[i]);
	if (u->nr_pub == u->nr_sent && !memcmp(m, u->sent, u->nr_pub * sizeof(*m))) {
		free(m);
		return 0;
	}
	err = u->ops.set_mappings(u->ops.ctx, m, u->nr_pub);
	free(u->sent);
	u->sent = m;
	u->nr_sent = err ? 0 : u->nr_pub;	/* failed: tried again next time */
	return err;
}

/* The pending tables, in which[]; their number. */
static size_t all_pending(const struct unwind *u, size_t *which)
{
	size_t n = 0;

	for (size_t i = 0; i < u->nr_tables; i++)
		if (table__pending(&u->tables[i]))
			which[n++] = i;
	return n;
}

/* Every pending table built now, in one go. */
static int build_all(struct unwind *u)
{
	size_t *which = calloc(u->nr_pending ? u->nr_pending : 1, sizeof(*which));

	if (!which)
		return -ENOMEM;
	unwind_build__tables(u, which, all_pending(u, which), 0);
	free(which);
	return 0;
}

/* The executable file mappings of maps, each with its table (at most MEMLEAK_UNWIND_MAPPINGS). */
void unwind__resolve(struct unwind *u, pid_t pid, const struct maps *maps, struct published *pub,
		     size_t *nr)
{
	*nr = 0;
	/* /proc/PID/maps lists mappings by address: the order BPF searches. */
	for (size_t i = 0; i < maps->nr; i++) {
		const struct map_entry *e = &maps->entries[i];
		const struct published *known;

		if (!e->executable || !map_entry__is_file(e))
			continue;
		if (*nr == MEMLEAK_UNWIND_MAPPINGS) {
			if (!u->said_too_many)
				fprintf(stderr, "memleakbpf: more than %d executable mappings: the rest are walked by frame pointers\n",
					MEMLEAK_UNWIND_MAPPINGS);
			u->said_too_many = true;
			break;
		}
		known = find_published(u, e);
		pub[*nr] = (struct published){ e->start, e->end, e->offset, e->dev, e->inode,
					       known ? known->table : table_of(u, pid, e) };
		++*nr;
	}
}

int unwind__update(struct unwind *u, pid_t pid, const struct maps *maps)
{
	struct published *pub;
	size_t nr;
	int err = 0;

	if (!u)
		return 0;
	pub = calloc(MEMLEAK_UNWIND_MAPPINGS, sizeof(*pub));
	if (!pub)
		return -ENOMEM;
	unwind__resolve(u, pid, maps, pub, &nr);
	free(u->pub);
	u->pub = pub;
	u->nr_pub = nr;
	if (!u->lazy && u->nr_pending)
		err = build_all(u);
	return err ? err : unwind__publish(u);
}

/* Is table t in which[0..nr)? */
static bool listed(const size_t *which, size_t nr, size_t t)
{
	for (size_t i = 0; i < nr; i++)
		if (which[i] == t)
			return true;
	return false;
}

void unwind__add_pending(const struct unwind *u, const struct published *pb, size_t *which,
			 size_t *nr)
{
	size_t t = pb->table;

	if (t != NO_TABLE && table__pending(&u->tables[t]) && !listed(which, *nr, t))
		which[(*nr)++] = t;
}

int unwind__build_now(struct unwind *u, const struct maps *maps, const char *const *paths,
		      size_t nr)
{
	size_t *which, n = 0;

	if (!u || !u->nr_pending)
		return 0;
	which = calloc(u->nr_pending, sizeof(*which));
	if (!which)
		return -ENOMEM;
	for (size_t i = 0; i < maps->nr; i++) {
		const struct map_entry *e = &maps->entries[i];
		const struct published *pb = find_published(u, e);

		for (size_t k = 0; pb && k < nr; k++)
			if (paths[k] && !strcmp(paths[k], e->path))
				unwind__add_pending(u, pb, which, &n);
	}
	if (n)
		unwind_build__tables(u, which, n, 0);
	free(which);
	return n ? unwind__publish(u) : 0;
}

bool unwind__pending(const struct unwind *u)
{
	return u && u->nr_pending;
}

/* Pending tables: those BPF met first, then by address, then those no longer mapped. */
static size_t build_order(const struct unwind *u, size_t *which)
{
	size_t n = 0;

	for (size_t i = 0; u->ops.wanted && i < u->nr_pub && i < u->nr_sent; i++)
		if (u->ops.wanted(u->ops.ctx, i))
			unwind__add_pending(u, &u->pub[i], which, &n);
	for (size_t i = 0; i < u->nr_pub; i++)
		unwind__add_pending(u, &u->pub[i], which, &n);
	for (size_t t = 0; t < u->nr_tables; t++)
		if (table__pending(&u->tables[t]) && !listed(which, n, t))
			which[n++] = t;
	return n;
}

int unwind__build(struct unwind *u, unsigned slice_ms)
{
	size_t *which;
	int err;

	if (!unwind__pending(u))
		return 0;
	which = calloc(u->nr_pending, sizeof(*which));
	if (!which)
		return -ENOMEM;
	unwind_build__tables(u, which, build_order(u, which),
			     unwind_build__now_ns() + slice_ms * 1000000ull);
	err = unwind__publish(u);
	free(which);
	if (u->verbose && !u->nr_pending)	/* the last slice (-p) */
		fprintf(stderr, "memleakbpf: unwind tables: %zu files from the cache, %zu read from their CFI\n",
			u->files_cached, u->files_read);
	return err;
}

void unwind__totals(const struct unwind *u, size_t *files, uint64_t *rows)
{
	*files = 0;
	for (size_t i = 0; u && i < u->nr_tables; i++)
		*files += u->tables[i].nr_rows > 0;
	*rows = u ? u->ops.rows(u->ops.ctx) : 0;
}

/* The exec'd images' tables (unwind_image.c), at the end. */
static void images_free(struct unwind *u)
{
	for (size_t i = 0; i < u->nr_images; i++)
		free(u->images[i].pub);
	free(u->images);
	u->images = NULL;
	u->nr_images = u->cap_images = 0;
}

void unwind__free(struct unwind *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->nr_tables; i++) {
		if (table__pending(&u->tables[i]))
			close(u->tables[i].fd);
		cfi__table_free(u->tables[i].cfi);
		free(u->tables[i].path);
	}
	free(u->tables);
	free(u->pub);
	free(u->sent);
	images_free(u);
	unwind_save__free(u->save, u->verbose);	/* and the cache */
	free(u);
}
