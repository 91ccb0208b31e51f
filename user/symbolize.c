// SPDX-License-Identifier: GPL-2.0
/*
 * Addresses to function, file:line and inlined frames through elfutils
 * libdwfl; the only file that includes it. One Dwfl holds every module, each
 * reported the first time an address in it is resolved. Results are cached
 * per address, and a module that fails to load is not retried.
 */
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "symbolize.h"

/* From libstdc++ (the binary links -lstdc++); no C header declares it. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/*
 * Debug files by build id (/usr/lib/debug/.build-id/xx/yyyy.debug), then by
 * .gnu_debuglink next to the file, in .debug/ and under /usr/lib/debug.
 */
static char *debuginfo_path = ":.debug:/usr/lib/debug";

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/* A module reported to the Dwfl, or that failed to load (dwmod NULL). */
struct sym_mod {
	dev_t dev;
	ino_t inode;
	uint64_t bias;
	Dwfl_Module *dwmod;
};

struct cache_entry {
	struct cache_entry *next;
	uint64_t addr, bias;
	dev_t dev;
	ino_t inode;
	bool return_address;
	struct report_frame *frames;
	size_t nr;
};

struct symbolizer {
	Dwfl *dwfl;		/* created on first use */
	unsigned int nr_reported;
	struct sym_mod *mods;
	size_t nr_mods;
	struct cache_entry **buckets;	/* a power of two of them */
	size_t nr_buckets, nr_entries;
};

/* Frames under construction. */
struct frame_buf {
	struct report_frame *v;
	size_t nr, cap;
};

struct symbolizer *symbolizer__new(void)
{
	/* Debug info comes from this machine only: libdw would otherwise ask
	 * debuginfod servers when DEBUGINFOD_URLS is set. The traced command
	 * was started before this and keeps its environment. */
	unsetenv("DEBUGINFOD_URLS");
	return calloc(1, sizeof(struct symbolizer));
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

static bool same_module(const struct sym_mod *sm, const struct module *m)
{
	return sm->dev == m->dev && sm->inode == m->inode && sm->bias == m->bias;
}

static Dwfl_Module *report_module(struct symbolizer *s, const struct module *m)
{
	Dwfl_Module *dwmod;
	char name[64];
	int fd;

	if (m->fd < 0)
		return NULL;	/* modules.c said why */
	if (!s->dwfl) {
		s->dwfl = dwfl_begin(&dwfl_callbacks);
		if (!s->dwfl) {
			fprintf(stderr, "memleakbpf: libdwfl: %s\n", dwfl_errmsg(-1));
			return NULL;
		}
	}
	/* dwfl_report_elf keeps the fd it is given; the module keeps its own. */
	fd = fcntl(m->fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return NULL;
	/*
	 * A unique name: libdwfl merges a report with an earlier one of the same
	 * name and range, and drops both if the files differ (a library replaced
	 * at the same address).
	 */
	snprintf(name, sizeof(name), "module%u", s->nr_reported++);
	dwfl_report_begin_add(s->dwfl);
	/* add_p_vaddr: m->bias is the bias itself, not where the first PT_LOAD went. */
	dwmod = dwfl_report_elf(s->dwfl, name, m->path, fd, m->bias, true);
	dwfl_report_end(s->dwfl, NULL, NULL);
	if (!dwmod) {
		close(fd);	/* only kept on success */
		fprintf(stderr, "memleakbpf: %s: %s; its frames stay unnamed\n", m->path,
			dwfl_errmsg(-1));
	}
	return dwmod;
}

/* The Dwfl module for m, reporting it on first use; NULL when it can't load. */
static int sym_module(struct symbolizer *s, const struct module *m, Dwfl_Module **out)
{
	struct sym_mod *n;

	for (size_t i = 0; i < s->nr_mods; i++) {
		if (same_module(&s->mods[i], m)) {
			*out = s->mods[i].dwmod;
			return 0;
		}
	}
	n = realloc(s->mods, (s->nr_mods + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	s->mods = n;
	*out = report_module(s, m);
	/* Remembered even when NULL, so a broken file is tried once. */
	n[s->nr_mods++] = (struct sym_mod){ m->dev, m->inode, m->bias, *out };
	return 0;
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

/*
 * The symbol-table name of the function containing pc, or NULL; owned by the
 * caller. libdwfl returns the nearest symbol below pc; past its end (code
 * without a symbol, e.g. a static function in a stripped file) that would be
 * a wrong name.
 */
static int symbol_at(Dwfl_Module *dwmod, uint64_t pc, char **out)
{
	GElf_Off off;
	GElf_Sym sym;
	const char *name = dwfl_module_addrinfo(dwmod, pc, &off, &sym, NULL, NULL, NULL);

	*out = NULL;
	if (!name || !*name)
		return 0;
	/* A sizeless symbol (an assembly label) only names its own address. */
	if (sym.st_size ? off >= sym.st_size : off != 0)
		return 0;
	/* glibc's .symtab spells versioned definitions "name@@GLIBC_2.34". */
	*out = strndup(name, strcspn(name, "@"));
	return *out ? 0 : -ENOMEM;
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

/*
 * The DIEs enclosing pc, innermost first, up to the CU. dwarf_getscopes
 * continues an inlined instance with the scopes of its abstract definition;
 * restarting from the innermost DIE gives the concrete chain of callers.
 */
static int scopes_at(Dwfl_Module *dwmod, uint64_t pc, Dwarf_Die **out)
{
	Dwarf_Die *cudie, *scopes, inner;
	Dwarf_Addr bias;
	int n;

	*out = NULL;
	cudie = dwfl_module_addrdie(dwmod, pc, &bias);
	if (!cudie)
		return 0;
	n = dwarf_getscopes(cudie, pc - bias, &scopes);
	if (n <= 0)
		return 0;
	inner = scopes[0];
	free(scopes);
	n = dwarf_getscopes_die(&inner, &scopes);
	if (n <= 0)
		return 0;
	*out = scopes;
	return n;
}

/*
 * One frame per inlined subroutine around pc, innermost first, then the
 * function they were inlined into. The innermost line is pc's; every outer
 * frame is at the call site of the inlined subroutine it contains.
 */
static int describe(Dwfl_Module *dwmod, uint64_t pc, struct frame_buf *b)
{
	Dwarf_Die *scopes, *func = NULL;
	const char *file;
	char *sym;
	int n, line, err;

	err = symbol_at(dwmod, pc, &sym);
	if (err)
		return err;
	n = scopes_at(dwmod, pc, &scopes);
	src_line(dwmod, pc, &file, &line);
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
	free(scopes);
	free(sym);
	return err;
}

/* Frames for addr in module m (at least one), every one with module+offset. */
static int resolve_in(struct symbolizer *s, const struct module *m, uint64_t addr,
		      bool return_address, struct frame_buf *b)
{
	Dwfl_Module *dwmod;
	int err = sym_module(s, m, &dwmod);

	if (!err && dwmod)
		err = describe(dwmod, return_address ? addr - 1 : addr, b);
	if (!err && !b->nr)
		err = frame_push(b, NULL, NULL, 0, false);
	for (size_t i = 0; i < b->nr && !err; i++) {
		b->v[i].address = addr;
		b->v[i].module_offset = addr - m->bias;
		b->v[i].module = strdup(m->path);
		if (!b->v[i].module)
			err = -ENOMEM;
	}
	return err;
}

static size_t cache_hash(uint64_t addr, uint64_t bias, ino_t inode, bool return_address)
{
	uint64_t h = addr ^ (bias * 31) ^ ((uint64_t)inode << 17) ^ return_address;

	return (h * 0x9e3779b97f4a7c15ull) >> 24;
}

static struct cache_entry *cache_find(const struct symbolizer *s, const struct module *m,
				      uint64_t addr, bool return_address)
{
	struct cache_entry *e;

	if (!s->nr_buckets)
		return NULL;
	e = s->buckets[cache_hash(addr, m->bias, m->inode, return_address) & (s->nr_buckets - 1)];
	for (; e; e = e->next) {
		if (e->addr == addr && e->return_address == return_address &&
		    e->bias == m->bias && e->dev == m->dev && e->inode == m->inode)
			return e;
	}
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
			b = cache_hash(e->addr, e->bias, e->inode, e->return_address) & (nr - 1);
			e->next = buckets[b];
			buckets[b] = e;
		}
	}
	free(s->buckets);
	s->buckets = buckets;
	s->nr_buckets = nr;
	return 0;
}

/* Take ownership of b's frames as the cached answer for (m, addr). */
static int cache_add(struct symbolizer *s, const struct module *m, uint64_t addr,
		     bool return_address, struct frame_buf *b, struct cache_entry **out)
{
	struct cache_entry *e;
	size_t i;

	if (s->nr_entries >= s->nr_buckets * 2 && cache_grow(s))
		return -ENOMEM;
	e = malloc(sizeof(*e));
	if (!e)
		return -ENOMEM;
	*e = (struct cache_entry){ .addr = addr, .bias = m->bias, .dev = m->dev,
				   .inode = m->inode, .return_address = return_address,
				   .frames = b->v, .nr = b->nr };
	i = cache_hash(addr, m->bias, m->inode, return_address) & (s->nr_buckets - 1);
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

static char *strdup_or_null(const char *s, bool *failed)
{
	char *d = s ? strdup(s) : NULL;

	if (s && !d)
		*failed = true;
	return d;
}

/* Append deep copies of src[0..n) to the caller's array. */
static int frames_append(const struct report_frame *src, size_t n, struct report_frame **frames,
			 size_t *nr)
{
	struct report_frame *v = realloc(*frames, (*nr + n) * sizeof(*v));
	bool failed = false;

	if (!v)
		return -ENOMEM;
	*frames = v;
	for (size_t i = 0; i < n; i++) {
		struct report_frame *f = &v[*nr + i];

		*f = src[i];
		f->function = strdup_or_null(src[i].function, &failed);
		f->module = strdup_or_null(src[i].module, &failed);
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

int symbolizer__resolve(struct symbolizer *s, const struct modules *mods, uint64_t addr,
			bool return_address, struct report_frame **frames, size_t *nr)
{
	const struct module *m = modules__find(mods, addr);
	struct frame_buf b = { 0 };
	struct cache_entry *e;
	int err;

	if (!m) {
		/* Not cached: the module may be learnt by a later update. */
		struct report_frame unknown = { .address = addr };

		return frames_append(&unknown, 1, frames, nr);
	}
	e = cache_find(s, m, addr, return_address);
	if (!e) {
		err = resolve_in(s, m, addr, return_address, &b);
		err = err ?: cache_add(s, m, addr, return_address, &b, &e);
		if (err) {
			frames_free(b.v, b.nr);
			return err;
		}
	}
	return frames_append(e->frames, e->nr, frames, nr);
}

void symbolizer__reset(struct symbolizer *s)
{
	if (!s)
		return;
	cache_clear(s);
	free(s->mods);
	s->mods = NULL;
	s->nr_mods = 0;
	if (s->dwfl)
		dwfl_end(s->dwfl);
	s->dwfl = NULL;
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	symbolizer__reset(s);
	free(s);
}
