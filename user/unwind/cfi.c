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
 *
 * This file reads the ELF file: its sections, segments and build id.
 * cfi_fde.c parses the entries of a frame section, cfi_interp.c runs their
 * instructions, cfi_table.c builds, searches and packs the table.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cfi_internal.h"

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
	err = cfi_table__rows_push(out, &row);
	return err ? err : cfi_table__spans_push(spans, &span);
}

/* The PT_LOAD segments, and the lowest vaddr, from which packed rows count. */
static int read_segs(Elf *elf, struct cfi_table *t)
{
	int err = elf__load_segments(elf, &t->segs, &t->nr_segs);

	t->base = t->nr_segs ? UINT64_MAX : 0;
	for (size_t i = 0; i < t->nr_segs; i++)
		if (t->segs[i].vaddr < t->base)
			t->base = t->segs[i].vaddr;
	return err;
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
		err = cfi_fde__parse_section(&fs, fs.debug, rs, ss, &t->nr_bad);
		*(fs.debug ? &t->debug_frame : &t->eh_frame) = true;
	}
	return err;
}

/*
 * The file's CFI into t: its rows as a table (packed NULL) or straight in
 * the BPF format into *packed, *nr_packed.
 */
static int read_elf(int fd, struct cfi_scratch *scratch, struct cfi_table *t,
		    struct unwind_row **packed, size_t *nr_packed)
{
	struct rows rs = { scratch ? scratch->rows : NULL, 0, scratch ? scratch->cap : 0 };
	struct spans ss = { 0 };
	Elf *elf;
	int err;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64) {
		err = -ENOEXEC;
		goto out;
	}
	err = read_segs(elf, t);
	if (!err) {
		int len = elf__build_id(elf, t->build_id, sizeof(t->build_id));

		t->build_id_len = len > 0 ? (size_t)len : 0;	/* too long: none */
	}
	if (!err)
		err = scan_sections(elf, t, &rs, &ss);
	if (!err)
		err = cfi_table__choose_spans(&ss);
	if (!err) {
		for (size_t i = 0; i < ss.nr; i++)
			t->nr_fdes += ss.v[i].source < 2;
		err = packed ? cfi_table__assemble_packed(t, &rs, &ss, packed, nr_packed) :
			       cfi_table__assemble(t, &rs, &ss);
	}
out:
	if (elf)
		elf_end(elf);
	if (scratch)
		*scratch = (struct cfi_scratch){ rs.v, rs.cap };	/* grown, maybe moved */
	else
		free(rs.v);
	free(ss.v);
	return err;
}

static int read_fd(int fd, struct cfi_scratch *scratch, struct cfi_table **out,
		   struct unwind_row **packed, size_t *nr)
{
	struct cfi_table *t = calloc(1, sizeof(*t));
	int err;

	*out = NULL;
	if (!t)
		return -ENOMEM;
	err = read_elf(fd, scratch, t, packed, nr);
	if (err) {
		cfi__table_free(t);
		return err;
	}
	*out = t;
	return 0;
}

int cfi__read_fd(int fd, struct cfi_table **out)
{
	return read_fd(fd, NULL, out, NULL, NULL);
}

int cfi__read_packed_fd(int fd, struct cfi_scratch *scratch, struct cfi_table **out,
			struct unwind_row **rows, size_t *nr)
{
	*rows = NULL;
	*nr = 0;
	return read_fd(fd, scratch, out, rows, nr);
}

void cfi__scratch_free(struct cfi_scratch *s)
{
	free(s->rows);
	*s = (struct cfi_scratch){ 0 };
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

void cfi__table_free(struct cfi_table *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t->segs);
	free(t);
}
