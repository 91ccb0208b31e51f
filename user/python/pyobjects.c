// SPDX-License-Identifier: GPL-2.0
/* pymalloc's API as allocation functions, where that is exact (pyobjects.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pyobjects.h"
#include "util/elfsym.h"

/*
 * The frees as operator delete is: a release that may free() the same
 * block in turn (blocks over 512 bytes), which is then that one release
 * seen twice, not a free of a block never tracked (bpf/memleak.bpf.c).
 */
static const struct {
	const char *name;
	uint32_t api;
} functions[] = {
	{ "PyObject_Malloc", API_MALLOC }, { "PyObject_Calloc", API_CALLOC },
	{ "PyObject_Realloc", API_REALLOC }, { "PyObject_Free", API_DELETE },
	{ "PyMem_Malloc", API_MALLOC }, { "PyMem_Calloc", API_CALLOC },
	{ "PyMem_Realloc", API_REALLOC }, { "PyMem_Free", API_DELETE },
};

#define NR_FUNCTIONS (sizeof(functions) / sizeof(functions[0]))

/* What may refer to the tables besides: they get, set or name the allocators. */
static const char *const table_users[] = {
	"PyMem_GetAllocator", "PyMem_SetAllocator", "PyMem_SetupDebugHooks",
	"_PyMem_GetCurrentAllocatorName", "_PyMem_SetupAllocators", "_PyObject_DebugMallocStats",
	"_PyMem_SetDefaultAllocator", "_PyMem_GetAllocatorName", "set_allocator_unlocked",
	"get_allocator_unlocked", "set_up_allocators_unlocked", "set_up_debug_hooks_unlocked",
	"get_current_allocator_name_unlocked", "set_default_allocator_unlocked",
};

#define NR_USERS (sizeof(table_users) / sizeof(table_users[0]))
#define TABLE_SIZE 40	/* PyMemAllocatorEx: ctx, malloc, calloc, realloc, free */
#define TRAMPOLINE_MAX 48

struct range {
	uint64_t lo, hi;
};

/*
 * The allocator table fn calls through: "jmp *disp(%rip)" (ff 25) on its
 * malloc slot, the table's second word, within its first bytes. 0: none.
 */
static uint64_t table_of(const struct elf_file *ef, uint64_t fn)
{
	unsigned char code[TRAMPOLINE_MAX];

	if (elf_file__read(ef, fn, code, sizeof(code)))
		return 0;
	for (size_t i = 0; i + 6 <= sizeof(code); i++) {
		int32_t disp;

		if (code[i] != 0xff || code[i + 1] != 0x25)
			continue;
		memcpy(&disp, &code[i + 2], sizeof(disp));
		return fn + i + 6 + (int64_t)disp - 8;
	}
	return 0;
}

static bool in_any(const struct range *r, size_t nr, uint64_t a)
{
	for (size_t i = 0; i < nr; i++)
		if (a >= r[i].lo && a < r[i].hi)
			return true;
	return false;
}

/*
 * The first place in the code outside the allowed functions whose 4 bytes
 * reach into a table, RIP-relative or absolute (non-PIE): every byte is
 * tried, so a false hit only refuses. 0: none.
 */
static uint64_t stray_reference(const struct elf_file *ef, const struct range *tables,
				const struct range *allowed, size_t nr_allowed)
{
	size_t nr_segs;
	const struct elf_segment *segs = elf_file__segments(ef, &nr_segs);

	for (size_t s = 0; s < nr_segs; s++) {
		unsigned char *code;
		uint64_t hit = 0;

		if (!(segs[s].flags & 1 /* PF_X */) || segs[s].filesz < 4)
			continue;
		code = malloc(segs[s].filesz);
		if (!code || elf_file__read(ef, segs[s].vaddr, code, segs[s].filesz)) {
			free(code);
			return segs[s].vaddr;	/* unreadable: refuse */
		}
		for (uint64_t i = 0; i + 4 <= segs[s].filesz && !hit; i++) {
			int32_t d;
			uint64_t at = segs[s].vaddr + i, rip;

			memcpy(&d, &code[i], sizeof(d));
			rip = at + 4 + (int64_t)d;
			if ((in_any(tables, 2, rip) || in_any(tables, 2, (uint32_t)d)) &&
			    !in_any(allowed, nr_allowed, at))
				hit = at;
		}
		free(code);
		if (hit)
			return hit;
	}
	return 0;
}

/* The functions' ranges (allowed) and symbols, from ef; -ENOTSUP with msg. */
static int check(const struct elf_file *ef, const char *path, bool checked, uint64_t *vaddr,
		 uint64_t *offset, uint64_t *size, char *msg, size_t len)
{
	struct range tables[2], allowed[NR_FUNCTIONS + NR_USERS];
	size_t nr = 0;
	uint64_t stray;

	for (size_t i = 0; i < NR_FUNCTIONS; i++) {
		if (elf_file__find_func_size(ef, functions[i].name, true, &vaddr[i], &offset[i],
					     &size[i])) {
			snprintf(msg, len, "%s defines no %s", path, functions[i].name);
			return -ENOTSUP;
		}
		allowed[nr++] = (struct range){ vaddr[i], vaddr[i] + size[i] };
	}
	if (checked)
		return 0;
	for (size_t i = 0; i < 2; i++) {
		uint64_t t = table_of(ef, vaddr[i * 4]);

		if (!t) {
			snprintf(msg, len, "%s's %s is not a plain call through its allocator table (a build with LTO and PGO, such as Debian's, compiles the allocator into its callers; 3.12 and later keep the table in _PyRuntime, not read yet): probes would miss objects",
				 path, functions[i * 4].name);
			return -ENOTSUP;
		}
		tables[i] = (struct range){ t, t + TABLE_SIZE };
	}
	for (size_t i = 0; i < NR_USERS; i++) {
		uint64_t v, o, s;

		if (!elf_file__find_func_size(ef, table_users[i], false, &v, &o, &s))
			allowed[nr++] = (struct range){ v, v + s };
	}
	stray = stray_reference(ef, tables, allowed, nr);
	if (stray) {
		snprintf(msg, len, "%s reaches its allocator from code at 0x%llx, not through PyObject_Malloc and its kin (inlined): no probe would see those objects",
			 path, (unsigned long long)stray);
		return -ENOTSUP;
	}
	return 0;
}

int pyobjects__add(struct allocator *a, const struct lookup_object *obj, bool checked, char *msg,
		   size_t len)
{
	uint64_t vaddr[NR_FUNCTIONS], offset[NR_FUNCTIONS], size[NR_FUNCTIONS];
	struct elf_file *ef;
	int err;

	if (!obj->open_path || elf_file__open(obj->open_path, &ef)) {
		snprintf(msg, len, "cannot read %s", obj->path);
		return -ENOTSUP;
	}
	err = check(ef, obj->path, checked, vaddr, offset, size, msg, len);
	elf_file__close(ef);
	for (size_t i = 0; i < NR_FUNCTIONS && !err; i++)
		err = allocator__add(a, obj, functions[i].name, functions[i].api, vaddr[i],
				     offset[i], size[i]);
	return err;
}
