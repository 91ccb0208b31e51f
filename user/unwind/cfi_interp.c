// SPDX-License-Identifier: GPL-2.0
/*
 * The DWARF call-frame instructions of a CIE or an FDE (DWARF 5 section
 * 6.4.2), run for what an x86-64 unwinder needs: the CFA rule, the return
 * address's and %rbp's rules. An FDE's run emits a row at each advance.
 */
#include <errno.h>
#include <string.h>
#include "cfi_internal.h"

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

static int emit(struct interp *in, uint64_t next_loc)
{
	struct cfi_row row;
	int err;

	/* An advance past the FDE's end (a malformed one) leaves its range: no rows there. */
	if (!in->out || next_loc <= in->loc || in->loc >= in->end)
		return 0;
	row = make_row(in->cie, &in->s, in->loc);
	err = cfi_table__rows_push(in->out, &row);
	in->loc = next_loc < in->end ? next_loc : in->end;
	return err;
}

static int advance(struct interp *in, uint64_t delta)
{
	return emit(in, in->loc + delta * in->cie->code_align);
}

/*
 * An operand times the CIE's data alignment, wrapping: a corrupt file's huge
 * operand gives a wrong offset (a rule BPF cannot follow once packed), not
 * undefined behaviour (found by fuzz_cfi).
 */
static int64_t factored(uint64_t v, int64_t align)
{
	return (int64_t)(v * (uint64_t)align);
}

/* The DW_CFA_* with an operand in the opcode's low six bits. */
static int run_primary(struct interp *in, struct reader *r, uint8_t op)
{
	uint8_t reg = op & 0x3f;

	switch (op & 0xc0) {
	case 0x40:	/* advance_loc */
		return advance(in, reg);
	case 0x80:	/* offset */
		set_rule(&in->s, reg, RULE_AT_CFA, factored(rd_uleb(r), in->cie->data_align));
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
		def_cfa(in, reg, factored((uint64_t)rd_sleb(r), da));
		return 0;
	case 0x13:	/* def_cfa_offset_sf */
		in->s.cfa_off = factored((uint64_t)rd_sleb(r), da);
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
		set_rule(&in->s, reg, RULE_AT_CFA, factored(rd_uleb(r), da));
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
		set_rule(&in->s, reg, RULE_AT_CFA, factored((uint64_t)rd_sleb(r), da));
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
		set_rule(&in->s, reg, RULE_AT_CFA, factored(0 - rd_uleb(r), da));
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

int cfi_interp__run(struct interp *in, const uint8_t *p, const uint8_t *end)
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
