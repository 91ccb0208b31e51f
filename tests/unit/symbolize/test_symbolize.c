// SPDX-License-Identifier: GPL-2.0
/*
 * The symbolizer on real binaries, without BPF: each victim is "loaded" at a
 * bias of our choosing (modules made from its program headers), addresses
 * come from nm and objdump, expected lines from the victims' sources.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>
#include "fixture.h"
#include "symbolize/symbolize.h"
#include "unit.h"

#define PIE_BIAS 0x555555554000ull
#define OTHER_BIAS 0x7f0000100000ull
#define INLINE_SRC "tests/victims/v_inline.c"
#define DEBUG_SRC "tests/victims/v_debug.c"
#define CXX_SRC "tests/victims/v_cxxsym.cc"

/* Resolve addr in a fresh frames array. */
static int resolve(struct symbolizer *s, const struct modules *mods, uint64_t addr, bool ret,
		   struct report_frame **frames, size_t *nr)
{
	*frames = NULL;
	*nr = 0;
	return symbolizer__resolve(s, mods, addr, ret, frames, nr);
}

/* The frames of one address are as wanted, and all carry module, address, offset. */
static bool resolves_to(struct symbolizer *s, const struct modules *mods, uint64_t addr,
			bool ret, const char *module, uint64_t bias, const struct fx_frame *want,
			size_t n)
{
	struct report_frame *frames;
	size_t nr;
	bool ok;

	ASSERT_EQ_U64(resolve(s, mods, addr, ret, &frames, &nr), 0);
	ok = fx_frames_are(frames, nr, want, n);
	for (size_t i = 0; ok && i < nr; i++) {
		if (frames[i].address != addr || frames[i].module_offset != addr - bias ||
		    !frames[i].module || strcmp(frames[i].module, module)) {
			fprintf(stderr, "  frame %zu: address 0x%llx offset 0x%llx module %s\n", i,
				(unsigned long long)frames[i].address,
				(unsigned long long)frames[i].module_offset, frames[i].module ?: "-");
			ok = false;
		}
	}
	fx_frames_free(frames, nr);
	return ok;
}

/* Function entries from nm: the name, and the line of the function's '{'. */
TEST(sym_nm_function_entries)
{
	const char *bin = fx_victim("v_inline");
	static const char *const fns[] = { "via_inl_host", "main" };
	struct modules *mods = modules__new(getpid());
	struct symbolizer *s = symbolizer__new(NULL, 0);
	bool ok = mods && s && !fx_load(mods, bin, PIE_BIAS);

	for (size_t i = 0; ok && i < 2; i++) {
		char def[64];
		uint64_t value = fx_nm(bin, fns[i]);
		int line;

		snprintf(def, sizeof(def), " %s(", fns[i]);
		line = fx_line_of(INLINE_SRC, def);
		ok = value && line > 0;
		ok = ok && resolves_to(s, mods, PIE_BIAS + value, false, bin, PIE_BIAS,
				       &(struct fx_frame){ fns[i], INLINE_SRC, line + 1, false }, 1);
	}
	symbolizer__free(s);
	modules__free(mods);
	return ok;
}

/*
 * Return addresses from objdump: the call instruction's line, with every
 * inlined call around it as a frame of its own at its call line.
 */
TEST(sym_inline_frames_at_return_addresses)
{
	const char *bin = fx_victim("v_inline");
	uint64_t direct = fx_call_return(bin, "via_inl_host", "malloc@plt", 0);
	uint64_t nested = fx_call_return(bin, "via_inl_host", "calloc@plt", 0);
	struct modules *mods = modules__new(getpid());
	struct symbolizer *s = symbolizer__new(NULL, 0);
	const struct fx_frame want_direct[] = {
		{ "site_inl_direct", INLINE_SRC, fx_line_of(INLINE_SRC, "= malloc(n); TR_ALLOC"), true },
		{ "via_inl_host", INLINE_SRC, fx_marker(INLINE_SRC, "host_calls_direct"), false },
	};
	const struct fx_frame want_nested[] = {
		{ "site_inl_nested", INLINE_SRC, fx_line_of(INLINE_SRC, "= calloc(n, 8); TR_ALLOC"),
		  true },
		{ "via_inl_mid", INLINE_SRC, fx_marker(INLINE_SRC, "mid_calls_nested"), true },
		{ "via_inl_host", INLINE_SRC, fx_marker(INLINE_SRC, "host_calls_mid"), false },
	};
	bool ok = mods && s && direct && nested && !fx_load(mods, bin, PIE_BIAS);

	ok = ok && resolves_to(s, mods, PIE_BIAS + direct, true, bin, PIE_BIAS, want_direct, 2);
	ok = ok && resolves_to(s, mods, PIE_BIAS + nested, true, bin, PIE_BIAS, want_nested, 3);
	/* Twice: the second answer comes from the cache, and must be the same. */
	ok = ok && resolves_to(s, mods, PIE_BIAS + nested, true, bin, PIE_BIAS, want_nested, 3);
	symbolizer__free(s);
	modules__free(mods);
	return ok;
}

/* A non-PIE executable sits at its link-time addresses: bias 0. */
TEST(sym_non_pie)
{
	const char *bin = fx_victim("v_nopie");
	const char *src = "tests/victims/v_nopie.c";
	uint64_t ret = fx_call_return(bin, "via_nopie", "site_nopie_malloc", 0);
	struct modules *mods = modules__new(getpid());
	struct symbolizer *s = symbolizer__new(NULL, 0);
	bool ok = mods && s && ret && !fx_load(mods, bin, 0);

	ok = ok && resolves_to(s, mods, ret, true, bin, 0,
			       &(struct fx_frame){ "via_nopie", src,
						   fx_marker(src, "via_calls_malloc"), false }, 1);
	symbolizer__free(s);
	modules__free(mods);
	return ok;
}

/* Demangled C++: a namespaced method, template instances, a lambda. */
TEST(sym_cxx_demangled)
{
	static const struct {
		const char *mangled, *callee, *demangled, *line_text;
	} cases[] = {
		{ "_ZN5store5Cache8site_putEm", "_Znwm@plt", "store::Cache::site_put(unsigned long)",
		  "operator new(n); TR_ALLOC_AS" },
		{ "_ZN5store4PoolINS_4ItemEE9site_growEm", "_Znam@plt",
		  "store::Pool<store::Item>::site_grow(unsigned long)", "new T[n]; TR_ALLOC_AS" },
		{ "_Z9site_makeIiEPT_mPKc", "malloc@plt",
		  "int* site_make<int>(unsigned long, char const*)", "malloc(n * sizeof(T))" },
		{ "_ZZ10via_lambdamENKUlmE_clEm", "calloc@plt",
		  "via_lambda(unsigned long)::{lambda(unsigned long)#1}::operator()(unsigned long) const",
		  "calloc(k, 4)" },
	};
	const char *bin = fx_victim("v_cxxsym");
	struct modules *mods = modules__new(getpid());
	struct symbolizer *s = symbolizer__new(NULL, 0);
	bool ok = mods && s && !fx_load(mods, bin, PIE_BIAS);

	for (size_t i = 0; ok && i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t ret = fx_call_return(bin, cases[i].mangled, cases[i].callee, 0);

		if (!ret)
			fprintf(stderr, "  no call to %s in %s\n", cases[i].callee, cases[i].mangled);
		ok = ret && resolves_to(s, mods, PIE_BIAS + ret, true, bin, PIE_BIAS,
					&(struct fx_frame){ cases[i].demangled, CXX_SRC,
							    fx_line_of(CXX_SRC, cases[i].line_text),
							    false },
					1);
	}
	symbolizer__free(s);
	modules__free(mods);
	return ok;
}

/*
 * Stripped: no symbol, no line, and no wrong nearby name either, only the
 * module and the offset, which is the unstripped copy's address.
 */
TEST(sym_stripped_module_offset)
{
	const char *bin = fx_victim("v_debug_stripped");
	uint64_t ret = fx_call_return(fx_victim("v_debug"), "site_dbg_malloc", "malloc@plt", 0);
	uint64_t entry = fx_nm(fx_victim("v_debug"), "via_dbg");
	struct modules *mods = modules__new(getpid());
	struct symbolizer *s = symbolizer__new(NULL, 0);
	bool ok = mods && s && ret && entry && !fx_load(mods, bin, PIE_BIAS);
	const struct fx_frame none = { NULL, NULL, 0, false };

	ok = ok && resolves_to(s, mods, PIE_BIAS + ret, true, bin, PIE_BIAS, &none, 1);
	ok = ok && resolves_to(s, mods, PIE_BIAS + entry, false, bin, PIE_BIAS, &none, 1);
	symbolizer__free(s);
	modules__free(mods);
	return ok;
}

/* The same site in v_debug's stripped copies: found by debuglink or build id. */
static bool debug_copy_resolves(const char *name, const char *const *dirs, size_t nr_dirs,
				bool named)
{
	const char *bin = fx_victim(name);
	uint64_t ret = fx_call_return(fx_victim("v_debug"), "via_dbg", "site_dbg_malloc", 0);
	struct modules *mods = modules__new(getpid());
	struct symbolizer *s = symbolizer__new(dirs, nr_dirs);
	struct fx_frame want = { NULL, NULL, 0, false };
	bool ok = mods && s && ret && !fx_load(mods, bin, PIE_BIAS);

	if (named)
		want = (struct fx_frame){ "via_dbg", DEBUG_SRC,
					  fx_marker(DEBUG_SRC, "via_calls_malloc"), false };
	ok = ok && resolves_to(s, mods, PIE_BIAS + ret, true, bin, PIE_BIAS, &want, 1);
	symbolizer__free(s);
	modules__free(mods);
	return ok;
}

TEST(sym_debuglink_beside)
{
	return debug_copy_resolves("v_debug_link", NULL, 0, true);
}

TEST(sym_debug_dir_build_id)
{
	/* Relative, as a user types it: the symbolizer makes it absolute. */
	const char *dirs[] = { ".output/debug-root" };

	/* Unnamed without it: the directory is what makes the difference. */
	ASSERT(debug_copy_resolves("v_debug_id", NULL, 0, false));
	return debug_copy_resolves("v_debug_id", dirs, 1, true);
}

TEST(sym_debug_dir_debuglink)
{
	const char *dirs[] = { "/", ".output/debug-root" };

	ASSERT(debug_copy_resolves("v_debug_linkdir", NULL, 0, false));
	/* Two roots, the file in the second. */
	return debug_copy_resolves("v_debug_linkdir", dirs, 2, true);
}

struct refused {
	const char *dir;
	struct symbolizer *s;
};

static void new_with_dir(void *arg)
{
	struct refused *r = arg;

	r->s = symbolizer__new(&r->dir, 1);
}

/* A directory that is not one: refused, with one line saying why. */
static bool refuses(const char *dir, const char *why)
{
	struct refused r = { dir, NULL };
	char *err = fx_capture_stderr(new_with_dir, &r), want[256];
	bool ok;

	snprintf(want, sizeof(want), "memleakbpf: --debug-dir %s: %s\n", dir, why);
	ok = !r.s && err && !strcmp(err, want);
	if (!ok)
		fprintf(stderr, "  got %p, \"%s\"; want NULL, \"%s\"\n", (void *)r.s, err ?: "", want);
	symbolizer__free(r.s);
	free(err);
	return ok;
}

TEST(sym_debug_dir_refused)
{
	ASSERT(refuses(".output/no-such-debug-root", "No such file or directory"));
	ASSERT(refuses("tests/victims/v_debug.c", "Not a directory"));
	return true;
}

/*
 * Code past the end of the closest symbol below it (a static function of a
 * file that kept only some symbols) has no name: the closest one is wrong.
 */
TEST(sym_no_wrong_nearby_name)
{
	const char *bin = fx_victim("v_inline");
	char copy[] = "/tmp/memleakbpf-sym-main-only-XXXXXX", cmd[2 * PATH_MAX];
	uint64_t main_at = fx_nm(bin, "main"), report_at = fx_nm(bin, "tr_report");
	struct modules *mods = modules__new(getpid());
	struct symbolizer *s = symbolizer__new(NULL, 0);
	int fd = mkstemp(copy);
	bool ok;

	snprintf(cmd, sizeof(cmd), "objcopy --strip-all --keep-symbol=main '%s' '%s'", bin, copy);
	ok = mods && s && fd >= 0 && !system(cmd) && main_at && report_at > main_at &&
	     fx_nm(copy, "main") == main_at && !fx_nm(copy, "tr_report") &&
	     !fx_load(mods, copy, PIE_BIAS);
	ok = ok && resolves_to(s, mods, PIE_BIAS + main_at + 4, false, copy, PIE_BIAS,
			       &(struct fx_frame){ "main", NULL, 0, false }, 1);
	ok = ok && resolves_to(s, mods, PIE_BIAS + report_at + 4, false, copy, PIE_BIAS,
			       &(struct fx_frame){ NULL, NULL, 0, false }, 1);
	symbolizer__free(s);
	modules__free(mods);
	if (fd >= 0)
		close(fd);
	unlink(copy);
	return ok;
}
