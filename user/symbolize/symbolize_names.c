// SPDX-License-Identifier: GPL-2.0
/*
 * Function names from a file's symbol table, sorted once per file (libdwfl
 * would scan it whole for every address), aliases ranked; the source name
 * of a compiler's clone; and C++ names demangled.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "symbolize_internal.h"

/* From libstdc++ (the binary links -lstdc++); no C header declares it. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

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
int symbolize_names__read_funcs(struct sym_file *f)
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
const struct sym_func *symbolize_names__func_at(const struct sym_file *f, uint64_t pc)
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
uint64_t symbolize_names__lookup_pc(const struct sym_file *f, uint64_t vaddr, bool return_address)
{
	const struct sym_func *fn;

	if (!return_address)
		return vaddr;
	if (!symbolize_names__func_at(f, vaddr - 1) && (fn = symbolize_names__func_at(f, vaddr)) && fn->start == vaddr)
		return vaddr;
	return vaddr - 1;
}

/*
 * The suffixes gcc (and clang) give the clones and parts of one source
 * function: foo.part.0, foo.isra.0, foo.constprop.0, foo.cold,
 * foo.lto_priv.0, foo.localalias, foo.llvm.123, chained as in
 * foo.constprop.0.isra.0. Only these: a dot is part of other names (Go's
 * main.main, OpenMP's foo._omp_fn.0, which is code of its own).
 */
static const char *const clone_words[] = {
	"part", "isra", "constprop", "cold", "lto_priv", "localalias", "clone", "llvm",
	"specialized",
};

static bool is_number(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return len > 0;
}

static bool is_clone_word(const char *s, size_t len)
{
	for (size_t i = 0; i < sizeof(clone_words) / sizeof(clone_words[0]); i++)
		if (strlen(clone_words[i]) == len && !memcmp(clone_words[i], s, len))
			return true;
	return false;
}

/* The length of name without its trailing clone suffixes (all of it when none). */
size_t symbolize_names__source_len(const char *name)
{
	size_t len = strlen(name);

	for (;;) {
		const char *dot = memrchr(name, '.', len);
		size_t word_end = len;

		/* A number ends foo.part.0 and foo.llvm.123; foo.cold and foo.localalias have none. */
		if (dot && dot > name && is_number(dot + 1, len - (dot + 1 - name))) {
			word_end = dot - name;
			dot = memrchr(name, '.', word_end);
		}
		if (!dot || dot == name || !is_clone_word(dot + 1, word_end - (dot + 1 - name)))
			return len;
		len = dot - name;
	}
}

char *symbolize_names__demangle(const char *name)
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
