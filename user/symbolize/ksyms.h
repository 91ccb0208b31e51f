/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel symbols (-k), from /proc/kallsyms: "ADDR TYPE NAME [MODULE]" per
 * line, the addresses shown to root (kptr_restrict). Each function ends
 * where the next symbol begins. A module's build id is read from
 * /sys/module/NAME/notes, the kernel's from /sys/kernel/notes, as perf does.
 */
#ifndef KSYMS_H
#define KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The kernel's half of the address space on x86-64 and arm64. */
#define KSYMS_KERNEL_START 0xffff800000000000ULL
#define KSYMS_VMLINUX "[kernel.kallsyms]"

struct ksym {
	uint64_t addr;
	const char *name;
	const char *module;	/* "[kernel.kallsyms]" or "[ext4]": shared strings */
};

struct ksyms;

/*
 * Parse kallsyms' text: text symbols only (types t, T, w, W), sorted by
 * address. Lines that do not parse are skipped. -ENOENT when every address
 * is 0 (kptr_restrict hides them: not root). 0 or -errno.
 */
int ksyms__parse(const char *text, struct ksyms **out);
/* /proc/kallsyms read and parsed. */
int ksyms__load(struct ksyms **out);
/* The symbol at or below addr, in the kernel's text; NULL when none. */
const struct ksym *ksyms__find(const struct ksyms *k, uint64_t addr);
/* The lowest address of module's symbols (the kernel's: _text): for module+offset. */
uint64_t ksyms__module_base(const struct ksyms *k, const char *module);
size_t ksyms__nr(const struct ksyms *k);
/*
 * The GNU build id of module ("[ext4]", KSYMS_VMLINUX for the kernel) in
 * hex into buf (2 * 20 + 1 bytes at least); "" when unreadable. Read once.
 */
const char *ksyms__build_id(struct ksyms *k, const char *module);
struct maps;
/*
 * Each module as a mapping (its first symbol to its last), named as its
 * frames are, with its build id: pprof's mappings. Free with maps__free.
 */
int ksyms__maps(struct ksyms *k, struct maps **out);
void ksyms__free(struct ksyms *k);

#endif
