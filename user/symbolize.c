// SPDX-License-Identifier: GPL-2.0
/*
 * Addresses to function, file:line and inlined frames through elfutils
 * libdwfl; the only file that includes it.
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
 * would scan it whole for every address), lines and inlined frames from
 * DWARF. Addresses in no file are looked up in the target's perf map (JIT).
 */
#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "perfmap.h"
#include "symbolize.h"

/* From libstdc++ (the binary links -lstdc++); no C header declares it. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

#define SYM_FAIL_LIMIT 32
#define BUILD_ID_MAX 64		/* GNU ids are 20 bytes (SHA-1); longer is not one */
#define MAX_SCOPES 64		/* inlined calls and blocks nested in one function */
#define MAX_NESTING 16		/* namespaces and classes around a function */

/*
 * Debug files by build id (DIR/.build-id/xx/yyyy.debug for every absolute
 * DIR), then by .gnu_debuglink next to the file (the empty entry), in
 * .debug/ beside it, and under each absolute DIR. --debug-dir roots go first.
 */
#define SYSTEM_DEBUG_PATH ":.debug:/usr/lib/debug"

/* A function of a file's symbol table. */
struct sym_func {
	uint64_t start, size;
	const char *name;	/* in the file's string table: lives as long as its Dwfl */
	int rank;		/* between aliases: global over weak over local */
};

/* A function's code range, to find the function around a pc. */
struct die_range {
	uint64_t lo, hi;
	Dwarf_Die die;		/* valid as long as the file's Dwfl */
};

/*
 * The functions of one compilation unit, by start, indexed the first time a
 * pc falls in it: dwarf_getscopes would walk the whole unit for every pc.
 */
struct cu_funcs {
	Dwarf_Off cu;		/* the unit's DIE offset */
	struct die_range *v;
	uint64_t *max_end;	/* the highest end among v[0..i] */
	size_t nr;
};

struct sym_file {
	unsigned char build_id[BUILD_ID_MAX];
	size_t build_id_len;	/* 0: known by device, inode and path instead */
	dev_t dev;
	ino_t inode;
	char *path;
	Dwfl *dwfl;
	Dwfl_Module *dwmod;	/* NULL: unreadable, its frames get module+offset */
	bool has_dwarf;
	struct sym_func *funcs;	/* by start */
	uint64_t *max_end;	/* the highest end among funcs[0..i] */
	size_t nr_funcs;
	struct cu_funcs *cus;	/* by cu */
	size_t nr_cus;
	unsigned int failures;	/* failed debug-info lookups */
};

/* Which file a (device, inode) of the current image is. */
struct file_ref {
	dev_t dev;
	ino_t inode;
	struct sym_file *file;
};

/* The frames of one address of one file; address, module and offset unset. */
struct cache_entry {
	struct cache_entry *next;
	const struct sym_file *file;
	uint64_t vaddr;		/* the address in the file's own terms */
	bool return_address;
	struct report_frame *frames;
	size_t nr;
};

struct symbolizer {
	char *debuginfo_path;
	Dwfl_Callbacks callbacks;	/* points at debuginfo_path */
	struct sym_file **files;
	size_t nr_files;
	struct file_ref *refs;
	size_t nr_refs;
	struct cache_entry **buckets;	/* a power of two of them */
	size_t nr_buckets, nr_entries;
	struct perfmap *jit;
	pid_t jit_pid, jit_nspid;	/* whose perf map, and its name there */
};

/* Frames under construction. */
struct frame_buf {
	struct report_frame *v;
	size_t nr, cap;
};

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

static void frames_free(struct report_frame *frames, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		free(frames[i].function);
		free(frames[i].module);
		free(frames[i].file);
	}
	free(frames);
}

/* ---------------------------------------------------------------- files */

static int sym_rank(const GElf_Sym *sym)
{
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
	case STB_GNU_UNIQUE:
		return 3;
	case STB_WEAK:
		return 2;
	case STB_LOCAL:
		return 1;
	}
	return 0;
}

static int func_cmp(const void *a, const void *b)
{
	const struct sym_func *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return y->rank - x->rank;
	if (!x->size != !y->size)
		return !x->size - !y->size;	/* sized first */
	return strcmp(x->name, y->name);	/* any order, but the same every run */
}

/* The code symbols of f (.symtab, else .dynsym, plus .gnu_debugdata), sorted. */
static int read_funcs(struct sym_file *f)
{
	int n = dwfl_module_getsymtab(f->dwmod);
	uint64_t hi = 0;

	if (n <= 0)
		return 0;
	f->funcs = malloc(n * sizeof(*f->funcs));
	f->max_end = malloc(n * sizeof(*f->max_end));
	if (!f->funcs || !f->max_end)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(f->dwmod, i, &sym, &addr, &shndx, NULL,
							   NULL);
		int type = GELF_ST_TYPE(sym.st_info);

		if (!name || !*name || shndx == SHN_UNDEF || shndx == SHN_ABS ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE))
			continue;
		f->funcs[f->nr_funcs++] = (struct sym_func){ addr, sym.st_size, name,
							     sym_rank(&sym) };
	}
	qsort(f->funcs, f->nr_funcs, sizeof(*f->funcs), func_cmp);
	for (size_t i = 0; i < f->nr_funcs; i++) {
		uint64_t end = f->funcs[i].start + f->funcs[i].size;

		hi = end > hi ? end : hi;
		f->max_end[i] = hi;
	}
	return 0;
}

/* Give f its own Dwfl, with the file at its link-time addresses. */
static int report_file(struct symbolizer *s, struct sym_file *f, const struct module *m)
{
	Dwarf_Addr bias;
	int fd;

	if (m->fd < 0)
		return 0;	/* modules.c said why */
	/*
	 * Debug info comes from this machine only: libdw would otherwise ask
	 * debuginfod servers when DEBUGINFOD_URLS is set. Not before: a -c
	 * command, started by now, keeps its environment.
	 */
	unsetenv("DEBUGINFOD_URLS");
	f->dwfl = dwfl_begin(&s->callbacks);
	if (!f->dwfl) {
		fprintf(stderr, "memleakbpf: libdwfl: %s\n", dwfl_errmsg(-1));
		return 0;
	}
	/* dwfl_report_elf keeps the fd it is given; the module keeps its own. */
	fd = fcntl(m->fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	dwfl_report_begin(f->dwfl);
	/* Base 0 and add_p_vaddr: addresses are the file's own (runtime - load bias). */
	f->dwmod = dwfl_report_elf(f->dwfl, "file", m->path, fd, 0, true);
	dwfl_report_end(f->dwfl, NULL, NULL);
	if (!f->dwmod) {
		close(fd);	/* only kept on success */
		fprintf(stderr, "memleakbpf: %s: %s; its frames stay unnamed\n", m->path,
			dwfl_errmsg(-1));
		return 0;
	}
	f->has_dwarf = dwfl_module_getdwarf(f->dwmod, &bias) != NULL;
	return read_funcs(f);
}

/* The build id of the file open at fd, into f; none is not an error. */
static void read_build_id(int fd, struct sym_file *f)
{
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	const void *id;
	ssize_t len;

	if (!elf)
		return;
	len = dwelf_elf_gnu_build_id(elf, &id);
	if (len > 0 && len <= BUILD_ID_MAX) {
		memcpy(f->build_id, id, len);
		f->build_id_len = len;
	}
	elf_end(elf);
}

static bool same_file(const struct sym_file *a, const struct sym_file *key, const char *path)
{
	if (key->build_id_len)
		return a->build_id_len == key->build_id_len &&
		       !memcmp(a->build_id, key->build_id, key->build_id_len);
	return !a->build_id_len && a->dev == key->dev && a->inode == key->inode &&
	       !strcmp(a->path, path);
}

static void file_free(struct sym_file *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nr_cus; i++) {
		free(f->cus[i].v);
		free(f->cus[i].max_end);
	}
	free(f->cus);
	if (f->dwfl)
		dwfl_end(f->dwfl);
	free(f->funcs);
	free(f->max_end);
	free(f->path);
	free(f);
}

/* The file of module m: one already read with the same build id, or m's own. */
static int find_file(struct symbolizer *s, const struct module *m, struct sym_file **out)
{
	struct sym_file key = { .dev = m->dev, .inode = m->inode }, *f, **n;
	int err;

	read_build_id(m->fd, &key);
	for (size_t i = 0; i < s->nr_files; i++) {
		if (same_file(s->files[i], &key, m->path)) {
			*out = s->files[i];
			return 0;
		}
	}
	n = realloc(s->files, (s->nr_files + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	s->files = n;
	f = malloc(sizeof(*f));
	if (!f)
		return -ENOMEM;
	*f = key;
	f->path = strdup(m->path);
	err = f->path ? report_file(s, f, m) : -ENOMEM;
	if (err) {
		file_free(f);
		return err;
	}
	s->files[s->nr_files++] = f;
	*out = f;
	return 0;
}

static int file_for(struct symbolizer *s, const struct module *m, struct sym_file **out)
{
	struct file_ref *n;
	int err;

	for (size_t i = 0; i < s->nr_refs; i++) {
		if (s->refs[i].dev == m->dev && s->refs[i].inode == m->inode) {
			*out = s->refs[i].file;
			return 0;
		}
	}
	n = realloc(s->refs, (s->nr_refs + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	s->refs = n;
	err = find_file(s, m, out);
	if (!err)
		n[s->nr_refs++] = (struct file_ref){ m->dev, m->inode, *out };
	return err;
}

/* ---------------------------------------------------------------- lookups */

static bool func_better(const struct sym_func *fn, const struct sym_func *best)
{
	if (!best || fn->start != best->start)
		return !best || fn->start > best->start;
	if (fn->rank != best->rank)
		return fn->rank > best->rank;
	return fn->size && !best->size;
}

/*
 * The symbol naming pc, or NULL: the closest one at or below pc that covers
 * it. A sizeless symbol (an assembly label) covers its own address only, and
 * nothing covers code past every symbol's end (a static function of a
 * stripped file): the nearest name below would be a wrong one.
 */
static const struct sym_func *func_at(const struct sym_file *f, uint64_t pc)
{
	const struct sym_func *best = NULL;
	size_t lo = 0, hi = f->nr_funcs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->funcs[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = hi; i-- > 0;) {
		const struct sym_func *fn = &f->funcs[i];
		bool covers = fn->size ? pc - fn->start < fn->size : pc == fn->start;

		if (covers && func_better(fn, best))
			best = fn;
		/* Nothing further down reaches pc. */
		if (f->max_end[i] <= pc && fn->start < pc)
			break;
	}
	return best;
}

/*
 * Where a frame's address is looked up. A return address, one byte back:
 * on its call, whose line is the one that matters (and a call to a noreturn
 * function can end its caller right where the next function starts). But a
 * signal handler returns to the first byte of the signal trampoline
 * (__restore_rt), which no call precedes: there the byte before lies in no
 * function, and the address itself starts one.
 */
static uint64_t lookup_pc(const struct sym_file *f, uint64_t vaddr, bool return_address)
{
	const struct sym_func *fn;

	if (!return_address)
		return vaddr;
	if (!func_at(f, vaddr - 1) && (fn = func_at(f, vaddr)) && fn->start == vaddr)
		return vaddr;
	return vaddr - 1;
}

static void note_failure(struct sym_file *f)
{
	if (++f->failures == SYM_FAIL_LIMIT)
		fprintf(stderr, "memleakbpf: %s: %u lookups failed in its debug info; its other frames get function names only\n",
			f->path, f->failures);
}

static char *demangle(const char *name)
{
	if (!strncmp(name, "_Z", 2)) {
		int status;
		char *d = __cxa_demangle(name, NULL, NULL, &status);

		if (d && !status)
			return d;
		free(d);
	}
	return strdup(name);
}

/* Append a frame with copies of the strings; function is demangled. */
static int frame_push(struct frame_buf *b, const char *function, const char *file, int line,
		      bool inlined)
{
	struct report_frame *f;

	if (b->nr == b->cap) {
		size_t ncap = b->cap ? b->cap * 2 : 4;
		struct report_frame *n = realloc(b->v, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		b->v = n;
		b->cap = ncap;
	}
	f = &b->v[b->nr];
	memset(f, 0, sizeof(*f));
	f->function = function ? demangle(function) : NULL;
	f->file = file ? strdup(file) : NULL;
	if ((function && !f->function) || (file && !f->file)) {
		free(f->function);
		free(f->file);
		return -ENOMEM;
	}
	f->line = file ? line : 0;
	f->inlined = inlined;
	b->nr++;
	return 0;
}

/* Linkage name (demangles to the qualified name), else the plain name. */
static const char *die_name(Dwarf_Die *die)
{
	static const int attrs[] = { DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name };
	Dwarf_Attribute attr;

	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		/* _integrate: inlined instances name their function by abstract origin. */
		const char *name = dwarf_formstring(dwarf_attr_integrate(die, attrs[i], &attr));

		if (name)
			return name;
	}
	return NULL;
}

/* The line table's file:line for pc. */
static void src_line(Dwfl_Module *dwmod, uint64_t pc, const char **file, int *line)
{
	Dwfl_Line *l = dwfl_module_getsrc(dwmod, pc);

	*file = NULL;
	*line = 0;
	if (l)
		*file = dwfl_lineinfo(l, NULL, line, NULL, NULL, NULL);
	if (!*line)
		*file = NULL;	/* line 0: code attributed to no line */
}

/* Where the inlined subroutine inl was called from, in its caller. */
static void call_site(Dwarf_Die *inl, const char **file, int *line)
{
	Dwarf_Attribute attr;
	Dwarf_Files *files;
	Dwarf_Word idx, lineno;
	size_t nfiles;
	Dwarf_Die cu;

	*file = NULL;
	*line = 0;
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_line, &attr), &lineno) ||
	    dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &attr), &idx) ||
	    !dwarf_diecu(inl, &cu, NULL, NULL) || dwarf_getsrcfiles(&cu, &files, &nfiles) ||
	    idx >= nfiles)
		return;
	*file = dwarf_filesrc(files, idx, NULL, NULL);
	*line = *file ? (int)lineno : 0;
}

static int add_range(struct cu_funcs *c, size_t *cap, uint64_t lo, uint64_t hi,
		     const Dwarf_Die *die)
{
	if (c->nr == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct die_range *n = realloc(c->v, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		c->v = n;
		*cap = ncap;
	}
	c->v[c->nr++] = (struct die_range){ lo, hi, *die };
	return 0;
}

/*
 * The subprograms with code below parent: at the unit's top level, or in
 * namespaces and classes (C++). Declarations and abstract instances have no
 * ranges, so only concrete functions are kept.
 */
static int collect_funcs(Dwarf_Die *parent, struct cu_funcs *c, size_t *cap, int depth)
{
	Dwarf_Die child, next;
	int err = 0, r = dwarf_child(parent, &child);

	while (r == 0 && !err) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			while (!err && (off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0)
				err = add_range(c, cap, lo, hi, &child);
			break;
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_module:
			if (depth < MAX_NESTING)
				err = collect_funcs(&child, c, cap, depth + 1);
			break;
		}
		r = dwarf_siblingof(&child, &next);
		child = next;
	}
	return err ?: (r < 0 ? -EIO : 0);
}

static int range_cmp(const void *a, const void *b)
{
	const struct die_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int index_cu(Dwarf_Die *cudie, struct cu_funcs *c)
{
	size_t cap = 0;
	uint64_t top = 0;
	int err = collect_funcs(cudie, c, &cap, 0);

	if (!err)
		c->max_end = malloc((c->nr ?: 1) * sizeof(*c->max_end));
	if (!err && !c->max_end)
		err = -ENOMEM;
	if (err) {
		free(c->v);
		*c = (struct cu_funcs){ .cu = c->cu };
		return err;
	}
	qsort(c->v, c->nr, sizeof(*c->v), range_cmp);
	for (size_t i = 0; i < c->nr; i++) {
		top = c->v[i].hi > top ? c->v[i].hi : top;
		c->max_end[i] = top;
	}
	return 0;
}

/* The function index of the unit cudie, made on first use. */
static int cu_funcs_for(struct sym_file *f, Dwarf_Die *cudie, struct cu_funcs **out)
{
	Dwarf_Off cu = dwarf_dieoffset(cudie);
	size_t lo = 0, hi = f->nr_cus;
	struct cu_funcs *n;
	int err;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->cus[mid].cu == cu) {
			*out = &f->cus[mid];
			return 0;
		}
		if (f->cus[mid].cu < cu)
			lo = mid + 1;
		else
			hi = mid;
	}
	n = realloc(f->cus, (f->nr_cus + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	f->cus = n;
	memmove(&n[lo + 1], &n[lo], (f->nr_cus - lo) * sizeof(*n));
	f->nr_cus++;
	n[lo] = (struct cu_funcs){ .cu = cu };
	/* A unit that cannot be read stays indexed, empty: it is not read again. */
	err = index_cu(cudie, &n[lo]);
	*out = &n[lo];
	return err == -ENOMEM ? err : 0;
}

/* The innermost function whose code holds pc, or NULL. */
static const struct die_range *func_die_at(const struct cu_funcs *c, uint64_t pc)
{
	const struct die_range *best = NULL;
	size_t lo = 0, hi = c->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->v[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = hi; i-- > 0 && c->max_end[i] > pc;)
		if (pc < c->v[i].hi && (!best || c->v[i].lo > best->lo))
			best = &c->v[i];
	return best;
}

/*
 * The scopes around pc, innermost first, ending with the function: chain[0..n).
 * From the function down, only its inlined calls and blocks are looked at,
 * and that path is the concrete chain of callers. 0 when no function's DWARF
 * covers pc, -EIO on a libdw error, -ENOMEM.
 */
static int scopes_at(struct sym_file *f, uint64_t pc, Dwarf_Die *chain, int max)
{
	Dwarf_Addr bias;
	Dwarf_Die *cudie = dwfl_module_addrdie(f->dwmod, pc, &bias);
	const struct die_range *fn;
	struct cu_funcs *c;
	Dwarf_Die parent, child;
	int n = 0, r, err;

	if (!cudie)
		return 0;
	pc -= bias;
	err = cu_funcs_for(f, cudie, &c);
	if (err)
		return err;
	fn = func_die_at(c, pc);
	if (!fn)
		return 0;
	parent = fn->die;
	chain[max - ++n] = parent;
	while (n < max && (r = dwarf_child(&parent, &child)) == 0) {
		for (;;) {
			int tag = dwarf_tag(&child);

			if ((tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block) &&
			    dwarf_haspc(&child, pc) > 0)
				break;
			r = dwarf_siblingof(&child, &child);
			if (r)
				break;
		}
		if (r < 0)
			return -EIO;
		if (r)
			break;	/* no child holds pc: parent is the innermost */
		parent = child;
		chain[max - ++n] = parent;
	}
	/* Built from the end of chain: move it to the front, innermost first. */
	memmove(chain, chain + max - n, n * sizeof(*chain));
	return n;
}

/*
 * One frame per inlined subroutine around pc, innermost first, then the
 * function they were inlined into. The innermost line is pc's; every outer
 * frame is at the call site of the inlined subroutine it contains.
 */
static int describe(struct sym_file *f, uint64_t pc, struct frame_buf *b)
{
	const struct sym_func *fn = func_at(f, pc);
	Dwarf_Die scopes[MAX_SCOPES], *func = NULL;
	const char *file = NULL;
	char *sym = NULL;
	int n = 0, line = 0, err = 0;

	if (fn) {
		/* glibc's .symtab spells versioned definitions "name@@GLIBC_2.34". */
		sym = strndup(fn->name, strcspn(fn->name, "@"));
		if (!sym)
			return -ENOMEM;
	}
	if (f->has_dwarf && f->failures < SYM_FAIL_LIMIT) {
		n = scopes_at(f, pc, scopes, MAX_SCOPES);
		src_line(f->dwmod, pc, &file, &line);
		/* A function's DIE around pc but no line for it: the DWARF is broken. */
		if (n == -EIO || (n > 0 && !file))
			note_failure(f);
		if (n == -ENOMEM)
			err = n;
		n = n < 0 ? 0 : n;
	}
	for (int i = 0; i < n && !err; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag == DW_TAG_subprogram) {
			func = &scopes[i];
			break;
		}
		if (tag != DW_TAG_inlined_subroutine)
			continue;
		err = frame_push(b, die_name(&scopes[i]), file, line, true);
		call_site(&scopes[i], &file, &line);
	}
	/* The symbol table names clones (foo.cold, foo.constprop.0) precisely. */
	if (!err)
		err = frame_push(b, sym ?: (func ? die_name(func) : NULL), file, line, false);
	free(sym);
	return err;
}

/* ---------------------------------------------------------------- cache */

static size_t cache_hash(const struct sym_file *f, uint64_t vaddr, bool return_address)
{
	uint64_t h = vaddr ^ ((uint64_t)(uintptr_t)f << 20) ^ return_address;

	return (h * 0x9e3779b97f4a7c15ull) >> 24;
}

static struct cache_entry *cache_find(const struct symbolizer *s, const struct sym_file *f,
				      uint64_t vaddr, bool return_address)
{
	struct cache_entry *e;

	if (!s->nr_buckets)
		return NULL;
	e = s->buckets[cache_hash(f, vaddr, return_address) & (s->nr_buckets - 1)];
	for (; e; e = e->next)
		if (e->file == f && e->vaddr == vaddr && e->return_address == return_address)
			return e;
	return NULL;
}

static int cache_grow(struct symbolizer *s)
{
	size_t nr = s->nr_buckets ? s->nr_buckets * 2 : 1024;
	struct cache_entry **buckets = calloc(nr, sizeof(*buckets));

	if (!buckets)
		return -ENOMEM;
	for (size_t i = 0; i < s->nr_buckets; i++) {
		struct cache_entry *e = s->buckets[i], *next;
		size_t b;

		for (; e; e = next) {
			next = e->next;
			b = cache_hash(e->file, e->vaddr, e->return_address) & (nr - 1);
			e->next = buckets[b];
			buckets[b] = e;
		}
	}
	free(s->buckets);
	s->buckets = buckets;
	s->nr_buckets = nr;
	return 0;
}

/* Take ownership of b's frames as the cached answer for (f, vaddr). */
static int cache_add(struct symbolizer *s, const struct sym_file *f, uint64_t vaddr,
		     bool return_address, struct frame_buf *b, struct cache_entry **out)
{
	struct cache_entry *e;
	size_t i;

	if (s->nr_entries >= s->nr_buckets * 2 && cache_grow(s))
		return -ENOMEM;
	e = malloc(sizeof(*e));
	if (!e)
		return -ENOMEM;
	*e = (struct cache_entry){ .file = f, .vaddr = vaddr, .return_address = return_address,
				   .frames = b->v, .nr = b->nr };
	i = cache_hash(f, vaddr, return_address) & (s->nr_buckets - 1);
	e->next = s->buckets[i];
	s->buckets[i] = e;
	s->nr_entries++;
	*b = (struct frame_buf){ 0 };
	*out = e;
	return 0;
}

static void cache_clear(struct symbolizer *s)
{
	for (size_t i = 0; i < s->nr_buckets; i++) {
		struct cache_entry *e = s->buckets[i], *next;

		for (; e; e = next) {
			next = e->next;
			frames_free(e->frames, e->nr);
			free(e);
		}
	}
	free(s->buckets);
	s->buckets = NULL;
	s->nr_buckets = s->nr_entries = 0;
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
		f->module = strdup_or_null(module, &failed);
		f->file = strdup_or_null(src[i].file, &failed);
	}
	if (failed) {
		for (size_t i = 0; i < n; i++) {
			free(v[*nr + i].function);
			free(v[*nr + i].module);
			free(v[*nr + i].file);
		}
		return -ENOMEM;
	}
	*nr += n;
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
	f.function = demangle(e->name);
	if (!f.function)
		return -ENOMEM;
	err = frames_append(&f, 1, perfmap__path(s->jit), addr, addr, frames, nr);
	free(f.function);
	return err;
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

	if (!m)
		return resolve_jit(s, mods, addr, return_address, frames, nr);
	err = file_for(s, m, &f);
	if (err)
		return err;
	vaddr = addr - m->bias;
	e = cache_find(s, f, vaddr, return_address);
	if (!e) {
		err = f->dwmod ? describe(f, lookup_pc(f, vaddr, return_address), &b) : 0;
		if (!err && !b.nr)
			err = frame_push(&b, NULL, NULL, 0, false);
		err = err ?: cache_add(s, f, vaddr, return_address, &b, &e);
		if (err) {
			frames_free(b.v, b.nr);
			return err;
		}
	}
	return frames_append(e->frames, e->nr, m->path, addr, vaddr, frames, nr);
}

int symbolizer__warm(struct symbolizer *s, const struct modules *mods, uint64_t addr)
{
	struct report_frame *frames = NULL;
	size_t nr = 0;
	int err = symbolizer__resolve(s, mods, addr, false, &frames, &nr);

	frames_free(frames, nr);
	return err;
}

void symbolizer__reset(struct symbolizer *s)
{
	if (!s)
		return;
	free(s->refs);
	s->refs = NULL;
	s->nr_refs = 0;
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	cache_clear(s);
	for (size_t i = 0; i < s->nr_files; i++)
		file_free(s->files[i]);
	free(s->files);
	free(s->refs);
	perfmap__free(s->jit);
	free(s->debuginfo_path);
	free(s);
}
