// SPDX-License-Identifier: GPL-2.0
/* report_html.c: one self-contained page, its data JSON safe inside the page. */
#include <stdlib.h>
#include <string.h>
#include "helpers.h"
#include "model/report.h"
#include "unit.h"
#include "report/report_html.h"

#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"

/* Names a target may hold: HTML that would end the data's element, JavaScript line ends, bad bytes. */
static struct report_frame ht_evil[] = {
	{ .address = 0x1010, .function = "</script><script>alert(1)</script>", .module = "/srv/app",
	  .file = "<!--x.c", .line = 10, .own = true },
	{ .address = 0x1500, .function = "main\xe2\x80\xa8line\xe2\x80\xa9 & <b>", .module = "/srv/app",
	  .file = "app.c", .line = 50, .own = true },
	{ .address = 0x7f01, .function = "bad\xff\xfe \x01 \xc3\xa9", .module = LIBC },
};

static struct report_frame ht_py[] = {
	{ .address = 0x20, .function = "Model.step", .module = "/srv/train.py", .file = "/srv/train.py",
	  .line = 42, .language = FRAME_PYTHON, .own = true },
	{ .address = 0x7f02, .function = "_PyEval_EvalFrameDefault", .module = "/usr/bin/python3.11" },
};

static struct report_stack ht_stacks[] = {
	{ .api = API_MALLOC, .bytes = 3000, .allocs = 3, .total_bytes = 5000, .total_allocs = 5,
	  .frames = ht_evil, .nr_frames = 3 },
	{ .api = API_MALLOC, .bytes = 1000, .allocs = 10, .total_bytes = 1000, .total_allocs = 10,
	  .frames = ht_py, .nr_frames = 2 },
	{ .api = API_CALLOC, .bytes = 24, .allocs = 1, .total_bytes = 24, .total_allocs = 1,
	  .no_stack = true },
};

static size_t count(const char *text, const char *what)
{
	size_t n = 0;

	for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
		n++;
	return n;
}

/* The data block parses as JSON and holds every name as the target had it (bad bytes U+FFFD). */
static const char json_check[] =
	"import json, re, sys\n"
	"page = open(sys.argv[1], encoding='utf-8').read()\n"
	"m = re.search(r'<script type=\"application/json\" id=\"data\">(.*?)</script>', page, re.S)\n"
	"d = json.loads(m.group(1))\n"
	"S = d['strings']\n"
	"for want in ('</script><script>alert(1)</script>', '<!--x.c',\n"
	"             'main\\u2028line\\u2029 & <b>', 'bad\\ufffd\\ufffd \\x01 \\u00e9',\n"
	"             './app </title> & \"2\"', 'Model.step', '[stack unavailable]'):\n"
	"    assert want in S, (want, S)\n"
	"assert len(d['sites']) == 3, d['sites']\n"
	"assert [d['stacks'][s['stacks'][0]]['b'] for s in d['sites']] == [3000, 1000, 24]\n"
	"own = [f for f in d['frames'] if f[4] & 1]\n"
	"assert any(f[4] & 2 for f in own), own\n"
	"o, a = d['flame']['outstanding'], d['flame']['allocated']\n"
	"assert o[:5] == [0, -1, S.index('all'), 4024, 14], o[:5]\n"
	"assert a[3] == 6024, a[:5]\n"
	"assert len(o) % 5 == 0 and all(o[i] >= 1 for i in range(5, len(o), 5))\n";

static struct report sample_html(void)
{
	return (struct report){ .pid = 7, .command = "./app </title> & \"2\"", .final = true,
				.duration_s = 3.5, .stacks = ht_stacks,
				.nr_stacks = sizeof(ht_stacks) / sizeof(ht_stacks[0]),
				.totals = { .outstanding_bytes = 4024, .outstanding_allocs = 14 } };
}

TEST(html_escapes_hostile_names)
{
	struct report r = sample_html();
	char *text;
	const char *data, *end;

	ASSERT(!unit__group(&r, 10, 10));
	text = unit__render(report_html__write, &r, NULL);
	unit__ungroup(&r);
	ASSERT(text);
	/* Two elements: the data and the script; no name ends one or opens another. */
	ASSERT(count(text, "<script") == 2 && count(text, "</script") == 2);
	ASSERT(count(text, "<!--") == 0 && !strstr(text, "\xe2\x80\xa8"));
	ASSERT(strstr(text, "<title>memleakbpf: pid 7 (./app &lt;/title&gt; &amp; &quot;2&quot;)</title>"));
	data = strstr(text, "<script type=\"application/json\" id=\"data\">");
	end = data ? strstr(data, "</script>") : NULL;
	ASSERT(end && strstr(data, "\\u003c/script\\u003e\\u003cscript\\u003ealert(1)"));
	/* Self-contained: nothing named that a browser would fetch. */
	ASSERT(!strstr(text, "src=") && !strstr(text, "href=\"http") && !strstr(text, "url(") &&
	       !strstr(text, "@import"));
	ASSERT(strstr(text, "</html>\n"));
	free(text);
	return true;
}

TEST(html_data_is_json)
{
	struct report r = sample_html();
	char *text;
	int ret;

	ASSERT(!unit__group(&r, 10, 10));
	text = unit__render(report_html__write, &r, NULL);
	unit__ungroup(&r);
	ASSERT(text);
	ret = unit__run_python(json_check, text);
	free(text);
	ASSERT(ret <= 0);
	return true;
}
