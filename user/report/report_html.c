// SPDX-License-Identifier: GPL-2.0
/*
 * --html: the final report as one page a person looks at, in one file that
 * needs nothing else: no script, style, font or image from anywhere, and
 * no code but ours (html/page.js and html/page.css, built in below).
 *
 * What needs no script is written as HTML here: the header, the totals and
 * the verdict in the text report's own words (report_text__summary), and
 * the timeline as the --timeline-svg writer draws it. The rest (the sites
 * table, each site's stacks and frames, the flame graph, the processes,
 * reachability) the page's script draws from the data in a
 * <script type="application/json"> element: the stacks the JSON report
 * keeps (html_data.c) and flame trees pruned to what can be seen
 * (html_flame.c), strings and frames once each (html_pool.c). That JSON is
 * escaped for its element: no "</script>", "<!--", U+2028 or U+2029 in it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "html_data.h"
#include "html_flame.h"
#include "html_pool.h"
#include "model/report.h"
#include "xml.h"
#include "report_html.h"
#include "report_text.h"
#include "report_timeline.h"

/* The page's script and style, each NUL-terminated (make rebuilds this on their change). */
__asm__(".pushsection .rodata\n"
	".global report_html_js\n"
	"report_html_js:\n"
	".incbin \"user/report/html/page.js\"\n"
	".byte 0\n"
	".global report_html_css\n"
	"report_html_css:\n"
	".incbin \"user/report/html/page.css\"\n"
	".byte 0\n"
	".popsection\n");
extern const char report_html_js[], report_html_css[];

/* The verdict line's colour class: the page's legend says the same. */
static const char *verdict_class(const struct report *r)
{
	static const char *const cls[] = {
		[VERDICT_UNKNOWN] = "unknown",
		[VERDICT_NO_LEAK] = "ok",
		[VERDICT_LEAK] = "bad",
		[VERDICT_FRAGMENTATION] = "warn",
		[VERDICT_LEAK_AND_FRAGMENTATION] = "bad",
		[VERDICT_STARTUP] = "startup",
		[VERDICT_INCOMPLETE] = "ok",
		[VERDICT_GROWTH] = "bad",
		[VERDICT_STOPPED] = "warn",
	};
	unsigned v = r->analysis ? r->analysis->memory.verdict : VERDICT_UNKNOWN;

	return v < sizeof(cls) / sizeof(cls[0]) ? cls[v] : "unknown";
}

/* What fn wrote into memory, or NULL. */
static char *captured(void (*fn)(const struct report *, FILE *), const struct report *r,
		      size_t *len)
{
	char *text = NULL;
	FILE *m = open_memstream(&text, len);

	if (!m)
		return NULL;
	fn(r, m);
	if (fclose(m)) {
		free(text);
		return NULL;
	}
	return text;
}

/* The text report's head as preformatted lines; the verdict's lines marked by its colour. */
static int put_summary(const struct report *r, FILE *f)
{
	size_t len;
	char *text = captured(report_text__summary, r, &len), *line, *end;
	bool verdict = false;

	if (!text)
		return -ENOMEM;
	fputs("<pre id=\"summary\">", f);
	for (line = text; *line; line = end + (*end == '\n')) {
		end = strchrnul(line, '\n');
		/* The verdict runs from "Verdict:" to the next unindented line. */
		if (verdict && *line != ' ')
			fputs("</span>", f);
		if (verdict && *line != ' ')
			verdict = false;
		if (!strncmp(line, "Verdict: ", 9)) {
			fprintf(f, "<span id=\"verdict\" class=\"v-%s\">", verdict_class(r));
			verdict = true;
		}
		xml__put(line, (size_t)(end - line), f);
		if (*end)
			fputc('\n', f);
	}
	fputs(verdict ? "</span></pre>\n" : "</pre>\n", f);
	free(text);
	return 0;
}

static void timeline_svg(const struct report *r, FILE *f)
{
	report_timeline__svg(r, f);
}

/* The --timeline-svg drawing, inline: its XML declaration left out. */
static int put_timeline(const struct report *r, FILE *f)
{
	size_t len;
	char *svg = captured(timeline_svg, r, &len), *start;

	if (!svg)
		return -ENOMEM;
	start = strncmp(svg, "<?xml", 5) ? svg : strchrnul(svg, '\n');
	fputs("<section id=\"timeline\"><h2>Timeline</h2>\n"
	      "<p class=\"note\">Live heap blocks (what memleakbpf tracks) against the target's "
	      "resident and anonymous memory at each report (dots); start-up shaded, the peak "
	      "marked.</p>\n", f);
	fputs(start, f);
	fputs("</section>\n", f);
	free(svg);
	return 0;
}

static void put_head(const struct report *r, FILE *f)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<meta name=\"generator\" content=\"memleakbpf\">\n", f);
	char target[REPORT_TARGET_LEN];

	fprintf(f, "<title>memleakbpf: %s", report__target(r, target));
	if (r->command) {
		fputs(" (", f);
		xml__put_max(r->command, 80, f);
		fputc(')', f);
	}
	fputs("</title>\n<style>\n", f);
	fputs(report_html_css, f);
	fputs("</style>\n</head>\n<body>\n", f);
	fprintf(f, "<header><h1>memleakbpf: %s", report__target(r, target));
	if (r->command) {
		fputs(" <code>", f);
		xml__put(r->command, XML_ALL, f);
		fputs("</code>", f);
	}
	fputs("</h1>\n", f);
}

/* The sections the script fills in, in the order a reader wants them. */
static const char sections[] =
	"<section id=\"reach\" hidden></section>\n"
	"<section id=\"processes\" hidden></section>\n"
	"<section id=\"sites\"><h2>Sites</h2>\n"
	"<noscript><p>The sites table and the flame graph are drawn by the page's own script, "
	"which is off: the JSON report (--json) holds the same stacks.</p></noscript>\n"
	"</section>\n"
	"<section id=\"flame\"><h2>Flame graph</h2></section>\n";

int report_html__write(const struct report *r, FILE *f)
{
	struct html_pool *p = html_pool__new();
	int err;

	if (!p)
		return -ENOMEM;
	put_head(r, f);
	err = put_summary(r, f);
	fputs("<nav id=\"toc\"></nav>\n</header>\n<main>\n", f);
	if (!err && r->analysis)
		err = put_timeline(r, f);
	fputs(sections, f);
	fputs("</main>\n<script type=\"application/json\" id=\"data\">\n{", f);
	if (!err)
		err = html_data__write(r, p, f);
	if (!err)
		err = html_flame__write(r, p, f);
	fputs(",\n", f);
	html_pool__write(p, f);
	fputs("}\n</script>\n<script>\n", f);
	fputs(report_html_js, f);
	fputs("</script>\n</body>\n</html>\n", f);
	if (!err && html_pool__failed(p))
		err = -ENOMEM;
	html_pool__free(p);
	return err ?: ferror(f) ? -EIO : 0;
}
