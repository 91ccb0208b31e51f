// SPDX-License-Identifier: GPL-2.0
/*
 * report_pprof.c (pprof's profile.proto, gzipped) and pprof_tables.c,
 * read back with zlib and tests/unit/pb_read.c; --pprof-format.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <zlib.h>
#include "cli/opts.h"
#include "model/report.h"
#include "report/pprof_tables.h"
#include "util/procmaps.h"
#include "helpers.h"
#include "pb_read.h"
#include "unit.h"
#include "report/report_pprof.h"

#define MAX_ITEMS 64

/* ------------------------------------------------------------ the report */

static struct report_frame pt_frames_leak[] = {
	{ .address = 0x55d0c2a4b3b2, .function = "ns::leak(unsigned long)",
	  .symbol = "_ZN2ns4leakEm", .module = "/srv/app", .file = "app.cc", .line = 12 },
	{ .address = 0x55d0c2a4b480, .function = "main", .module = "/srv/app", .file = "app.cc",
	  .line = 40 },
};

/* Two inlined calls and their caller at one address; a frame with no name; Python. */
static struct report_frame pt_frames_mixed[] = {
	{ .address = 0x55d0c2a4b500, .function = "inner", .module = "/srv/app", .file = "a.h",
	  .line = 3, .inlined = true },
	{ .address = 0x55d0c2a4b500, .function = "middle", .module = "/srv/app", .file = "a.h",
	  .line = 7, .inlined = true },
	{ .address = 0x55d0c2a4b500, .function = "outer", .module = "/srv/app", .file = "a.c",
	  .line = 21 },
	{ .address = 0x7f0000012346, .module = "/usr/lib/libz.so.1", .module_offset = 0x2346 },
	{ .address = 0x7f0000012400, .function = "z::inflate(int)", .module = "/usr/lib/libz.so.1" },
	{ .address = 0x7f55aa001000, .function = "<module>", .module = "/srv/job.py",
	  .file = "/srv/job.py", .line = 5, .language = FRAME_PYTHON },
	{ .address = 0x55d0c2a4b480, .function = "main", .module = "/srv/app", .file = "app.cc",
	  .line = 40 },
};

static struct report_stack pt_stacks[] = {
	{ .api = API_NEW, .bytes = 2097152, .allocs = 512, .total_bytes = 4194304,
	  .total_allocs = 1024, .frames = pt_frames_leak, .nr_frames = 2 },
	{ .api = API_MALLOC, .bytes = 4096, .allocs = 1, .total_bytes = 8192, .total_allocs = 2,
	  .frames = pt_frames_mixed, .nr_frames = 7, .truncated = true },
	{ .api = API_CALLOC, .bytes = 100, .allocs = 1, .total_bytes = 100, .total_allocs = 1,
	  .no_stack = true },
};

static struct report_stack pt_freed_stacks[] = {
	{ .api = API_MALLOC, .total_bytes = 123456789012, .total_allocs = 3,
	  .frames = pt_frames_leak, .nr_frames = 2 },
};

static struct map_entry pt_map_entries[] = {
	{ .start = 0x55d0c2a4b000, .end = 0x55d0c2a4c000, .offset = 0x1000, .executable = true,
	  .path = "/srv/app", .build_id = "0123456789abcdef0123456789abcdef01234567" },
	{ .start = 0x7f0000010000, .end = 0x7f0000020000, .offset = 0x2000, .executable = true,
	  .path = "/usr/lib/libz.so.1" },
};

static const struct maps pt_maps = { pt_map_entries, 2 };

static void pt_report(struct report *r, struct report *freed)
{
	*freed = (struct report){ .stacks = pt_freed_stacks, .nr_stacks = 1 };
	*r = (struct report){ .pid = 42, .command = "app --serve", .duration_s = 2.5,
			      .stacks = pt_stacks, .nr_stacks = 3, .maps = &pt_maps,
			      .freed = freed };
}

/* ------------------------------------------------------------ reading it back */

struct pt_location {
	uint64_t id, mapping, address;
	uint64_t fn[8];
	int64_t line[8];
	size_t nr_lines;
};

struct pt_profile {
	uint8_t *raw;
	size_t len;
	const char *strings[MAX_ITEMS * 2];
	size_t nr_strings;
	struct pb_read samples[MAX_ITEMS], mappings[MAX_ITEMS], functions[MAX_ITEMS];
	size_t nr_samples, nr_mappings, nr_functions;
	struct pt_location locations[MAX_ITEMS];
	size_t nr_locations;
	struct pb_read all;
	char *copies[MAX_ITEMS * 2];	/* the strings, NUL-terminated */
};

static uint8_t *gunzip(const char *gz, size_t len, size_t *out_len)
{
	size_t cap = 1 << 20;
	uint8_t *out = malloc(cap);
	z_stream z = { .next_in = (Bytef *)gz, .avail_in = (uInt)len, .next_out = out,
		       .avail_out = (uInt)cap };

	if (!out || inflateInit2(&z, 15 + 16) != Z_OK)
		return NULL;
	if (inflate(&z, Z_FINISH) != Z_STREAM_END) {
		inflateEnd(&z);
		free(out);
		return NULL;
	}
	*out_len = z.total_out;
	inflateEnd(&z);
	return out;
}

static void read_location(struct pb_read r, struct pt_location *l)
{
	struct pb_field f;

	*l = (struct pt_location){ .id = pb_read__uint(r, 1), .mapping = pb_read__uint(r, 2),
				   .address = pb_read__uint(r, 3) };
	while (pb_read__field(&r, &f))
		if (f.num == 4 && l->nr_lines < 8) {
			l->fn[l->nr_lines] = pb_read__uint(f.sub, 1);
			l->line[l->nr_lines++] = (int64_t)pb_read__uint(f.sub, 2);
		}
}

static bool read_profile(struct pt_profile *p, const char *gz, size_t len)
{
	struct pb_field f;
	struct pb_read r;

	memset(p, 0, sizeof(*p));
	p->raw = gunzip(gz, len, &p->len);
	if (!p->raw)
		return false;
	r = p->all = (struct pb_read){ p->raw, p->raw + p->len, false };
	while (pb_read__field(&r, &f)) {
		if (f.num == 2 && p->nr_samples < MAX_ITEMS)
			p->samples[p->nr_samples++] = f.sub;
		else if (f.num == 3 && p->nr_mappings < MAX_ITEMS)
			p->mappings[p->nr_mappings++] = f.sub;
		else if (f.num == 4 && p->nr_locations < MAX_ITEMS)
			read_location(f.sub, &p->locations[p->nr_locations++]);
		else if (f.num == 5 && p->nr_functions < MAX_ITEMS)
			p->functions[p->nr_functions++] = f.sub;
		else if (f.num == 6 && p->nr_strings < MAX_ITEMS * 2) {
			p->copies[p->nr_strings] = strndup((const char *)f.sub.p,
							   (size_t)(f.sub.end - f.sub.p));
			p->strings[p->nr_strings] = p->copies[p->nr_strings];
			p->nr_strings++;
		}
	}
	return !r.bad && r.p == r.end;
}

static void free_profile(struct pt_profile *p)
{
	for (size_t i = 0; i < p->nr_strings; i++)
		free(p->copies[i]);
	free(p->raw);
}

static const char *str(const struct pt_profile *p, uint64_t i)
{
	return i < p->nr_strings ? p->strings[i] : "(out of range)";
}

static const struct pt_location *location(const struct pt_profile *p, uint64_t id)
{
	for (size_t i = 0; i < p->nr_locations; i++)
		if (p->locations[i].id == id)
			return &p->locations[i];
	return NULL;
}

static struct pb_read function(const struct pt_profile *p, uint64_t id)
{
	for (size_t i = 0; i < p->nr_functions; i++)
		if (pb_read__uint(p->functions[i], 1) == id)
			return p->functions[i];
	return (struct pb_read){ 0 };
}

/* A function's name (2), system name (3) or file (4). */
static const char *fn_str(const struct pt_profile *p, uint64_t id, uint32_t field)
{
	return str(p, pb_read__uint(function(p, id), field));
}

/* Sample i's packed field (1 locations, 2 values) into v; how many. */
static size_t sample_run(const struct pt_profile *p, size_t i, uint32_t num, uint64_t *v)
{
	struct pb_read r = p->samples[i];
	struct pb_field f;
	size_t n = 0;

	while (pb_read__field(&r, &f))
		if (f.num == num)
			while (n < 16 && pb_read__varint(&f.sub, &v[n]))
				n++;
	return n;
}

static bool render_report(struct pt_profile *p, const struct report *r)
{
	char *gz = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&gz, &len);
	bool ok;

	if (!f)
		return false;
	ok = !report_pprof__write(r, f);
	ok = !fclose(f) && ok && read_profile(p, gz, len);
	free(gz);
	return ok;
}

static bool render_profile(struct pt_profile *p)
{
	struct report r, freed;

	pt_report(&r, &freed);
	return render_report(p, &r);
}

/* ------------------------------------------------------------ tests */

TEST(pprof_proto_header)
{
	static const char *const types[][2] = { { "inuse_objects", "count" },
		{ "inuse_space", "bytes" }, { "alloc_objects", "count" }, { "alloc_space", "bytes" } };
	struct pt_profile p;
	struct pb_read r;
	struct pb_field f;
	struct timespec now;
	size_t t = 0;

	ASSERT(render_profile(&p));
	clock_gettime(CLOCK_REALTIME, &now);
	ASSERT(p.nr_strings > 0 && !strcmp(p.strings[0], ""));
	r = p.all;
	while (pb_read__field(&r, &f)) {
		if (f.num != 1)
			continue;
		ASSERT(t < 4);
		ASSERT_EQ_STR(str(&p, pb_read__uint(f.sub, 1)), types[t][0]);
		ASSERT_EQ_STR(str(&p, pb_read__uint(f.sub, 2)), types[t][1]);
		t++;
	}
	ASSERT_EQ_U64(t, 4);
	ASSERT_EQ_STR(str(&p, pb_read__uint(p.all, 14)), "inuse_space");
	ASSERT_EQ_U64(pb_read__uint(p.all, 12), 1);
	ASSERT_EQ_U64(pb_read__uint(p.all, 10), 2500000000ull);
	ASSERT((int64_t)pb_read__uint(p.all, 9) <= (int64_t)now.tv_sec * 1000000000 + now.tv_nsec);
	ASSERT((int64_t)pb_read__uint(p.all, 9) > ((int64_t)now.tv_sec - 60) * 1000000000);
	ASSERT_EQ_STR(str(&p, pb_read__uint(p.all, 13)), "memleakbpf: pid 42: app --serve");
	free_profile(&p);
	return true;
}

/* Exact values; the freed stack adds its alloc figures alone; the api as a label. */
TEST(pprof_proto_samples)
{
	static const uint64_t want[][4] = { { 512, 2097152, 1024, 4194304 }, { 1, 4096, 2, 8192 },
					    { 1, 100, 1, 100 }, { 0, 0, 3, 123456789012ull } };
	static const char *const apis[] = { "new", "malloc", "calloc", "malloc" };
	uint64_t v[16], first[16], last[16];
	struct pt_profile p;
	struct pb_field f;
	struct pb_read r;

	ASSERT(render_profile(&p));
	ASSERT_EQ_U64(p.nr_samples, 4);
	for (size_t i = 0; i < 4; i++) {
		ASSERT_EQ_U64(sample_run(&p, i, 2, v), 4);
		for (size_t k = 0; k < 4; k++)
			ASSERT_EQ_U64(v[k], want[i][k]);
		r = p.samples[i];
		while (pb_read__field(&r, &f) && f.num != 3)
			;
		ASSERT_EQ_STR(str(&p, pb_read__uint(f.sub, 1)), "api");
		ASSERT_EQ_STR(str(&p, pb_read__uint(f.sub, 2)), apis[i]);
	}
	/* The same frames, the same locations: the freed stack's are the first stack's. */
	ASSERT_EQ_U64(sample_run(&p, 0, 1, first), 2);
	ASSERT_EQ_U64(sample_run(&p, 3, 1, last), 2);
	ASSERT(first[0] == last[0] && first[1] == last[1] && first[0] != first[1]);
	free_profile(&p);
	return true;
}

/* Names, system names, files, lines; an inlined chain as lines of one location. */
TEST(pprof_proto_locations)
{
	const struct pt_location *l;
	uint64_t ids[16];
	struct pt_profile p;

	ASSERT(render_profile(&p));
	l = (sample_run(&p, 0, 1, ids), location(&p, ids[0]));
	ASSERT(l && l->nr_lines == 1 && l->mapping == 1 && l->address == 0x55d0c2a4b3b1);
	ASSERT_EQ_STR(fn_str(&p, l->fn[0], 2), "ns::leak(unsigned long)");
	ASSERT_EQ_STR(fn_str(&p, l->fn[0], 3), "_ZN2ns4leakEm");
	ASSERT_EQ_STR(fn_str(&p, l->fn[0], 4), "app.cc");
	ASSERT_EQ_U64(l->line[0], 12);
	/* main: a C name is its own system name. */
	l = location(&p, ids[1]);
	ASSERT(l && l->nr_lines == 1);
	ASSERT_EQ_STR(fn_str(&p, l->fn[0], 3), "main");
	ASSERT_EQ_U64(sample_run(&p, 1, 1, ids), 6);
	l = location(&p, ids[0]);
	ASSERT(l && l->nr_lines == 3 && l->address == 0x55d0c2a4b4ff && l->mapping == 1);
	ASSERT_EQ_STR(fn_str(&p, l->fn[0], 2), "inner");
	ASSERT_EQ_STR(fn_str(&p, l->fn[1], 2), "middle");
	ASSERT_EQ_STR(fn_str(&p, l->fn[2], 2), "outer");
	ASSERT(l->line[0] == 3 && l->line[1] == 7 && l->line[2] == 21);
	/* No name: what the text report prints; no system name, no guess. */
	l = location(&p, ids[1]);
	ASSERT(l && l->nr_lines == 1 && l->mapping == 2 && l->address == 0x7f0000012345);
	ASSERT_EQ_STR(fn_str(&p, l->fn[0], 2), "libz.so.1+0x2346");
	ASSERT_EQ_STR(fn_str(&p, l->fn[0], 3), "");
	/* A demangled name of no known symbol: no system name, or readers would cut it short. */
	l = location(&p, ids[2]);
	ASSERT(l && l->nr_lines == 1 && l->mapping == 2 && l->address == 0x7f00000123ff);
	ASSERT_EQ_STR(fn_str(&p, l->fn[0], 2), "z::inflate(int)");
	ASSERT_EQ_STR(fn_str(&p, l->fn[0], 3), "");
	/* Python: in no mapping, at 0, no system name (readers would "simplify" <module>). */
	l = location(&p, ids[3]);
	ASSERT(l && l->nr_lines == 1 && l->mapping == 0 && l->address == 0);
	ASSERT_EQ_STR(fn_str(&p, l->fn[0], 2), "<module>");
	ASSERT_EQ_STR(fn_str(&p, l->fn[0], 3), "");
	ASSERT_EQ_STR(fn_str(&p, l->fn[0], 4), "/srv/job.py");
	ASSERT_EQ_U64(l->line[0], 5);
	/* Truncated: a marker as the outermost location; no stack: one alone. */
	l = location(&p, ids[5]);
	ASSERT(l && l->mapping == 0 && !strcmp(fn_str(&p, l->fn[0], 2), "[truncated]"));
	ASSERT_EQ_U64(sample_run(&p, 2, 1, ids), 1);
	l = location(&p, ids[0]);
	ASSERT(l && !strcmp(fn_str(&p, l->fn[0], 2), "[stack unavailable]"));
	free_profile(&p);
	return true;
}

/* Mappings with their files, build ids, and the flags that stop re-symbolizing. */
TEST(pprof_proto_mappings)
{
	struct pt_profile p;

	ASSERT(render_profile(&p));
	ASSERT_EQ_U64(p.nr_mappings, 2);
	ASSERT_EQ_U64(pb_read__uint(p.mappings[0], 1), 1);
	ASSERT_EQ_U64(pb_read__uint(p.mappings[0], 2), 0x55d0c2a4b000);
	ASSERT_EQ_U64(pb_read__uint(p.mappings[0], 3), 0x55d0c2a4c000);
	ASSERT_EQ_U64(pb_read__uint(p.mappings[0], 4), 0x1000);
	ASSERT_EQ_STR(str(&p, pb_read__uint(p.mappings[0], 5)), "/srv/app");
	ASSERT_EQ_STR(str(&p, pb_read__uint(p.mappings[0], 6)),
		      "0123456789abcdef0123456789abcdef01234567");
	ASSERT_EQ_STR(str(&p, pb_read__uint(p.mappings[1], 6)), "");
	for (uint32_t field = 7; field <= 10; field++)
		ASSERT(pb_read__uint(p.mappings[0], field) && pb_read__uint(p.mappings[1], field));
	free_profile(&p);
	return true;
}

/* Entered once each; hash collisions told apart by content. */
/*
 * --follow: the target's mappings, then an exec'd image's once (process 5
 * exec'd it, 7 is its fork): a location of theirs is in the image's
 * mapping, even at an address the target's mappings hold too.
 */
TEST(pprof_proto_image_mappings)
{
	static struct map_entry other_entries[] = {
		{ .start = 0x55d0c2a4b000, .end = 0x55d0c2a4d000, .offset = 0x1000,
		  .executable = true, .path = "/srv/other" },
	};
	static const struct maps other = { other_entries, 1 };
	static const struct report_image_maps images[] = { { 5, &other }, { 7, &other } };
	struct report_stack stacks[3];
	uint64_t ids[16];
	struct pt_profile p;
	struct report r;

	for (int i = 0; i < 3; i++)
		stacks[i] = (struct report_stack){ .api = API_MALLOC, .bytes = 8, .allocs = 1,
						   .frames = pt_frames_leak, .nr_frames = 1,
						   .proc = (uint32_t[]){ 0, 5, 7 }[i] };
	r = (struct report){ .pid = 42, .stacks = stacks, .nr_stacks = 3, .maps = &pt_maps,
			     .image_maps = images, .nr_image_maps = 2 };
	ASSERT(render_report(&p, &r));
	ASSERT_EQ_U64(p.nr_mappings, 3);
	ASSERT_EQ_U64(pb_read__uint(p.mappings[2], 1), 3);
	ASSERT_EQ_STR(str(&p, pb_read__uint(p.mappings[2], 5)), "/srv/other");
	for (size_t i = 0; i < 3; i++) {
		const struct pt_location *l;

		ASSERT_EQ_U64(sample_run(&p, i, 1, ids), 1);
		l = location(&p, ids[0]);
		ASSERT(l && l->address == 0x55d0c2a4b3b1);
		ASSERT_EQ_U64(l->mapping, i ? 3 : 1);
	}
	free_profile(&p);
	return true;
}

TEST(pprof_tables_intern)
{
	struct pprof_tables t;
	struct pprof_line a[2] = { { 1, 10 }, { 2, 20 } }, b[2] = { { 1, 10 }, { 2, 21 } };
	struct pprof_function fn = { 1, 1, 0 };
	uint64_t s;

	ASSERT_EQ_U64(pprof_tables__init(&t), 0);
	ASSERT_EQ_U64(pprof_tables__string(&t, ""), 0);
	s = pprof_tables__string(&t, "x");
	ASSERT_EQ_U64(s, 1);
	ASSERT_EQ_U64(pprof_tables__string(&t, "y"), 2);
	ASSERT_EQ_U64(pprof_tables__string(&t, "x"), 1);
	ASSERT_EQ_U64(pprof_tables__function(&t, &fn), 1);
	fn.filename = 2;
	ASSERT_EQ_U64(pprof_tables__function(&t, &fn), 2);
	fn.filename = 0;
	ASSERT_EQ_U64(pprof_tables__function(&t, &fn), 1);
	ASSERT_EQ_U64(pprof_tables__location(&t, 1, 0x10, a, 2), 1);
	ASSERT_EQ_U64(pprof_tables__location(&t, 1, 0x10, b, 2), 2);
	ASSERT_EQ_U64(pprof_tables__location(&t, 1, 0x10, a, 1), 3);
	ASSERT_EQ_U64(pprof_tables__location(&t, 0, 0x10, a, 2), 4);
	ASSERT_EQ_U64(pprof_tables__location(&t, 1, 0x10, a, 2), 1);
	ASSERT_EQ_U64(t.nr_lines, 7);
	/* Many strings: the index grows, every one still found. */
	for (int i = 0; i < 5000; i++) {
		char buf[16];

		snprintf(buf, sizeof(buf), "s%d", i);
		ASSERT_EQ_U64(pprof_tables__string(&t, buf), 3 + (uint64_t)i);
	}
	ASSERT_EQ_U64(pprof_tables__string(&t, "s1234"), 3 + 1234);
	ASSERT(!t.err);
	pprof_tables__free(&t);
	return true;
}

/* Invalid UTF-8 is U+FFFD, a byte at a time, and found again as such. */
TEST(pprof_tables_utf8)
{
	struct pprof_tables t;
	uint64_t i;

	ASSERT_EQ_U64(pprof_tables__init(&t), 0);
	i = pprof_tables__string(&t, "a\xff\xc3(b\xc3\xa9");
	ASSERT_EQ_U64(i, 1);
	ASSERT_EQ_STR(t.strings[1], "a\xef\xbf\xbd\xef\xbf\xbd(b\xc3\xa9");
	ASSERT_EQ_U64(pprof_tables__string(&t, "a\xff\xc3(b\xc3\xa9"), 1);
	ASSERT_EQ_U64(pprof_tables__string(&t, "a\xef\xbf\xbd\xef\xbf\xbd(b\xc3\xa9"), 1);
	ASSERT_EQ_U64(t.nr_strings, 2);
	pprof_tables__free(&t);
	return true;
}

/* A collision in the index: the second entry is filed further on, never merged. */
TEST(pprof_tables_collision)
{
	struct pprof_tables t;

	ASSERT_EQ_U64(pprof_tables__init(&t), 0);
	ASSERT_EQ_U64(pprof_tables__string(&t, "a"), 1);
	/* Steal the key "b" would be filed under for "a"'s index. */
	{
		uint64_t h = 0xcbf29ce484222325ULL;

		h = (h ^ 'b') * 0x100000001b3ULL;
		ASSERT_EQ_U64(idmap__put(&t.string_ix, h, 1), 0);
	}
	ASSERT_EQ_U64(pprof_tables__string(&t, "b"), 2);
	ASSERT_EQ_U64(pprof_tables__string(&t, "b"), 2);
	ASSERT_EQ_U64(pprof_tables__string(&t, "a"), 1);
	ASSERT_EQ_STR(t.strings[2], "b");
	pprof_tables__free(&t);
	return true;
}

TEST(opts_pprof_format)
{
	struct opts o;
	char err[256];

	ASSERT_EQ_U64(unit__parse(&o, err, sizeof(err), "--pprof", "a.pb.gz", "-p", "1", NULL), 0);
	ASSERT(!o.pprof_gperftools);
	ASSERT_EQ_U64(unit__parse(&o, err, sizeof(err), "--pprof", "a.heap", "--pprof-format",
				 "gperftools", "-p", "1", NULL), 0);
	ASSERT(o.pprof_gperftools);
	ASSERT_EQ_U64(unit__parse(&o, err, sizeof(err), "--snapshot-dir", "d", "--pprof-format",
				 "proto", "-p", "1", NULL), 0);
	ASSERT(!o.pprof_gperftools);
	ASSERT(unit__parse(&o, err, sizeof(err), "--pprof", "a", "--pprof-format", "text", "-p", "1",
			   NULL) == -EINVAL);
	ASSERT(strstr(err, "--pprof-format") && strstr(err, "'text'"));
	ASSERT(unit__parse(&o, err, sizeof(err), "--pprof-format", "proto", "-p", "1", NULL) ==
	       -EINVAL);
	ASSERT(strstr(err, "needs --pprof or --snapshot-dir"));
	return true;
}
