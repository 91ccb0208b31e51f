// SPDX-License-Identifier: GPL-2.0
/*
 * cfi.c against libdw: for every row boundary (and the byte before it and
 * one in the middle of its range) and for random addresses of real files,
 * the rule our CIE/FDE interpreter found must be the one libdw's
 * dwarf_cfi_addrframe finds (CFA register and offset, where %rbp is saved,
 * an undefined return address). libdw reads .eh_frame through
 * dwarf_getcfi_elf and .debug_frame through dwarf_getcfi; the linker's
 * PLT sections without FDEs, which we synthesize, are left out.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include "unit.h"
#include "unwind/cfi.h"
#include "fixture.h"

#define RANDOM_ADDRESSES 20000

/* %rbp's rule from a libdw frame, in cfi.h's terms. */
static void libdw_rbp(Dwarf_Frame *f, struct cfi_row *o)
{
	Dwarf_Op mem[3], *ops;
	size_t n;

	o->rbp = CFI_RBP_LOST;
	if (dwarf_frame_register(f, 6, mem, &ops, &n))
		return;
	if (!n && !ops) {
		o->rbp = CFI_RBP_SAME;
	} else if (n == 2 && ops[0].atom == DW_OP_call_frame_cfa &&
		   ops[1].atom == DW_OP_plus_uconst) {
		o->rbp = CFI_RBP_AT_CFA;
		o->rbp_off = (int64_t)ops[1].number;
	}
}

static void libdw_reg_cfa(struct cfi_row *o, uint8_t cfa, uint64_t off)
{
	o->cfa = cfa;
	o->cfa_off = (int64_t)off;
}

/* The return address's and the CFA's rules. */
static void libdw_cfa(Dwarf_Frame *f, struct cfi_row *o)
{
	Dwarf_Op mem[3], *ops, *ra;
	size_t n, nra;
	Dwarf_Addr start, end;
	bool signal;

	o->cfa = CFI_CFA_OTHER;
	if (dwarf_frame_info(f, &start, &end, &signal) < 0 || dwarf_frame_cfa(f, &ops, &n) ||
	    dwarf_frame_register(f, 16, mem, &ra, &nra))
		return;
	if (signal)
		o->cfa = CFI_CFA_SIGNAL;
	else if (!nra && ra == mem)
		o->cfa = CFI_CFA_END;	/* "undefined": ops set to ops_mem */
	else if (nra != 2 || ra[0].atom != DW_OP_call_frame_cfa || (int64_t)ra[1].number != -8)
		o->cfa = CFI_CFA_OTHER;
	else if (n == 1 && ops[0].atom == DW_OP_bregx && (ops[0].number == 6 || ops[0].number == 7))
		libdw_reg_cfa(o, ops[0].number == 7 ? CFI_CFA_RSP : CFI_CFA_RBP, ops[0].number2);
	else if (n == 9 && ops[0].atom == DW_OP_breg7 && ops[1].atom == DW_OP_breg16 &&
		 ops[4].atom >= DW_OP_lit0 && ops[4].atom <= DW_OP_lit31)
		libdw_reg_cfa(o, CFI_CFA_PLT, ops[4].atom - DW_OP_lit0);	/* threshold */
}

/* What libdw says at pc: from cfi first, else from cfi2 (may be NULL). */
static struct cfi_row libdw_row(Dwarf_CFI *cfi, Dwarf_CFI *cfi2, uint64_t pc)
{
	struct cfi_row o = { .pc = pc, .cfa = CFI_CFA_NONE };
	Dwarf_Frame *f = NULL;

	if (dwarf_cfi_addrframe(cfi, pc, &f) && (!cfi2 || dwarf_cfi_addrframe(cfi2, pc, &f)))
		return o;
	libdw_cfa(f, &o);
	libdw_rbp(f, &o);
	free(f);
	return o;
}

static bool same_rule(const struct cfi_row *a, const struct cfi_row *b)
{
	if (a->cfa != b->cfa)
		return false;
	/* Only the kind matters for these: BPF reads nothing else of them. */
	if (a->cfa == CFI_CFA_NONE || a->cfa == CFI_CFA_OTHER || a->cfa == CFI_CFA_SIGNAL ||
	    a->cfa == CFI_CFA_END)
		return true;
	return a->cfa_off == b->cfa_off && a->rbp == b->rbp &&
	       (a->rbp != CFI_RBP_AT_CFA || a->rbp_off == b->rbp_off);
}

/* Addresses in a PLT section that no FDE covers: our own rows, not libdw's. */
static bool synthesized(const struct cfi_row *ours, const struct cfi_row *theirs)
{
	return theirs->cfa == CFI_CFA_NONE &&
	       (ours->cfa == CFI_CFA_PLT || (ours->cfa == CFI_CFA_RSP && ours->cfa_off == 8));
}

struct compare {
	const struct cfi_table *t;
	Dwarf_CFI *eh, *dbg;
	size_t checked, differ;
};

static void check_at(struct compare *c, uint64_t pc)
{
	struct cfi_row ours = cfi_table__find(c->t, pc);
	struct cfi_row theirs = libdw_row(c->eh ? c->eh : c->dbg, c->eh ? c->dbg : NULL, pc);

	c->checked++;
	if (same_rule(&ours, &theirs) || synthesized(&ours, &theirs))
		return;
	if (c->differ++ < 5)
		fprintf(stderr, "  %#lx: ours cfa %d%+ld rbp %d%+ld, libdw cfa %d%+ld rbp %d%+ld\n",
			(unsigned long)pc, ours.cfa, (long)ours.cfa_off, ours.rbp, (long)ours.rbp_off,
			theirs.cfa, (long)theirs.cfa_off, theirs.rbp, (long)theirs.rbp_off);
}

/* Every boundary, the byte before it, the middle of each range, random addresses. */
static bool compare_file(const char *path, size_t min_rows)
{
	struct compare c = { 0 };
	struct cfi_table *t = NULL;
	Dwarf *dw = NULL;
	Elf *elf = NULL;
	int fd = -1;
	bool ok = false;

	if (cfi__read(path, &t) || t->nr < min_rows)
		goto out;
	fd = open(path, O_RDONLY);
	elf = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		goto out;
	dw = t->debug_frame ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
	c = (struct compare){ .t = t, .eh = dwarf_getcfi_elf(elf), .dbg = dw ? dwarf_getcfi(dw) : NULL };
	for (size_t i = 0; i < t->nr; i++) {
		check_at(&c, t->rows[i].pc);
		check_at(&c, t->rows[i].pc - 1);
		if (i + 1 < t->nr)
			check_at(&c, (t->rows[i].pc + t->rows[i + 1].pc) / 2);
	}
	srandom(4);
	for (int i = 0; i < RANDOM_ADDRESSES; i++)
		check_at(&c, t->rows[0].pc + (uint64_t)random() % (t->rows[t->nr - 1].pc - t->rows[0].pc));
	if (c.differ)
		fprintf(stderr, "  %s: %zu of %zu addresses differ from libdw\n", path, c.differ,
			c.checked);
	ok = !c.differ && c.checked > 3 * min_rows;
out:
	if (dw)
		dwarf_end(dw);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	cfi__table_free(t);
	return ok;
}

TEST(cfi_libdw_libc)
{
	ASSERT(compare_file("/lib/x86_64-linux-gnu/libc.so.6", 10000));
	return true;
}

TEST(cfi_libdw_libstdcxx)
{
	ASSERT(compare_file("/usr/lib/x86_64-linux-gnu/libstdc++.so.6", 10000));
	return true;
}

TEST(cfi_libdw_ld_so)
{
	ASSERT(compare_file("/lib64/ld-linux-x86-64.so.2", 1000));
	return true;
}

TEST(cfi_libdw_victims)
{
	static const char *const names[] = { "v_cxx", "nofp/v_cxx", "v_wrappers", "nofp/v_wrappers",
					     "v_static", "nofp/v_static", "v_nopie" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		ASSERT(compare_file(fx_victim(names[i]), 20));
	return true;
}

/* .debug_frame only (and crt1.o's .eh_frame): libdw's dwarf_getcfi reads it. */
TEST(cfi_libdw_debug_frame)
{
	ASSERT(compare_file(fx_victim("dbgframe/v_basic"), 20));
	return true;
}
