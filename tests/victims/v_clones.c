// SPDX-License-Identifier: GPL-2.0
/*
 * v_clones: allocation sites that gcc -O2 clones, so that their symbols carry
 * a compiler suffix the source does not: site_isra.isra.0 (IPA-SRA passes the
 * one field it reads), site_constprop.constprop.0 (its constant argument
 * folded in), site_part.part.0 (the body split off the inlined guard) and
 * site_cold.cold (the unlikely branch moved away). The tracer must name each
 * by its source name, as __func__ (the TRUTH site) does. Then glibc's own
 * clones, from libc6-dbg: bindtextdomain allocates in
 * set_binding_values.part.0, and a message lookup under LANGUAGE in
 * _nl_make_l10nflist.localalias (glibc keeps both for the whole run).
 * tests/e2e/cases_clones.py checks the names and the symbols beside them.
 * Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH or stdout; exit status 0.
 *
 * Truth: 4 TRUTH lines; heap 4,554 bytes in 7 blocks of its own (valgrind agrees),
 * besides what glibc keeps of the bindings and lookups (freed at exit under valgrind).
 */
#include <libintl.h>
#include <locale.h>
#include "truth.h"

struct request {
	int kind;
	size_t size;
	char pad[64];
};

/* Static, not address-taken, reads one field: IPA-SRA passes r->size alone. */
static __attribute__((noinline)) void *site_isra(const struct request *r)
{
	void *p = malloc(r->size); TR_ALLOC(p, r->size, "malloc"); ESCAPE(p);
	return p;
}

/* Always called with fill 0x5a: IPA-CP makes a clone with it folded in. */
static __attribute__((noinline)) void *site_constprop(size_t n, int fill)
{
	char *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
	memset(p, fill, n);
	return p;
}

/* A cheap guard inlined into the callers, the body split off as .part. */
static void *site_part(const char *tag, size_t n)
{
	char *p;

	if (__builtin_expect(tag == NULL, 1))
		return NULL;
	p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
	snprintf(p, n, "%s", tag);
	for (size_t i = 0; i < n; i++)
		p[i] ^= p[(i * 7) % n] >> 3;
	return p;
}

static __attribute__((noinline, cold)) void note_rare(size_t n)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%zu", n);
	tr_note("rare", buf);
}

/* The unlikely branch (it calls a cold function) goes to site_cold.cold. */
static __attribute__((noinline)) void *site_cold(size_t n)
{
	void *p;

	if (n > 1000) {
		note_rare(n);
		p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
		return p;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct request r = { .kind = 1, .size = 200 };
	size_t part = 256;

	TR_ENTER();
	OPAQUE(part);
	ESCAPE(site_isra(&r));
	r.size = 300;
	ESCAPE(site_isra(&r));
	ESCAPE(site_constprop(100, 0x5a));
	ESCAPE(site_constprop(150, 0x5a));
	ESCAPE(site_part(argv[0], part));
	ESCAPE(site_part(argv[argc - 1], part * 2));
	ESCAPE(site_cold(1500 + part * 6));
	ESCAPE(site_cold(10));

	/* glibc's clones: kept bindings and catalogue lookups (LANGUAGE: not in "C"). */
	setenv("LANGUAGE", "fr", 1);
	setlocale(LC_ALL, "C.UTF-8");
	bindtextdomain("v_clones", "/nonexistent/locale");
	textdomain("v_clones");
	if (gettext("no such message")[0] == '\0')
		return 1;
	tr_report();
	return 0;
}
