/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Call-frame information of one object file, as the BPF unwinder needs it:
 * for every address, how to find the caller's frame on x86-64. Pure (libelf
 * only): the CIE/FDE interpreter reads .eh_frame, and .debug_frame for the
 * functions .eh_frame does not cover, into a sorted table of rows.
 */
#ifndef CFI_H
#define CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "memleak.h"
#include "util/elfsym.h"

/* How the Canonical Frame Address (the caller's %rsp after the return) is found. */
enum cfi_cfa {
	CFI_CFA_NONE,		/* no FDE covers the address */
	CFI_CFA_RSP,		/* %rsp + cfa_off */
	CFI_CFA_RBP,		/* %rbp + cfa_off */
	CFI_CFA_PLT,		/* lazy PLT entry: %rsp + 8, + 8 from byte cfa_off of its 16 */
	CFI_CFA_SIGNAL,		/* signal trampoline: the registers are in the rt_sigframe at %rsp */
	CFI_CFA_END,		/* return address undefined: the outermost frame (_start, clone3) */
	CFI_CFA_OTHER,		/* another register, an expression, an odd return-address rule */
};

/* Where the caller's %rbp is. */
enum cfi_rbp {
	CFI_RBP_SAME,		/* not saved: the callee did not change it */
	CFI_RBP_AT_CFA,		/* saved at CFA + rbp_off */
	CFI_RBP_LOST,		/* undefined, in another register, an expression */
};

/* One row: it holds from pc up to the next row's pc. */
struct cfi_row {
	uint64_t pc;		/* ELF virtual address */
	int64_t cfa_off;
	int64_t rbp_off;
	uint8_t cfa;		/* enum cfi_cfa */
	uint8_t rbp;		/* enum cfi_rbp */
};


struct cfi_table {
	struct cfi_row *rows;	/* sorted by pc; a CFI_CFA_NONE row ends each covered range */
	size_t nr;
	size_t nr_fdes;		/* FDEs used */
	size_t nr_bad;		/* entries skipped as malformed or unsupported */
	bool eh_frame;		/* rows came from .eh_frame ... */
	bool debug_frame;	/* ... and/or from .debug_frame */
	uint8_t build_id[64];
	size_t build_id_len;	/* 0: none */
	struct elf_segment *segs;	/* PT_LOAD, to place the table in a process */
	size_t nr_segs;
	uint64_t base;		/* lowest PT_LOAD vaddr: packed rows count from here */
};

/* Read the CFI of the ELF file open at fd (not closed). 0 or -errno. */
int cfi__read_fd(int fd, struct cfi_table **out);
int cfi__read(const char *path, struct cfi_table **out);
/*
 * The list of rows one thread reads file after file into, kept from one to
 * the next (its pages are faulted in once, not for every file). Zeroed:
 * empty. Freed with cfi__scratch_free.
 */
struct cfi_scratch {
	struct cfi_row *rows;
	size_t cap;
};
void cfi__scratch_free(struct cfi_scratch *s);

/*
 * The same, its rows straight in the BPF format (what cfi_table__pack
 * makes of cfi__read_fd's table), the table's own rows left empty; scratch
 * (or NULL) holds the rows meanwhile. Free *rows with free().
 */
int cfi__read_packed_fd(int fd, struct cfi_scratch *scratch, struct cfi_table **out,
			struct unwind_row **rows, size_t *nr);
void cfi__table_free(struct cfi_table *t);

/* The row that holds at pc (ELF vaddr); a CFI_CFA_NONE row when none does. */
struct cfi_row cfi_table__find(const struct cfi_table *t, uint64_t pc);

/*
 * Where the table's packed row 0 lies in a process that maps the file at
 * start from file offset off: runtime address = that + packed pc. 0 or -ENOENT.
 */
int cfi_table__runtime_base(const struct cfi_table *t, uint64_t start, uint64_t off,
			    uint64_t *base);

/*
 * The rows in the BPF format, neighbours with the same rule merged; a rule
 * the format cannot hold becomes UNWIND_CFA_OTHER. -E2BIG when the object
 * spans more than 4 GiB. Free *out with free().
 */
int cfi_table__pack(const struct cfi_table *t, struct unwind_row **out, size_t *nr);
/* One row, as cfi_table__pack writes it (pc relative to base). */
struct unwind_row cfi_table__row_pack(const struct cfi_row *r, uint64_t base);

#endif
