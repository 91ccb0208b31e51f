// SPDX-License-Identifier: GPL-2.0
/*
 * The writers of a report's analysis: the timeline (CSV, SVG), the JSON
 * fields and the text sections (verdict, Growing, Churn, Peak).
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "analyze/sites.h"
#include "model/report.h"
#include "helpers.h"
#include "unit.h"
#include "report/report_json.h"
#include "report/report_text.h"
#include "report/report_timeline.h"

#define MiB (1ull << 20)
#define PYTHON "/usr/bin/python3"

static struct report_frame leak_frames[] = {
	{ .address = 0x401234, .function = "site_leak", .module = "/srv/app", .module_offset = 0x1234,
	  .file = "app.c", .line = 42 },
	{ .address = 0x401300, .function = "via_tick", .module = "/srv/app", .module_offset = 0x1300,
	  .file = "app.c", .line = 60 },
	{ .address = 0x401400, .function = "main", .module = "/srv/app", .module_offset = 0x1400,
	  .file = "app.c", .line = 90 },
	{ .address = 0x7f0000001000, .function = "__libc_start_call_main",
	  .module = "/usr/lib/libc.so.6", .module_offset = 0x1000 },
};

static struct report_frame cache_frames[] = {
	{ .address = 0x401500, .function = "site_cache", .module = "/srv/app", .module_offset = 0x1500,
	  .file = "app.c", .line = 30 },
};

static struct report_stack stacks[] = {
	{ .api = API_MALLOC, .bytes = 32 * MiB, .allocs = 8192, .total_bytes = 32 * MiB,
	  .total_allocs = 8192, .frames = cache_frames, .nr_frames = 1,
	  .growth = { .trend = TREND_STABLE, .grew = 1, .intervals = 12, .age_s = 6.1 } },
	{ .api = API_MALLOC, .bytes = 245760, .allocs = 120, .total_bytes = 245760,
	  .total_allocs = 120, .frames = leak_frames, .nr_frames = 4,
	  .growth = { .trend = TREND_GROWING, .slope = 40960, .r2 = 0.9996, .grew = 12,
		      .intervals = 12, .age_s = 6.0, .score = 0.99, .rank = 1 } },
};

static struct report_stack churn_stacks[] = {
	{ .api = API_MALLOC, .total_bytes = 15360000, .total_allocs = 240000,
	  .frames = leak_frames, .nr_frames = 4,
	  .rate = { .allocs_per_s = 40000, .bytes_per_s = 2560000, .last_allocs_per_s = 39990,
		    .last_bytes_per_s = 2559360 } },
};

static struct report_stack peak_stacks[] = {
	{ .api = API_MMAP, .bytes = 64 * MiB, .allocs = 4, .frames = cache_frames, .nr_frames = 1 },
};

static struct report_sample samples[] = {
	{ .t_s = 0.5, .live = 600 * MiB, .allocs = 40000, .frees = 0, .mem = true,
	  .mem_t_s = 0.5, .mem_live = 600 * MiB, .rss = 640 * MiB, .anon = 620 * MiB, .heap = 132 * 1024, .arena = 600 * MiB,
	  .arena_reserved = 640 * MiB, .arenas = 10 },
	{ .t_s = 1.0, .live = 102 * MiB, .allocs = 65536, .frees = 58982, .mem = true,
	  .mem_t_s = 1.0, .mem_live = 102 * MiB, .rss = 1040 * MiB, .anon = 1030 * MiB, .heap = 132 * 1024, .arena = 1024 * MiB,
	  .arena_reserved = 1088 * MiB, .arenas = 17 },
	{ .t_s = 2.0, .live = 102 * MiB, .allocs = 65536, .frees = 58982, .mem = true,
	  .mem_t_s = 2.0, .mem_live = 102 * MiB, .rss = 240 * MiB, .anon = 230 * MiB, .heap = 132 * 1024, .arena = 1024 * MiB,
	  .arena_reserved = 1088 * MiB, .arenas = 17 },
	{ .t_s = 2.25, .live = 102 * MiB, .allocs = 65536, .frees = 58982 },
};

static size_t growing[] = { 1 };

static struct report_analysis analysis(void)
{
	struct report_analysis a = {
		.growing = growing, .nr_growing = 1,
		.churn = churn_stacks, .nr_churn = 1,
		.peak = { .known = true, .t_s = 0.7, .bytes = 1000 * MiB, .allocs = 60000,
			  .sample_s = 0.1, .stacks = peak_stacks, .nr_stacks = 1,
			  .other_bytes = 936 * MiB, .other_allocs = 59996,
			  .stacks_t_s = 0.8, .stacks_bytes = 990 * MiB, .exact = true },
		.samples = samples, .nr_samples = 4,
		.memory = { .verdict = VERDICT_FRAGMENTATION, .released = true, .reports = 3,
			    .base = { .mem = true, .rss = 1 * MiB, .anon = 128 * 1024 },
			    .worst = samples[1], .now = samples[2],
			    .worst_retained = 1030 * MiB - 128 * 1024 - 102 * MiB,
			    .now_retained = 230 * MiB - 128 * 1024 - 102 * MiB,
			    .worst_in_heap = 1024 * MiB, .live = { .trend = TREND_STABLE },
			    .trend_known = true },
	};

	return a;
}

static struct report sample(struct report_analysis *a)
{
	struct report r = {
		.pid = 4242, .command = "./app <x> & \"y\" \xff\x01", .duration_s = 2.3,
		.final = true, .top = 10, .stacks = stacks, .nr_stacks = 2, .analysis = a,
		.allocator = ALLOCATOR_GLIBC,
		.totals = { .outstanding_bytes = 32 * MiB + 245760, .outstanding_allocs = 8312,
			    .kind_bytes = { 32 * MiB + 245760 }, .kind_allocs = { 8312 } },
	};

	return r;
}

/* The writer's text, the stacks grouped into sites first. */
static char *render(int (*w)(const struct report *, FILE *), const struct report *r)
{
	struct report g = *r;
	char *out = NULL;

	if (!unit__group(&g, SITES_FILE_SITES, SITES_FILE_STACKS))
		out = unit__render(w, &g, NULL);
	unit__ungroup(&g);
	return out;
}

TEST(timeline_csv)
{
	struct report_analysis a = analysis();
	struct report r = sample(&a);
	char *out = render(report_timeline__csv, &r);

	ASSERT(out);
	ASSERT_EQ_STR(out,
		"t_s,live_bytes,rss_bytes,anon_bytes,heap_bytes,arena_bytes,allocs_per_s,frees_per_s\n"
		"0.000,0,1048576,131072,0,0,0.0,0.0\n"
		"0.500,629145600,671088640,650117120,135168,629145600,80000.0,0.0\n"
		"1.000,106954752,1090519040,1080033280,135168,1073741824,51072.0,117964.0\n"
		"2.000,106954752,251658240,241172480,135168,1073741824,0.0,0.0\n"
		"2.250,106954752,,,,,0.0,0.0\n");
	free(out);
	/* No analysis: the header alone. */
	r.analysis = NULL;
	out = render(report_timeline__csv, &r);
	ASSERT(out);
	ASSERT_EQ_STR(out, "t_s,live_bytes,rss_bytes,anon_bytes,heap_bytes,arena_bytes,allocs_per_s,frees_per_s\n");
	free(out);
	return true;
}

static const char svg_check[] =
	"import sys, xml.etree.ElementTree as ET\n"
	"NS = '{http://www.w3.org/2000/svg}'\n"
	"root = ET.parse(sys.argv[1]).getroot()\n"
	"assert root.tag == NS + 'svg', root.tag\n"
	"lines = {}\n"
	"for p in root.iter(NS + 'polyline'):\n"
	"    lines.setdefault(p.get('class'), []).append(p.get('points').split())\n"
	"assert [len(x) for x in lines['live']] == [5], lines['live']\n"
	"assert [len(x) for x in lines['rss']] == [4], lines['rss']\n"
	"assert [len(x) for x in lines['anon']] == [4]\n"
	"live = [tuple(map(float, p.split(','))) for p in lines['live'][0]]\n"
	"rss = [tuple(map(float, p.split(','))) for p in lines['rss'][0]]\n"
	"assert live[0][1] > rss[0][1]            # SVG y grows downwards: live 0 below RSS\n"
	"assert rss[3][1] > rss[2][1]             # RSS fell after 1 s\n"
	"assert abs(live[3][1] - live[2][1]) < 0.01  # live did not\n"
	"titles = [t.text for t in root.iter(NS + 'title')]\n"
	"assert any('RSS 1.0 GiB' in t for t in titles), titles\n"
	"sub = [t for t in root.iter(NS + 'text') if t.get('class') == 'sub'][0].text\n"
	"assert sub == 'pid 4242 (./app <x> & \"y\" \\ufffd\\ufffd), 2.3 s traced; verdict: fragmentation, not a leak', sub\n"
	"assert not any(e.get('href') or e.get('{http://www.w3.org/1999/xlink}href') for e in root.iter())\n"
	"assert not list(root.iter(NS + 'script'))\n";

TEST(timeline_svg)
{
	struct report_analysis a = analysis();
	struct report r = sample(&a);
	char *out = render(report_timeline__svg, &r);

	ASSERT(out);
	ASSERT(strstr(out, "./app &lt;x&gt; &amp; &quot;y&quot; \xef\xbf\xbd\xef\xbf\xbd)"));
	ASSERT(strstr(out, "peak 1000.0 MiB live"));
	ASSERT(unit__run_python(svg_check, out) <= 0);
	free(out);
	/* Nothing to plot is still a picture. */
	r.analysis = NULL;
	r.command = NULL;
	out = render(report_timeline__svg, &r);
	ASSERT(out && strstr(out, "no report was made") && strstr(out, "</svg>\n"));
	free(out);
	return true;
}

static const char json_check[] =
	"import json, sys\n"
	"d = json.load(open(sys.argv[1]))\n"
	"assert list(d)[-3:] == ['churn', 'peak', 'memory'], list(d)\n"
	"s = d['stacks']\n"
	"assert s[0]['trend'] == 'stable' and s[0]['leak_rank'] is None and s[0]['oldest_age_s'] == 6.1\n"
	"g = s[1]\n"
	"assert (g['trend'], g['slope_bytes_per_s'], g['r2'], g['grew_intervals'], g['intervals']) == \\\n"
	"    ('growing', 40960, 1.0, 12, 12), g\n"
	"assert g['shrank_intervals'] == 0 and g['leak_score'] == 0.99 and g['leak_rank'] == 1\n"
	"c = d['churn'][0]\n"
	"assert c['allocs_per_s'] == 40000 and c['bytes_per_s'] == 2560000 and c['last_allocs_per_s'] == 39990\n"
	"assert c['frames'][0]['function'] == 'site_leak' and c['total_allocs'] == 240000\n"
	"p = d['peak']\n"
	"assert (p['bytes'], p['allocs'], p['t_s'], p['sample_interval_s']) == (1000 << 20, 60000, 0.7, 0.1)\n"
	"assert p['stacks'][0]['bytes'] == 64 << 20 and p['stacks'][0]['api'] == 'mmap'\n"
	"assert 'trend' not in p['stacks'][0]\n"
	"assert (p['exact'], p['stacks_bytes'], p['stacks_t_s'], p['mmap_bytes'], p['mmap_t_s']) == \\\n"
	"    (True, 990 << 20, 0.8, 0, None), p\n"
	"assert p['other_bytes'] == 936 << 20\n"
	"m = d['memory']\n"
	"assert (m['verdict'], m['released'], m['attached'], m['reports']) == ('fragmentation', True, False, 3)\n"
	"assert m['max_retained_at']['rss_bytes'] == 1040 << 20 and m['max_retained_at']['arenas'] == 17\n"
	"assert m['now']['live_bytes'] == 102 << 20 and m['live_trend'] == 'stable'\n"
	"assert m['max_retained_bytes'] == (1030 << 20) - 131072 - (102 << 20)\n"
	"w = d['sites']\n"
	"assert (w[1]['growing_stacks'], w[1]['slope_bytes_per_s'], w[1]['leak_score'], w[1]['leak_rank']) == \\\n"
	"    (1, 40960, 0.99, 1), w[1]\n"
	"assert (w[0]['growing_stacks'], w[0]['leak_rank']) == (0, None) and s[1]['site'] == 1\n";

TEST(timeline_json_analysis)
{
	struct report_analysis a = analysis();
	struct report r = sample(&a);
	char *out = render(report_json__write, &r);

	ASSERT(out);
	ASSERT(!strstr(out, "-0.000"));
	ASSERT(unit__run_python(json_check, out) <= 0);
	free(out);
	return true;
}

/* The text: verdict and Growing before the outstanding list, churn and peak after. */
TEST(timeline_text_sections)
{
	struct report_analysis a = analysis();
	struct report r = sample(&a);
	char *out = render(report_text__write, &r);
	const char *verdict, *grow, *list, *churn, *peak;

	ASSERT(out);
	verdict = strstr(out, "\nVerdict: fragmentation, not a leak");
	grow = strstr(out, "\nGrowing: 1 site, the most leak-like first:\n\n"
			   "  1. +40.0 KiB/s, now 240.0 KiB in 120 allocations, at site_leak (app.c:42) [app]\n"
			   "      +40.0 KiB/s, grew in 12 of 12 intervals, R\xc2\xb2 1.00; oldest block 6.0 s old:"
			   " now 240.0 KiB in 120 allocations from malloc\n"
			   "      #0 site_leak (app.c:42) [app]\n");
	list = strstr(out, "\nAll 2 sites by outstanding bytes (2 stacks in all,");
	ASSERT(strstr(out, "\nSite 2: 240.0 KiB (245,760 bytes) in 120 allocations from 1 stack"
			   " (the 1st under Growing), at site_leak (app.c:42) [app]\n"));
	churn = strstr(out, "\nChurn: the stacks that allocate most often first, freed or not:\n"
			    "  1. 40,000 calls/s, 2.4 MiB/s from malloc (240,000 calls, 14.6 MiB since"
			    " tracing began; last interval 39,990 calls/s); 0 B outstanding\n"
			    "      at site_leak (app.c:42) <- via_tick <- main <- ...\n");
	peak = strstr(out, "\nPeak: 1000.0 MiB (1,048,576,000 bytes) of heap blocks at 0.7 s, exact"
			   " (the probes keep the high-water mark); mmaps apart: none\n"
			   "  The stacks as sampled at 0.8 s, holding 990.0 MiB (99% of the peak;");
	ASSERT(verdict && grow && list && churn && peak);
	ASSERT(verdict < grow && grow < list && list < churn && churn < peak);
	ASSERT(strstr(out, "Memory: RSS 240.0 MiB, anonymous 230.0 MiB ([heap] 132.0 KiB, 17 thread-arena"
			   " heaps using 1.0 GiB of 1.1 GiB); live blocks 102.0 MiB (at 2.0 s, its last reading)\n"));
	ASSERT(strstr(out, "  At 1.0 s: RSS 1.0 GiB (anonymous 1.0 GiB) for 102.0 MiB of live blocks"
			   " (10% of RSS): 927.9 MiB retained.\n  The live blocks held steady over the run.\n"
			   "  glibc's [heap] and thread arenas grew by 1.0 GiB: freed blocks it keeps.\n"));
	ASSERT(strstr(out, "  Given back since: at 2.0 s RSS 240.0 MiB for 102.0 MiB of live blocks"));
	/* Given back: no malloc_trim to advise. */
	ASSERT(!strstr(out, "malloc_trim(0)") && strstr(out, "MALLOC_ARENA_MAX=2"));
	ASSERT(strstr(out, "\n  1. 64.0 MiB (67,108,864 bytes) in 4 allocations from mmap\n"
			   "      at site_cache (app.c:30)\n"
			   "  and other stacks: 936.0 MiB in 59,996 allocations\n"));
	/* The outstanding list: each stack once in its usual form, with its trend. */
	ASSERT(strstr(out, "\n  240.0 KiB (245,760 bytes) in 120 allocations from malloc\n"
			   "      growing: +40.0 KiB/s, grew in 12 of 12 intervals,"
			   " R\xc2\xb2 1.00; oldest block 6.0 s old\n      #0 site_leak"));
	ASSERT(strstr(out, "\n  32.0 MiB (33,554,432 bytes) in 8,192 allocations from malloc\n"
			   "      stable: grew in 1 of 12 intervals, R\xc2\xb2 0.00; oldest block 6.1 s old\n"));
	ASSERT(!strstr(out, "Measured from the attach"));
	free(out);
	/* Not final: no peak. Attached: said so. */
	r.final = false;
	a.memory.attached = true;
	out = render(report_text__write, &r);
	ASSERT(out && !strstr(out, "\nPeak:") && strstr(out, "  Measured from the attach (RSS 1.0 MiB"));
	free(out);
	return true;
}

TEST(timeline_text_verdicts)
{
	struct report_analysis a = analysis();
	struct report r = sample(&a);
	char *out;

	a.memory.verdict = VERDICT_LEAK;
	out = render(report_text__write, &r);
	ASSERT(out && strstr(out, "\nVerdict: leak: 1 site grows steadily (1 stack), +40.0 KiB/s in all"
				  " (under Growing"));
	free(out);
	/* A growing mmap is named apart in the verdict. */
	stacks[1].api = API_MMAP;
	out = render(report_text__write, &r);
	stacks[1].api = API_MALLOC;
	ASSERT(out && strstr(out, "+40.0 KiB/s in all (mmaps +40.0 KiB/s of it) (under Growing"));
	free(out);
	a.memory.verdict = VERDICT_UNKNOWN;
	a.nr_samples = 2;
	out = render(report_text__write, &r);
	ASSERT(out && strstr(out, "\nVerdict: too early: trends need 3 reports, this is the 2nd"));
	free(out);
	a.memory.reports = 0;
	out = render(report_text__write, &r);
	ASSERT(out && strstr(out, "\nMemory: /proc/4242 could not be read\n"
				  "Verdict: none: the target's memory could not be read\n"));
	free(out);
	a.memory.reports = 3;
	a.memory.verdict = VERDICT_NO_LEAK;
	out = render(report_text__write, &r);
	/* Two reports' samples: judged over few, and said so. */
	ASSERT(out && strstr(out, "\nVerdict: no leak seen: no stack grows steadily, over 2 reports only"
				  " (a growth that ended within them may not show: a shorter INTERVAL gives"
				  " more); the live blocks hold steady, heap blocks +32.2 MiB since tracing began\n"));
	ASSERT(!strstr(out, "at exit"));
	free(out);
	/* The target exited: what it left is named whatever the verdict, unless a leak is. */
	a.memory.exited = true;
	r.totals.kind_bytes[KIND_MMAP] = 4096;
	r.totals.kind_allocs[KIND_MMAP] = 1;
	out = render(report_text__write, &r);
	ASSERT(out && strstr(out, "heap blocks +32.2 MiB, mmaps +4.0 KiB since tracing began\n"
				  "  32.2 MiB in 8,312 heap blocks still outstanding at exit (and 4.0 KiB"
				  " in 1 mmap): never freed; see the sites below\n"));
	free(out);
	a.memory.verdict = VERDICT_LEAK;
	out = render(report_text__write, &r);
	ASSERT(out && !strstr(out, "at exit"));
	free(out);
	return true;
}

/* Start-up: its verdict while it lasts, and the others say when it ended. */
TEST(timeline_text_startup)
{
	struct report_analysis a = analysis();
	struct report r = sample(&a);
	char *out;

	a.memory.verdict = VERDICT_STARTUP;
	a.memory.startup = (struct report_startup){ .end_s = 2.0, .ongoing = true,
						    .new_stacks = 1234, .new_share = 0.964 };
	out = render(report_text__write, &r);
	ASSERT(out && strstr(out, "\nVerdict: start-up, not judged yet: 96% of the last interval's"
				  " allocations came from code not run before\n  (1,234 new stacks):\n"
				  "  what start-up builds (modules, tables, caches) grows the heap as a"
				  " leak would:\n  trends are measured from the first report after it\n"));
	free(out);
	a.memory.startup.new_stacks = 1;
	a.memory.startup.unstored = 5678;
	out = render(report_text__write, &r);
	ASSERT(out && strstr(out, "\n  (1 new stack; 5,678 allocations whose stack a full stack map"
				  " or ring lost):\n  what start-up"));
	free(out);
	a.memory.startup.ongoing = false;
	a.memory.startup.end_s = 1.0;
	out = render(report_text__write, &r);
	ASSERT(out && strstr(out, "\nVerdict: start-up, not judged yet: it ended at 1.0 s; trends"
				  " need 3 reports after it, this is the 2nd\n"));
	free(out);
	a.memory.verdict = VERDICT_LEAK;
	out = render(report_text__write, &r);
	ASSERT(out && strstr(out, "\nVerdict: leak: 1 site grows steadily (1 stack) since start-up ended at"
				  " 1.0 s, +40.0 KiB/s in all"));
	free(out);
	a.memory.verdict = VERDICT_NO_LEAK;
	out = render(report_text__write, &r);
	ASSERT(out && strstr(out, "\nVerdict: no leak seen: no stack grows steadily since start-up"
				  " ended at 1.0 s, over 2 reports only (a growth that ended within them may"
				  " not show: a shorter INTERVAL gives more); the live blocks hold steady,"));
	free(out);
	/* Start-up that ended with the first report is not worth a word. */
	a.memory.startup.end_s = samples[0].t_s;
	out = render(report_text__write, &r);
	ASSERT(out && strstr(out, "\nVerdict: no leak seen: no stack grows steadily, over 4 reports only"));
	free(out);
	stacks[0].growth.trend = TREND_STARTUP;
	out = render(report_text__write, &r);
	stacks[0].growth.trend = TREND_STABLE;
	ASSERT(out && strstr(out, "\n  32.0 MiB (33,554,432 bytes) in 8,192 allocations from malloc\n"
				  "      start-up: grew in 1 of 12 intervals; oldest block 6.1 s old\n"));
	free(out);
	return true;
}

/* Fragmentation before the live blocks' trend is known: measured, never "not a leak". */
TEST(timeline_text_fragmentation_early)
{
	struct report_analysis a = analysis();
	struct report r = sample(&a);
	char *out;

	a.memory.trend_known = false;
	a.memory.live.trend = TREND_UNKNOWN;
	a.nr_samples = 2;
	out = render(report_text__write, &r);
	ASSERT(out && strstr(out, "\nVerdict: fragmentation: the allocator holds memory that no live"
				  " block uses;\n  leak or not is not known yet: trends need 3 reports,"
				  " this is the 2nd.\n"));
	ASSERT(!strstr(out, "not a leak") && !strstr(out, "The live blocks held"));
	free(out);
	a.memory.live.trend = TREND_STARTUP;
	a.memory.startup.end_s = 1.0;
	out = render(report_text__write, &r);
	ASSERT(out && strstr(out, "  leak or not is not known yet: start-up goes on.\n"));
	free(out);
	a.memory.startup.end_s = 0.5;
	out = render(report_text__write, &r);
	ASSERT(out && strstr(out, "  leak or not is not known yet: the live blocks' trend needs 3"
				  " reports after start-up, this is the 1st.\n"));
	ASSERT(!strstr(out, "not a leak") && !strstr(out, "start-up over the run"));
	free(out);
	return true;
}

/* Retained memory, where and what helps, per allocator; no advice already taken. */
TEST(timeline_text_advice_per_allocator)
{
	struct report_analysis a = analysis();
	struct report r = sample(&a);
	char *out;

	a.memory.released = false;
	out = render(report_text__write, &r);
	ASSERT(out && strstr(out, "  What helps (glibc's malloc): malloc_trim(0) after freeing much;\n"
				  "  MALLOC_ARENA_MAX=2 (fewer per-thread arenas);\n"));
	free(out);
	r.allocator = ALLOCATOR_TCMALLOC;
	out = render(report_text__write, &r);
	ASSERT(out && strstr(out, "retained.\n  The live blocks held steady over the run.\n  tcmalloc keeps"));
	ASSERT(strstr(out, "  What helps (tcmalloc): MallocExtension::instance()->ReleaseFreeMemory()"));
	ASSERT(strstr(out, "TCMALLOC_RELEASE_RATE=10") && strstr(out, "TCMALLOC_AGGRESSIVE_DECOMMIT"));
	ASSERT(!strstr(out, "glibc") && !strstr(out, "malloc_trim") && !strstr(out, "MALLOC_ARENA_MAX"));
	free(out);
	r.allocator = ALLOCATOR_JEMALLOC;
	a.memory.released = true;
	out = render(report_text__write, &r);
	ASSERT(out && strstr(out, "MALLOC_CONF=dirty_decay_ms:0,muzzy_decay_ms:0") &&
	       strstr(out, "background_thread:true") && strstr(out, "narenas:2"));
	ASSERT(!strstr(out, "glibc") && !strstr(out, "purge\", NULL"));	/* given back already */
	free(out);
	return true;
}

/* Reused, not given back: the live blocks grew into the retained memory; malloc_trim still advised. */
TEST(timeline_text_reused)
{
	struct report_analysis a = analysis();
	struct report r = sample(&a);
	char *out;

	a.memory.released = false;
	a.memory.reused = true;
	a.memory.now.mem_live = a.memory.now.live = 1000 * MiB;
	a.memory.now.anon = 1040 * MiB;
	a.memory.now.rss = 1050 * MiB;
	a.memory.now_retained = 1040 * MiB - 128 * 1024 - 1000 * MiB;
	out = render(report_text__write, &r);
	ASSERT(out && strstr(out, "  Reused since: at 2.0 s: RSS 1.0 GiB (anonymous 1.0 GiB) for 1000.0 MiB"
				  " of live blocks (95% of RSS): 39.9 MiB retained;\n  the live blocks grew"
				  " into the memory retained: the allocator reused it rather than give it back.\n"));
	ASSERT(!strstr(out, "Given back") && strstr(out, "malloc_trim(0)"));
	free(out);
	return true;
}

/* The retained figure and the live bytes printed beside it are of one moment: the reading's. */
TEST(timeline_text_retained_one_moment)
{
	struct report_analysis a = analysis();
	struct report r = sample(&a);
	char *out;

	a.memory.worst.t_s = 2.8;	/* the report, after the target freed everything and exited */
	a.memory.worst.live = 0;
	out = render(report_text__write, &r);
	ASSERT(out && strstr(out, "  At 1.0 s: RSS 1.0 GiB (anonymous 1.0 GiB) for 102.0 MiB of live"
				  " blocks (10% of RSS): 927.9 MiB retained."));
	free(out);
	return true;
}

/* Drops: the figures are incomplete, by how much, and the option that fixes it. */
TEST(timeline_text_incomplete)
{
	struct report_analysis a = analysis();
	struct report r = sample(&a);
	char *out;

	a.memory = (struct report_memory){ .verdict = VERDICT_LEAK, .reports = 3, .incomplete = true,
					   .drops = 285312 + 40, .untracked = 285312,
					   .untracked_growing = true, .untracked_rose = 6,
					   .untracked_intervals = 7, .now = samples[2],
					   .live = { .trend = TREND_STABLE } };
	a.nr_growing = 0;
	stacks[1].growth.trend = TREND_STABLE;
	r.totals.outstanding_allocs = 114688;
	r.totals.counters[CNT_ALLOCS_MAP_FULL] = 285312;
	r.totals.counters[CNT_STACKS_MAP_FULL] = 40;
	out = render(report_text__write, &r);
	stacks[1].growth.trend = TREND_GROWING;
	ASSERT(out && strstr(out, "\nVerdict: leak: more allocations went untracked in 6 of 7 intervals"
				  " (285,312 in all):\n"));
	ASSERT(strstr(out, "\n  The figures are incomplete: 285,312 allocations were not tracked: their"
			   " blocks are in no figure here, and 40 other drops (stacks, frees or"
			   " processes missed); raise --stack-storage-size; see Dropped below.\n"
			   "  At most 400,000 blocks were live at once, tracked or not: --max-allocs"
			   " 524288 holds them\n"));
	ASSERT(strstr(out, "      stable as far as tracked: grew in 1 of 12 intervals"));
	free(out);
	/* Nothing grows, nothing went untracked since: no "no leak" on incomplete figures. */
	a.memory.verdict = VERDICT_INCOMPLETE;
	a.memory.untracked_growing = false;
	out = render(report_text__write, &r);
	ASSERT(out && strstr(out, "\nVerdict: incomplete figures, no leak in them: no stack grows"
				  " steadily, over 4 reports only (a growth"));
	ASSERT(!strstr(out, "no leak seen"));
	free(out);
	return true;
}

static const char json_startup_check[] =
	"import json, sys\n"
	"d = json.load(open(sys.argv[1]))\n"
	"s = d['stacks'][0]\n"
	"assert s['trend'] == 'startup' and s['r2'] is None and s['leak_rank'] is None, s\n"
	"m = d['memory']\n"
	"assert m['verdict'] == 'startup', m\n"
	"assert m['startup'] == {'end_s': 2.0, 'ongoing': True, 'new_stacks': 1234,\n"
	"                        'unstored_allocs': 99, 'new_share': 0.964}, m\n";

TEST(timeline_json_startup)
{
	struct report_analysis a = analysis();
	struct report r = sample(&a);
	char *out;

	a.memory.verdict = VERDICT_STARTUP;
	a.memory.startup = (struct report_startup){ .end_s = 2.0, .ongoing = true, .new_stacks = 1234,
						    .unstored = 99, .new_share = 0.964 };
	stacks[0].growth.trend = TREND_STARTUP;
	out = render(report_json__write, &r);
	stacks[0].growth.trend = TREND_STABLE;
	ASSERT(out);
	ASSERT(unit__run_python(json_startup_check, out) <= 0);
	free(out);
	return true;
}

/*
 * Sampled (--sample): the analysis's figures of live blocks are estimates
 * and marked so ("~"), as the totals are; RSS and mmaps are not.
 */
TEST(timeline_text_sampled_marks)
{
	struct report_analysis a = analysis();
	struct report r = sample(&a);
	struct report_sampling sampling = { .by_bytes = true, .mean = 524288 };
	char *out;
	bool ok;

	r.sampling = &sampling;
	r.totals.kind_bytes[KIND_MMAP] = 4 * MiB;
	r.totals.kind_allocs[KIND_MMAP] = 1;
	out = render(report_text__write, &r);
	ASSERT(out);
	ok = strstr(out, "  1. ~+40.0 KiB/s, now ~240.0 KiB in ~120 allocations, at site_leak") &&
	     strstr(out, ": now ~240.0 KiB in ~120 allocations from malloc\n") &&
	     strstr(out, "(anonymous 1.0 GiB) for ~102.0 MiB of live blocks (10% of RSS): ~") &&
	     strstr(out, "for ~102.0 MiB of live blocks\n") &&
	     strstr(out, "  of which heap blocks ~") && strstr(out, ", mmaps 4.0 MiB in 1 (not heap");
	if (!ok)
		fprintf(stderr, "%s", out);
	free(out);
	ASSERT(ok);
	return true;
}
