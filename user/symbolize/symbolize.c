// SPDX-License-Identifier: GPL-2.0
/*
 * Addresses to function, file:line and inlined frames through elfutils
 * libdwfl; the symbolize*.c files are the only ones that include it.
 *
 * What is read is kept per object file, not per load: a file is known by its
 * build id (else by device, inode and path) and gets a Dwfl of its own, with
 * the file at its link-time addresses. A library mapped at two addresses, or
 * mapped again after a dlclose or an exec, is read once per run, and answers
 * are cached per (file, address in the file), so later reports cost a hash
 * lookup per address. A file that cannot be read is tried once; one whose
 * debug info keeps failing is given up after SYM_FAIL_LIMIT failed lookups.
 *
 * Function names come from the symbol table (sorted once per file: libdwfl
 * would scan it whole for every address), a clone's from DWARF (foo for
 * foo.part.0), lines and inlined frames from DWARF. Addresses in no file are looked up in the target's perf map (JIT).
 *
 * This file holds the API, the frames it returns and the JIT lookups;
 * symbolize_file.c reads the files, symbolize_names.c their symbol tables,
 * symbolize_dwarf.c their DWARF, and symbolize_cache.c keeps the answers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "ksyms.h"
#include "perfmap.h"
#include "symbolize_internal.h"
#include "util/vec.h"

/*
 * Debug files by build id (DIR/.build-id/xx/yyyy.debug for every absolute
 * DIR), then by .gnu_debuglink next to the file (the empty entry), in
 * .debug/ beside it, and under each absolute DIR. --debug-dir roots go first.
 */
#define SYSTEM_DEBUG_PATH ":.debug:/usr/lib/debug"

/* Append dir, absolute, to the colon-separated *path. */
static int add_debug_dir(char **path, const char *dir)
{
	char *real = realpath(dir, NULL), *n;
	struct stat st;
	int err = 0;

	if (!real || stat(real, &st))
		err = -errno;
	else if (!S_ISDIR(st.st_mode))
		err = -ENOTDIR;
	if (err) {
		fprintf(stderr, "memleakbpf: --debug-dir %s: %s\n", dir, strerror(-err));
		free(real);
		return err;
	}
	if (strchr(real, ':')) {
		fprintf(stderr, "memleakbpf: --debug-dir %s: libdw cannot search a path with ':'\n",
			dir);
		free(real);
		return -EINVAL;
	}
	err = asprintf(&n, "%s%s:", *path ?: "", real) < 0 ? -ENOMEM : 0;
	free(real);
	if (!err) {
		free(*path);
		*path = n;
	}
	return err;
}

static int debuginfo_path(const char *const *dirs, size_t nr, char **out)
{
	char *path = NULL;
	int err = 0;

	for (size_t i = 0; i < nr && !err; i++)
		err = add_debug_dir(&path, dirs[i]);
	if (!err && asprintf(out, "%s%s", path ?: "", SYSTEM_DEBUG_PATH) < 0)
		err = -ENOMEM;
	free(path);
	return err;
}

struct symbolizer *symbolizer__new(const char *const *debug_dirs, size_t nr_debug_dirs)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	if (debuginfo_path(debug_dirs, nr_debug_dirs, &s->debuginfo_path)) {
		free(s);
		return NULL;
	}
	s->callbacks = (Dwfl_Callbacks){
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &s->debuginfo_path,
	};
	elf_version(EV_CURRENT);
	return s;
}

/* ---------------------------------------------------------------- results */

static char *strdup_or_null(const char *s, bool *failed)
{
	char *d = s ? strdup(s) : NULL;

	if (s && !d)
		*failed = true;
	return d;
}

/*
 * Append copies of src[0..n) to the caller's array, each with the captured
 * address, the module as this load names it and the offset in the file.
 */
static int frames_append(const struct report_frame *src, size_t n, const char *module,
			 uint64_t addr, uint64_t offset, struct report_frame **frames, size_t *nr)
{
	struct report_frame *v = realloc(*frames, (*nr + n) * sizeof(*v));
	bool failed = false;

	if (!v)
		return -ENOMEM;
	*frames = v;
	for (size_t i = 0; i < n; i++) {
		struct report_frame *f = &v[*nr + i];

		*f = src[i];
		f->address = addr;
		f->module_offset = module ? offset : 0;
		f->function = strdup_or_null(src[i].function, &failed);
		f->symbol = strdup_or_null(src[i].symbol, &failed);
		f->module = strdup_or_null(module, &failed);
		f->file = strdup_or_null(src[i].file, &failed);
	}
	if (failed) {
		for (size_t i = 0; i < n; i++)
			report__frame_free(&v[*nr + i]);
		return -ENOMEM;
	}
	*nr += n;
	return 0;
}

/*
 * The same, borrowing the strings: a cache entry's, and the module's path,
 * live until symbolizer__reset and modules__clear, which come between
 * reports, never while one is built or written (run/reports.c).
 */
static int frames_borrow(const struct report_frame *src, size_t n, const char *module,
			 uint64_t addr, uint64_t offset, struct report_frame **frames, size_t *nr)
{
	struct report_frame *v = realloc(*frames, (*nr + n) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	*frames = v;
	for (size_t i = 0; i < n; i++) {
		struct report_frame *f = &v[(*nr)++];

		*f = src[i];
		f->address = addr;
		f->module_offset = module ? offset : 0;
		f->module = (char *)module;
		f->borrowed = true;
	}
	return 0;
}

/*
 * An address in no mapped file: JIT code, if the target's perf map names it
 * (the map's addresses are absolute: its "module" has bias 0). Never cached:
 * a JIT reuses its memory for other code.
 */
static int resolve_jit(struct symbolizer *s, const struct modules *mods, uint64_t addr,
		       bool return_address, struct report_frame **frames, size_t *nr)
{
	pid_t pid = modules__pid(mods);
	struct report_frame f = { 0 };
	const struct perfmap_entry *e;
	int err;

	if (pid > 0 && pid != s->jit_pid) {
		s->jit_pid = pid;
		/* Gone already: then it most likely shared our namespace (perfmap__load). */
		if (perfmap__nspid(pid, &s->jit_nspid))
			s->jit_nspid = pid;
	}
	/* An error keeps what was read before: the target may have exited since. */
	if (pid > 0)
		perfmap__load(pid, s->jit_nspid, &s->jit);
	e = pid > 0 ? perfmap__find(s->jit, return_address ? addr - 1 : addr) : NULL;
	if (!e)
		return frames_append(&f, 1, NULL, addr, 0, frames, nr);
	f.function = symbolize_names__demangle(e->name);
	if (!f.function)
		return -ENOMEM;
	err = frames_append(&f, 1, perfmap__path(s->jit), addr, addr, frames, nr);
	free(f.function);
	return err;
}

/*
 * -k: a kernel address, named by kallsyms: its function, and its module
 * ("[kernel.kallsyms]", "[ext4]") with the offset from the module's first
 * symbol. No lines: the kernel's DWARF is rarely installed.
 */
static int resolve_kernel(struct symbolizer *s, uint64_t addr, bool return_address,
			  struct report_frame **frames, size_t *nr)
{
	const struct ksym *k = ksyms__find(s->ksyms, return_address ? addr - 1 : addr);
	struct report_frame f = { .language = FRAME_KERNEL };

	if (!k)
		return frames_append(&f, 1, NULL, addr, 0, frames, nr);
	/* Borrowed: kallsyms is read once, and kept until the symbolizer goes. */
	f.function = (char *)k->name;
	return frames_borrow(&f, 1, k->module, addr, addr - ksyms__module_base(s->ksyms, k->module),
			     frames, nr);
}

int symbolizer__kernel(struct symbolizer *s)
{
	int err = s->ksyms ? 0 : ksyms__load(&s->ksyms);

	if (err)
		fprintf(stderr, "memleakbpf: -k: cannot read the kernel's symbols in /proc/kallsyms: %s%s\n",
			strerror(-err), err == -ENOENT ? " (its addresses are hidden: root, and kernel.kptr_restrict below 2)" : "");
	return err;
}

int symbolizer__kernel_maps(struct symbolizer *s, struct maps **out)
{
	return s->ksyms ? ksyms__maps(s->ksyms, out) : -ENOENT;
}

int symbolizer__resolve(struct symbolizer *s, const struct modules *mods, uint64_t addr,
			bool return_address, struct report_frame **frames, size_t *nr)
{
	const struct module *m = modules__find(mods, addr);
	struct frame_buf b = { 0 };
	struct cache_entry *e;
	struct sym_file *f;
	uint64_t vaddr;
	int err;

	if (!m && s->ksyms && addr >= KSYMS_KERNEL_START)
		return resolve_kernel(s, addr, return_address, frames, nr);
	if (!m)
		return resolve_jit(s, mods, addr, return_address, frames, nr);
	err = symbolize_file__for(s, m, &f);
	if (err)
		return err;
	vaddr = addr - m->bias;
	e = symbolize_cache__find(s, f, vaddr, return_address);
	if (!e) {
		err = f->dwmod ? symbolize_dwarf__describe(f, symbolize_names__lookup_pc(f, vaddr, return_address), &b) : 0;
		if (!err && !b.nr)
			err = symbolize_frames__push(&b, NULL, NULL, 0, false);
		err = err ?: symbolize_cache__add(s, f, vaddr, return_address, &b, &e);
		if (err) {
			symbolize_frames__free(b.v, b.nr);
			return err;
		}
	}
	return frames_borrow(e->frames, e->nr, m->path, addr, vaddr, frames, nr);
}

int symbolizer__warm(struct symbolizer *s, const struct modules *mods, uint64_t addr)
{
	struct report_frame *frames = NULL;
	size_t nr = 0;
	int err = symbolizer__resolve(s, mods, addr, false, &frames, &nr);

	symbolize_frames__free(frames, nr);
	return err;
}

void symbolizer__reset(struct symbolizer *s)
{
	if (!s)
		return;
	free(s->refs);
	s->refs = NULL;
	s->nr_refs = s->cap_refs = 0;
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	symbolize_cache__clear(s);
	symbolize_calls__clear(s);
	for (size_t i = 0; i < s->nr_files; i++)
		symbolize_file__free(s->files[i]);
	free(s->files);
	free(s->refs);
	perfmap__free(s->jit);
	ksyms__free(s->ksyms);
	free(s->debuginfo_path);
	free(s);
}
