// SPDX-License-Identifier: GPL-2.0
/*
 * cfi: call-frame information into unwind rows, on real files: Debian's
 * libc (PLT, signal trampoline, clone's child), and the victims built with
 * and without frame pointers and with .debug_frame only (make victims).
 * test_cfi_libdw.c (in the symbolizer's tests, which link libdw) compares
 * every row with libdw's reading of the same files.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <unistd.h>
#include "unit.h"
#include "unwind/cfi.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"
#define VICTIMS ".output/victims/"

/* A symbol's value and size from .symtab, else .dynsym; false when absent. */
static bool find_symbol(const char *path, const char *name, uint64_t *value, uint64_t *size)
{
	int fd = open(path, O_RDONLY);
	Elf *elf = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;
	bool found = false;

	*value = *size = 0;
	while (elf && !found && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *d = elf_getdata(scn, NULL);
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize && !found; i++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(d, (int)i, &sym))
				continue;
			n = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (n && !strcmp(n, name) && sym.st_value) {
				*value = sym.st_value;
				*size = sym.st_size;
				found = true;
			}
		}
	}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return found;
}

/* A section's address and size; false when absent. */
static bool find_section(const char *path, const char *name, uint64_t *addr, uint64_t *size)
{
	int fd = open(path, O_RDONLY);
	Elf *elf = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;
	size_t shstrndx = 0;
	bool found = false;

	*addr = *size = 0;
	if (elf && elf_getshdrstrndx(elf, &shstrndx)) {
		elf_end(elf);
		elf = NULL;
	}
	while (elf && !found && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name)) {
			*addr = sh.sh_addr;
			*size = sh.sh_size;
			found = true;
		}
	}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return found;
}

/* How many rows of [start, end) have this CFA rule. */
static size_t count_rows(const struct cfi_table *t, uint64_t start, uint64_t end, uint8_t cfa)
{
	size_t n = 0;

	for (size_t i = 0; i < t->nr; i++)
		n += t->rows[i].pc >= start && t->rows[i].pc < end && t->rows[i].cfa == cfa;
	return n;
}

static bool sorted_and_terminated(const struct cfi_table *t)
{
	for (size_t i = 1; i < t->nr; i++)
		if (t->rows[i].pc <= t->rows[i - 1].pc)
			return false;
	/* Past the last FDE nothing is covered. */
	return t->nr && t->rows[t->nr - 1].cfa == CFI_CFA_NONE;
}

TEST(cfi_libc_rows)
{
	struct cfi_table *t = NULL;
	uint8_t id[64];
	int fd, len;

	ASSERT(cfi__read(LIBC, &t) == 0);
	ASSERT(t->eh_frame && !t->debug_frame);
	ASSERT(t->nr_fdes > 1000 && t->nr > t->nr_fdes);
	ASSERT_EQ_U64(t->nr_bad, 0);
	ASSERT(sorted_and_terminated(t));
	ASSERT_EQ_U64(t->base, 0);
	/* The build id, also as the cheap reader finds it. */
	ASSERT_EQ_U64(t->build_id_len, 20);
	fd = open(LIBC, O_RDONLY);
	len = elf__build_id_fd(fd, id, sizeof(id));
	close(fd);
	ASSERT_EQ_U64(len, 20);
	ASSERT(!memcmp(id, t->build_id, 20));
	/* Exactly one signal trampoline, __restore_rt's FDE. */
	ASSERT_EQ_U64(count_rows(t, 0, UINT64_MAX, CFI_CFA_SIGNAL), 1);
	cfi__table_free(t);
	return true;
}

/* Every return address into malloc's caller: at entry CFA = %rsp + 8. */
TEST(cfi_function_entry)
{
	struct cfi_table *t = NULL;
	uint64_t addr, size;
	struct cfi_row r;

	ASSERT(cfi__read(LIBC, &t) == 0);
	ASSERT(find_symbol(LIBC, "malloc", &addr, &size));
	r = cfi_table__find(t, addr);
	ASSERT_EQ_U64(r.cfa, CFI_CFA_RSP);
	ASSERT_EQ_U64(r.cfa_off, 8);
	ASSERT_EQ_U64(r.rbp, CFI_RBP_SAME);
	cfi__table_free(t);
	return true;
}

/* The lazy PLT: binutils' expression, recognized as such after PLT0. */
TEST(cfi_plt)
{
	struct cfi_table *t = NULL;
	uint64_t addr, size;
	struct cfi_row r;

	ASSERT(cfi__read(LIBC, &t) == 0);
	ASSERT(find_section(LIBC, ".plt", &addr, &size));
	r = cfi_table__find(t, addr + 16);
	ASSERT_EQ_U64(r.cfa, CFI_CFA_PLT);
	ASSERT_EQ_U64(r.cfa_off, 11);
	/* PLT0 itself: after its push, %rsp + 16, then + 24. */
	r = cfi_table__find(t, addr);
	ASSERT_EQ_U64(r.cfa, CFI_CFA_RSP);
	ASSERT_EQ_U64(r.cfa_off, 16);
	cfi__table_free(t);
	return true;
}

/* clone's child part: the return address is undefined there, the stack's end. */
TEST(cfi_clone_child_ends_stack)
{
	struct cfi_table *t = NULL;
	uint64_t addr, size;

	ASSERT(cfi__read(LIBC, &t) == 0);
	ASSERT(find_symbol(LIBC, "clone", &addr, &size));
	ASSERT(count_rows(t, addr, addr + size, CFI_CFA_END) >= 1);
	cfi__table_free(t);
	return true;
}

/* main keeps %rbp as frame pointer in the fp build, not in the other. */
TEST(cfi_victims_with_and_without_frame_pointers)
{
	struct cfi_table *fp = NULL, *nofp = NULL;
	uint64_t a1, s1, a2, s2;

	ASSERT(cfi__read(VICTIMS "v_basic", &fp) == 0);
	ASSERT(cfi__read(VICTIMS "nofp/v_basic", &nofp) == 0);
	ASSERT(find_symbol(VICTIMS "v_basic", "main", &a1, &s1));
	ASSERT(find_symbol(VICTIMS "nofp/v_basic", "main", &a2, &s2));
	ASSERT(count_rows(fp, a1, a1 + s1, CFI_CFA_RBP) >= 1);
	ASSERT_EQ_U64(count_rows(nofp, a2, a2 + s2, CFI_CFA_RBP), 0);
	ASSERT(count_rows(nofp, a2, a2 + s2, CFI_CFA_RSP) >= 2);
	/* Where the fp build's main has its frame: the caller's %rbp at CFA - 16. */
	for (size_t i = 0; i < fp->nr; i++) {
		const struct cfi_row *r = &fp->rows[i];

		if (r->pc < a1 || r->pc >= a1 + s1 || r->cfa != CFI_CFA_RBP)
			continue;
		ASSERT_EQ_U64(r->cfa_off, 16);
		ASSERT_EQ_U64(r->rbp, CFI_RBP_AT_CFA);
		ASSERT_EQ_U64(r->rbp_off, -16);
	}
	/* _start (crt1.o): the return address is undefined. */
	ASSERT(find_symbol(VICTIMS "v_basic", "_start", &a1, &s1));
	ASSERT_EQ_U64(cfi_table__find(fp, a1).cfa, CFI_CFA_END);
	cfi__table_free(fp);
	cfi__table_free(nofp);
	return true;
}

/* -fno-asynchronous-unwind-tables: main's CFI is in .debug_frame only. */
TEST(cfi_debug_frame)
{
	struct cfi_table *eh = NULL, *dbg = NULL;
	uint64_t a1, s1, a2, s2;

	ASSERT(cfi__read(VICTIMS "nofp/v_basic", &eh) == 0);
	ASSERT(cfi__read(VICTIMS "dbgframe/v_basic", &dbg) == 0);
	ASSERT(dbg->eh_frame && dbg->debug_frame);
	ASSERT(find_symbol(VICTIMS "nofp/v_basic", "main", &a1, &s1));
	ASSERT(find_symbol(VICTIMS "dbgframe/v_basic", "main", &a2, &s2));
	/* Same code, same rules: compare main's rows one by one. */
	ASSERT_EQ_U64(s1, s2);
	for (uint64_t off = 0; off < s1; off++) {
		struct cfi_row x = cfi_table__find(eh, a1 + off), y = cfi_table__find(dbg, a2 + off);

		ASSERT_EQ_U64(x.cfa, y.cfa);
		ASSERT_EQ_U64(x.cfa_off, y.cfa_off);
		ASSERT_EQ_U64(x.rbp, y.rbp);
	}
	cfi__table_free(eh);
	cfi__table_free(dbg);
	return true;
}

TEST(cfi_not_elf)
{
	struct cfi_table *t = (struct cfi_table *)1;

	ASSERT(cfi__read("Makefile", &t) == -ENOEXEC);
	ASSERT(t == NULL);
	ASSERT(cfi__read("/nonexistent/file", &t) == -ENOENT);
	return true;
}

/* libc's code segment mapped at 0x7f0000026000 from offset 0x26000: bias 0x7f0000000000. */
TEST(cfi_runtime_base)
{
	struct cfi_table *t = NULL;
	uint64_t base = 0;

	ASSERT(cfi__read(LIBC, &t) == 0);
	ASSERT(t->nr_segs >= 2);
	ASSERT(cfi_table__runtime_base(t, 0x7f0000000000 + (t->segs[1].vaddr & ~4095ULL),
				       t->segs[1].offset & ~4095ULL, &base) == 0);
	ASSERT_EQ_U64(base, 0x7f0000000000);
	cfi__table_free(t);
	/* A non-PIE program is placed where it was linked. */
	ASSERT(cfi__read(VICTIMS "v_nopie", &t) == 0);
	ASSERT(t->base == 0x400000);
	ASSERT(cfi_table__runtime_base(t, t->segs[1].vaddr & ~4095ULL, t->segs[1].offset & ~4095ULL,
				       &base) == 0);
	ASSERT_EQ_U64(base, 0x400000);
	ASSERT(cfi_table__runtime_base(t, 0x1000, 1ULL << 40, &base) == -ENOENT);
	cfi__table_free(t);
	return true;
}

TEST(cfi_pack_rows)
{
	struct cfi_row r = { .pc = 0x1234, .cfa = CFI_CFA_RSP, .cfa_off = 48,
			     .rbp = CFI_RBP_AT_CFA, .rbp_off = -16 };
	struct unwind_row p = cfi_table__row_pack(&r, 0x1000);

	ASSERT_EQ_U64(p.pc, 0x234);
	ASSERT_EQ_U64(p.kind, UNWIND_CFA_RSP | UNWIND_RBP_SAVED);
	ASSERT_EQ_U64(p.cfa_off, 48);
	ASSERT_EQ_U64((uint64_t)(int64_t)p.rbp_off, (uint64_t)-2);
	/* A big frame: counted in words. */
	r.cfa_off = 0x10008;
	p = cfi_table__row_pack(&r, 0);
	ASSERT_EQ_U64(p.kind, UNWIND_CFA_RSP | UNWIND_RBP_SAVED | UNWIND_CFA_X8);
	ASSERT_EQ_U64(p.cfa_off, 0x10008 / 8);
	/* What does not fit becomes a rule BPF stops at. */
	r.cfa_off = 0x10001;
	ASSERT_EQ_U64(cfi_table__row_pack(&r, 0).kind, UNWIND_CFA_OTHER);
	r.cfa_off = 16;
	r.rbp_off = -12;
	ASSERT_EQ_U64(cfi_table__row_pack(&r, 0).kind, UNWIND_CFA_OTHER);
	r.rbp = CFI_RBP_LOST;
	ASSERT_EQ_U64(cfi_table__row_pack(&r, 0).kind, UNWIND_CFA_RSP | UNWIND_RBP_LOST);
	r = (struct cfi_row){ .cfa = CFI_CFA_END };
	ASSERT_EQ_U64(cfi_table__row_pack(&r, 0).kind, UNWIND_CFA_END);
	return true;
}

/* Packing merges neighbours with one rule and keeps every range's end. */
TEST(cfi_pack_table)
{
	struct cfi_table *t = NULL;
	struct unwind_row *rows = NULL;
	size_t nr = 0;

	ASSERT(cfi__read(LIBC, &t) == 0);
	ASSERT(cfi_table__pack(t, &rows, &nr) == 0);
	ASSERT(nr > 0 && nr <= t->nr);
	for (size_t i = 1; i < nr; i++) {
		ASSERT(rows[i].pc > rows[i - 1].pc);
		ASSERT(rows[i].kind != rows[i - 1].kind || rows[i].cfa_off != rows[i - 1].cfa_off ||
		       rows[i].rbp_off != rows[i - 1].rbp_off);
	}
	/* Each table row's rule is the packed row's at its pc. */
	for (size_t i = 0, k = 0; i < t->nr; i++) {
		struct unwind_row want = cfi_table__row_pack(&t->rows[i], t->base);

		while (k + 1 < nr && rows[k + 1].pc <= want.pc)
			k++;
		ASSERT(rows[k].kind == want.kind && rows[k].cfa_off == want.cfa_off &&
		       rows[k].rbp_off == want.rbp_off);
	}
	free(rows);
	cfi__table_free(t);
	return true;
}
