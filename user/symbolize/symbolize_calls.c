// SPDX-License-Identifier: GPL-2.0
/*
 * Which function a call instruction imported, read from the caller's file:
 * its PLT stub or GOT slot, and the dynamic relocation that fills it
 * (elfsym.c). One function under two names (glibc's memalign and
 * aligned_alloc, tcmalloc's new and new[]) is probed once, and the report
 * names each stack as its caller called it.
 *
 * Each file's ELF is opened once for the run and its relocations read once;
 * each answer is kept per (file, return address), so a report only pays for
 * call sites no report has asked about before.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "symbolize_internal.h"
#include "util/elfsym.h"

#define CALLS_MIN 1024		/* slots on the first insert; doubled at half full */

static size_t call_hash(const struct sym_file *f, uint64_t vaddr)
{
	uint64_t h = vaddr ^ ((uint64_t)(uintptr_t)f << 20);

	return (h * 0x9e3779b97f4a7c15ull) >> 24;
}

/* The slot of (f, vaddr), or the free slot where it would go. */
static struct call_entry *call_slot(const struct symbolizer *s, const struct sym_file *f,
				    uint64_t vaddr)
{
	size_t i = call_hash(f, vaddr) & (s->cap_calls - 1);

	while (s->calls[i].file && (s->calls[i].file != f || s->calls[i].vaddr != vaddr))
		i = (i + 1) & (s->cap_calls - 1);
	return &s->calls[i];
}

static int calls_grow(struct symbolizer *s)
{
	struct call_entry *old = s->calls;
	size_t old_cap = s->cap_calls;
	size_t cap = old_cap ? old_cap * 2 : CALLS_MIN;

	s->calls = calloc(cap, sizeof(*s->calls));
	if (!s->calls) {
		s->calls = old;
		return -ENOMEM;
	}
	s->cap_calls = cap;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].file)
			*call_slot(s, old[i].file, old[i].vaddr) = old[i];
	free(old);
	return 0;
}

/* The file's ELF, opened through the module's own descriptor; NULL when unreadable. */
static struct elf_file *file_elf(struct sym_file *f, const struct module *m)
{
	char path[64];

	if (!f->elf_tried && m->fd >= 0) {
		f->elf_tried = true;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", m->fd);
		if (elf_file__open(path, &f->elf))
			f->elf = NULL;
	}
	return f->elf;
}

int symbolize_calls__called(struct symbolizer *s, const struct modules *mods, uint64_t ret,
		       const char **name)
{
	const struct module *m = modules__find(mods, ret);
	struct call_entry *e;
	struct sym_file *f;
	int err;

	if (!m)
		return -ENOENT;
	err = symbolize_file__for(s, m, &f);
	if (err)
		return err;
	if (s->nr_calls + 1 > s->cap_calls / 2 && calls_grow(s))
		return -ENOMEM;
	e = call_slot(s, f, ret - m->bias);
	if (!e->file) {
		struct elf_file *ef = file_elf(f, m);

		*e = (struct call_entry){ .file = f, .vaddr = ret - m->bias };
		if (ef && elf_file__called_symbol(ef, e->vaddr, &e->name))
			e->name = NULL;
		s->nr_calls++;
	}
	*name = e->name;
	return e->name ? 0 : -ENOENT;
}

void symbolize_calls__clear(struct symbolizer *s)
{
	free(s->calls);
	s->calls = NULL;
	s->nr_calls = s->cap_calls = 0;
}
