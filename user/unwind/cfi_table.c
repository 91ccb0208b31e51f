// SPDX-License-Identifier: GPL-2.0
/*
 * The table of rows: the FDE spans of every source merged into one sorted
 * list (.eh_frame first), looked up by pc, placed in a process, and packed
 * into the BPF format.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "cfi_internal.h"
#include "util/bound.h"
#include "util/keysort.h"
#include "util/vec.h"

int cfi_table__rows_grow(struct rows *rs)
{
	return vec__reserve_min(&rs->v, &rs->cap, rs->nr + 1, sizeof(*rs->v), 1024) ? -ENOMEM : 0;
}

int cfi_table__spans_push(struct spans *ss, const struct fde_span *s)
{
	if (vec__reserve_min(&ss->v, &ss->cap, ss->nr + 1, sizeof(*s), 256))
		return -ENOMEM;
	ss->v[ss->nr++] = *s;
	return 0;
}

#define SORT_RADIX_MIN 4096	/* below, clearing its 16-bit digits' counts costs more than qsort */

static int by_span(const void *a, const void *b)
{
	const struct fde_span *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->source - y->source;
}

/* Many spans: by a radix sort of (start, source) keys, stable as qsort is here. */
static int radix_sort_spans(struct fde_span *v, size_t nr)
{
	struct keyed *keys = malloc(nr * sizeof(*keys));
	struct fde_span *sorted = malloc(nr * sizeof(*sorted));
	int err = keys && sorted ? 0 : -ENOMEM;

	for (size_t i = 0; !err && i < nr; i++)
		keys[i] = (struct keyed){ v[i].start, (uint32_t)v[i].source, (uint32_t)i };
	if (!err)
		err = keysort__sort(keys, nr);
	for (size_t i = 0; !err && i < nr; i++)
		sorted[i] = v[keys[i].index];
	if (!err)
		memcpy(v, sorted, nr * sizeof(*v));
	free(keys);
	free(sorted);
	return err;
}

/*
 * The linker writes .eh_frame's FDEs in the order of the code they cover,
 * mostly: a look first spares most files the sort. The rest (libtorch_cpu's
 * 220,000 spans among them) take the radix sort above 4,096 spans, where
 * it beats qsort's comparisons through a pointer.
 */
static int sort_spans(struct fde_span *v, size_t nr)
{
	for (size_t i = 1; i < nr; i++) {
		if (by_span(&v[i - 1], &v[i]) <= 0)
			continue;
		if (nr > SORT_RADIX_MIN)
			return radix_sort_spans(v, nr);
		qsort(v, nr, sizeof(*v), by_span);
		return 0;
	}
	return 0;
}

/* Does s overlap a kept span? kept is sorted by start. */
static bool overlaps(const struct fde_span *kept, size_t nr, const struct fde_span *s)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (kept[mid].start < s->end)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* kept[lo - 1] is the last span starting before s ends. */
	return lo && kept[lo - 1].end > s->start;
}

/*
 * Keep the spans that do not overlap one kept before them: all of
 * .eh_frame first, then .debug_frame, then the synthesized PLT rows.
 */
int cfi_table__choose_spans(struct spans *ss)
{
	struct fde_span *kept = calloc(ss->nr ?: 1, sizeof(*kept));
	size_t nr = 0;
	int err;

	if (!kept)
		return -ENOMEM;
	err = sort_spans(ss->v, ss->nr);

	for (int source = 0; source <= 2 && !err; source++) {
		size_t before = nr;

		for (size_t i = 0; i < ss->nr; i++) {
			if (ss->v[i].source != source || overlaps(kept, before, &ss->v[i]))
				continue;
			/* Within one source, the first of two overlapping FDEs wins. */
			if (nr > before && kept[nr - 1].end > ss->v[i].start)
				continue;
			kept[nr++] = ss->v[i];
		}
		/* Each source's spans are in order: only a second one needs a sort. */
		if (before && nr > before)
			err = sort_spans(kept, nr);
	}
	free(ss->v);
	ss->v = kept;
	ss->nr = nr;
	return err;
}

static int table_push(struct cfi_table *t, size_t *cap, const struct cfi_row *row)
{
	/* Two rows at one pc: the later one (a zero-length advance) holds. */
	if (t->nr && t->rows[t->nr - 1].pc == row->pc) {
		t->rows[t->nr - 1] = *row;
		return 0;
	}
	if (vec__reserve_min(&t->rows, cap, t->nr + 1, sizeof(*row), 1024))
		return -ENOMEM;
	t->rows[t->nr++] = *row;
	return 0;
}

/* The sorted table: each span's rows, and a NONE row where a gap follows it. */
int cfi_table__assemble(struct cfi_table *t, const struct rows *rs, const struct spans *ss)
{
	size_t cap = 0;
	int err = 0;

	for (size_t i = 0; i < ss->nr && !err; i++) {
		const struct fde_span *s = &ss->v[i];
		struct cfi_row none = { .pc = s->end, .cfa = CFI_CFA_NONE };

		for (size_t k = 0; k < s->nr && !err; k++)
			err = table_push(t, &cap, &rs->v[s->first + k]);
		if (!err && (i + 1 == ss->nr || ss->v[i + 1].start > s->end))
			err = table_push(t, &cap, &none);
	}
	return err;
}

struct cfi_row cfi_table__find(const struct cfi_table *t, uint64_t pc)
{
	size_t n = bound__upper_u64(t->rows, t->nr, sizeof(*t->rows), offsetof(struct cfi_row, pc),
				    pc);

	if (!n)
		return (struct cfi_row){ .pc = pc, .cfa = CFI_CFA_NONE };
	return t->rows[n - 1];
}

int cfi_table__runtime_base(const struct cfi_table *t, uint64_t start, uint64_t off,
			    uint64_t *base)
{
	uint64_t bias;
	int err = elf__mapping_bias(t->segs, t->nr_segs, 4096, start, off, &bias);

	/* Packed rows count from t->base. */
	*base = bias + t->base;
	return err;
}

/* The CFA offset in 16 bits, in bytes or in words; false when it does not fit. */
static bool pack_cfa_off(int64_t off, struct unwind_row *p)
{
	if (off >= 0 && off <= 0xffff) {
		p->cfa_off = (__u16)off;
		return true;
	}
	if (off > 0 && off % 8 == 0 && off / 8 <= 0xffff) {
		p->cfa_off = (__u16)(off / 8);
		p->kind |= UNWIND_CFA_X8;
		return true;
	}
	return false;
}

static bool pack_rbp(const struct cfi_row *r, struct unwind_row *p)
{
	if (r->rbp == CFI_RBP_LOST)
		p->kind |= UNWIND_RBP_LOST;
	if (r->rbp != CFI_RBP_AT_CFA)
		return true;
	if (r->rbp_off % 8 || r->rbp_off < -128 * 8 || r->rbp_off > 127 * 8)
		return false;
	p->kind |= UNWIND_RBP_SAVED;
	p->rbp_off = (__s8)(r->rbp_off / 8);
	return true;
}

struct unwind_row cfi_table__row_pack(const struct cfi_row *r, uint64_t base)
{
	struct unwind_row p = { .pc = (__u32)(r->pc - base), .kind = r->cfa };
	bool has_off = r->cfa == CFI_CFA_RSP || r->cfa == CFI_CFA_RBP || r->cfa == CFI_CFA_PLT;

	/* What does not fit is a rule BPF cannot follow: it stops there, counted. */
	if (!pack_rbp(r, &p) || (has_off && !pack_cfa_off(r->cfa_off, &p)))
		return (struct unwind_row){ .pc = p.pc, .kind = UNWIND_CFA_OTHER };
	return p;
}

static bool same_rule(const struct unwind_row *a, const struct unwind_row *b)
{
	return a->kind == b->kind && a->cfa_off == b->cfa_off && a->rbp_off == b->rbp_off;
}

/* Packed rows being written: neighbours with one rule merged, as cfi_table__pack does. */
struct packer {
	struct unwind_row *v;
	size_t nr;
	uint64_t base;
};

static void packer_put(struct packer *pk, const struct cfi_row *r)
{
	struct unwind_row p = cfi_table__row_pack(r, pk->base);

	if (!pk->nr || !same_rule(&pk->v[pk->nr - 1], &p))
		pk->v[pk->nr++] = p;
}

int cfi_table__pack(const struct cfi_table *t, struct unwind_row **out, size_t *nr)
{
	struct packer pk = { NULL, 0, t->base };

	*out = NULL;
	*nr = 0;
	if (t->nr && t->rows[t->nr - 1].pc - t->base > UINT32_MAX)
		return -E2BIG;
	pk.v = malloc((t->nr ?: 1) * sizeof(*pk.v));
	if (!pk.v)
		return -ENOMEM;
	for (size_t i = 0; i < t->nr; i++)
		packer_put(&pk, &t->rows[i]);
	*out = pk.v;
	*nr = pk.nr;
	return 0;
}

int cfi_table__assemble_packed(const struct cfi_table *t, const struct rows *rs,
			       const struct spans *ss, struct unwind_row **out, size_t *nr)
{
	struct packer pk = { NULL, 0, t->base };
	/* Each span's rows and its NONE row: a bound on the rows, never reached by much. */
	size_t most = rs->nr + ss->nr;
	struct cfi_row cur;
	bool have = false;

	*out = NULL;
	*nr = 0;
	/* Spans are sorted and apart: the last one's NONE row is the highest pc. */
	if (ss->nr && ss->v[ss->nr - 1].end - t->base > UINT32_MAX)
		return -E2BIG;
	pk.v = malloc((most ?: 1) * sizeof(*pk.v));
	if (!pk.v)
		return -ENOMEM;
	/* cur is the row table_push would hold last: one at the same pc replaces it. */
	for (size_t i = 0; i < ss->nr; i++) {
		const struct fde_span *s = &ss->v[i];
		struct cfi_row none = { .pc = s->end, .cfa = CFI_CFA_NONE };
		bool gap = i + 1 == ss->nr || ss->v[i + 1].start > s->end;

		for (size_t k = 0; k <= s->nr; k++) {
			const struct cfi_row *r = k < s->nr ? &rs->v[s->first + k] : &none;

			if (k == s->nr && !gap)
				break;
			if (have && cur.pc != r->pc)
				packer_put(&pk, &cur);
			cur = *r;
			have = true;
		}
	}
	if (have)
		packer_put(&pk, &cur);
	*out = pk.v;
	*nr = pk.nr;
	return 0;
}
