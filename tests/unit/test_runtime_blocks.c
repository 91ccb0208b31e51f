// SPDX-License-Identifier: GPL-2.0
/* analyze/runtime_blocks.c: the runtime's own blocks, and their sites after the program's. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/runtime_blocks.h"
#include "analyze/runtime_frames.h"
#include "analyze/sites.h"
#include "model/report.h"
#include "report/report_text.h"
#include "helpers.h"
#include "unit.h"

/* A run of libc's functions, innermost first, as the symbolizer names them. */
static enum report_runtime libc_kind(const char *const *names, size_t n)
{
	enum report_runtime kind = RUNTIME_NONE;
	bool veto = false;

	for (size_t i = 0; i < n; i++)
		runtime_blocks__libc_step(names[i], &veto, &kind);
	return kind;
}

#define LIBC_KIND(...) libc_kind((const char *const[]){ __VA_ARGS__ }, \
				 sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(char *))

TEST(runtime_blocks_libc)
{
	/* stdout's buffer under printf (sqlite3's fputs, gawk's fwrite alike). */
	ASSERT_EQ_U64(LIBC_KIND("_IO_file_doallocate", "_IO_doallocbuf", "_IO_file_overflow",
				"_IO_file_xsputn", "__vfprintf_internal", "printf"), RUNTIME_STDIO);
	/* gawk's setlocale(LC_ALL, ""), with and without libc's debug names. */
	ASSERT_EQ_U64(LIBC_KIND("read_alias_file", "_nl_expand_alias", "_nl_find_locale",
				"setlocale"), RUNTIME_LOCALE);
	ASSERT_EQ_U64(LIBC_KIND(NULL, NULL, "setlocale"), RUNTIME_LOCALE);
	ASSERT_EQ_U64(LIBC_KIND("_nl_load_locale_from_archive", "_nl_find_locale", "setlocale"),
		      RUNTIME_LOCALE);
	/* The program's to free, though the same code made it: newlocale's, iconv_open's. */
	ASSERT_EQ_U64(LIBC_KIND("_nl_intern_locale_data", "_nl_load_locale", "_nl_find_locale",
				"__newlocale"), RUNTIME_NONE);
	ASSERT_EQ_U64(LIBC_KIND("__gconv_open", "iconv_open"), RUNTIME_NONE);
	ASSERT_EQ_U64(LIBC_KIND("__gconv_find_shlib", "find_module", "__gconv_open"), RUNTIME_NONE);
	ASSERT_EQ_U64(LIBC_KIND("__tzfile_read", "tzset_internal", "__tz_convert", "localtime"),
		      RUNTIME_TZ);
	ASSERT_EQ_U64(LIBC_KIND("__nss_module_allocate", "__nss_module_load", "getpwnam_r"),
		      RUNTIME_NSS);
	ASSERT_EQ_U64(LIBC_KIND("getpwnam"), RUNTIME_NSS);
	/* libc's functions whose blocks are the program's: fopen's FILE, strdup's copy. */
	ASSERT_EQ_U64(LIBC_KIND("__fopen_internal", "_IO_new_fopen"), RUNTIME_NONE);
	ASSERT_EQ_U64(LIBC_KIND("__strdup"), RUNTIME_NONE);
	ASSERT_EQ_U64(LIBC_KIND("getpwnam_r"), RUNTIME_NONE);
	ASSERT(runtime_blocks__py_init("Py_InitializeFromConfig"));
	ASSERT(!runtime_blocks__py_init("Py_BytesMain") && !runtime_blocks__py_init(NULL));
	return true;
}

TEST(runtime_blocks_objects)
{
	ASSERT(runtime_frames__object("/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30"));
	ASSERT(runtime_frames__object("/lib64/ld-linux-x86-64.so.2"));
	ASSERT(!runtime_frames__object("/usr/lib/x86_64-linux-gnu/libfst.so.22.0.0"));
	ASSERT(!runtime_frames__object(NULL));
	ASSERT(runtime_frames__loader("/lib64/ld-linux-x86-64.so.2"));
	ASSERT(!runtime_frames__loader("/usr/lib/x86_64-linux-gnu/libc.so.6"));
	ASSERT(runtime_frames__libc("/usr/lib/x86_64-linux-gnu/libc.so.6"));
	ASSERT(!runtime_frames__libc("/usr/lib/x86_64-linux-gnu/libcrypt.so.1"));
	ASSERT_EQ_U64(runtime_blocks__merge(RUNTIME_NONE, RUNTIME_STDIO, true), RUNTIME_STDIO);
	ASSERT_EQ_U64(runtime_blocks__merge(RUNTIME_STDIO, RUNTIME_STDIO, false), RUNTIME_STDIO);
	ASSERT_EQ_U64(runtime_blocks__merge(RUNTIME_STDIO, RUNTIME_LOCALE, false), RUNTIME_SEVERAL);
	ASSERT_EQ_U64(runtime_blocks__merge(RUNTIME_STDIO, RUNTIME_NONE, false), RUNTIME_NONE);
	ASSERT_EQ_U64(runtime_blocks__merge(RUNTIME_NONE, RUNTIME_STDIO, false), RUNTIME_NONE);
	for (int k = RUNTIME_INIT; k < RUNTIME__COUNT; k++)
		ASSERT(runtime_blocks__what(k) && runtime_blocks__key(k));
	ASSERT(!runtime_blocks__what(RUNTIME_NONE) && !runtime_blocks__key(RUNTIME_NONE));
	return true;
}

/*
 * fstminimize's: libstdc++'s 72,704-byte start-up block is its biggest,
 * yet its site comes after the program's smaller ones; a site of the
 * program's with one stack of stdout's buffer among its own is the program's.
 */
TEST(runtime_blocks_sites_last)
{
	struct report_frame pool[] = {
		{ .address = 0x10, .module = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30",
		  .module_offset = 0xa57ba },
	};
	struct report_frame own[] = {
		{ .address = 0x20, .function = "main", .file = "/src/app.c", .line = 7,
		  .module = "/usr/local/bin/app" },
	};
	struct report_stack stacks[] = {
		{ .api = API_MALLOC, .bytes = 72704, .allocs = 1, .frames = pool, .nr_frames = 1,
		  .site_runtime = RUNTIME_INIT },
		{ .api = API_MALLOC, .bytes = 4096, .allocs = 1, .frames = own, .nr_frames = 1,
		  .site_runtime = RUNTIME_STDIO },
		{ .api = API_MALLOC, .bytes = 936, .allocs = 9, .frames = own, .nr_frames = 1 },
	};
	struct report r = { .stacks = stacks, .nr_stacks = 3 };

	ASSERT(unit__group(&r, SITES_FILE_SITES, SITES_FILE_STACKS) == 0);
	ASSERT_EQ_U64(r.nr_sites, 2);
	ASSERT_EQ_STR(r.sites[0].frame->function, "main");
	ASSERT_EQ_U64(r.sites[0].runtime, RUNTIME_NONE);
	ASSERT(r.sites[0].bytes == 5032 && r.sites[0].allocs == 10);
	ASSERT_EQ_U64(r.sites[1].runtime, RUNTIME_INIT);
	ASSERT_EQ_U64(r.sites[1].bytes, 72704);
	unit__ungroup(&r);
	r.sort_count = true;	/* --sort count too */
	ASSERT(unit__group(&r, SITES_FILE_SITES, SITES_FILE_STACKS) == 0);
	ASSERT_EQ_U64(r.sites[1].runtime, RUNTIME_INIT);
	unit__ungroup(&r);
	return true;
}

/*
 * Streams opened and never closed: a stack holding more stdio buffers than
 * libc's three standard streams have is the program's, its site among the
 * program's; three or fewer stay libc's.
 */
TEST(runtime_blocks_streams_left_open)
{
	struct report_frame open_log = { .address = 0x40, .function = "open_log",
					  .file = "/src/log.c", .line = 8,
					  .module = "/usr/local/bin/app" };
	struct report_frame emit = { .address = 0x50, .function = "emit", .file = "/src/app.c",
				     .line = 9, .module = "/usr/local/bin/app" };
	struct report_stack stacks[] = {
		{ .api = API_MALLOC, .bytes = 819200, .allocs = 200, .frames = &open_log,
		  .nr_frames = 1, .site_runtime = RUNTIME_STDIO },
		{ .api = API_MALLOC, .bytes = 4096, .allocs = 1, .frames = &emit, .nr_frames = 1,
		  .site_runtime = RUNTIME_STDIO },
	};
	struct report r = { .stacks = stacks, .nr_stacks = 2 };

	ASSERT_EQ_U64(runtime_blocks__held(RUNTIME_STDIO, 3), RUNTIME_STDIO);
	ASSERT_EQ_U64(runtime_blocks__held(RUNTIME_STDIO, 4), RUNTIME_NONE);
	ASSERT_EQ_U64(runtime_blocks__held(RUNTIME_LOCALE, 400), RUNTIME_LOCALE);
	ASSERT(unit__group(&r, SITES_FILE_SITES, SITES_FILE_STACKS) == 0);
	ASSERT_EQ_U64(r.nr_sites, 2);
	ASSERT_EQ_STR(r.sites[0].frame->function, "open_log");
	ASSERT_EQ_U64(r.sites[0].runtime, RUNTIME_NONE);
	ASSERT_EQ_U64(r.stacks[0].site_runtime, RUNTIME_NONE);
	ASSERT_EQ_U64(r.sites[1].runtime, RUNTIME_STDIO);
	unit__ungroup(&r);
	return true;
}

/*
 * -T 1 on a program's site and two of the runtime's: the text lists the
 * runtime's after it, a line each under what they are; the header says
 * they come last.
 */
TEST(runtime_blocks_text)
{
	struct report_frame pool = { .address = 0x10,
				     .module = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30",
				     .module_offset = 0xa57ba };
	struct report_frame own = { .address = 0x20, .function = "main", .file = "/src/app.c",
				    .line = 7, .module = "/usr/local/bin/app" };
	struct report_frame put = { .address = 0x30, .function = "emit", .file = "/src/app.c",
				    .line = 9, .module = "/usr/local/bin/app" };
	struct report_stack stacks[] = {
		{ .api = API_MALLOC, .bytes = 72704, .allocs = 1, .frames = &pool, .nr_frames = 1,
		  .site_runtime = RUNTIME_INIT, .site_preinit = true },
		{ .api = API_MALLOC, .bytes = 4096, .allocs = 1, .frames = &put, .nr_frames = 1,
		  .site_runtime = RUNTIME_STDIO },
		{ .api = API_MALLOC, .bytes = 936, .allocs = 9, .frames = &own, .nr_frames = 1 },
	};
	struct report r = { .stacks = stacks, .nr_stacks = 3, .top = 1, .pid = 7 };
	char *out;

	r.totals.outstanding_bytes = 72704 + 4096 + 936;
	r.totals.outstanding_allocs = 11;
	out = unit__grouped_render(report_text__write, &r);
	ASSERT(out);
	ASSERT(strstr(out, "Top 1 of 3 sites by outstanding bytes (3 stacks in all, grouped by their "
			   "innermost frame of the program's own code; the runtime's own blocks, which "
			   "no line of the program's made, after the others):\n\nSite 1: 936 bytes in 9 "
			   "allocations from 1 stack, at main (/src/app.c:7) [app]\n"));
	ASSERT(strstr(out, "\nThe runtime's own blocks, after the sites above, by what they are:\n"
			   "  the runtime's own start-up block: allocated by a runtime library's "
			   "initializer"));
	ASSERT(strstr(out, "\n    Site 2: 71.0 KiB (72,704 bytes) in 1 allocation, at "
			   "libstdc++.so.6.0.30+0xa57ba\n  libc's buffer of a stdio stream"));
	ASSERT(strstr(out, "\n    Site 3: 4.0 KiB (4,096 bytes) in 1 allocation, at emit (/src/app.c:9) "
			   "[app]\n"));
	free(out);
	/* A site at a library's frame (no frame of the program's): the header says so. */
	own.module = "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0.8.6";
	own.function = "sqlite3Malloc";
	out = unit__grouped_render(report_text__write, &r);
	ASSERT(out && strstr(out, "of the program's own code, else by a library's (or the "
				  "interpreter's) that made the block; the runtime's"));
	free(out);
	return true;
}
