// SPDX-License-Identifier: GPL-2.0
/*
 * Pending tables into BPF: each file's CFI read and packed (cfi*.c), then
 * the rows of every file of one call handed over in one add_rows (each
 * file's rows a part of it, copied once, into BPF's chunks), so that
 * the kernel's wait when new chunks of rows are put in place (an RCU grace
 * period, about 10 ms) comes once per call, not once per file: for the 316
 * files of a PyTorch process that was 2 s of waiting.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "unwind_internal.h"

uint64_t unwind_build__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * t's packed rows as the next part of the call's rows (no copy: add_rows
 * writes each part into BPF's chunks): t->first_row is their index among
 * the call's rows until they are loaded. On failure t keeps no CFI (cfi
 * NULL) and no rows.
 */
static int add_part(struct table *t, const struct unwind_packed *p, struct unwind_rows *parts,
		    size_t *nr_parts, size_t *nr_rows)
{
	if (p->err) {
		cfi__table_free(t->cfi);
		t->cfi = NULL;
		t->nr_rows = 0;
		return p->err;
	}
	t->first_row = (uint32_t)*nr_rows;
	t->nr_rows = (uint32_t)p->nr;
	if (p->nr)
		parts[(*nr_parts)++] = (struct unwind_rows){ unwind_packed__rows(p), p->nr };
	*nr_rows += p->nr;
	return 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static void say(const struct unwind *u, const struct table *t, int err, bool cached)
{
	const struct cfi_table *cfi = t->cfi;

	if (err)
		fprintf(stderr, "memleakbpf: %s: no unwind table (%s): its frames are walked by frame pointers\n",
			t->path, strerror(-err));
	else if (u->verbose && !t->nr_rows)
		fprintf(stderr, "memleakbpf: %s: no call-frame information: frame pointers\n",
			t->path);
	else if (u->verbose)
		fprintf(stderr, "memleakbpf: unwind table %s: %u rows from %s%s%s%s (%zu bytes); all tables: %llu rows, %llu KiB of kernel memory\n",
			base_name(t->path), t->nr_rows, cfi->eh_frame ? ".eh_frame" : "",
			cfi->eh_frame && cfi->debug_frame ? " and " : "",
			cfi->debug_frame ? ".debug_frame" : "", cached ? ", through the cache" : "",
			(size_t)t->nr_rows * sizeof(struct unwind_row),
			(unsigned long long)u->ops.rows(u->ops.ctx),
			(unsigned long long)u->ops.bytes(u->ops.ctx) / 1024);
}

/*
 * The rows read from CFI (not from the cache) to the cache's writer, now
 * that they are in BPF: it writes them while the target runs. Those it
 * takes are its to free.
 */
static void save(struct unwind *u, const size_t *which, struct unwind_packed *packed, size_t n)
{
	for (size_t i = 0; u->save && i < n; i++) {
		struct unwind_packed *p = &packed[i];

		if (p->keyed && !p->cached && !p->err &&
		    unwind_save__queue(u->save, &p->key, u->tables[which[i]].cfi, p->rows, p->nr))
			p->rows = NULL;
	}
}

static size_t nr_cached(const struct unwind_packed *packed, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += packed[i].cached;
	return k;
}

/* The call's rows into BPF: each table's rows move from their place among them to theirs there. */
static int load(struct unwind *u, const struct unwind_rows *parts, size_t nr_parts,
		const size_t *which, size_t nr)
{
	uint32_t first = 0;
	int err = nr_parts ? u->ops.add_rows(u->ops.ctx, parts, nr_parts, &first) : 0;

	for (size_t i = 0; i < nr; i++) {
		struct table *t = &u->tables[which[i]];

		if (err)
			t->nr_rows = 0;
		else if (t->nr_rows)
			t->first_row += first;
	}
	return err;
}

size_t unwind_build__tables(struct unwind *u, const size_t *which, size_t nr,
			    uint64_t deadline_ns)
{
	struct unwind_packed *packed = calloc(nr ?: 1, sizeof(*packed));
	struct unwind_rows *parts = calloc(nr ?: 1, sizeof(*parts));
	size_t n = 0, nr_parts = 0, nr_rows = 0;
	uint64_t t0, t1, cpu = 0;
	int err;

	if (!packed || !parts) {
		/* Still pending: BPF ends stacks there, counted; tried again at the next update. */
		fprintf(stderr, "memleakbpf: no memory to build %zu unwind tables\n", nr);
		free(packed);
		free(parts);
		return 0;
	}
	t0 = unwind_build__now_ns();
	/* All of them, as under -c at a stop: read on every core, then in order. */
	if (!deadline_ns)
		cpu = unwind_pack__tables(u->tables, which, nr, u->cache, packed);
	for (; n < nr && (!n || !deadline_ns || unwind_build__now_ns() < deadline_ns); n++) {
		struct table *t = &u->tables[which[n]];

		if (deadline_ns)
			unwind_pack__one(t, u->cache, NULL, &packed[n]);
		err = add_part(t, &packed[n], parts, &nr_parts, &nr_rows);
		if (err)
			say(u, t, err, false);
	}
	u->nr_pending -= n;
	t1 = unwind_build__now_ns();
	err = load(u, parts, nr_parts, which, n);
	if (u->verbose && n > 1 && !deadline_ns)	/* a stop's, or -p's first */
		fprintf(stderr, "memleakbpf: unwind tables of %zu files, %zu rows (%zu from the cache, %zu read from their CFI): read in %.1f ms (%.1f ms of CPU), loaded in %.1f ms\n",
			n, nr_rows, nr_cached(packed, n), n - nr_cached(packed, n),
			(double)(t1 - t0) / 1e6, (double)cpu / 1e6,
			(double)(unwind_build__now_ns() - t1) / 1e6);
	/* The tables read (those that failed were said): loaded, or all failed with err. */
	for (size_t i = 0; i < n; i++)
		if (u->tables[which[i]].cfi)
			say(u, &u->tables[which[i]], err, packed[i].cached);
	u->files_cached += nr_cached(packed, n);
	u->files_read += n - nr_cached(packed, n);
	save(u, which, packed, n);
	for (size_t i = 0; i < nr; i++)
		unwind_pack__release(&packed[i]);
	free(packed);
	free(parts);
	return n;
}
