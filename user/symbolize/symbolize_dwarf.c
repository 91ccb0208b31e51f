// SPDX-License-Identifier: GPL-2.0
/*
 * Lines and inlined frames from DWARF: the function DIE around a pc, found
 * in a per-unit index, and the chain of inlined calls within it.
 */
#include <dwarf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "symbolize_internal.h"
#include "util/vec.h"

#define SYM_FAIL_LIMIT 32
#define MAX_SCOPES 64		/* inlined calls and blocks nested in one function */
#define MAX_NESTING 16		/* namespaces and classes around a function */

static void note_failure(struct sym_file *f)
{
	if (++f->failures == SYM_FAIL_LIMIT)
		fprintf(stderr, "memleakbpf: %s: %u lookups failed in its debug info; its other frames get function names only\n",
			f->path, f->failures);
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
	if (vec__reserve_min(&c->v, cap, c->nr + 1, sizeof(*c->v), 64))
		return -ENOMEM;
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
	if (vec__reserve(&f->cus, &f->cap_cus, f->nr_cus + 1, sizeof(*f->cus)))
		return -ENOMEM;
	n = f->cus;
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
 * The name of the function whose symbol is sym (NULL: none) and whose DWARF
 * is func (NULL: none), as its source spells it. A clone's symbol
 * (foo.part.0, foo.isra.0, foo.cold) is the name the DWARF gives when it is
 * that name and a suffix; without DWARF, only the suffixes gcc and clang give
 * clones are cut (symbolize_names__source_len). An alias of another name altogether
 * (malloc for glibc's __libc_malloc) keeps the symbol's: it is what the
 * program called. *out NULL: no name.
 */
static int source_name(const char *sym, Dwarf_Die *func, char **out)
{
	const char *dw = func ? die_name(func) : NULL;
	size_t len = dw ? strlen(dw) : 0;

	if (sym && dw && !strncmp(sym, dw, len) && sym[len] == '.')
		*out = strdup(dw);
	else if (sym)
		*out = strndup(sym, symbolize_names__source_len(sym));
	else
		*out = dw ? strdup(dw) : NULL;
	return (sym || dw) && !*out ? -ENOMEM : 0;
}

/* The function's frame, named at its source, its ELF symbol kept beside. */
static int push_function(struct frame_buf *b, const char *sym, Dwarf_Die *func,
			 const char *file, int line)
{
	struct report_frame *f;
	char *name;
	int err = source_name(sym, func, &name);

	err = err ?: symbolize_frames__push(b, name, file, line, false);
	free(name);
	if (err || !sym)
		return err;
	f = &b->v[b->nr - 1];
	free(f->symbol);	/* the mangled name it demangled: the symbol's is the one */
	f->symbol = strdup(sym);
	return f->symbol ? 0 : -ENOMEM;
}

/*
 * One frame per inlined subroutine around pc, innermost first, then the
 * function they were inlined into. The innermost line is pc's; every outer
 * frame is at the call site of the inlined subroutine it contains.
 */
int symbolize_dwarf__describe(struct sym_file *f, uint64_t pc, struct frame_buf *b)
{
	const struct sym_func *fn = symbolize_names__func_at(f, pc);
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
		err = symbolize_frames__push(b, die_name(&scopes[i]), file, line, true);
		call_site(&scopes[i], &file, &line);
	}
	if (!err)
		err = push_function(b, sym, func, file, line);
	free(sym);
	return err;
}
