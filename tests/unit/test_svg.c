// SPDX-License-Identifier: GPL-2.0
/* report_svg.c: the self-contained SVG flame graph. */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "helpers.h"
#include "model/report.h"
#include "unit.h"
#include "report/report_svg.h"

#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define PLOT_W 1180.0	/* the width frames share: 1200 minus two margins */

/* Two lines of site_a: one box, both lines in its tooltip. */
static struct report_frame sv_a[] = {
	{ .address = 0x1010, .function = "site_a", .module = "/srv/app", .file = "app.c", .line = 10, .own = true },
	{ .address = 0x1500, .function = "main", .module = "/srv/app", .file = "app.c", .line = 50, .own = true },
	{ .address = 0x7f01, .function = "__libc_start_call_main", .module = LIBC },
};

static struct report_frame sv_b[] = {
	{ .address = 0x1011, .function = "site_a", .module = "/srv/app", .file = "app.c", .line = 11, .own = true },
	{ .address = 0x1500, .function = "main", .module = "/srv/app", .file = "app.c", .line = 50, .own = true },
	{ .address = 0x7f01, .function = "__libc_start_call_main", .module = LIBC },
};

static struct report_frame sv_cxx[] = {
	{ .address = 0x9001, .function = "ns::Tpl<int, std::less<int> >::get & \"x\" 'y'",
	  .module = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6" },
	{ .address = 0x1600, .function = "main", .module = "/srv/app", .file = "app.c", .line = 60, .own = true },
	{ .address = 0x7f01, .function = "__libc_start_call_main", .module = LIBC },
};

/* Invalid UTF-8, a control character, a surrogate and U+FFFE: none may reach the XML. */
static struct report_frame sv_bad[] = {
	{ .address = 0x5001, .function = "bad\xff\xfe name \x01 \xed\xa0\x80 \xef\xbf\xbe \xc3\xa9",
	  .module = "/opt/lib/libfoo.so.1", .file = "<gen>&.c", .line = 3 },
	{ .address = 0x1700, .function = "main", .module = "/srv/app" },
};

static struct report_frame sv_unnamed[] = {
	{ .address = 0x7e001a2b, .module = "/opt/lib/libfoo.so.1", .module_offset = 0x1a2b },
	{ .address = 0x1700, .function = "main", .module = "/srv/app" },
};

/* 40 two-byte characters: a label cut must not split one. */
static struct report_frame sv_long[] = {
	{ .address = 0x1800, .module = "/srv/app",
	  .function = "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		      "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		      "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		      "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9" },
};

static struct report_stack sv_stacks[] = {
	{ .api = API_MALLOC, .bytes = 3000, .allocs = 3, .frames = sv_a, .nr_frames = 3 },
	{ .api = API_MALLOC, .bytes = 1000, .allocs = 1, .frames = sv_b, .nr_frames = 3 },
	{ .api = API_NEW, .bytes = 500, .allocs = 5, .frames = sv_cxx, .nr_frames = 3 },
	{ .api = API_MALLOC, .bytes = 500, .allocs = 1, .frames = sv_long, .nr_frames = 1 },
	{ .api = API_CALLOC, .bytes = 250, .allocs = 2, .frames = sv_bad, .nr_frames = 2 },
	{ .api = API_CALLOC, .bytes = 125, .allocs = 1, .no_stack = true },
	{ .api = API_MMAP, .bytes = 125, .allocs = 1, .frames = sv_unnamed, .nr_frames = 2 },
	{ .api = API_MALLOC, .bytes = 0, .allocs = 4, .frames = sv_a, .nr_frames = 3 },
};

#define SV_TOTAL 5500.0

static char *render_svg(const struct report *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int err;

	if (!f)
		return NULL;
	err = report_svg__write(r, f);
	fclose(f);
	if (err) {
		free(text);
		return NULL;
	}
	return text;
}

static struct report sample_svg(void)
{
	return (struct report){ .pid = 42, .command = "./app --x=<1> & \"2\"", .stacks = sv_stacks,
				.nr_stacks = sizeof(sv_stacks) / sizeof(sv_stacks[0]) };
}

static size_t count(const char *text, const char *what)
{
	size_t n = 0;

	for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
		n++;
	return n;
}

/* Positions are printed with three decimals. */
static bool near(double a, double b)
{
	return a - b < 0.0006 && b - a < 0.0006;
}

/*
 * The frames of the sample: all; [stack unavailable] > calloc;
 * __libc_start_call_main > main > {ns::Tpl... > new, site_a > malloc};
 * main > {bad..., libfoo.so.1+0x1a2b} > {calloc, mmap}; the long name > malloc.
 */
#define SV_FRAMES 16

TEST(svg_widths_proportional_to_bytes)
{
	struct report r = sample_svg();
	char *text = render_svg(&r);
	size_t frames = 0;
	bool ok = true;

	ASSERT(text);
	for (const char *p = strstr(text, "<g class=\"f\""); p; p = strstr(p + 1, "<g class=\"f\"")) {
		const char *rect = strstr(p, "<rect x=\"");
		unsigned long long bx, bw;
		double x, w;

		if (sscanf(p, "<g class=\"f\" data-x=\"%llu\" data-w=\"%llu\"", &bx, &bw) != 2 ||
		    !rect || sscanf(rect, "<rect x=\"%lf\" y=\"%*u\" width=\"%lf\"", &x, &w) != 2) {
			ok = false;
			break;
		}
		if (!near(w, bw * PLOT_W / SV_TOTAL) || !near(x, 10 + bx * PLOT_W / SV_TOTAL)) {
			fprintf(stderr, "  frame at %llu+%llu bytes drawn at %.3f+%.3f\n", bx, bw, x, w);
			ok = false;
		}
		frames++;
	}
	ok &= frames == SV_FRAMES;
	/* The root holds everything. */
	ok &= strstr(text, "data-x=\"0\" data-w=\"5500\" data-d=\"0\"><title>all\n") != NULL;
	free(text);
	ASSERT(ok);
	return true;
}

TEST(svg_merges_a_function_and_lists_its_lines)
{
	static const char *const want[] = {
		"<title>site_a\nat app.c:10, app.c:11\nin /srv/app\n4000 bytes (3.9 KiB), "
		"72.73% of all outstanding\n4 allocations</title>",
		"<title>main\nat app.c:50, app.c:60\nin /srv/app\n4500 bytes",
		"<title>malloc\nallocation function\n4000 bytes",
	};
	struct report r = sample_svg();
	char *text = render_svg(&r);
	bool ok = true;

	ASSERT(text);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		if (!strstr(text, want[i])) {
			fprintf(stderr, "  no \"%s\"\n", want[i]);
			ok = false;
		}
	}
	ok &= count(text, "<title>site_a\n") == 1 && count(text, "<title>main\n") == 2;
	if (!ok)
		fputs(text, stderr);
	free(text);
	ASSERT(ok);
	return true;
}

TEST(svg_empty_report)
{
	struct report r = { .pid = 1 };
	char *text = render_svg(&r);
	bool ok;

	ASSERT(text);
	ok = strstr(text, "No outstanding bytes.") && !strstr(text, "<g class=\"f\"") &&
	     strstr(text, "</svg>\n");
	free(text);
	ASSERT(ok);
	return true;
}

static const char xml_check[] =
	"import sys, xml.etree.ElementTree as E\n"
	"S = '{http://www.w3.org/2000/svg}'\n"
	"root = E.parse(sys.argv[1]).getroot()\n"
	"assert root.tag == S + 'svg'\n"
	"frames = {}\n"
	"for g in root.iter(S + 'g'):\n"
	"    if g.get('class') != 'f':\n"
	"        continue\n"
	"    title = g.find(S + 'title').text\n"
	"    frames.setdefault(title.split('\\n')[0], []).append(g)\n"
	"bad = 'bad\\ufffd\\ufffd name \\ufffd \\ufffd\\ufffd\\ufffd \\ufffd \\u00e9'\n"
	"assert bad in frames, sorted(frames)\n"
	"assert '\\nat <gen>&.c:3\\n' in frames[bad][0].find(S + 'title').text\n"
	"cxx = 'ns::Tpl<int, std::less<int> >::get & \"x\" \\'y\\''\n"
	"assert cxx in frames, sorted(frames)\n"
	"assert 'libfoo.so.1+0x1a2b' in frames and '[stack unavailable]' in frames\n"
	"head = ''.join(t.text or '' for t in root.iter(S + 'text'))\n"
	"assert 'pid 42 (./app --x=<1> & \"2\")' in head, head\n"
	"longname = '\\u00e9' * 40\n"
	"assert frames[longname][0].find(S + 'text').text == '\\u00e9' * 6 + '..'\n"
	"def rgb(name, i=0):\n"
	"    f = frames[name][i].find(S + 'rect').get('fill')\n"
	"    return tuple(int(v) for v in f[4:-1].split(','))\n"
	"def within(c, lo, hi):\n"
	"    return all(l <= v <= h for v, l, h in zip(c, lo, hi))\n"
	"assert within(rgb('site_a'), (225, 120, 40), (255, 210, 70)), rgb('site_a')\n"
	"assert within(rgb('__libc_start_call_main'), (70, 130, 210), (110, 180, 240))\n"
	"assert within(rgb(cxx), (160, 110, 215), (200, 150, 245))\n"
	"assert within(rgb(bad), (80, 175, 85), (130, 225, 125))\n"
	"assert within(rgb('malloc'), (205, 45, 45), (245, 75, 75))\n"
	"# Self-contained: nothing fetched from anywhere.\n"
	"for e in root.iter():\n"
	"    assert not any('href' in k for k in e.attrib), e.attrib\n"
	"    assert e.tag not in (S + 'image', S + 'foreignObject', S + 'use'), e.tag\n"
	"style = root.find(S + 'style').text\n"
	"assert 'url(' not in style and '@import' not in style\n"
	"script = root.find(S + 'script').text\n"
	"assert 'http' not in script and 'zoom' in script\n";

/* r's flame graph passes the Python script's checks (or Python is missing: skipped). */
static bool svg_passes(const struct report *r, const char *script)
{
	char *text = render_svg(r);
	int ret;

	if (!text)
		return false;
	ret = unit__run_python(script, text);
	free(text);
	return ret <= 0;
}

TEST(svg_is_valid_xml_with_any_name)
{
	struct report r = sample_svg();

	ASSERT(svg_passes(&r, xml_check));
	return true;
}

/*
 * Whose code, as the sites say (frame.own): a container's frames inlined
 * from libstdc++'s headers into the program are the C++ runtime's colour,
 * the user's line the program's; Python, the user's or a library's.
 */
TEST(svg_colour_is_whose_code)
{
	struct report_frame f[] = {
		{ .address = 0x10, .function = "std::__new_allocator<double>::allocate",
		  .module = "/srv/app", .file = "/usr/include/c++/12/bits/new_allocator.h",
		  .line = 137, .inlined = true },
		{ .address = 0x10, .function = "load_model", .module = "/srv/app", .file = "m.cc",
		  .line = 58, .own = true },
		{ .address = 0x20, .function = "Linear.forward", .module = "/usr/lib/python3/t/l.py",
		  .file = "/usr/lib/python3/t/l.py", .line = 114, .language = FRAME_PYTHON },
		{ .address = 0x30, .function = "step", .module = "/srv/t.py", .file = "/srv/t.py",
		  .line = 38, .language = FRAME_PYTHON, .own = true },
	};
	struct report_stack s = { .api = API_NEW, .bytes = 64, .allocs = 1, .frames = f,
				  .nr_frames = 4 };
	struct report r = { .stacks = &s, .nr_stacks = 1 };
	static const char check[] =
		"import sys, xml.etree.ElementTree as E\n"
		"S = '{http://www.w3.org/2000/svg}'\n"
		"fill = {g.find(S + 'title').text.split('\\n')[0]: g.find(S + 'rect').get('fill')\n"
		"        for g in E.parse(sys.argv[1]).getroot().iter(S + 'g') if g.get('class') == 'f'}\n"
		"def rgb(name):\n"
		"    return tuple(int(v) for v in fill[name][4:-1].split(','))\n"
		"def within(c, lo, hi):\n"
		"    return all(l <= v <= h for v, l, h in zip(c, lo, hi))\n"
		"assert within(rgb('std::__new_allocator<double>::allocate'), (160, 110, 215), (200, 150, 245))\n"
		"assert within(rgb('load_model'), (225, 120, 40), (255, 210, 70))\n"
		"assert within(rgb('Linear.forward (l.py:114)'), (120, 170, 160), (160, 210, 200)), fill\n"
		"assert within(rgb('step (t.py:38)'), (225, 190, 45), (250, 235, 85)), fill\n";

	ASSERT(svg_passes(&r, check));
	return true;
}

/* Inlined frames can take a stack past the 127 captured addresses. */
TEST(svg_deeper_than_the_capture_limit)
{
	enum { DEPTH = 300 };
	static struct report_frame deep[DEPTH];
	struct report_stack s = { .api = API_MALLOC, .bytes = 64, .allocs = 1, .frames = deep,
				  .nr_frames = DEPTH };
	struct report r = { .stacks = &s, .nr_stacks = 1 };
	char *text;
	bool ok;

	for (int i = 0; i < DEPTH; i++)
		deep[i] = (struct report_frame){ .address = 0x1000 + i, .function = "f",
						 .module = "/srv/app", .inlined = i % 3 != 2 };
	text = render_svg(&r);
	ASSERT(text);
	ok = count(text, "<g class=\"f\"") == DEPTH + 2 &&
	     strstr(text, "data-d=\"301\"><title>malloc\n");
	free(text);
	ASSERT(ok);
	return true;
}

/* A Python frame is its line, labelled as in --folded; two lines are two frames. */
TEST(svg_python_frames_by_line)
{
	struct report_frame a[] = {
		{ .address = 0x10, .function = "load", .module = "/srv/ds.py", .file = "/srv/ds.py",
		  .line = 8, .language = FRAME_PYTHON },
		{ .address = 0x20, .function = "train", .module = "/srv/t.py", .file = "/srv/t.py",
		  .line = 13, .language = FRAME_PYTHON },
	};
	struct report_frame b[] = {
		{ .address = 0x11, .function = "load", .module = "/srv/ds.py", .file = "/srv/ds.py",
		  .line = 9, .language = FRAME_PYTHON },
		{ .address = 0x20, .function = "train", .module = "/srv/t.py", .file = "/srv/t.py",
		  .line = 13, .language = FRAME_PYTHON },
	};
	struct report_stack stacks[] = {
		{ .api = API_MALLOC, .bytes = 300, .allocs = 3, .frames = a, .nr_frames = 2 },
		{ .api = API_MALLOC, .bytes = 100, .allocs = 1, .frames = b, .nr_frames = 2 },
	};
	struct report r = { .stacks = stacks, .nr_stacks = 2 };
	char *text = render_svg(&r);
	bool ok;

	ASSERT(text);
	ok = strstr(text, "<title>load (ds.py:8)\nat /srv/ds.py:8\nin /srv/ds.py\n300 bytes") &&
	     strstr(text, "<title>load (ds.py:9)\nat /srv/ds.py:9\n") &&
	     count(text, "<title>train (t.py:13)\n") == 1 && strstr(text, ">load (ds.py:8)</text>");
	if (!ok)
		fputs(text, stderr);
	free(text);
	ASSERT(ok);
	return true;
}

/*
 * Frames narrower than 0.1 px: a run of siblings becomes one grey box when
 * together they are wide enough, and nothing above them is drawn; the
 * header counts them. Here a 1 MB stack beside 200 stacks of 8 bytes from
 * distinct callers: each 0.009 px wide, all of them 1.9 px.
 */
TEST(svg_merges_narrow_frames)
{
	enum { SMALL = 200 };
	static struct report_frame big[] = {
		{ .address = 0x10, .function = "cache", .module = "/srv/app" },
		{ .address = 0x20, .function = "main", .module = "/srv/app" },
	};
	static struct report_frame small[SMALL][3];
	static char names[SMALL][16];
	struct report_stack stacks[SMALL + 1] = {
		{ .api = API_MALLOC, .bytes = 1000000, .allocs = 1, .frames = big, .nr_frames = 2 },
	};
	struct report r = { .stacks = stacks, .nr_stacks = SMALL + 1 };
	char *text;
	bool ok;

	for (int i = 0; i < SMALL; i++) {
		snprintf(names[i], sizeof(names[i]), "caller%03d", i);
		small[i][0] = (struct report_frame){ .address = 0x30, .function = "leaf",
						     .module = "/srv/app" };
		small[i][1] = (struct report_frame){ .address = 0x40 + i, .function = names[i],
						     .module = "/srv/app" };
		small[i][2] = big[1];
		stacks[i + 1] = (struct report_stack){ .api = API_MALLOC, .bytes = 8, .allocs = 1,
						       .frames = small[i], .nr_frames = 3 };
	}
	text = render_svg(&r);
	ASSERT(text);
	/* all, main, cache, malloc; the merged callers; nothing of the 200 one by one. */
	ok = count(text, "<g class=\"f\"") == 5 && !strstr(text, "caller") &&
	     strstr(text, "data-w=\"1600\" data-d=\"2\"><title>[200 narrow frames]\n1600 bytes") &&
	     strstr(text, ">600 frames narrower than 0.1 px: merged into grey boxes, or left out<");
	if (!ok)
		fputs(text, stderr);
	free(text);
	ASSERT(ok);
	return true;
}

/*
 * Many stacks sharing their outer frames, given in any order: one picture,
 * the same byte for byte, the leaves left to right by name (flamegraph.pl's
 * order), however the prefix is skipped when sorting.
 */
TEST(svg_order_from_the_root_whatever_the_input)
{
	enum { N = 64 };
	static char names[N][16];
	static struct report_frame fr[N][3];
	struct report_stack st[N], rev[N];
	struct report r = sample_svg();
	char *one, *two;
	const char *at;

	for (int i = 0; i < N; i++) {
		/* leaf_00 .. leaf_63, in a scrambled order; every other one unnamed. */
		int k = (i * 37) % N;

		snprintf(names[i], sizeof(names[i]), "leaf_%02d", k);
		fr[i][0] = (struct report_frame){ .address = 0x2000 + k, .function = k % 2 ? names[i] : NULL,
						  .module = "/srv/app", .module_offset = 0x2000 + k };
		fr[i][1] = sv_a[1];
		fr[i][2] = sv_a[2];
		st[i] = (struct report_stack){ .api = API_MALLOC, .bytes = 100 + k, .allocs = 1,
					       .frames = fr[i], .nr_frames = 3 };
		rev[N - 1 - i] = st[i];
	}
	r.stacks = st;
	r.nr_stacks = N;
	one = render_svg(&r);
	r.stacks = rev;
	two = render_svg(&r);
	ASSERT(one && two && !strcmp(one, two));
	/* The named leaves left to right by name. */
	at = strstr(one, "leaf_01");
	for (int k = 3; at && k < N; k += 2) {
		char want[16];

		snprintf(want, sizeof(want), "leaf_%02d", k);
		ASSERT(strstr(at, want));
		at = strstr(at, want);
	}
	ASSERT(at);
	free(one);
	free(two);
	return true;
}

/*
 * Under --sample every figure drawn is an estimate: the subtitle says so,
 * with the total's 95% interval and the samples behind it, and each
 * frame's tooltip marks its bytes and allocations with ~. Exact: no ~.
 */
TEST(svg_sampled_figures_are_estimates)
{
	struct report_sampling sm = { .by_bytes = true, .mean = 512 * 1024 };
	struct report r = sample_svg();
	char *exact = render_svg(&r), *text;
	bool ok;

	r.sampling = &sm;
	r.totals.outstanding_var = 1e12;	/* sd 1e6 bytes: ±1.9 MiB */
	r.totals.outstanding_samples = 37;
	text = render_svg(&r);
	ASSERT(exact && text);
	ok = strstr(text, "~5500 bytes (5.4 KiB ±1.9 MiB) in ~") &&
	     strstr(text, "estimated from 37 samples (--sample 512.0 KiB)") &&
	     count(text, "\n~") == 2 * SV_FRAMES && count(text, "(estimates, by sampling)") == SV_FRAMES &&
	     !strstr(exact, "~") && !strstr(exact, "estimate");
	free(exact);
	free(text);
	return ok;
}
