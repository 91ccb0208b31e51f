/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the CFI parser's files share: the bounded reader of section bytes,
 * the CIE and interpreter state, and the rows and FDE spans gathered before
 * the table is sorted. cfi_fde.c reads the entries, cfi_interp.c runs their
 * instructions, cfi_table.c builds the table, cfi.c reads the ELF file.
 */
#ifndef CFI_INTERNAL_H
#define CFI_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cfi.h"

#define REG_RBP 6
#define REG_RSP 7
#define REG_RA 16
#define MAX_REMEMBER 32

/* DW_EH_PE_* pointer encodings. */
#define PE_ABSPTR 0x00
#define PE_ULEB128 0x01
#define PE_UDATA2 0x02
#define PE_UDATA4 0x03
#define PE_UDATA8 0x04
#define PE_SLEB128 0x09
#define PE_SDATA2 0x0a
#define PE_SDATA4 0x0b
#define PE_SDATA8 0x0c
#define PE_PCREL 0x10
#define PE_ALIGNED 0x50
#define PE_OMIT 0xff

/*
 * A bounded cursor over section bytes. Its readers are inline: the
 * interpreter's loop and the entry parser both call them for every byte.
 */
struct reader {
	const uint8_t *start, *p, *end;
	uint64_t addr;		/* sh_addr of start: for pc-relative pointers */
	bool bad;
};

static inline uint64_t rd_u(struct reader *r, size_t n)
{
	uint64_t v = 0;

	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = true;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

static inline int64_t rd_s(struct reader *r, size_t n)
{
	uint64_t v = rd_u(r, n);
	unsigned shift = 64 - 8 * (unsigned)n;

	return (int64_t)(v << shift) >> shift;
}

static inline uint64_t rd_uleb(struct reader *r)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (!r->bad) {
		uint8_t b = (uint8_t)rd_u(r, 1);

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	return v;
}

static inline int64_t rd_sleb(struct reader *r)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b = 0;

	while (!r->bad) {
		b = (uint8_t)rd_u(r, 1);
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	if (shift < 64 && (b & 0x40))
		v |= ~0ULL << shift;
	return (int64_t)v;
}

/* The value part of an encoded pointer (what pc_range uses). */
static inline uint64_t rd_value(struct reader *r, uint8_t enc)
{
	switch (enc & 0x0f) {
	case PE_ABSPTR:
		return rd_u(r, 8);
	case PE_ULEB128:
		return rd_uleb(r);
	case PE_UDATA2:
		return rd_u(r, 2);
	case PE_UDATA4:
		return rd_u(r, 4);
	case PE_UDATA8:
		return rd_u(r, 8);
	case PE_SLEB128:
		return (uint64_t)rd_sleb(r);
	case PE_SDATA2:
		return (uint64_t)rd_s(r, 2);
	case PE_SDATA4:
		return (uint64_t)rd_s(r, 4);
	case PE_SDATA8:
		return (uint64_t)rd_s(r, 8);
	}
	r->bad = true;
	return 0;
}

/*
 * An encoded pointer. Only absolute and pc-relative ones name code in an
 * FDE; others (data-, text-, function-relative) would need bases the file
 * alone does not give, so they mark the entry bad. An indirect pointer
 * (a personality routine's) is read, never followed.
 */
static inline uint64_t rd_pointer(struct reader *r, uint8_t enc)
{
	uint64_t field = r->addr + (uint64_t)(r->p - r->start);

	if (enc == PE_OMIT)
		return 0;
	if ((enc & 0x70) == PE_ALIGNED) {
		size_t off = (size_t)(r->p - r->start);

		r->p += (8 - off % 8) % 8;
		if (r->p > r->end)
			r->bad = true;
		return rd_u(r, 8);
	}
	switch (enc & 0x70) {
	case 0:
		return rd_value(r, enc);
	case PE_PCREL:
		return field + rd_value(r, enc);
	}
	r->bad = true;
	return 0;
}

static inline void skip_block(struct reader *r)
{
	uint64_t len = rd_uleb(r);

	if (r->bad || len > (uint64_t)(r->end - r->p))
		r->bad = true;
	else
		r->p += len;
}

/* What the unwinder needs from the register rules. */
struct rule {
	uint8_t how;		/* RULE_* */
	int64_t off;
};

enum { RULE_SAME, RULE_UNDEF, RULE_AT_CFA, RULE_OTHER };

enum { CFA_REG, CFA_PLT, CFA_EXPR };

struct state {
	uint8_t cfa_how;	/* CFA_* */
	uint8_t plt_threshold;
	uint32_t cfa_reg;
	int64_t cfa_off;
	struct rule rbp, ra;
};

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	bool has_aug_data;	/* 'z': FDEs carry augmentation data */
	bool signal;		/* 'S': a signal trampoline */
	const uint8_t *insns, *insns_end;
	struct state init;
};

/* Rows of one FDE, then of the whole file, before sorting. */
struct rows {
	struct cfi_row *v;
	size_t nr, cap;
};

struct fde_span {
	uint64_t start, end;
	size_t first, nr;	/* its rows in the file's row list */
	int source;		/* 0 .eh_frame, 1 .debug_frame, 2 synthesized */
};

struct spans {
	struct fde_span *v;
	size_t nr, cap;
};

/* The interpreter's whole state while it runs one instruction stream. */
struct interp {
	const struct cie *cie;
	struct state s;
	struct state saved[MAX_REMEMBER];
	int depth;
	uint64_t loc, end;
	uint8_t addr_enc;	/* for DW_CFA_set_loc */
	struct rows *out;	/* NULL while running the CIE's initial instructions */
};

/* Which kind of section the entries come from. */
struct frame_sec {
	const uint8_t *data;
	size_t size;
	uint64_t addr;
	bool debug;		/* .debug_frame: other CIE ids, absolute addresses */
};

/* cfi_interp.c: run the instructions from p to end, emitting rows into in->out. */
int cfi_interp__run(struct interp *in, const uint8_t *p, const uint8_t *end);

/* cfi_fde.c: every FDE of one section; malformed entries counted in *bad. */
int cfi_fde__parse_section(const struct frame_sec *fs, int source, struct rows *out,
		      struct spans *spans, size_t *bad);

/* cfi_table.c: the lists, then the sorted table from them. */
int cfi_table__rows_grow(struct rows *rs);

/* Inline: the interpreter pushes every row of the file through it. */
static inline int cfi_table__rows_push(struct rows *rs, const struct cfi_row *row)
{
	if (rs->nr == rs->cap && cfi_table__rows_grow(rs))
		return -ENOMEM;
	rs->v[rs->nr++] = *row;
	return 0;
}
int cfi_table__spans_push(struct spans *ss, const struct fde_span *s);
int cfi_table__choose_spans(struct spans *ss);
int cfi_table__assemble(struct cfi_table *t, const struct rows *rs, const struct spans *ss);
/*
 * The same table straight in the BPF format (cfi_table__pack of what
 * cfi_table__assemble makes, row for row), t->rows left empty: the tracer
 * needs only these, and the table of 32-byte rows between them was a
 * third of the time the target waits for at a stop.
 */
int cfi_table__assemble_packed(const struct cfi_table *t, const struct rows *rs,
			       const struct spans *ss, struct unwind_row **out, size_t *nr);

#endif
