// SPDX-License-Identifier: GPL-2.0
/*
 * Call-frame information into unwind rows: an interpreter of the CIE/FDE
 * instructions of .eh_frame and .debug_frame (DWARF 5 section 6.4, and the
 * LSB's .eh_frame encodings) that keeps only what an x86-64 unwinder needs:
 * the CFA rule, the return address (always at CFA-8, or undefined at the end
 * of a stack) and where the caller's %rbp was saved.
 *
 * .eh_frame comes first. .debug_frame adds the functions .eh_frame lacks (a
 * program built with -fno-asynchronous-unwind-tables -g still has crt1.o's
 * .eh_frame for _start). The linker's PLT sections get synthesized rows where
 * no FDE covers them.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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

/* A bounded cursor over section bytes. */
struct reader {
	const uint8_t *start, *p, *end;
	uint64_t addr;		/* sh_addr of start: for pc-relative pointers */
	bool bad;
};

static uint64_t rd_u(struct reader *r, size_t n)
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

static int64_t rd_s(struct reader *r, size_t n)
{
	uint64_t v = rd_u(r, n);
	unsigned shift = 64 - 8 * (unsigned)n;

	return (int64_t)(v << shift) >> shift;
}

static uint64_t rd_uleb(struct reader *r)
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

static int64_t rd_sleb(struct reader *r)
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
static uint64_t rd_value(struct reader *r, uint8_t enc)
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
static uint64_t rd_pointer(struct reader *r, uint8_t enc)
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

static int rows_push(struct rows *rs, const struct cfi_row *row)
{
	if (rs->nr == rs->cap) {
		size_t ncap = rs->cap ? rs->cap * 2 : 1024;
		struct cfi_row *n = realloc(rs->v, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		rs->v = n;
		rs->cap = ncap;
	}
	rs->v[rs->nr++] = *row;
	return 0;
}

static int spans_push(struct spans *ss, const struct fde_span *s)
{
	if (ss->nr == ss->cap) {
		size_t ncap = ss->cap ? ss->cap * 2 : 256;
		struct fde_span *n = realloc(ss->v, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		ss->v = n;
		ss->cap = ncap;
	}
	ss->v[ss->nr++] = *s;
	return 0;
}

/*
 * glibc's and binutils' lazy PLT: CFA = %rsp + 8 + ((%rip & 15) >= N) << 3,
 * N being 11 (10 with IBT): the entry has pushed its index from byte N on.
 */
static bool is_plt_expression(const uint8_t *e, uint64_t len, uint8_t *threshold)
{
	static const uint8_t head[] = { 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a };
	static const uint8_t tail[] = { 0x2a, 0x33, 0x24, 0x22 };

	if (len != sizeof(head) + 1 + sizeof(tail) || memcmp(e, head, sizeof(head)) ||
	    memcmp(e + sizeof(head) + 1, tail, sizeof(tail)))
		return false;
	if (e[sizeof(head)] < 0x30 || e[sizeof(head)] > 0x4f)	/* DW_OP_lit0..31 */
		return false;
	*threshold = e[sizeof(head)] - 0x30;
	return true;
}

static void set_rule(struct state *s, uint64_t reg, uint8_t how, int64_t off)
{
	struct rule r = { how, off };

	if (reg == REG_RBP)
		s->rbp = r;
	else if (reg == REG_RA)
		s->ra = r;
}

static void restore_rule(struct state *s, const struct state *init, uint64_t reg)
{
	if (reg == REG_RBP)
		s->rbp = init->rbp;
	else if (reg == REG_RA)
		s->ra = init->ra;
}

/* The row for the current state, as enum cfi_cfa / cfi_rbp. */
static struct cfi_row make_row(const struct cie *cie, const struct state *s, uint64_t pc)
{
	struct cfi_row row = { .pc = pc, .cfa = CFI_CFA_OTHER };

	if (s->rbp.how == RULE_AT_CFA) {
		row.rbp = CFI_RBP_AT_CFA;
		row.rbp_off = s->rbp.off;
	} else {
		row.rbp = s->rbp.how == RULE_SAME ? CFI_RBP_SAME : CFI_RBP_LOST;
	}
	if (cie->signal) {
		row.cfa = CFI_CFA_SIGNAL;
	} else if (s->ra.how == RULE_UNDEF) {
		row.cfa = CFI_CFA_END;
	} else if (s->ra.how != RULE_AT_CFA || s->ra.off != -8) {
		row.cfa = CFI_CFA_OTHER;
	} else if (s->cfa_how == CFA_PLT) {
		row.cfa = CFI_CFA_PLT;
		row.cfa_off = s->plt_threshold;
	} else if (s->cfa_how == CFA_REG && (s->cfa_reg == REG_RSP || s->cfa_reg == REG_RBP)) {
		row.cfa = s->cfa_reg == REG_RSP ? CFI_CFA_RSP : CFI_CFA_RBP;
		row.cfa_off = s->cfa_off;
	}
	return row;
}

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

static int emit(struct interp *in, uint64_t next_loc)
{
	struct cfi_row row;
	int err;

	/* An advance past the FDE's end (a malformed one) leaves its range: no rows there. */
	if (!in->out || next_loc <= in->loc || in->loc >= in->end)
		return 0;
	row = make_row(in->cie, &in->s, in->loc);
	err = rows_push(in->out, &row);
	in->loc = next_loc < in->end ? next_loc : in->end;
	return err;
}

static int advance(struct interp *in, uint64_t delta)
{
	return emit(in, in->loc + delta * in->cie->code_align);
}

/* The DW_CFA_* with an operand in the opcode's low six bits. */
static int run_primary(struct interp *in, struct reader *r, uint8_t op)
{
	uint8_t reg = op & 0x3f;

	switch (op & 0xc0) {
	case 0x40:	/* advance_loc */
		return advance(in, reg);
	case 0x80:	/* offset */
		set_rule(&in->s, reg, RULE_AT_CFA, (int64_t)rd_uleb(r) * in->cie->data_align);
		return 0;
	default:	/* 0xc0: restore */
		restore_rule(&in->s, &in->cie->init, reg);
		return 0;
	}
}

static int def_cfa_expression(struct interp *in, struct reader *r)
{
	uint64_t len = rd_uleb(r);

	if (r->bad || len > (uint64_t)(r->end - r->p)) {
		r->bad = true;
		return 0;
	}
	in->s.cfa_how = is_plt_expression(r->p, len, &in->s.plt_threshold) ? CFA_PLT : CFA_EXPR;
	r->p += len;
	return 0;
}

static void skip_block(struct reader *r)
{
	uint64_t len = rd_uleb(r);

	if (r->bad || len > (uint64_t)(r->end - r->p))
		r->bad = true;
	else
		r->p += len;
}

static int remember(struct interp *in, bool push)
{
	if (push) {
		if (in->depth == MAX_REMEMBER)
			return -E2BIG;
		in->saved[in->depth++] = in->s;
		return 0;
	}
	if (!in->depth)
		return -EINVAL;
	/* The CFA is part of the remembered state too (DWARF 5 clarified it). */
	in->s = in->saved[--in->depth];
	return 0;
}

static void def_cfa(struct interp *in, uint64_t reg, int64_t off)
{
	in->s.cfa_how = CFA_REG;
	in->s.cfa_reg = (uint32_t)reg;
	in->s.cfa_off = off;
}

/* The extended opcodes that touch the CFA. */
static int run_cfa_op(struct interp *in, struct reader *r, uint8_t op)
{
	int64_t da = in->cie->data_align;
	uint64_t reg;

	switch (op) {
	case 0x0c:	/* def_cfa */
		reg = rd_uleb(r);
		def_cfa(in, reg, (int64_t)rd_uleb(r));
		return 0;
	case 0x0d:	/* def_cfa_register */
		in->s.cfa_reg = (uint32_t)rd_uleb(r);
		if (in->s.cfa_how != CFA_REG)
			in->s.cfa_how = CFA_EXPR;	/* a register for an expression: undefined */
		return 0;
	case 0x0e:	/* def_cfa_offset */
		in->s.cfa_off = (int64_t)rd_uleb(r);
		return 0;
	case 0x0f:
		return def_cfa_expression(in, r);
	case 0x12:	/* def_cfa_sf */
		reg = rd_uleb(r);
		def_cfa(in, reg, rd_sleb(r) * da);
		return 0;
	case 0x13:	/* def_cfa_offset_sf */
		in->s.cfa_off = rd_sleb(r) * da;
		return 0;
	}
	return -EOPNOTSUPP;
}

/* The extended opcodes that set a register's rule. */
static int run_reg_op(struct interp *in, struct reader *r, uint8_t op)
{
	int64_t da = in->cie->data_align;
	uint64_t reg = rd_uleb(r);

	switch (op) {
	case 0x05:	/* offset_extended */
		set_rule(&in->s, reg, RULE_AT_CFA, (int64_t)rd_uleb(r) * da);
		return 0;
	case 0x06:	/* restore_extended */
		restore_rule(&in->s, &in->cie->init, reg);
		return 0;
	case 0x07:	/* undefined */
		set_rule(&in->s, reg, RULE_UNDEF, 0);
		return 0;
	case 0x08:	/* same_value */
		set_rule(&in->s, reg, RULE_SAME, 0);
		return 0;
	case 0x09:	/* register */
		rd_uleb(r);
		set_rule(&in->s, reg, RULE_OTHER, 0);
		return 0;
	case 0x10:	/* expression */
	case 0x16:	/* val_expression */
		skip_block(r);
		set_rule(&in->s, reg, RULE_OTHER, 0);
		return 0;
	case 0x11:	/* offset_extended_sf */
		set_rule(&in->s, reg, RULE_AT_CFA, rd_sleb(r) * da);
		return 0;
	case 0x14:	/* val_offset */
		rd_uleb(r);
		set_rule(&in->s, reg, RULE_OTHER, 0);
		return 0;
	case 0x15:	/* val_offset_sf */
		rd_sleb(r);
		set_rule(&in->s, reg, RULE_OTHER, 0);
		return 0;
	case 0x2f:	/* GNU_negative_offset_extended */
		set_rule(&in->s, reg, RULE_AT_CFA, -(int64_t)rd_uleb(r) * da);
		return 0;
	}
	return -EOPNOTSUPP;
}

static int run_op(struct interp *in, struct reader *r, uint8_t op)
{
	int err;

	if (op & 0xc0)
		return run_primary(in, r, op);
	switch (op) {
	case 0x00:	/* nop */
		return 0;
	case 0x01:	/* set_loc */
		return emit(in, rd_pointer(r, in->addr_enc));
	case 0x02:
		return advance(in, rd_u(r, 1));
	case 0x03:
		return advance(in, rd_u(r, 2));
	case 0x04:
		return advance(in, rd_u(r, 4));
	case 0x0a:	/* remember_state */
	case 0x0b:	/* restore_state */
		return remember(in, op == 0x0a);
	case 0x2e:	/* GNU_args_size */
		rd_uleb(r);
		return 0;
	}
	err = run_cfa_op(in, r, op);
	return err == -EOPNOTSUPP ? run_reg_op(in, r, op) : err;
}

static int run(struct interp *in, const uint8_t *p, const uint8_t *end)
{
	struct reader r = { .start = p, .p = p, .end = end };
	int err = 0;

	while (!err && r.p < r.end && !r.bad)
		err = run_op(in, &r, (uint8_t)rd_u(&r, 1));
	if (!err && r.bad)
		err = -EINVAL;
	/* The last row holds to the end of the FDE. */
	if (!err && in->out)
		err = emit(in, in->end);
	return err;
}

/* Which kind of section the entries come from. */
struct frame_sec {
	const uint8_t *data;
	size_t size;
	uint64_t addr;
	bool debug;		/* .debug_frame: other CIE ids, absolute addresses */
};

/* Augmentation string and data of a CIE ("zR", "zPLR", "zRS", ...). */
static int parse_augmentation(struct reader *r, const char *aug, struct cie *cie)
{
	const uint8_t *data_end = NULL;

	if (aug[0] == 'z') {
		uint64_t len = rd_uleb(r);

		if (r->bad || len > (uint64_t)(r->end - r->p))
			return -EINVAL;
		data_end = r->p + len;
		cie->has_aug_data = true;
	} else if (aug[0]) {
		return -EOPNOTSUPP;	/* unknown data we could not skip */
	}
	for (const char *a = aug[0] ? aug + 1 : aug; *a; a++) {
		if (*a == 'R')
			cie->fde_enc = (uint8_t)rd_u(r, 1);
		else if (*a == 'L')
			rd_u(r, 1);
		else if (*a == 'P')
			rd_pointer(r, (uint8_t)rd_u(r, 1));
		else if (*a == 'S')
			cie->signal = true;
		else if (*a != 'B' && *a != 'G')
			break;		/* unknown: 'z' lets us skip the rest */
	}
	if (data_end)
		r->p = data_end;
	return r->bad ? -EINVAL : 0;
}

static int parse_cie(struct reader *r, struct cie *cie)
{
	uint8_t version = (uint8_t)rd_u(r, 1);
	const char *aug = (const char *)r->p;
	size_t auglen = strnlen(aug, (size_t)(r->end - r->p));
	struct interp in = { .cie = cie };
	int err;

	memset(cie, 0, sizeof(*cie));
	cie->fde_enc = PE_ABSPTR;
	if (auglen == (size_t)(r->end - r->p) || (version != 1 && version != 3 && version != 4))
		return -EINVAL;
	r->p += auglen + 1;
	if (version == 4 && (rd_u(r, 1) != 8 || rd_u(r, 1) != 0))
		return -EOPNOTSUPP;	/* address size 8, no segments */
	cie->code_align = rd_uleb(r);
	cie->data_align = rd_sleb(r);
	cie->ra_reg = version == 1 ? rd_u(r, 1) : rd_uleb(r);
	err = parse_augmentation(r, aug, cie);
	if (err)
		return err;
	if (cie->ra_reg != REG_RA)
		return -EOPNOTSUPP;
	cie->insns = r->p;
	cie->insns_end = r->end;
	/* Every register not mentioned keeps its value; the CIE says the rest. */
	in.s = (struct state){ .cfa_how = CFA_EXPR, .ra = { RULE_SAME, 0 } };
	err = run(&in, cie->insns, cie->insns_end);
	cie->init = in.s;
	return err;
}

/* One FDE: its rows into out, its span into spans. */
static int parse_fde(struct reader *r, const struct cie *cie, struct rows *out,
		     struct spans *spans, int source)
{
	struct interp in = { .cie = cie, .s = cie->init, .addr_enc = cie->fde_enc, .out = out };
	uint64_t start = rd_pointer(r, cie->fde_enc);
	uint64_t range = rd_value(r, cie->fde_enc);
	struct fde_span span;
	int err;

	if (cie->has_aug_data)
		skip_block(r);
	if (r->bad)
		return -EINVAL;
	if (!range || start + range < start)
		return 0;	/* empty or absurd: nothing to unwind there */
	in.loc = start;
	in.end = start + range;
	span = (struct fde_span){ start, start + range, out->nr, 0, source };
	err = run(&in, r->p, r->end);
	if (err) {
		out->nr = span.first;	/* drop its partial rows */
		return err;
	}
	span.nr = out->nr - span.first;
	return spans_push(spans, &span);
}

#define MAX_CIES 64

/* The CIEs met so far: glibc has four, most files one. */
struct cie_cache {
	uint64_t offset[MAX_CIES];
	struct cie cie[MAX_CIES];
	size_t nr;
};

static int get_cie(const struct frame_sec *fs, uint64_t off, struct cie_cache *cc,
		   const struct cie **out)
{
	struct reader r = { .start = fs->data, .end = fs->data + fs->size, .addr = fs->addr };
	struct cie *slot;
	uint64_t len, id;
	int err;

	for (size_t i = 0; i < cc->nr; i++) {
		if (cc->offset[i] == off) {
			*out = &cc->cie[i];
			return 0;
		}
	}
	if (off >= fs->size)
		return -EINVAL;
	if (cc->nr == MAX_CIES)
		return -E2BIG;
	r.p = fs->data + off;
	len = rd_u(&r, 4);
	if (len == 0xffffffff)
		return -EOPNOTSUPP;	/* 64-bit DWARF: not produced for x86-64 code */
	if (r.bad || len > (uint64_t)(r.end - r.p))
		return -EINVAL;
	r.end = r.p + len;
	id = rd_u(&r, 4);
	if (id != (fs->debug ? 0xffffffffu : 0))
		return -EINVAL;
	slot = &cc->cie[cc->nr];
	err = parse_cie(&r, slot);
	if (err)
		return err;
	cc->offset[cc->nr++] = off;
	*out = slot;
	return 0;
}

/* Every FDE of one section. Malformed entries are counted and skipped. */
static int parse_section(const struct frame_sec *fs, int source, struct rows *out,
			 struct spans *spans, size_t *bad)
{
	struct cie_cache *cc = calloc(1, sizeof(*cc));
	size_t off = 0;
	int err = 0;

	if (!cc)
		return -ENOMEM;
	while (!err && off + 4 <= fs->size) {
		struct reader r = { .start = fs->data, .p = fs->data + off,
				    .end = fs->data + fs->size, .addr = fs->addr };
		uint64_t len = rd_u(&r, 4), id, id_pos;
		const struct cie *cie;

		if (len == 0) {
			if (!fs->debug)
				break;	/* .eh_frame's terminator */
			off += 4;
			continue;
		}
		if (len == 0xffffffff || len > (uint64_t)(r.end - r.p)) {
			(*bad)++;
			break;	/* cannot find the next entry */
		}
		r.end = r.p + len;
		off += 4 + len;
		id_pos = (uint64_t)(r.p - r.start);
		id = rd_u(&r, 4);
		if (id == (fs->debug ? 0xffffffffu : 0))
			continue;	/* a CIE: parsed when an FDE needs it */
		/* .eh_frame: back from the id's own position; .debug_frame: from the start. */
		if (get_cie(fs, fs->debug ? id : id_pos - id, cc, &cie)) {
			(*bad)++;
			continue;
		}
		err = parse_fde(&r, cie, out, spans, source);
		if (err && err != -ENOMEM) {
			(*bad)++;
			err = 0;
		}
	}
	free(cc);
	return err;
}

/* The section's bytes, decompressed when it is (SHF_COMPRESSED .debug_frame). */
static bool section_bytes(Elf_Scn *scn, const GElf_Shdr *sh, struct frame_sec *fs)
{
	Elf_Data *d;

	if (sh->sh_type == SHT_NOBITS)
		return false;
	if ((sh->sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		return false;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || !d->d_size)
		return false;
	fs->data = d->d_buf;
	fs->size = d->d_size;
	fs->addr = sh->sh_addr;
	return true;
}

static bool section_named(Elf *elf, size_t shstrndx, const GElf_Shdr *sh, const char *name)
{
	const char *n = elf_strptr(elf, shstrndx, sh->sh_name);

	return n && !strcmp(n, name);
}

static int by_span(const void *a, const void *b)
{
	const struct fde_span *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->source - y->source;
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
static int choose_spans(struct spans *ss)
{
	struct fde_span *kept = calloc(ss->nr ?: 1, sizeof(*kept));
	size_t nr = 0;

	if (!kept)
		return -ENOMEM;
	if (ss->nr)	/* qsort(NULL, 0, ...) is undefined behaviour */
		qsort(ss->v, ss->nr, sizeof(*ss->v), by_span);
	for (int source = 0; source <= 2; source++) {
		size_t before = nr;

		for (size_t i = 0; i < ss->nr; i++) {
			if (ss->v[i].source != source || overlaps(kept, before, &ss->v[i]))
				continue;
			/* Within one source, the first of two overlapping FDEs wins. */
			if (nr > before && kept[nr - 1].end > ss->v[i].start)
				continue;
			kept[nr++] = ss->v[i];
		}
		qsort(kept, nr, sizeof(*kept), by_span);
	}
	free(ss->v);
	ss->v = kept;
	ss->nr = nr;
	return 0;
}

static int table_push(struct cfi_table *t, size_t *cap, const struct cfi_row *row)
{
	/* Two rows at one pc: the later one (a zero-length advance) holds. */
	if (t->nr && t->rows[t->nr - 1].pc == row->pc) {
		t->rows[t->nr - 1] = *row;
		return 0;
	}
	if (t->nr == *cap) {
		size_t ncap = *cap ? *cap * 2 : 1024;
		struct cfi_row *n = realloc(t->rows, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		t->rows = n;
		*cap = ncap;
	}
	t->rows[t->nr++] = *row;
	return 0;
}

/* The sorted table: each span's rows, and a NONE row where a gap follows it. */
static int assemble(struct cfi_table *t, const struct rows *rs, const struct spans *ss)
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

/*
 * PLT sections without an FDE: a lazy .plt entry pushes its index before
 * jumping to PLT0, .plt.got and .plt.sec entries only jump.
 */
static int synthesize_plt(const GElf_Shdr *sh, const char *name, struct rows *out,
			  struct spans *spans)
{
	struct cfi_row row = { .pc = sh->sh_addr, .cfa = CFI_CFA_RSP, .cfa_off = 8 };
	struct fde_span span = { sh->sh_addr, sh->sh_addr + sh->sh_size, out->nr, 1, 2 };
	int err;

	if (!strcmp(name, ".plt")) {
		row.cfa = CFI_CFA_PLT;
		row.cfa_off = 11;
	}
	err = rows_push(out, &row);
	return err ? err : spans_push(spans, &span);
}

static void read_build_id(Elf_Scn *scn, const GElf_Shdr *sh, struct cfi_table *t)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	if (t->build_id_len || sh->sh_type != SHT_NOTE || !d)
		return;
	while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
		    memcmp((char *)d->d_buf + name_off, "GNU", 4) || !nh.n_descsz ||
		    nh.n_descsz > sizeof(t->build_id))
			continue;
		memcpy(t->build_id, (char *)d->d_buf + desc_off, nh.n_descsz);
		t->build_id_len = nh.n_descsz;
		return;
	}
}

static int read_segs(Elf *elf, struct cfi_table *t)
{
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum))
		return -EINVAL;
	t->segs = calloc(phnum ?: 1, sizeof(*t->segs));
	if (!t->segs)
		return -ENOMEM;
	t->base = UINT64_MAX;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		t->segs[t->nr_segs++] = (struct cfi_seg){ ph.p_vaddr, ph.p_offset, ph.p_filesz };
		if (ph.p_vaddr < t->base)
			t->base = ph.p_vaddr;
	}
	if (!t->nr_segs)
		t->base = 0;
	return 0;
}

/* Every section of interest: frames, PLTs, the build id. */
static int scan_sections(Elf *elf, struct cfi_table *t, struct rows *rs, struct spans *ss)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	int err = 0;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return -EINVAL;
	while (!err && (scn = elf_nextscn(elf, scn))) {
		struct frame_sec fs = { 0 };
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		read_build_id(scn, &sh, t);
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (!strcmp(name, ".plt") || !strcmp(name, ".plt.got") || !strcmp(name, ".plt.sec")) {
			if (sh.sh_type == SHT_PROGBITS && sh.sh_size)
				err = synthesize_plt(&sh, name, rs, ss);
			continue;
		}
		fs.debug = section_named(elf, shstrndx, &sh, ".debug_frame");
		if (!fs.debug && !section_named(elf, shstrndx, &sh, ".eh_frame"))
			continue;
		if (!section_bytes(scn, &sh, &fs))
			continue;
		if (fs.debug)
			fs.addr = 0;	/* no pc-relative pointers there */
		err = parse_section(&fs, fs.debug, rs, ss, &t->nr_bad);
		*(fs.debug ? &t->debug_frame : &t->eh_frame) = true;
	}
	return err;
}

int cfi__read_fd(int fd, struct cfi_table **out)
{
	struct cfi_table *t = calloc(1, sizeof(*t));
	struct rows rs = { 0 };
	struct spans ss = { 0 };
	Elf *elf;
	int err;

	*out = NULL;
	if (!t)
		return -ENOMEM;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64) {
		err = -ENOEXEC;
		goto out;
	}
	err = read_segs(elf, t);
	if (!err)
		err = scan_sections(elf, t, &rs, &ss);
	if (!err)
		err = choose_spans(&ss);
	if (!err) {
		for (size_t i = 0; i < ss.nr; i++)
			t->nr_fdes += ss.v[i].source < 2;
		err = assemble(t, &rs, &ss);
	}
out:
	if (elf)
		elf_end(elf);
	free(rs.v);
	free(ss.v);
	if (err) {
		cfi_table__free(t);
		return err;
	}
	*out = t;
	return 0;
}

int cfi__read(const char *path, struct cfi_table **out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int err;

	if (fd < 0)
		return -errno;
	err = cfi__read_fd(fd, out);
	close(fd);
	return err;
}

int cfi__build_id_fd(int fd, uint8_t *id, size_t max)
{
	struct cfi_table t = { 0 };
	Elf_Scn *scn = NULL;
	Elf *elf;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		return -ENOEXEC;
	}
	while ((scn = elf_nextscn(elf, scn)) && !t.build_id_len) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh))
			read_build_id(scn, &sh, &t);
	}
	elf_end(elf);
	if (t.build_id_len > max)
		return -E2BIG;
	memcpy(id, t.build_id, t.build_id_len);
	return (int)t.build_id_len;
}

void cfi_table__free(struct cfi_table *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t->segs);
	free(t);
}

struct cfi_row cfi_table__find(const struct cfi_table *t, uint64_t pc)
{
	size_t lo = 0, hi = t->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].pc <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return (struct cfi_row){ .pc = pc, .cfa = CFI_CFA_NONE };
	return t->rows[lo - 1];
}

int cfi_table__runtime_base(const struct cfi_table *t, uint64_t start, uint64_t off,
			    uint64_t *base)
{
	const struct cfi_seg *best = NULL;

	/* A mapping starts at its segment's page-aligned offset, or inside it. */
	for (size_t i = 0; i < t->nr_segs; i++) {
		const struct cfi_seg *s = &t->segs[i];
		uint64_t page_off = s->offset & ~4095ULL;

		if (off < page_off || off >= s->offset + s->filesz)
			continue;
		if (!best || off == page_off)
			best = s;
	}
	if (!best)
		return -ENOENT;
	/* start maps off, which is at vaddr - p_offset + off in the object. */
	*base = start - off + best->offset - best->vaddr + t->base;
	return 0;
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

struct unwind_row cfi_row__pack(const struct cfi_row *r, uint64_t base)
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

int cfi_table__pack(const struct cfi_table *t, struct unwind_row **out, size_t *nr)
{
	struct unwind_row *v;
	size_t n = 0;

	*out = NULL;
	*nr = 0;
	if (t->nr && t->rows[t->nr - 1].pc - t->base > UINT32_MAX)
		return -E2BIG;
	v = malloc((t->nr ?: 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < t->nr; i++) {
		struct unwind_row p = cfi_row__pack(&t->rows[i], t->base);

		if (n && same_rule(&v[n - 1], &p))
			continue;
		v[n++] = p;
	}
	*out = v;
	*nr = n;
	return 0;
}
