// SPDX-License-Identifier: GPL-2.0
/* symbolize_names.c: the source name of a clone's symbol, without its DWARF. */
#include <string.h>
#include "symbolize/symbolize_internal.h"
#include "unit.h"

static const char *source(const char *sym)
{
	static char buf[128];
	size_t len = symbolize_names__source_len(sym);

	memcpy(buf, sym, len);
	buf[len] = '\0';
	return buf;
}

TEST(sym_clone_suffixes_cut)
{
	ASSERT_EQ_STR(source("set_binding_values.part.0"), "set_binding_values");
	ASSERT_EQ_STR(source("_nl_make_l10nflist.localalias"), "_nl_make_l10nflist");
	ASSERT_EQ_STR(source("foo.isra.0"), "foo");
	ASSERT_EQ_STR(source("foo.constprop.12.isra.0"), "foo");
	ASSERT_EQ_STR(source("foo.cold"), "foo");
	ASSERT_EQ_STR(source("foo.isra.0.cold"), "foo");
	ASSERT_EQ_STR(source("foo.lto_priv.0"), "foo");
	ASSERT_EQ_STR(source("foo.llvm.8431"), "foo");
	ASSERT_EQ_STR(source("_ZN2ns4fillEmi.constprop.0"), "_ZN2ns4fillEmi");
	return true;
}

TEST(sym_other_dots_kept)
{
	ASSERT_EQ_STR(source("main.main"), "main.main");	/* Go */
	ASSERT_EQ_STR(source("foo._omp_fn.0"), "foo._omp_fn.0");	/* code of its own */
	ASSERT_EQ_STR(source("foo.1234"), "foo.1234");
	ASSERT_EQ_STR(source(".cold"), ".cold");
	ASSERT_EQ_STR(source("foo.part"), "foo");
	ASSERT_EQ_STR(source("foo.partial.0"), "foo.partial.0");
	ASSERT_EQ_STR(source("malloc"), "malloc");
	return true;
}
