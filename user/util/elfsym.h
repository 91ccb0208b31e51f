/* SPDX-License-Identifier: GPL-2.0 */
/* ELF facts memleakbpf needs from an object file, through libelf. */
#ifndef ELFSYM_H
#define ELFSYM_H

#include <stdbool.h>
#include <stdint.h>

struct elf_file;

/* Open path (already rewritten through /proc/PID/root by the caller). */
int elf_file__open(const char *path, struct elf_file **out);
void elf_file__close(struct elf_file *ef);

/* ET_DYN or ET_EXEC with a PT_INTERP: needs the dynamic linker. */
bool elf_file__has_interp(const struct elf_file *ef);
/* PT_INTERP string, or NULL. Owned by ef. */
const char *elf_file__interp(const struct elf_file *ef);

/*
 * Find a defined function (STT_FUNC, or STT_GNU_IFUNC reported as such)
 * named name. Only .dynsym when dynsym_only (what the dynamic linker can
 * bind to), else .dynsym then .symtab. On success *vaddr is st_value and
 * *file_offset the offset of that address in the file (what a uprobe wants).
 * Returns 0, -ENOENT when not defined there, or another -errno.
 */
int elf_file__find_func(const struct elf_file *ef, const char *name, bool dynsym_only,
			uint64_t *vaddr, uint64_t *file_offset);
/* Same for a data object (STT_OBJECT), e.g. _r_debug; returns its vaddr. */
int elf_file__find_object(const struct elf_file *ef, const char *name, uint64_t *vaddr);

/* Load bias of the object, given a mapping of it at start with file offset off. */
int elf_file__load_bias(const struct elf_file *ef, uint64_t start, uint64_t off, uint64_t *bias);

/*
 * The imported function that the call instruction ending at ret_vaddr (a
 * return address, as a virtual address of this file) reaches through the
 * PLT or the GOT; *name is owned by ef. -ENOENT for a direct call or code
 * it does not recognize: one function under two names (glibc's memalign and
 * aligned_alloc) is told apart this way, by the name its caller imported.
 */
int elf_file__called_symbol(const struct elf_file *ef, uint64_t ret_vaddr, const char **name);

#endif
