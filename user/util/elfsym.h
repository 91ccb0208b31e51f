/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ELF facts memleakbpf needs from an object file, through libelf: read here
 * and nowhere else (the symbolizer's DWARF is libdw's).
 */
#ifndef ELFSYM_H
#define ELFSYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <libelf.h>

/* A PT_LOAD segment. */
struct elf_segment {
	uint64_t vaddr, offset, filesz, memsz;
	uint32_t flags;		/* PF_X, PF_W, PF_R */
};

/*
 * The PT_LOAD segments of elf, in program-header order, into a new array
 * the caller frees (NULL when there are none). 0 or -errno.
 */
int elf__load_segments(Elf *elf, struct elf_segment **out, size_t *nr);
/*
 * The load bias of a mapping at start of the file from offset off (vaddr +
 * bias is where the object's vaddr sits in the process), through the
 * segment holding off: mmap starts at its page-aligned-down offset, so off
 * can be below p_offset; a page shared by two segments belongs to the one
 * that starts there. 0, or -ENOENT when off is in no segment (not loaded
 * code: a plain mmap of the file).
 */
int elf__mapping_bias(const struct elf_segment *segs, size_t nr, uint64_t page, uint64_t start,
		      uint64_t off, uint64_t *bias);
/* elf's GNU build id into id: its length, 0 without one, -E2BIG past max. */
int elf__build_id(Elf *elf, uint8_t *id, size_t max);
/* The same for the ELF file open at fd (cheap: the notes); -ENOEXEC when it is not one. */
int elf__build_id_fd(int fd, uint8_t *id, size_t max);

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
/* The same, with the function's size (st_size; 0 when the table does not say). */
int elf_file__find_func_size(const struct elf_file *ef, const char *name, bool dynsym_only,
			     uint64_t *vaddr, uint64_t *file_offset, uint64_t *size);
/* Same for a data object (STT_OBJECT), e.g. _r_debug; returns its vaddr. */
int elf_file__find_object(const struct elf_file *ef, const char *name, uint64_t *vaddr);

/* len bytes of the file at its virtual address vaddr: 0, -ENOENT outside its segments, -EIO. */
int elf_file__read(const struct elf_file *ef, uint64_t vaddr, void *buf, size_t len);
/* Its PT_LOAD segments (owned by ef). */
const struct elf_segment *elf_file__segments(const struct elf_file *ef, size_t *nr);

/* Load bias of the object, given a mapping of it at start with file offset off. */
int elf_file__load_bias(const struct elf_file *ef, uint64_t start, uint64_t off, uint64_t *bias);

/*
 * The imported function that the call instruction ending at ret_vaddr (a
 * return address, as a virtual address of this file) reaches through the
 * PLT or the GOT; *name is owned by ef. -ENOENT for a direct call or code
 * it does not recognize: one function under two names (glibc's memalign and
 * aligned_alloc) is told apart this way, by the name its caller imported.
 * The first call reads the file's dynamic relocations (a few ms for a big
 * library); later ones search them.
 */
int elf_file__called_symbol(struct elf_file *ef, uint64_t ret_vaddr, const char **name);

#endif
