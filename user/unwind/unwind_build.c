// SPDX-License-Identifier: GPL-2.0
/*
 * Pending tables into BPF: each file's CFI read and packed (cfi*.c), then
 * the rows of every file of one call handed over in one add_rows, so that
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
#include "util/vec.h"

/* The packed rows of one call's tables, back to back. */
struct batch {
	struct unwind_row *rows;
	size_t nr, cap;
};

uint64_t unwind_build__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Only the segments are kept: the rows are in BPF, or nowhere. */
static void drop_rows(struct table *t)
{
	if (!t->cfi)
		return;
	free(t->cfi->rows);
	t->cfi->rows = NULL;
	t->cfi->nr = 0;
}

/*
 * t's packed rows appended to b: t->first_row is their index in b until
 * they are loaded. On failure t keeps no CFI (cfi NULL) and no rows.
 */
static int append_rows(struct table *t, struct unwind_packed *p, struct batch *b)
{
	int err = p->err;

	if (!err && vec__reserve_min(&b->rows, &b->cap, b->nr + p->nr, sizeof(*p->rows), 1 << 16))
		err = -ENOMEM;
	if (!err) {
		memcpy(b->rows + b->nr, p->rows, p->nr * sizeof(*p->rows));
		t->first_row = (uint32_t)b->nr;
		t->nr_rows = (uint32_t)p->nr;
		b->nr += p->nr;
		drop_rows(t);
	} else {
		cfi__table_free(t->cfi);
		t->cfi = NULL;
		t->nr_rows = 0;
	}
	free(p->rows);
	return err;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static void say(const struct unwind *u, const struct table *t, int err)
{
	const struct cfi_table *cfi = t->cfi;

	if (err)
		fprintf(stderr, "memleakbpf: %s: no unwind table (%s): its frames are walked by frame pointers\n",
			t->path, strerror(-err));
	else if (u->verbose && !t->nr_rows)
		fprintf(stderr, "memleakbpf: %s: no call-frame information: frame pointers\n",
			t->path);
	else if (u->verbose)
		fprintf(stderr, "memleakbpf: unwind table %s: %u rows from %s%s%s (%zu bytes); all tables: %llu rows, %llu KiB of kernel memory\n",
			base_name(t->path), t->nr_rows, cfi->eh_frame ? ".eh_frame" : "",
			cfi->eh_frame && cfi->debug_frame ? " and " : "",
			cfi->debug_frame ? ".debug_frame" : "",
			(size_t)t->nr_rows * sizeof(struct unwind_row),
			(unsigned long long)u->ops.rows(u->ops.ctx),
			(unsigned long long)u->ops.bytes(u->ops.ctx) / 1024);
}

/* The batch into BPF: each table's rows move from their place in b to theirs there. */
static int load(struct unwind *u, const struct batch *b, const size_t *which, size_t nr)
{
	uint32_t first = 0;
	int err = b->nr ? u->ops.add_rows(u->ops.ctx, b->rows, b->nr, &first) : 0;

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
	struct unwind_packed *packed = deadline_ns ? NULL : calloc(nr ?: 1, sizeof(*packed));
	struct batch b = { 0 };
	size_t n = 0;
	int err;

	/* All of them, as under -c at a stop: read on every core, then in order. */
	if (packed)
		unwind_pack__tables(u->tables, which, nr, packed);
	for (; n < nr && (!n || !deadline_ns || unwind_build__now_ns() < deadline_ns); n++) {
		struct table *t = &u->tables[which[n]];
		struct unwind_packed one;

		if (!packed)
			unwind_pack__one(t, &one);
		err = append_rows(t, packed ? &packed[n] : &one, &b);
		if (err)
			say(u, t, err);
	}
	free(packed);
	u->nr_pending -= n;
	err = load(u, &b, which, n);
	/* The tables read (those that failed were said): loaded, or all failed with err. */
	for (size_t i = 0; i < n; i++)
		if (u->tables[which[i]].cfi)
			say(u, &u->tables[which[i]], err);
	free(b.rows);
	return n;
}
