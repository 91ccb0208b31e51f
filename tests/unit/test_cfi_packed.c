// SPDX-License-Identifier: GPL-2.0
/*
 * cfi, the tracer's way: rows read straight into the BPF format
 * (cfi__read_packed_fd) must be exactly cfi_table__pack of the table
 * cfi__read_fd makes, on real files and on synthetic spans that hit the
 * corners (rows at one pc, spans that touch, a span out of order, the
 * radix sort of many spans).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include "unit.h"
#include "unwind/cfi_internal.h"

#define VICTIMS ".output/victims/"

static const char *const files[] = {
	"/lib/x86_64-linux-gnu/libc.so.6",
	"/lib/x86_64-linux-gnu/libstdc++.so.6",
	"/lib64/ld-linux-x86-64.so.2",
	VICTIMS "v_basic",
	VICTIMS "nofp/v_basic",
	VICTIMS "dbgframe/v_basic",
	VICTIMS "v_nopie",
	VICTIMS "v_static",
};

static bool same_packed(const struct unwind_row *a, size_t na, const struct unwind_row *b,
			size_t nb)
{
	return na == nb && (!na || !memcmp(a, b, na * sizeof(*a)));
}

/* Both ways of reading path agree, row for row, and on what the table keeps. */
static bool check_file(const char *path, struct cfi_scratch *scratch)
{
	struct cfi_table *t = NULL, *p = NULL;
	struct unwind_row *want = NULL, *got = NULL;
	size_t nwant = 0, ngot = 0;
	int fd = open(path, O_RDONLY);

	ASSERT(fd >= 0);
	ASSERT(cfi__read_fd(fd, &t) == 0);
	ASSERT(cfi_table__pack(t, &want, &nwant) == 0);
	ASSERT(cfi__read_packed_fd(fd, scratch, &p, &got, &ngot) == 0);
	close(fd);
	ASSERT(nwant > 10);
	ASSERT(same_packed(want, nwant, got, ngot));
	ASSERT(!p->rows && !p->nr);
	ASSERT_EQ_U64(p->base, t->base);
	ASSERT_EQ_U64(p->nr_segs, t->nr_segs);
	ASSERT_EQ_U64(p->nr_fdes, t->nr_fdes);
	ASSERT_EQ_U64(p->eh_frame, t->eh_frame);
	ASSERT_EQ_U64(p->debug_frame, t->debug_frame);
	ASSERT_EQ_U64(p->build_id_len, t->build_id_len);
	ASSERT(!memcmp(p->build_id, t->build_id, t->build_id_len));
	free(want);
	free(got);
	cfi__table_free(t);
	cfi__table_free(p);
	return true;
}

/* Each file alone, and all of them through one scratch list, largest first as the tracer reads. */
TEST(cfi_packed_files)
{
	struct cfi_scratch scratch = { 0 };
	bool ok = true;

	for (int shared = 0; shared <= 1 && ok; shared++) {
		for (size_t i = 0; i < sizeof(files) / sizeof(files[0]) && ok; i++) {
			ok = check_file(files[i], shared ? &scratch : NULL);
			if (!ok)
				fprintf(stderr, "  in %s%s\n", files[i], shared ? ", scratch kept" : "");
		}
	}
	cfi__scratch_free(&scratch);
	return ok;
}

/* A file that is no ELF: the same error both ways, nothing returned. */
TEST(cfi_packed_not_elf)
{
	struct cfi_table *t = (void *)1;
	struct unwind_row *rows = (void *)1;
	size_t nr = 1;
	int fd = open("Makefile", O_RDONLY);

	ASSERT(fd >= 0);
	ASSERT_EQ_U64(cfi__read_packed_fd(fd, NULL, &t, &rows, &nr), (uint64_t)-ENOEXEC);
	close(fd);
	ASSERT(!t && !rows && !nr);
	return true;
}

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A rule for a row, from a few: neighbours often share one, to be merged. */
static struct cfi_row some_row(uint64_t pc, uint64_t *seed)
{
	uint64_t r = rng_next(seed);

	return (struct cfi_row){ .pc = pc, .cfa = r % 3 ? CFI_CFA_RSP : CFI_CFA_RBP,
				 .cfa_off = 8 * (int64_t)(1 + (r >> 8) % 3),
				 .rbp = (r >> 16) % 2 ? CFI_RBP_AT_CFA : CFI_RBP_SAME,
				 .rbp_off = -16 };
}

/*
 * nr spans of up to 4 rows, some at one pc, from three sources, shuffled,
 * overlapping now and then, touching often (no NONE row between them).
 */
static void make_spans(size_t nr, uint64_t seed, struct rows *rs, struct spans *ss)
{
	uint64_t pc = 0x1000;

	for (size_t i = 0; i < nr; i++) {
		uint64_t r = rng_next(&seed), len = 16 + r % 64;
		struct fde_span s = { pc, pc + len, rs->nr, 1 + (r >> 8) % 4, (int)((r >> 12) % 3) };
		uint64_t at = pc;

		for (size_t k = 0; k < s.nr; k++) {
			struct cfi_row row = some_row(at, &seed);

			cfi_table__rows_push(rs, &row);
			/* A zero-length advance now and then: two rows at one pc. */
			at += (r >> (16 + k)) % 4 ? 1 + (r >> 20) % 4 : 0;
		}
		cfi_table__spans_push(ss, &s);
		/* Touch the next span, leave a gap, or overlap it. */
		pc = (r >> 24) % 3 == 0 ? pc + len : (r >> 24) % 3 == 1 ? pc + len + 8 : pc + len / 2;
	}
	for (size_t i = nr; i > 1; i--) {
		size_t j = rng_next(&seed) % i;
		struct fde_span tmp = ss->v[i - 1];

		ss->v[i - 1] = ss->v[j];
		ss->v[j] = tmp;
	}
}

/* The spans kept: sorted and apart. */
static bool spans_chosen(const struct spans *ss)
{
	for (size_t i = 1; i < ss->nr; i++)
		ASSERT(ss->v[i - 1].end <= ss->v[i].start);
	return true;
}

static bool check_synthetic(size_t nr, uint64_t seed)
{
	struct rows rs = { 0 };
	struct spans ss = { 0 };
	struct cfi_table t = { 0 }, *tp = &t;
	struct unwind_row *want = NULL, *got = NULL;
	size_t nwant = 0, ngot = 0;

	make_spans(nr, seed, &rs, &ss);
	ASSERT(cfi_table__choose_spans(&ss) == 0);
	ASSERT(ss.nr > nr / 4 && ss.nr < nr);	/* some overlapped and went */
	ASSERT(spans_chosen(&ss));
	ASSERT(cfi_table__assemble(tp, &rs, &ss) == 0);
	ASSERT(cfi_table__pack(tp, &want, &nwant) == 0);
	ASSERT(cfi_table__assemble_packed(tp, &rs, &ss, &got, &ngot) == 0);
	ASSERT(nwant < t.nr);	/* neighbours were merged */
	ASSERT(same_packed(want, nwant, got, ngot));
	free(want);
	free(got);
	free(t.rows);
	free(rs.v);
	free(ss.v);
	return true;
}

/* Few spans (qsort) and many (the radix sort): the same rows both ways. */
TEST(cfi_packed_synthetic)
{
	ASSERT(check_synthetic(300, 0x9e3779b97f4a7c15ull));
	ASSERT(check_synthetic(70000, 0x2545f4914f6cdd1dull));
	return true;
}

/* Spans out of order sort exactly as qsort would, ties kept in their order. */
TEST(cfi_choose_spans_order)
{
	for (size_t nr = 100; nr <= 100000; nr *= 1000) {
		struct rows rs = { 0 };
		struct spans ss = { 0 };

		make_spans(nr, 0x1234567u + nr, &rs, &ss);
		/* All of one source, apart, shuffled: every span is kept, in order. */
		for (size_t i = 0; i < ss.nr; i++) {
			ss.v[i].source = 0;
			ss.v[i].start = ss.v[i].first * 64;
			ss.v[i].end = ss.v[i].start + 32;
		}
		ASSERT(cfi_table__choose_spans(&ss) == 0);
		ASSERT_EQ_U64(ss.nr, nr);
		for (size_t i = 1; i < ss.nr; i++)
			ASSERT(ss.v[i - 1].start < ss.v[i].start);
		free(rs.v);
		free(ss.v);
	}
	return true;
}
