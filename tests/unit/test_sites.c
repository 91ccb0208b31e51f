// SPDX-License-Identifier: GPL-2.0
/* analyze/sites.c: what is the program's own code, and stacks grouped into sites. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/kernel_sites.h"
#include "analyze/runtime_frames.h"
#include "analyze/sites.h"
#include "model/report.h"
#include "helpers.h"
#include "unit.h"

#define PY "/usr/bin/python3.11"
#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define TORCH "/usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so.1.13.0"
#define LINEAR "/usr/lib/python3/dist-packages/torch/nn/modules/linear.py"

TEST(sites_own_module)
{
	static const struct {
		const char *module;
		bool own;
	} cases[] = {
		{ "/srv/app", true },
		{ "/usr/lib/postgresql/15/bin/postgres", true },	/* a program, wherever it is */
		{ "/opt/app/lib/libapp.so", true },
		{ "/work/build/plugins/libplug.so.1", true },
		{ "/tmp/perf-4242.map", true },				/* a JIT's code */
		{ LIBC, false },
		{ "/lib64/ld-linux-x86-64.so.2", false },
		{ "/usr/local/lib/libjemalloc.so.2", false },
		{ "/usr/lib32/libm.so.6", false },
		{ TORCH, false },
		{ "/home/u/venv/lib/python3.11/site-packages/torch/lib/libtorch.so", false },
		{ "[vdso]", false },
		{ PY, false },						/* the interpreter */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (sites__own_module(cases[i].module, PY) != cases[i].own) {
			fprintf(stderr, "  %s: own is %d\n", cases[i].module, !cases[i].own);
			return false;
		}
	}
	ASSERT(!sites__own_module(NULL, NULL));
	ASSERT(sites__own_module(PY, NULL));	/* not a Python target: a program like any */
	return true;
}

TEST(sites_own_frame)
{
	struct report_frame native = { .function = "leak", .module = "/srv/app" };
	struct report_frame py = { .function = "train", .module = "/srv/t.py", .file = "/srv/t.py",
				   .line = 9, .language = FRAME_PYTHON };
	struct report_frame import = { .function = "_call_with_frames_removed",
				       .file = "<frozen importlib._bootstrap>", .line = 241,
				       .language = FRAME_PYTHON };
	struct report_frame import_ext = { .function = "ExtensionFileLoader.create_module",
					   .file = "<frozen importlib._bootstrap_external>",
					   .line = 1233, .language = FRAME_PYTHON };
	struct report_frame frozen_os = { .function = "<module>", .file = "<frozen os>", .line = 29,
					  .language = FRAME_PYTHON };
	struct report_frame unknown_code = { .address = 0x7f00, .language = FRAME_PYTHON };

	ASSERT(sites__own_frame(&native, false, NULL, PY));
	ASSERT(!sites__own_frame(&native, true, NULL, PY));	/* with Python frames, only they count */
	ASSERT(sites__own_frame(&py, true, NULL, PY));
	ASSERT(!sites__own_frame(&py, false, NULL, PY));
	ASSERT(!sites__own_frame(&import, true, NULL, PY));
	ASSERT(!sites__own_frame(&import_ext, true, NULL, PY));
	ASSERT(!sites__own_frame(&frozen_os, true, NULL, PY));	/* the standard library's */
	ASSERT(sites__own_frame(&unknown_code, true, NULL, PY));
	ASSERT(sites__import_file(import.file) && sites__import_file(import_ext.file));
	ASSERT(!sites__import_file(frozen_os.file) && !sites__import_file(NULL));
	return true;
}

/* Python's files: the standard library and packages are not the user's, wherever installed. */
TEST(sites_own_python_file)
{
	static const struct {
		const char *file;
		bool own;
	} cases[] = {
		{ "/srv/train.py", true },
		{ "/home/u/proj/lib/model.py", true },
		{ "<string>", true },
		{ NULL, true },
		{ LINEAR, false },
		{ "/usr/lib/python3.11/json/encoder.py", false },
		{ "/usr/local/lib/python3.11/dist-packages/numpy/core/numeric.py", false },
		{ "/home/u/venv/lib/python3.11/site-packages/transformers/trainer.py", false },
		{ "/root/.pyenv/versions/3.11.7/lib/python3.11/collections/__init__.py", false },
		{ "/opt/conda/lib/python3.10/copy.py", false },
		{ "<frozen runpy>", false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (sites__own_python_file(cases[i].file, NULL) != cases[i].own) {
			fprintf(stderr, "  %s: own is %d\n", cases[i].file, !cases[i].own);
			return false;
		}
	}
	return true;
}

/*
 * Native frames: code inlined from the system's or a toolchain's headers
 * is not the user's, even in the program's own object; its caller is. So
 * is a standard container's or the runtime's code instantiated in a
 * stripped program (named by its dynamic symbols, no file): fstminimize's
 * std::map insert was its site where its caller was the user's.
 */
TEST(sites_own_native)
{
#define RB_TREE "std::_Rb_tree_iterator<int> std::_Rb_tree<int>::_M_emplace_hint_unique<int>(int&&)"
	static const struct {
		const char *module, *file, *function;
		bool own;
	} cases[] = {
		{ "/srv/app", "src/model.cc", NULL, true },
		{ "/srv/app", "/home/u/app/src/model.cc", NULL, true },
		{ "/srv/app", NULL, NULL, true },
		{ "/srv/app", NULL, "FlagRegister<bool>::SetDescription(bool const&)", true },
		{ "/srv/app", NULL, "std::vector<int> fst::Split(int)", true },
		{ "/srv/app", NULL, RB_TREE, false },
		{ "/srv/app", NULL, "__gnu_cxx::__pool_alloc<char>::allocate(unsigned long)", false },
		{ "/srv/app", NULL, "operator new(unsigned long)", false },
		{ "/srv/app", "/usr/include/c++/12/bits/new_allocator.h", NULL, false },
		{ "/srv/app", "/usr/include/c++/12/bits/basic_string.h", NULL, false },
		{ "/srv/app", "/usr/include/x86_64-linux-gnu/bits/string_fortified.h", NULL, false },
		{ "/srv/app", "/usr/lib/gcc/x86_64-linux-gnu/12/include/avxintrin.h", NULL, false },
		{ "/srv/app", "/opt/gcc-13/include/c++/13.2.0/bits/stl_vector.h", NULL, false },
		{ "/srv/app", "/usr/local/include/fst/vector-fst.h", NULL, false },
		{ LIBC, "./malloc/malloc.c", NULL, false },
		{ LIBC, NULL, NULL, false },
	};
#undef RB_TREE

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct report_frame f = { .module = (char *)cases[i].module,
					  .file = (char *)cases[i].file,
					  .function = (char *)cases[i].function };

		if (sites__own_native(&f, NULL, PY) != cases[i].own) {
			fprintf(stderr, "  %s (%s) in %s: own is %d\n", cases[i].file,
				cases[i].function, cases[i].module, !cases[i].own);
			return false;
		}
	}
	return true;
}

/* --own: directories (at a '/' boundary), globs, relative paths; the defaults then unused. */
TEST(sites_own_option)
{
	const char *paths[] = { "/srv/app/src", "*/vendor/kaldi/*", "tools" };
	struct sites_own own = { .paths = paths, .nr = 3, .cwd = "/home/u/proj/" };
	struct report_frame header = { .module = "/srv/app/bin/app",
				       .file = "/usr/include/c++/12/bits/stl_vector.h" };
	struct report_frame rel = { .module = "/srv/app/bin/app", .file = "src/main.cc" };
	struct report_frame lib = { .module = "/usr/lib/libkaldi.so",
				    .file = "/build/vendor/kaldi/matrix.cc" };

	ASSERT(sites__own_matches(&own, "/srv/app/src/main.cc"));
	ASSERT(sites__own_matches(&own, "/srv/app/src"));
	ASSERT(!sites__own_matches(&own, "/srv/app/srcx/main.cc"));
	ASSERT(sites__own_matches(&own, "/x/vendor/kaldi/lat/lattice.cc"));
	ASSERT(sites__own_matches(&own, "tools/gen.py"));		/* as written */
	ASSERT(sites__own_matches(&own, "/home/u/proj/tools/gen.py"));	/* under the cwd */
	ASSERT(!sites__own_matches(&own, "/home/u/other/tools/gen.py"));
	ASSERT(!sites__own_matches(&own, NULL));
	ASSERT(!sites__own_native(&header, &own, NULL));
	ASSERT(!sites__own_native(&rel, &own, NULL));	/* relative file: its object decides */
	ASSERT(sites__own_native(&lib, &own, NULL));	/* a library the user names as theirs */
	ASSERT(!sites__own_python_file("/srv/t.py", &own));	/* the defaults are not used */
	ASSERT(sites__own_python_file("/srv/app/src/t.py", &own));
	return true;
}

/* --alloc-fn: the program's allocation functions are never its frames, by name or glob. */
TEST(sites_alloc_fn)
{
	const char *fns[] = { "zmalloc*", "fst::PoolAllocator<*>::allocate", "xcalloc" };
	struct sites_own own = { NULL, 0, NULL, fns, 3 };
	struct report_frame zmalloc = { .module = "/usr/bin/redis-server", .function = "zmalloc_usable" };
	struct report_frame sds = { .module = "/usr/bin/redis-server", .function = "_sdsnewlen" };
	struct report_frame pool = {
		.module = "/srv/app", .file = "src/pool.h",
		.function = "std::pair<int, int> fst::PoolAllocator<fst::Arc>::allocate(unsigned long)"
	};
	struct report_frame xcalloc_lib = { .module = "/usr/lib/libx.so", .function = "xcalloc" };

	ASSERT(!sites__own_native(&zmalloc, &own, NULL));
	ASSERT(sites__own_native(&sds, &own, NULL));
	ASSERT(!sites__own_native(&pool, &own, NULL));	/* past its return type, without arguments */
	ASSERT(!sites__own_native(&xcalloc_lib, &own, NULL));
	own.nr_alloc_fns = 0;
	ASSERT(sites__own_native(&zmalloc, &own, NULL));
	ASSERT(sites__own_native(&pool, &own, NULL));
	return true;
}

/*
 * A PyTorch leak: stacks whose native frames (in libtorch) and torch's own
 * Python line differ, under one line of the script, and a second line; a cache under another; a stack that
 * could not be captured.
 */
static struct report_frame fwd_a[] = {
	{ .address = 0x1a, .function = "at::empty", .module = TORCH },
	{ .address = 0x2a, .function = "Linear.forward", .module = LINEAR, .file = LINEAR, .line = 114,
	  .module_offset = 10, .language = FRAME_PYTHON },
	{ .address = 0x3a, .function = "step", .module = "/srv/t.py", .file = "/srv/t.py", .line = 38,
	  .language = FRAME_PYTHON },
};

static struct report_frame fwd_b[] = {
	{ .address = 0x1b, .function = "at::addmm", .module = TORCH },
	{ .address = 0x2b, .function = "Linear.forward", .module = LINEAR, .file = LINEAR, .line = 114,
	  .module_offset = 14, .language = FRAME_PYTHON },	/* another instruction of the line */
	{ .address = 0x3b, .function = "step", .module = "/srv/t.py", .file = "/srv/t.py", .line = 38,
	  .language = FRAME_PYTHON },
};

static struct report_frame fwd_c[] = {
	{ .address = 0x1c, .function = "c10::alloc_cpu", .module = TORCH },
	{ .address = 0x1d, .function = "at::t", .module = TORCH },
	{ .address = 0x2c, .function = "Linear.forward", .module = LINEAR, .file = LINEAR, .line = 114,
	  .module_offset = 22, .language = FRAME_PYTHON },
	{ .address = 0x3c, .function = "step", .module = "/srv/t.py", .file = "/srv/t.py", .line = 38,
	  .language = FRAME_PYTHON },
};

static struct report_frame loss[] = {
	{ .address = 0x1e, .function = "at::add_", .module = TORCH },
	{ .address = 0x2e, .function = "train", .module = "/srv/t.py", .file = "/srv/t.py", .line = 55,
	  .language = FRAME_PYTHON },
};

/* Imported: the line that imports is the site, not importlib's. */
static struct report_frame imported[] = {
	{ .address = 0x1f, .function = "gdcm::Dict::LoadDefault", .module = "/usr/lib/libgdcm.so.3" },
	{ .address = 0x2f, .function = "_call_with_frames_removed",
	  .file = "<frozen importlib._bootstrap>", .line = 241, .language = FRAME_PYTHON },
	{ .address = 0x30, .function = "<module>", .module = "/srv/t.py", .file = "/srv/t.py", .line = 19,
	  .language = FRAME_PYTHON },
};

static struct report_stack torch_stacks[] = {
	{ .api = API_NEW, .bytes = 5000, .allocs = 50, .total_bytes = 6000, .total_allocs = 60,
	  .frames = fwd_b, .nr_frames = 3,
	  .growth = { .trend = TREND_GROWING, .slope = 500, .score = 0.985, .rank = 3 } },
	{ .api = API_MALLOC, .bytes = 4000, .allocs = 4, .total_bytes = 4000, .total_allocs = 4,
	  .frames = imported, .nr_frames = 3, .growth = { .trend = TREND_STABLE } },
	{ .api = API_NEW, .bytes = 3000, .allocs = 30, .total_bytes = 3000, .total_allocs = 30,
	  .frames = loss, .nr_frames = 2,
	  .growth = { .trend = TREND_GROWING, .slope = 300, .score = 0.991, .rank = 1 } },
	{ .api = API_POSIX_MEMALIGN, .bytes = 2000, .allocs = 20, .total_bytes = 2000,
	  .total_allocs = 20, .frames = fwd_c, .nr_frames = 4, .growth = { .trend = TREND_STABLE } },
	{ .api = API_NEW, .bytes = 1000, .allocs = 10, .total_bytes = 1500, .total_allocs = 15,
	  .frames = fwd_a, .nr_frames = 3,
	  .growth = { .trend = TREND_GROWING, .slope = 100, .score = 0.989, .rank = 2 } },
	{ .api = API_MALLOC, .bytes = 7, .allocs = 1, .total_bytes = 7, .total_allocs = 1,
	  .no_stack = true },
};

static struct report torch_report(void)
{
	return (struct report){ .stacks = torch_stacks, .nr_stacks = 6 };
}

TEST(sites_group_sums_and_order)
{
	struct report r = torch_report();
	const struct report_site *s;

	ASSERT(unit__group(&r, SIZE_MAX, SIZE_MAX) == 0);
	ASSERT_EQ_U64(r.nr_sites, 4);
	/* The script's line under torch's Linear.forward: three stacks, the exact sums of theirs. */
	s = &r.sites[0];
	ASSERT_EQ_STR(s->frame->function, "step");
	ASSERT_EQ_U64(s->nr_stacks, 3);
	ASSERT_EQ_U64(s->bytes, 8000);
	ASSERT_EQ_U64(s->allocs, 80);
	ASSERT_EQ_U64(s->total_bytes, 9500);
	ASSERT_EQ_U64(s->total_allocs, 95);
	/* Its growing stacks first, each by bytes: 0 and 4, then 3. */
	ASSERT(s->stacks[0] == 0 && s->stacks[1] == 4 && s->stacks[2] == 3);
	ASSERT_EQ_U64(s->growing, 2);
	ASSERT(s->slope == 600 && s->score == 0.989);
	ASSERT(r.stacks[0].site == 0 && r.stacks[3].site == 0 && r.stacks[4].site == 0);
	/* The import's site is the line that imported. */
	ASSERT_EQ_STR(r.sites[1].frame->function, "<module>");
	ASSERT(r.sites[1].frame->line == 19 && r.sites[1].bytes == 4000);
	ASSERT_EQ_STR(r.sites[2].frame->function, "train");
	/* What could not be captured is one site without a frame. */
	ASSERT(!r.sites[3].frame && r.sites[3].bytes == 7 && r.stacks[5].site == 3);
	ASSERT(!r.sites[1].growing && !r.sites[1].rank && !r.sites[3].rank);
	ASSERT(r.all_stacks);
	for (size_t i = 0; i < r.nr_stacks; i++)
		ASSERT(!r.stacks[i].left_out);
	unit__ungroup(&r);
	return true;
}

/*
 * The most leak-like site first; scores equal to two decimals tie, and the
 * faster growth leads: step (0.989, +600 B/s) before train
 * (0.991, +300 B/s). Apart, the score decides.
 */
TEST(sites_rank_growing)
{
	struct report r = torch_report();

	ASSERT(unit__group(&r, SIZE_MAX, SIZE_MAX) == 0);
	ASSERT(r.sites[0].rank == 1 && r.sites[2].rank == 2);
	unit__ungroup(&r);
	torch_stacks[2].growth.score = 0.999;
	ASSERT(unit__group(&r, SIZE_MAX, SIZE_MAX) == 0);
	torch_stacks[2].growth.score = 0.991;
	ASSERT(r.sites[0].rank == 2 && r.sites[2].rank == 1);
	unit__ungroup(&r);
	return true;
}

/* Left out of the files: beyond the stacks kept per site, and small sites that do not grow. */
TEST(sites_left_out)
{
	struct report r = torch_report();
	struct sites_left_out all, one;

	ASSERT(unit__group(&r, 1, 2) == 0);
	ASSERT(!r.all_stacks);
	ASSERT(r.sites[0].kept == 2 && r.sites[1].kept == 0 && r.sites[2].kept == 1);
	ASSERT(r.sites[3].kept == 0);
	ASSERT(!r.stacks[0].left_out && !r.stacks[4].left_out && r.stacks[3].left_out);
	ASSERT(r.stacks[1].left_out && !r.stacks[2].left_out && r.stacks[5].left_out);
	all = sites__left_out(&r, NULL);
	ASSERT(all.stacks == 3 && all.bytes == 6007 && all.allocs == 25);
	one = sites__left_out(&r, &r.sites[0]);
	ASSERT(one.stacks == 1 && one.bytes == 2000 && one.allocs == 20);
	unit__ungroup(&r);
	return true;
}

/* Native frames: the same line is one site; without a line, the same instruction. */
TEST(sites_native_keys)
{
	struct report_frame a[] = {
		{ .address = 0x11, .function = "strdup", .module = LIBC, .file = "strdup.c", .line = 42 },
		{ .address = 0x21, .function = "parse", .module = "/srv/app", .file = "p.c", .line = 7 },
	};
	struct report_frame b[] = {	/* another call on line 7, another caller */
		{ .address = 0x25, .function = "parse", .module = "/srv/app", .file = "p.c", .line = 7 },
		{ .address = 0x31, .function = "main", .module = "/srv/app", .file = "m.c", .line = 3 },
	};
	struct report_frame c[] = {	/* no line: one site per instruction */
		{ .address = 0x41, .function = "nolines", .module = "/srv/app", .module_offset = 0x41 },
	};
	struct report_frame d[] = {
		{ .address = 0x45, .function = "nolines", .module = "/srv/app", .module_offset = 0x45 },
	};
	struct report_frame e[] = {	/* no frame of its own: the call of the allocator */
		{ .address = 0x51, .function = "g_malloc", .module = "/usr/lib/libglib-2.0.so.0" },
		{ .address = 0x61, .function = "gtk_main", .module = "/usr/lib/libgtk-3.so.0" },
	};
	struct report_stack stacks[] = {
		{ .api = API_MALLOC, .bytes = 50, .allocs = 5, .frames = a, .nr_frames = 2 },
		{ .api = API_CALLOC, .bytes = 40, .allocs = 4, .frames = b, .nr_frames = 2 },
		{ .api = API_MALLOC, .bytes = 30, .allocs = 3, .frames = c, .nr_frames = 1 },
		{ .api = API_MALLOC, .bytes = 20, .allocs = 2, .frames = d, .nr_frames = 1 },
		{ .api = API_MALLOC, .bytes = 10, .allocs = 1, .frames = e, .nr_frames = 2 },
	};
	struct report r = { .stacks = stacks, .nr_stacks = 5 };

	ASSERT(unit__group(&r, SITES_FILE_SITES, SITES_FILE_STACKS) == 0);
	ASSERT_EQ_U64(r.nr_sites, 4);
	ASSERT_EQ_STR(r.sites[0].frame->function, "parse");
	ASSERT(r.sites[0].bytes == 90 && r.sites[0].nr_stacks == 2);
	ASSERT(r.sites[1].frame == &c[0] && r.sites[2].frame == &d[0]);
	ASSERT_EQ_STR(r.sites[3].frame->function, "g_malloc");
	unit__ungroup(&r);
	return true;
}

/* -k: kernel frames; a site is the innermost outside the allocators, one per function. */
TEST(sites_kernel)
{
	static const struct {
		const char *function;
		bool allocator;
	} cases[] = {
		{ "__kmalloc_noprof", true }, { "kmalloc_trace", true },
		{ "kmem_cache_alloc_lru_noprof", true }, { "__alloc_frozen_pages_noprof", true },
		{ "alloc_pages_mpol", true }, { "___slab_alloc", true }, { "pcpu_alloc_noprof", true },
		{ "__vmalloc_node_range_noprof", true }, { "kstrdup", true },
		{ "bpf_trace_run6", true }, { "__traceiter_kmalloc", true },
		{ "alloc_pipe_info", false }, { "allocate_slab", false },
		{ "___kmalloc_large_node", false }, { "d_alloc", false }, { NULL, false },
	};
	struct report_frame k1[] = {
		{ .address = 0x11, .function = "__kmalloc_noprof", .module = "[kernel.kallsyms]",
		  .module_offset = 0x11, .language = FRAME_KERNEL },
		{ .address = 0x21, .function = "alloc_pipe_info", .module = "[kernel.kallsyms]",
		  .module_offset = 0x21, .language = FRAME_KERNEL },
	};
	struct report_frame k2[] = {	/* its other kmalloc, another instruction */
		{ .address = 0x15, .function = "__kmalloc_cache_noprof", .module = "[kernel.kallsyms]",
		  .module_offset = 0x15, .language = FRAME_KERNEL },
		{ .address = 0x29, .function = "alloc_pipe_info", .module = "[kernel.kallsyms]",
		  .module_offset = 0x29, .language = FRAME_KERNEL },
	};
	struct report_stack stacks[] = {
		{ .api = API_KMALLOC, .bytes = 1024, .allocs = 1, .frames = k1, .nr_frames = 2 },
		{ .api = API_KMALLOC, .bytes = 192, .allocs = 1, .frames = k2, .nr_frames = 2 },
	};
	struct report r = { .stacks = stacks, .nr_stacks = 2, .kernel = true };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct report_frame f = { .function = (char *)cases[i].function,
					  .module = "[kernel.kallsyms]", .language = FRAME_KERNEL };

		ASSERT_EQ_U64(kernel_sites__allocator(cases[i].function), cases[i].allocator);
		ASSERT_EQ_U64(sites__own_native(&f, NULL, NULL), cases[i].function && !cases[i].allocator);
	}
	ASSERT(unit__group(&r, SITES_FILE_SITES, SITES_FILE_STACKS) == 0);
	ASSERT_EQ_U64(r.nr_sites, 1);
	ASSERT_EQ_STR(r.sites[0].frame->function, "alloc_pipe_info");
	ASSERT(r.sites[0].bytes == 1216 && r.sites[0].allocs == 2 && r.sites[0].nr_stacks == 2);
	unit__ungroup(&r);
	return true;
}

TEST(sites_empty)
{
	struct report r = { 0 };

	ASSERT(sites__group(&r, SITES_FILE_SITES, SITES_FILE_STACKS) == 0);
	ASSERT(r.nr_sites == 0 && sites__left_out(&r, NULL).stacks == 0);
	free(r.sites);
	free(r.site_stacks);
	return true;
}

/* A stripped program's site falls to a library's frame: which are the runtime's (runtime_frames.h). */
TEST(sites_runtime_frames)
{
	struct report_frame f = { .module = "/usr/lib/x86_64-linux-gnu/libfst.so.22.0.0" };

	ASSERT(!strcmp(runtime_frames__name("std::unique_ptr<std::unordered_set<int, std::hash<int> > > "
					    "fst::make_unique<std::unordered_set<int> >(int)"),
		       "fst::make_unique<std::unordered_set<int> >(int)"));
	ASSERT(!strcmp(runtime_frames__name("void fst::Minimize<fst::StdArc>(fst::MutableFst<A>*, float)"),
		       "fst::Minimize<fst::StdArc>(fst::MutableFst<A>*, float)"));
	ASSERT(!strcmp(runtime_frames__name("operator new(unsigned long)"), "operator new(unsigned long)"));
	ASSERT(!strcmp(runtime_frames__name("fst::Foo::Read(std::istream&) const"),
		       "fst::Foo::Read(std::istream&) const"));
	/* In a library of the work: its own functions are sites, the containers' code in it not. */
	f.function = "fst::internal::VectorFstImpl<S>::Read(std::istream&, fst::FstReadOptions const&)";
	ASSERT(!runtime_frames__internal(&f));
	f.function = "std::unique_ptr<S> fst::make_unique<S>(int)";
	ASSERT(!runtime_frames__internal(&f));
	f.function = "void std::vector<S, std::allocator<S> >::_M_realloc_insert<S const&>(S*, S const&)";
	ASSERT(runtime_frames__internal(&f));
	f.function = "std::_Rb_tree_iterator<P> std::_Rb_tree<K, P>::_M_emplace_hint_unique<K>(K const&)";
	ASSERT(runtime_frames__internal(&f));
	f.function = "__gnu_cxx::new_allocator<int>::allocate(unsigned long, void const*)";
	ASSERT(runtime_frames__internal(&f));
	/* The runtime's objects, whatever the function. */
	f.function = "__libc_start_call_main";
	f.module = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	ASSERT(runtime_frames__internal(&f));
	f.module = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30";
	ASSERT(runtime_frames__internal(&f));
	f.module = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2";
	ASSERT(runtime_frames__internal(&f));
	f.module = NULL;	/* a JIT's: named by its perf map */
	f.function = "jitted_fn";
	ASSERT(!runtime_frames__internal(&f));
	return true;
}

/*
 * Many stacks over a few site frames (equal frames as copies, and as one
 * frame lent to several stacks), growing at random: each site's stacks are
 * the growing ones first, then the others, each by index; every stack is
 * in its frame's site and in one site only; the sites by bytes.
 */
TEST(sites_group_order_many)
{
	static struct report_frame frames[8];
	struct report_stack *st = calloc(3000, sizeof(*st));
	struct report r = { .stacks = st, .nr_stacks = 3000 };
	uint32_t seed = 12345;
	bool *seen = calloc(3000, sizeof(*seen));

	ASSERT(st && seen);
	for (int k = 0; k < 8; k++)
		frames[k] = (struct report_frame){ .function = k / 2 % 2 ? "leak" : "cache",
						   .file = "/srv/app.c", .line = 10 + k / 2,
						   .module = "/srv/app", .language = FRAME_NATIVE };
	for (size_t i = 0; i < r.nr_stacks; i++) {
		seed = seed * 1103515245 + 12345;
		st[i].bytes = st[i].allocs = 3000 - i;
		/* frames k and k + 1 of an even k are copies: the same site */
		st[i].site_frame = &frames[(seed >> 16) % 8];
		st[i].growth.trend = (seed >> 8) % 3 ? TREND_STABLE : TREND_GROWING;
	}
	ASSERT(sites__group(&r, SIZE_MAX, SIZE_MAX) == 0);
	ASSERT_EQ_U64(r.nr_sites, 4);
	for (size_t s = 0; s < r.nr_sites; s++) {
		const struct report_site *site = &r.sites[s];

		for (size_t j = 0; j < site->nr_stacks; j++) {
			const struct report_stack *a = &st[site->stacks[j]];

			ASSERT(!seen[site->stacks[j]]);
			seen[site->stacks[j]] = true;
			ASSERT(a->site == s && a->site_frame->line == site->frame->line &&
			       !strcmp(a->site_frame->function, site->frame->function));
			if (j) {
				const struct report_stack *b = &st[site->stacks[j - 1]];
				bool ga = a->growth.trend == TREND_GROWING;
				bool gb = b->growth.trend == TREND_GROWING;

				ASSERT(gb > ga || (gb == ga && site->stacks[j - 1] < site->stacks[j]));
			}
		}
		ASSERT(!s || r.sites[s - 1].bytes >= site->bytes);
	}
	for (size_t i = 0; i < r.nr_stacks; i++)
		ASSERT(seen[i]);
	for (size_t i = 0; i < r.nr_stacks; i++)
		st[i].site_frame = NULL;
	free(r.sites);
	free(r.site_stacks);
	free(st);
	free(seen);
	return true;
}

/*
 * Each stack's group is the first stack with an equal site frame, however
 * many sites there are: 5,000 of them grow the table of groups (sized by
 * the groups, not the stacks) many times over. Equal frames are separate
 * copies; some stacks carry their key (a kept site frame's), some not.
 */
TEST(sites_stack_groups_many_sites)
{
	enum { NR_SITES = 5000, NR_STACKS = 12000 };
	struct report_frame *frames = calloc(2 * NR_SITES, sizeof(*frames));
	struct report_stack *st = calloc(NR_STACKS, sizeof(*st));
	size_t *group = calloc(NR_STACKS, sizeof(*group)), *first = calloc(NR_SITES, sizeof(*first));
	struct report r = { .stacks = st, .nr_stacks = NR_STACKS };
	uint32_t seed = 777;

	ASSERT(frames && st && group && first);
	for (size_t k = 0; k < 2 * NR_SITES; k++)	/* k and k + NR_SITES: one site */
		frames[k] = (struct report_frame){ .function = "f", .file = "/srv/app.c",
						   .line = 1 + (int)(k % NR_SITES),
						   .module = "/srv/app", .language = FRAME_NATIVE };
	for (size_t k = 0; k < NR_SITES; k++)
		first[k] = SIZE_MAX;
	for (size_t i = 0; i < NR_STACKS; i++) {
		size_t site;

		seed = seed * 1103515245 + 12345;
		site = (seed >> 8) % NR_SITES;
		st[i].site_frame = &frames[site + ((seed >> 4) & 1) * NR_SITES];
		if ((seed >> 5) & 1) {
			st[i].site_keyed = true;
			st[i].site_key = sites__key(st[i].site_frame);
		}
		if (first[site] == SIZE_MAX)
			first[site] = i;
	}
	ASSERT(sites__stack_groups(&r, group) == 0);
	for (size_t i = 0; i < NR_STACKS; i++)
		ASSERT(group[i] == first[st[i].site_frame->line - 1]);
	free(frames);
	free(st);
	free(group);
	free(first);
	return true;
}
