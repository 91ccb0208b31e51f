// SPDX-License-Identifier: GPL-2.0
/* report.c and the writers (text, JSON, folded), and outfile.c. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "report/outfile.h"
#include "analyze/sites.h"
#include "model/report.h"
#include "helpers.h"
#include "unit.h"
#include "report/report_folded.h"
#include "report/report_json.h"
#include "report/report_text.h"

#define PYTHON "/usr/bin/python3"

/* A hand-made report exercising every kind of frame and stack. */
static struct report_frame frames_leak[] = {
	{ .address = 0x55d0c2a4b3b2, .function = "leak_site", .symbol = "leak_site.part.0",
	  .module = "/srv/app", .module_offset = 0x13b2, .file = "app.c", .line = 42 },
	{ .address = 0x55d0c2a4b480, .function = "main", .module = "/srv/app",
	  .module_offset = 0x1480, .file = "app.c", .line = 90 },
	{ .address = 0x7f00000271ca, .function = "__libc_start_call_main",
	  .module = "/usr/lib/x86_64-linux-gnu/libc.so.6", .module_offset = 0x271ca,
	  .file = "../sysdeps/nptl/libc_start_call_main.h", .line = 58 },
};

static struct report_frame frames_mixed[] = {
	{ .address = 0x55d0c2a4b500, .function = "helper", .module = "/srv/app",
	  .module_offset = 0x1500, .file = "util.h", .line = 7, .inlined = true },
	{ .address = 0x55d0c2a4b500, .function = "outer", .module = "/srv/app",
	  .module_offset = 0x1500, .file = "app.c", .line = 60 },
	{ .address = 0x55d0c2a4b600, .function = "nolines", .module = "/srv/app",
	  .module_offset = 0x1600 },
	{ .address = 0x7f1200001a2b, .module = "/opt/lib/libfoo.so", .module_offset = 0x1a2b },
	{ .address = 0x7f12deadbeef },
};

static struct report_frame frames_deep[] = {
	{ .address = 0x401000, .function = "deep", .module = "/srv/app", .module_offset = 0x1000 },
};

static struct report_stack sample_stacks[] = {
	{ .api = API_MALLOC, .bytes = 2097152, .allocs = 512, .total_bytes = 4194304,
	  .total_allocs = 1024, .frames = frames_leak, .nr_frames = 3 },
	{ .api = API_NEW_ARRAY, .bytes = 4096, .allocs = 1, .total_bytes = 4096,
	  .total_allocs = 1, .frames = frames_mixed, .nr_frames = 5 },
	{ .api = API_CALLOC, .bytes = 100, .allocs = 1, .total_bytes = 100, .total_allocs = 1,
	  .no_stack = true },
	{ .api = API_MALLOC, .bytes = 10, .allocs = 2, .total_bytes = 10, .total_allocs = 2,
	  .frames = frames_deep, .nr_frames = 1, .truncated = true },
};

static struct report sample(void)
{
	struct report r = {
		.pid = 1234,
		.command = "python3 train.py",
		.duration_s = 12.5,
		.top = 2,
		.totals = { .outstanding_bytes = 2101358, .outstanding_allocs = 516,
			    .allocs = 56010, .frees = 55494 },
		.stacks = sample_stacks,
		.nr_stacks = 4,
	};

	r.totals.counters[CNT_ALLOCS_MAP_FULL] = 12;
	r.totals.counters[CNT_STACK_ERRORS] = 1;
	r.totals.counters[CNT_REPLACED] = 3;
	r.totals.counters[CNT_EXECS] = 1;
	return r;
}

/* The writer's whole output; *err gets its return value. */
/* ------------------------------------------------------------------ names */

TEST(report_api_names)
{
	static const char *const want[API__COUNT] = {
		"malloc", "calloc", "realloc", "reallocarray", "posix_memalign",
		"aligned_alloc", "memalign", "valloc", "pvalloc", "mmap", "mremap",
		"xallocx", "new", "new[]", "kmalloc", "kmem_cache_alloc", "alloc_pages",
		"alloc_percpu", "free", "munmap", "delete", "delete[]",
	};

	for (uint32_t i = 0; i < API__COUNT; i++)
		ASSERT_EQ_STR(report__api_name(i), want[i]);
	ASSERT_EQ_STR(report__api_name(API__COUNT), "?");
	ASSERT_EQ_STR(report__api_name(UINT32_MAX), "?");
	return true;
}

/* Titles name what was traced: a process by its pid, -k the kernel. */
TEST(report_target_names)
{
	struct report r = { .pid = 1234 };
	char buf[REPORT_TARGET_LEN];

	ASSERT_EQ_STR(report__target(&r, buf), "pid 1234");
	r.kernel = true;
	r.pid = 0;
	ASSERT_EQ_STR(report__target(&r, buf), "the kernel");
	return true;
}

TEST(report_counter_names_and_fixes)
{
	ASSERT_EQ_STR(report__counter_name(CNT_ALLOCS_MAP_FULL), "allocs_map_full");
	ASSERT_EQ_STR(report__counter_name(CNT_SITES_MAP_FULL), "sites_map_full");
	ASSERT_EQ_STR(report__counter_name(CNT_STACK_ERRORS), "stack_errors");
	ASSERT_EQ_STR(report__counter_name(CNT_MISSED_RETURNS), "missed_returns");
	ASSERT_EQ_STR(report__counter_name(CNT_STATE_ERRORS), "state_errors");
	ASSERT_EQ_STR(report__counter_name(CNT_REPLACED), "replaced");
	ASSERT(!report__counter_name(CNT_STOP_REQUESTS));
	ASSERT(!report__counter_name(CNT_EXECS));
	ASSERT(!report__counter_name(CNT__COUNT));

	ASSERT_EQ_STR(report__counter_fix(CNT_ALLOCS_MAP_FULL), "--max-allocs");
	ASSERT_EQ_STR(report__counter_fix(CNT_SITES_MAP_FULL), "--stack-storage-size");
	ASSERT(!report__counter_fix(CNT_STACK_ERRORS));
	ASSERT_EQ_STR(report__counter_fix(CNT_STACKS_MAP_FULL), "--stack-storage-size");
	ASSERT(!report__counter_fix(CNT_MISSED_RETURNS));
	ASSERT(!report__counter_fix(CNT_REPLACED));
	ASSERT(!report__counter_fix(CNT_EXECS));
	return true;
}

/* Drops add up; of them, the allocations not tracked; normal events are neither. */
TEST(report_drops_and_untracked)
{
	struct report_totals t = { 0 };

	t.counters[CNT_ALLOCS_MAP_FULL] = 5;
	t.counters[CNT_MISSED_RETURNS] = 7;
	t.counters[CNT_STACKS_MAP_FULL] = 11;
	t.counters[CNT_UNTRACKED_FREES] = 13;
	t.counters[CNT_EXECS] = 1;
	ASSERT_EQ_U64(report__drops(&t), 5 + 7 + 11);
	ASSERT_EQ_U64(report__untracked(&t), 5 + 7);
	return true;
}

/* The allocator from the file that provides malloc, as distributions name it. */
TEST(report_allocator_of)
{
	ASSERT(report__allocator_of("/usr/lib/x86_64-linux-gnu/libc.so.6") == ALLOCATOR_GLIBC);
	ASSERT(report__allocator_of("/lib64/libc-2.17.so") == ALLOCATOR_GLIBC);
	ASSERT(report__allocator_of("/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4") ==
	       ALLOCATOR_TCMALLOC);
	ASSERT(report__allocator_of("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2") == ALLOCATOR_JEMALLOC);
	ASSERT(report__allocator_of("/srv/app") == ALLOCATOR_UNKNOWN);	/* static */
	ASSERT(report__allocator_of("/lib/ld-musl-x86_64.so.1") == ALLOCATOR_UNKNOWN);
	ASSERT(report__allocator_of(NULL) == ALLOCATOR_UNKNOWN);
	ASSERT_EQ_STR(report__allocator_name(ALLOCATOR_TCMALLOC), "tcmalloc");
	ASSERT(!report__allocator_name(ALLOCATOR_UNKNOWN));
	return true;
}

TEST(report_human_size)
{
	static const struct {
		uint64_t bytes;
		const char *want;
	} cases[] = {
		{ 0, "0 B" },
		{ 512, "512 B" },
		{ 1023, "1023 B" },
		{ 1024, "1.0 KiB" },
		{ 1536, "1.5 KiB" },
		{ 12ull << 20, "12.0 MiB" },
		{ 3435973837ull, "3.2 GiB" },
		{ 1048575, "1.0 MiB" },	/* not "1024.0 KiB" */
		{ 1048000, "1023.4 KiB" },
		{ 5ull << 40, "5.0 TiB" },
		{ UINT64_MAX, "16.0 EiB" },
	};
	char buf[32];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ASSERT_EQ_STR(report__human_size(cases[i].bytes, buf, sizeof(buf)), cases[i].want);
	return true;
}

TEST(report_free_owns_strings)
{
	struct report *r = calloc(1, sizeof(*r));

	ASSERT(r);
	r->stacks = calloc(1, sizeof(*r->stacks));
	ASSERT(r->stacks);
	r->nr_stacks = 1;
	r->stacks[0].frames = calloc(2, sizeof(struct report_frame));
	ASSERT(r->stacks[0].frames);
	r->stacks[0].nr_frames = 2;
	r->stacks[0].frames[0].function = strdup("f");
	r->stacks[0].frames[0].module = strdup("/m");
	r->stacks[0].frames[1].file = strdup("x.c");
	r->command = "borrowed, not freed";
	report__free(r);	/* leaks or double frees show under valgrind/ASan */
	report__free(NULL);
	return true;
}

/* ----------------------------------------------------------------- folded */

TEST(report_folded_sample)
{
	struct report r = sample();
	int err = -1;
	char *out = unit__render(report_folded__write, &r, &err);

	ASSERT(out);
	ASSERT(err == 0);
	ASSERT_EQ_STR(out,
		      "__libc_start_call_main;main;leak_site;malloc 2097152\n"
		      "0x7f12deadbeef;libfoo.so+0x1a2b;nolines;outer;helper;new[] 4096\n"
		      "[stack unavailable];calloc 100\n"
		      "[truncated];deep;malloc 10\n");
	free(out);
	return true;
}

TEST(report_folded_merges_and_sanitizes)
{
	struct report_frame a[] = {
		{ .address = 0x1001, .function = "f" },
		{ .address = 0x2001, .function = "main" },
	};
	struct report_frame b[] = {	/* another call site of f on the same line */
		{ .address = 0x1009, .function = "f" },
		{ .address = 0x2001, .function = "main" },
	};
	struct report_frame odd[] = {
		{ .address = 0x3001, .function = "operator;weird\nname" },
		{ .address = 0x4001, .module = "/lib/semi;colon.so", .module_offset = 0x10 },
	};
	struct report_stack stacks[] = {
		{ .api = API_MALLOC, .bytes = 30, .allocs = 1, .frames = a, .nr_frames = 2 },
		{ .api = API_MALLOC, .bytes = 20, .allocs = 1, .frames = odd, .nr_frames = 2 },
		{ .api = API_MALLOC, .bytes = 15, .allocs = 1, .frames = b, .nr_frames = 2 },
		{ .api = API_CALLOC, .bytes = 5, .allocs = 1, .frames = b, .nr_frames = 2 },
		{ .api = API_MALLOC, .bytes = 1, .allocs = 1, .no_stack = true },
		{ .api = API_MALLOC, .bytes = 2, .allocs = 1, .no_stack = true },
	};
	struct report r = { .stacks = stacks, .nr_stacks = 6 };
	int err = -1;
	char *out = unit__render(report_folded__write, &r, &err);

	ASSERT(out);
	ASSERT(err == 0);
	ASSERT_EQ_STR(out,
		      "main;f;malloc 45\n"
		      "semi:colon.so+0x10;operator:weird name;malloc 20\n"
		      "main;f;calloc 5\n"
		      "[stack unavailable];malloc 3\n");
	free(out);
	return true;
}

TEST(report_folded_empty)
{
	struct report r = { 0 };
	int err = -1;
	char *out = unit__render(report_folded__write, &r, &err);

	ASSERT(out);
	ASSERT(err == 0);
	ASSERT_EQ_STR(out, "");
	free(out);
	return true;
}

/* ------------------------------------------------------------------- text */

/* The text after the "[HH:MM:SS]" clock, which changes from run to run. */
static const char *after_clock(const char *out)
{
	const char *p = strchr(out, ']');

	return p ? p + 1 : out;
}

TEST(report_text_sample)
{
	struct report r = sample();
	int err = -1;
	char *out;

	ASSERT(unit__group(&r, SITES_FILE_SITES, SITES_FILE_STACKS) == 0);
	out = unit__render(report_text__write, &r, &err);
	unit__ungroup(&r);
	ASSERT(out);
	ASSERT(err == 0);
	ASSERT(out[0] == '[' && out[3] == ':' && out[6] == ':' && out[9] == ']');
	ASSERT_EQ_STR(after_clock(out),
		      " memleakbpf: pid 1234 (python3 train.py), 12.5 s traced\n"
		      "Outstanding: 2.0 MiB in 516 allocations (56,010 allocations, 55,494 frees since tracing began)\n"
		      "Top 2 of 4 sites by outstanding bytes (4 stacks in all, grouped by their innermost frame of the program's own code):\n"
		      "\n"
		      "Site 1: 2.0 MiB (2,097,152 bytes) in 512 allocations from 1 stack, at leak_site (app.c:42) [app]\n"
		      "\n"
		      "  2.0 MiB (2,097,152 bytes) in 512 allocations from malloc\n"
		      "      #0 leak_site (app.c:42) [app]\n"
		      "      #1 main (app.c:90) [app]\n"
		      "      #2 __libc_start_call_main (../sysdeps/nptl/libc_start_call_main.h:58) [libc.so.6]\n"
		      "\n"
		      "Site 2: 4.0 KiB (4,096 bytes) in 1 allocation from 1 stack, at helper (util.h:7, inlined) [app]\n"
		      "\n"
		      "  4.0 KiB (4,096 bytes) in 1 allocation from new[]\n"
		      "      #0 helper (util.h:7, inlined)\n"
		      "      #1 outer (app.c:60) [app]\n"
		      "      #2 nolines [app]\n"
		      "      #3 libfoo.so+0x1a2b\n"
		      "      #4 0x7f12deadbeef [unknown]\n"
		      "\n"
		      "Dropped: 12 allocations not tracked: live-allocation map full (raise --max-allocs)\n"
		      "Dropped: 1 allocation without a stack: the user stack could not be read\n"
		      "Dropped: 3 frees missed: a new block reused a still-tracked address\n");
	free(out);
	return true;
}

/*
 * Stack drops while few stacks were live are the sweep's, not the room's:
 * the line says so; the others, that the live stacks outgrew the room.
 */
TEST(report_text_stack_drops_by_cause)
{
	struct report r = sample();
	char *out;
	int err;

	r.totals.counters[CNT_STACKS_MAP_FULL] = 40;
	r.totals.stacks_outran = 30;
	r.totals.stacks_live_max = 3;
	r.totals.stack_room = 16384;
	r.totals.sweep_rate = 300000;
	ASSERT(unit__group(&r, SITES_FILE_SITES, SITES_FILE_STACKS) == 0);
	out = unit__render(report_text__write, &r, &err);
	unit__ungroup(&r);
	ASSERT(out);
	ASSERT(strstr(out, "Dropped: 30 allocations without a stack: new stacks came faster than the "
		      "sweep let go of freed ones (at most 3 of the room's 16,384 stacks live at a "
		      "sweep; it lets go of 300,000 a second of its CPU) (raise "
		      "--stack-storage-size)\n"
		      "Dropped: 10 allocations without a stack: stack map full: the live stacks "
		      "outgrew the room (raise --stack-storage-size)\n"));
	free(out);
	return true;
}

/* A site of many stacks shows its first ones, and says what the others hold. */
TEST(report_text_site_of_many_stacks)
{
	struct report_frame site[] = {
		{ .address = 0x10, .function = "parse", .module = "/srv/app", .file = "p.c", .line = 7 },
	};
	struct report_frame callers[5][2];
	struct report_stack stacks[5];
	struct report r = { .pid = 1, .final = true, .stacks = stacks, .nr_stacks = 5 };
	char *out;

	for (int i = 0; i < 5; i++) {
		callers[i][0] = site[0];
		callers[i][1] = (struct report_frame){ .address = 0x100 + i, .function = "caller",
						       .module = "/srv/app", .file = "c.c",
						       .line = 10 + i };
		stacks[i] = (struct report_stack){ .api = API_MALLOC, .bytes = 500 - i * 100,
						   .allocs = 5 - i, .frames = callers[i],
						   .nr_frames = 2 };
	}
	ASSERT(unit__group(&r, SITES_FILE_SITES, SITES_FILE_STACKS) == 0);
	out = unit__render(report_text__write, &r, NULL);
	unit__ungroup(&r);
	ASSERT(out);
	ASSERT(strstr(out, "\n1 site (5 stacks in all, grouped by their innermost frame of the program's own code):\n"
			   "\nSite 1: 1.5 KiB (1,500 bytes) in 15 allocations from 5 stacks, at parse (p.c:7) [app]\n"
			   "\n  500 bytes in 5 allocations from malloc\n"));
	ASSERT(strstr(out, "\n  300 bytes in 3 allocations from malloc\n"
			   "      #0 parse (p.c:7) [app]\n"
			   "      #1 caller (c.c:12) [app]\n"
			   "  and 2 more stacks: 300 B in 3 allocations\n"));
	ASSERT(!strstr(out, "c.c:13"));
	free(out);
	/* Between reports: one line per site, no stacks. */
	r.final = false;
	r.brief = true;
	ASSERT(unit__group(&r, SITES_FILE_SITES, SITES_FILE_STACKS) == 0);
	out = unit__render(report_text__write, &r, NULL);
	unit__ungroup(&r);
	ASSERT(out);
	ASSERT(strstr(out, "code):\nSite 1: 1.5 KiB (1,500 bytes) in 15 allocations from 5 stacks, at parse (p.c:7) [app]\n"
			   "(Each site's biggest stacks: in the final report, or now on SIGUSR1.)\n"));
	ASSERT(!strstr(out, "from malloc") && !strstr(out, "#0"));
	free(out);
	return true;
}

TEST(report_text_all_final_older)
{
	struct report r = sample();
	int err = -1;
	char *out;

	r.top = 0;
	r.final = true;
	r.older_ms = 5000;
	r.command = NULL;
	memset(r.totals.counters, 0, sizeof(r.totals.counters));
	r.totals.counters[CNT_EXECS] = 4;
	ASSERT(unit__group(&r, SITES_FILE_SITES, SITES_FILE_STACKS) == 0);
	out = unit__render(report_text__write, &r, &err);
	unit__ungroup(&r);
	ASSERT(out);
	ASSERT(err == 0);
	ASSERT(strstr(out, "] memleakbpf: Final report: pid 1234, 12.5 s traced\n"));
	/* Totals cover every live block; the stacks only the old ones. */
	ASSERT(strstr(out, "\nStacks below count only allocations older than 5,000 ms.\n"));
	ASSERT(strstr(out, "\nAll 4 sites by outstanding bytes (4 stacks in all,"));
	ASSERT(strstr(out, "\nSite 3: 100 bytes in 1 allocation from 1 stack, at [stack unavailable]\n"
			   "\n  100 bytes in 1 allocation from calloc\n"
			   "      [stack unavailable]\n"));
	ASSERT(strstr(out, "\n  10 bytes in 2 allocations from malloc\n"
			   "      #0 deep [app]\n"
			   "      [truncated: deeper than 127 frames]\n"));
	ASSERT(!strstr(out, "Dropped"));
	free(out);
	return true;
}

/* Only what the text prints needs frames: the top sites' stacks and the top growing sites'. */
TEST(report_text_shown)
{
	struct report r = sample();
	struct report_analysis a = { 0 };
	bool shown[4] = { 0 };

	r.top = 1;
	ASSERT(unit__group(&r, SITES_FILE_SITES, SITES_FILE_STACKS) == 0);
	report_text__shown(&r, shown);
	ASSERT(shown[0] && !shown[1] && !shown[2] && !shown[3]);
	unit__ungroup(&r);
	sample_stacks[3].growth = (struct report_growth){ .trend = TREND_GROWING, .score = 0.9,
							  .rank = 1 };
	r.analysis = &a;
	ASSERT(unit__group(&r, SITES_FILE_SITES, SITES_FILE_STACKS) == 0);
	report_text__shown(&r, shown);
	ASSERT(shown[0] && !shown[1] && !shown[2] && shown[3]);
	memset(shown, 0, sizeof(shown));
	r.top = 0;
	report_text__shown(&r, shown);
	ASSERT(shown[0] && shown[1] && shown[2] && shown[3]);
	/* Between reports nothing needs them. */
	memset(shown, 0, sizeof(shown));
	r.brief = true;
	report_text__shown(&r, shown);
	ASSERT(!shown[0] && !shown[1] && !shown[2] && !shown[3]);
	unit__ungroup(&r);
	sample_stacks[3].growth = (struct report_growth){ 0 };
	return true;
}

TEST(report_text_empty_and_odd_command)
{
	struct report r = { .pid = 7, .command = "a\nb\tc", .duration_s = 0.04 };
	int err = -1;
	char *out = unit__render(report_text__write, &r, &err);

	ASSERT(out);
	ASSERT(err == 0);
	ASSERT_EQ_STR(after_clock(out),
		      " memleakbpf: pid 7 (a?b?c), 0.0 s traced\n"
		      "Outstanding: 0 B in 0 allocations (0 allocations, 0 frees since tracing began)\n");
	free(out);
	return true;
}

/* ------------------------------------------------------------------- JSON */

static const char sample_check[] =
	"import json, sys\n"
	"d = json.load(open(sys.argv[1], encoding='utf-8'))\n"
	"assert list(d) == ['version', 'target', 'duration_s', 'sort', 'python', 'reach', 'sampling', 'totals',\n"
	"                   'sites', 'left_out', 'stacks'], list(d)\n"
	"assert d['python'] is None\n"
	"assert d['sampling'] is None\n"
	"assert 'samples' not in d['stacks'][0] and 'bytes_interval' not in d['totals']\n"
	"assert d['reach'] is None\n"
	"assert d['version'] == 1\n"
	"assert d['target'] == {'pid': 1234, 'kernel': False, 'command': 'python3 \"train\".py \\\\ \\n\\x01 \\u00e9 \\ufffd'}, d['target']\n"
	"assert d['duration_s'] == 12.5\n"
	"t = d['totals']\n"
	"assert list(t) == ['outstanding_bytes', 'outstanding_allocs', 'allocs', 'frees', 'untracked_frees',\n"
	"                   'untraced_children', 'followed_execs', 'dropped', 'heap_bytes', 'heap_allocs',\n"
	"                   'mmap_bytes', 'mmap_allocs', 'peak_heap_bytes', 'peak_mmap_bytes']\n"
	"assert (t['outstanding_bytes'], t['outstanding_allocs'], t['allocs'], t['frees']) == (2101358, 516, 56010, 55494)\n"
	"assert t['dropped'] == {'allocs_map_full': 12, 'stack_errors': 1, 'missed_returns': 0,\n"
	"                        'sites_map_full': 0, 'state_errors': 0, 'replaced': 3,\n"
	"                        'stacks_map_full': 0, 'stack_collisions': 0, 'unwind_stops': 0,\n"
	"                        'py_stacks_map_full': 0, 'py_stack_errors': 0,\n"
	"                        'unwind_pending': 0, 'procs_map_full': 0, 'kernel_missed': 0,\n"
	"                        'py_codes_untold': 0, 'stack_ring_full': 0,\n"
	"                        'stacks_merged': 0, 'py_stack_ring_full': 0,\n"
	"                        'stacks_preempted': 0, 'stacks_lost': 0,\n"
	"                        'py_codes_unnamed': 0}, t['dropped']\n"
	"assert list(t['dropped'])[0] == 'allocs_map_full'\n"
	"s = d['stacks']\n"
	"assert len(s) == 4\n"
	"assert [x['api'] for x in s] == ['malloc', 'new[]', 'calloc', 'malloc']\n"
	"assert [x['bytes'] for x in s] == [2097152, 4096, 100, 10]\n"
	"assert [x['truncated'] for x in s] == [False, False, False, True]\n"
	"assert [x['unwind_pending'] for x in s] == [False, False, False, False]\n"
	"assert s[0]['total_bytes'] == 4194304 and s[0]['total_allocs'] == 1024 and s[0]['allocs'] == 512\n"
	"assert s[0]['frames'][0] == {'address': '0x55d0c2a4b3b2', 'function': 'leak_site', 'symbol': 'leak_site.part.0',\n"
	"    'module': '/srv/app',\n"
	"    'offset': '0x13b2', 'file': 'app.c', 'line': 42, 'inlined': False,\n"
	"    'language': 'native'}, s[0]['frames'][0]\n"
	"f = s[1]['frames']\n"
	"assert f[0]['inlined'] is True and f[0]['file'] == 'util.h'\n"
	"assert f[2]['file'] is None and f[2]['line'] is None and f[2]['function'] == 'nolines'\n"
	"assert f[3] == {'address': '0x7f1200001a2b', 'function': None, 'symbol': None, 'module': '/opt/lib/libfoo.so',\n"
	"    'offset': '0x1a2b', 'file': None, 'line': None, 'inlined': False,\n"
	"    'language': 'native'}, f[3]\n"
	"assert f[4] == {'address': '0x7f12deadbeef', 'function': None, 'symbol': None, 'module': None,\n"
	"    'offset': None, 'file': None, 'line': None, 'inlined': False,\n"
	"    'language': 'native'}, f[4]\n"
	"assert s[2]['frames'] == []\n"
	"assert [x['site'] for x in s] == [0, 1, 2, 3]\n"
	"w = d['sites']\n"
	"assert [x['bytes'] for x in w] == [2097152, 4096, 100, 10]\n"
	"assert list(w[0]) == ['bytes', 'allocs', 'total_bytes', 'total_allocs', 'stack_count', 'left_out',\n"
	"                      'stacks', 'own', 'import', 'initializer', 'runtime', 'frame'], list(w[0])\n"
	"assert (w[0]['total_bytes'], w[0]['stack_count'], w[0]['stacks']) == (4194304, 1, [0])\n"
	"assert w[0]['frame'] == s[0]['frames'][0]\n"
	"assert w[1]['frame'] == s[1]['frames'][0] and w[2]['frame'] is None\n"
	"assert w[3]['left_out'] == {'stacks': 0, 'bytes': 0, 'allocs': 0}\n"
	"assert d['left_out'] == {'stacks': 0, 'bytes': 0, 'allocs': 0, 'option': '--all-stacks'}\n";

/* What the files leave out: each site's stacks beyond the kept, and small sites' all. */
static const char left_out_check[] =
	"import json, sys\n"
	"d = json.load(open(sys.argv[1], encoding='utf-8'))\n"
	"s, w = d['stacks'], d['sites']\n"
	"assert [x['bytes'] for x in s] == [2097152], s\n"
	"assert [x['stacks'] for x in w] == [[0], [], [], []], w\n"
	"assert [x['stack_count'] for x in w] == [1, 1, 1, 1]\n"
	"assert w[1]['left_out'] == {'stacks': 1, 'bytes': 4096, 'allocs': 1}, w[1]\n"
	"assert d['left_out'] == {'stacks': 3, 'bytes': 4206, 'allocs': 4, 'option': '--all-stacks'}\n"
	"assert sum(x['bytes'] for x in s) + d['left_out']['bytes'] == d['totals']['outstanding_bytes']\n";

TEST(report_json_sample)
{
	struct report r = sample();
	int err = -1;
	char *out;

	/* Quote, backslash, control characters, valid and invalid UTF-8. */
	r.command = "python3 \"train\".py \\ \n\x01 \xc3\xa9 \xff";
	ASSERT(unit__group(&r, SITES_FILE_SITES, SITES_FILE_STACKS) == 0);
	out = unit__render(report_json__write, &r, &err);
	unit__ungroup(&r);
	ASSERT(out);
	ASSERT(err == 0);
	ASSERT(strstr(out, "\"command\": \"python3 \\\"train\\\".py \\\\ \\u000a\\u0001 \xc3\xa9 \\ufffd\""));
	ASSERT(strstr(out, "\"offset\": null"));
	ASSERT(unit__run_python(sample_check, out) <= 0);
	free(out);
	return true;
}

TEST(report_json_left_out)
{
	struct report r = sample();
	char *out;

	r.totals.outstanding_bytes = 2097152 + 4096 + 100 + 10;
	ASSERT(unit__group(&r, 1, 1) == 0);
	out = unit__render(report_json__write, &r, NULL);
	unit__ungroup(&r);
	ASSERT(out);
	ASSERT(unit__run_python(left_out_check, out) <= 0);
	free(out);
	return true;
}

/* The folded stacks left out are one line, so that the widths still add up. */
TEST(report_folded_left_out)
{
	struct report r = sample();
	char *out;

	ASSERT(unit__group(&r, 2, 1) == 0);
	out = unit__render(report_folded__write, &r, NULL);
	unit__ungroup(&r);
	ASSERT(out);
	ASSERT_EQ_STR(out,
		      "__libc_start_call_main;main;leak_site;malloc 2097152\n"
		      "0x7f12deadbeef;libfoo.so+0x1a2b;nolines;outer;helper;new[] 4096\n"
		      "[2 smaller stacks left out: --all-stacks writes them] 110\n");
	free(out);
	r.folded_allocs = true;
	ASSERT(unit__group(&r, 1, 1) == 0);
	out = unit__render(report_folded__write, &r, NULL);
	unit__ungroup(&r);
	ASSERT(out && strstr(out, "\n[3 smaller stacks left out: --all-stacks writes them] 4\n"));
	free(out);
	return true;
}

TEST(report_json_empty)
{
	struct report r = { .pid = 1, .duration_s = INFINITY };
	int err = -1;
	char *out = unit__render(report_json__write, &r, &err);

	ASSERT(out);
	ASSERT(err == 0);
	ASSERT(strstr(out, "\"command\": null"));
	ASSERT(unit__run_python("import json, sys\n"
			    "d = json.load(open(sys.argv[1]))\n"
			    "assert d['stacks'] == [] and d['target']['command'] is None\n"
			    "assert d['duration_s'] == 0\n"
			    "assert all(v == 0 for v in d['totals']['dropped'].values())\n",
			    out) <= 0);
	free(out);
	return true;
}

/* A drop counter must not be added without reaching the JSON. */
TEST(report_json_has_every_drop)
{
	struct report r = { 0 };
	int err = -1;
	char key[64], *out;

	out = unit__render(report_json__write, &r, &err);
	ASSERT(out);
	for (int c = 0; c < CNT__COUNT; c++) {
		if (!report__counter_name(c))
			continue;
		snprintf(key, sizeof(key), "\"%s\": 0", report__counter_name(c));
		ASSERT(strstr(out, key));
	}
	free(out);
	return true;
}

/* ---------------------------------------------------------------- outfile */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void rm_tree(const char *dir)
{
	chmod(dir, 0700);
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Entries of dir other than . and .. */
static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static char *slurp(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static int write_hello(const struct report *r, FILE *f)
{
	fputs("hello\n", f);
	return 0;
}

static int write_then_fail(const struct report *r, FILE *f)
{
	fputs("partial", f);
	return -ENOSPC;
}

TEST(outfile_check_messages)
{
	char dir[] = "/tmp/memleakbpf-unit-XXXXXX";
	char path[128], want[256], err[256];

	ASSERT(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.json", dir);
	ASSERT(outfile__check(path, err, sizeof(err)) == 0);

	snprintf(path, sizeof(path), "%s/nodir/out.json", dir);
	snprintf(want, sizeof(want), "cannot write %s: directory %s/nodir does not exist", path, dir);
	ASSERT(outfile__check(path, err, sizeof(err)) == -ENOENT);
	ASSERT_EQ_STR(err, want);

	ASSERT(outfile__check(dir, err, sizeof(err)) == -EISDIR);
	snprintf(want, sizeof(want), "cannot write %s: it is a directory", dir);
	ASSERT_EQ_STR(err, want);

	snprintf(path, sizeof(path), "%s/file", dir);
	ASSERT(unit__write_file(path, "x") == 0);
	snprintf(path, sizeof(path), "%s/file/out.json", dir);
	snprintf(want, sizeof(want), "cannot write %s: %s/file is not a directory", path, dir);
	ASSERT(outfile__check(path, err, sizeof(err)) == -ENOTDIR);
	ASSERT_EQ_STR(err, want);

	snprintf(path, sizeof(path), "%s/dangling", dir);
	ASSERT(symlink("/nonexistent/x", path) == 0);
	ASSERT(outfile__check(path, err, sizeof(err)) == -ENOENT);

	ASSERT(outfile__check("/dev/null", err, sizeof(err)) == 0);
	ASSERT(outfile__check("out.json", err, sizeof(err)) == 0 || access(".", W_OK));
	ASSERT(outfile__check("", err, sizeof(err)) == -EINVAL);
	rm_tree(dir);
	return true;
}

TEST(outfile_replaces_atomically)
{
	char dir[] = "/tmp/memleakbpf-unit-XXXXXX";
	char path[128];
	struct stat st;

	ASSERT(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.json", dir);
	ASSERT(outfile__write(path, write_hello, NULL, NULL, 0) == 0);
	ASSERT_EQ_STR(slurp(path), "hello\n");
	ASSERT(stat(path, &st) == 0 && S_ISREG(st.st_mode));

	ASSERT(unit__write_file(path, "old report\n") == 0);
	ASSERT(outfile__write(path, write_hello, NULL, NULL, 0) == 0);
	ASSERT_EQ_STR(slurp(path), "hello\n");
	ASSERT(count_entries(dir) == 1);	/* no temporary left behind */

	/* A failing writer leaves the old file and no temporary. */
	ASSERT(unit__write_file(path, "old report\n") == 0);
	ASSERT(outfile__write(path, write_then_fail, NULL, NULL, 0) == -ENOSPC);
	ASSERT_EQ_STR(slurp(path), "old report\n");
	ASSERT(count_entries(dir) == 1);

	ASSERT(outfile__write(dir, write_hello, NULL, NULL, 0) == -EISDIR);
	rm_tree(dir);
	return true;
}

TEST(outfile_temp_does_not_follow_symlinks)
{
	char dir[] = "/tmp/memleakbpf-unit-XXXXXX";
	char path[128], victim[128], planted[160], tmp[256];
	struct stat st;

	ASSERT(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.json", dir);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(planted, sizeof(planted), "%s/.out.json.AAAAAA", dir);
	ASSERT(unit__write_file(victim, "precious\n") == 0);
	ASSERT(symlink(victim, planted) == 0);
	ASSERT(outfile__open_temp(path, "AAAAAA", tmp, sizeof(tmp)) == -EEXIST);
	ASSERT_EQ_STR(tmp, planted);
	ASSERT_EQ_STR(slurp(victim), "precious\n");

	/* Nor is a dangling one: its target must not be created. */
	ASSERT(unlink(planted) == 0);
	snprintf(victim, sizeof(victim), "%s/created", dir);
	ASSERT(symlink(victim, planted) == 0);
	ASSERT(outfile__open_temp(path, "AAAAAA", tmp, sizeof(tmp)) == -EEXIST);
	ASSERT(lstat(victim, &st) == -1 && errno == ENOENT);
	rm_tree(dir);
	return true;
}

/* Through a symlink or into a device: write where it points, keep the link. */
TEST(outfile_writes_through_links_and_devices)
{
	char dir[] = "/tmp/memleakbpf-unit-XXXXXX";
	char link[128], target[128];
	struct stat st;

	ASSERT(mkdtemp(dir));
	snprintf(link, sizeof(link), "%s/link.json", dir);
	snprintf(target, sizeof(target), "%s/real.json", dir);
	ASSERT(unit__write_file(target, "a much longer old report\n") == 0);
	ASSERT(symlink(target, link) == 0);
	ASSERT(outfile__write(link, write_hello, NULL, NULL, 0) == 0);
	ASSERT(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
	ASSERT_EQ_STR(slurp(target), "hello\n");
	ASSERT(count_entries(dir) == 2);

	ASSERT(outfile__write("/dev/null", write_hello, NULL, NULL, 0) == 0);
	ASSERT(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
	rm_tree(dir);
	return true;
}

/* A FIFO would hold the write until a reader came: refused, at once, by both. */
TEST(outfile_fifo_refused)
{
	char dir[] = "/tmp/memleakbpf-unit-XXXXXX";
	char path[128], want[256], err[256];

	ASSERT(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/f", dir);
	ASSERT(mkfifo(path, 0600) == 0);
	snprintf(want, sizeof(want),
		 "cannot write %s: it is a FIFO: give a regular file (or a character device such as /dev/null)",
		 path);
	ASSERT(outfile__check(path, err, sizeof(err)) == -EINVAL);
	ASSERT_EQ_STR(err, want);
	ASSERT(outfile__write(path, write_hello, NULL, err, sizeof(err)) == -EINVAL);
	ASSERT_EQ_STR(err, want);
	rm_tree(dir);
	return true;
}

/*
 * Another user's link in that user's own directory (not world-writable) is
 * not followed: the report replaces the link. Root only (chown).
 */
TEST(outfile_other_users_link)
{
	char dir[] = "/tmp/memleakbpf-unit-XXXXXX";
	char link[160], victim[128], sub[128], path[192], err[512];
	struct stat st;

	if (geteuid() != 0)
		return true;
	ASSERT(mkdtemp(dir));
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	ASSERT(unit__write_file(victim, "precious\n") == 0);
	snprintf(sub, sizeof(sub), "%s/user", dir);
	ASSERT(mkdir(sub, 0755) == 0 && chown(sub, 65534, 65534) == 0);
	snprintf(link, sizeof(link), "%s/j.json", sub);
	ASSERT(symlink(victim, link) == 0 && lchown(link, 65534, 65534) == 0);
	ASSERT(outfile__check(link, err, sizeof(err)) == 0);
	ASSERT(outfile__write(link, write_hello, NULL, err, sizeof(err)) == 0);
	ASSERT_EQ_STR(slurp(victim), "precious\n");
	ASSERT(lstat(link, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0);
	ASSERT_EQ_STR(slurp(link), "hello\n");

	/* Through such a link to a directory: refused, nothing written there. */
	snprintf(link, sizeof(link), "%s/d", sub);
	ASSERT(symlink(dir, link) == 0 && lchown(link, 65534, 65534) == 0);
	snprintf(path, sizeof(path), "%s/out.json", link);
	ASSERT(outfile__check(path, err, sizeof(err)) == -EPERM);
	ASSERT(strstr(err, "symbolic link another user could have planted (owner uid 65534)"));
	ASSERT(outfile__write(path, write_hello, NULL, NULL, 0) == -EPERM);
	snprintf(path, sizeof(path), "%s/out.json", dir);
	ASSERT(lstat(path, &st) == -1 && errno == ENOENT);
	rm_tree(dir);
	return true;
}

/* In a child: root passes every permission check, so it becomes nobody. */
static int unwritable_child(const char *dir)
{
	char path[128], err[256], want[256];

	if (geteuid() == 0 && (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
			       setresuid(65534, 65534, 65534)))
		return 2;
	snprintf(path, sizeof(path), "%s/out.json", dir);
	snprintf(want, sizeof(want),
		 "cannot write %s: directory %s is not writable (Permission denied)", path, dir);
	if (outfile__check(path, err, sizeof(err)) != -EACCES || strcmp(err, want)) {
		fprintf(stderr, "  got \"%s\"\n", err);
		return 1;
	}
	if (outfile__write(path, write_hello, NULL, NULL, 0) != -EACCES)
		return 1;
	return 0;
}

TEST(outfile_unwritable_dir)
{
	char dir[] = "/tmp/memleakbpf-unit-XXXXXX";
	int status;
	pid_t pid;

	ASSERT(mkdtemp(dir));
	ASSERT(chmod(dir, 0555) == 0);
	fflush(NULL);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0)
		_exit(unwritable_child(dir));
	ASSERT(waitpid(pid, &status, 0) == pid);
	ASSERT(count_entries(dir) == 0);
	rm_tree(dir);
	ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return true;
}

static const char sampled_check[] =
	"import json, sys\n"
	"d = json.load(open(sys.argv[1], encoding='utf-8'))\n"
	"assert d['sampling'] == {'method': 'bytes', 'mean': 524288, 'seed': 7, 'calls': 1000,\n"
	"    'call_bytes': 48000, 'sampled_calls': 10, 'interval': 0.95}, d['sampling']\n"
	"s = d['stacks'][0]\n"
	"assert s['samples'] == 4 and s['bytes_interval'] == [2097152 - 1959964, 2097152 + 1959964], s\n"
	"x = d['stacks'][1]\n"
	"assert x['samples'] == 0 and x['bytes_interval'] == [4096, 4096], x\n"
	"assert d['sites'][0]['samples'] == 4, d['sites'][0]\n"
	"assert d['totals']['samples'] == 4, d['totals']\n";

/* Under sampling: the figures marked as estimates, with their samples and interval. */
TEST(report_sampled_estimates)
{
	struct report r = sample();
	struct report_sampling sampling = { .by_bytes = true, .mean = 524288, .seed = 7,
					    .calls = 1000, .bytes = 48000, .sampled = 10 };
	int err = -1;
	char *out;

	r.sampling = &sampling;
	r.stacks[0].samples = 4;
	r.stacks[0].var = 1e12;	/* sd 1e6 bytes: +-1,959,964 */
	r.totals.outstanding_samples = 4;
	r.totals.outstanding_var = 1e12;
	ASSERT(unit__group(&r, SITES_FILE_SITES, SITES_FILE_STACKS) == 0);
	out = unit__render(report_json__write, &r, &err);
	ASSERT(out && err == 0);
	ASSERT(unit__run_python(sampled_check, out) <= 0);
	free(out);
	out = unit__render(report_text__write, &r, &err);
	ASSERT(out && err == 0);
	ASSERT(strstr(out, "Sampling: --sample 512.0 KiB: a block of s bytes taken with probability "
			   "1-exp(-s/524288)"));
	ASSERT(strstr(out, "seed 7 (reproducible, for tests)"));
	ASSERT(strstr(out, "~2.0 MiB \xc2\xb1" "1.9 MiB in ~512 allocations (4 samples)"));
	unit__ungroup(&r);
	free(out);
	return true;
}
