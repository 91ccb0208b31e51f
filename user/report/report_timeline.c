// SPDX-License-Identifier: GPL-2.0
/*
 * The timeline of a run, one row per report: --timeline writes it as CSV,
 * --timeline-svg draws the live heap against the target's RSS as one
 * self-contained SVG file (no script, no external resource: any browser
 * opens it offline). Where the two lines part, memory is held that no live
 * block accounts for; where RSS falls and live does not, the allocator gave
 * memory back.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "model/report.h"
#include "xml.h"
#include "report_timeline.h"

#define W 960
#define H 480
#define LEFT 84		/* room for the byte labels */
#define RIGHT 24
#define TOP 74		/* title, subtitle, legend */
#define BOTTOM 46	/* time labels */
#define PLOT_W (W - LEFT - RIGHT)
#define PLOT_H (H - TOP - BOTTOM)
#define MAX_DOTS 400	/* beyond this many reports, no dot (and tooltip) per report */
#define TEXT_MAX 160	/* characters of the command shown */

/*
 * The reports' rows, after the figures from when tracing began (the same
 * moment as row 0's start, so a plot starts from nothing live). A copy the
 * caller frees; NULL when out of memory.
 */
static struct report_sample *rows(const struct report *r, size_t *nr)
{
	const struct report_analysis *a = r->analysis;
	size_t n = a ? a->nr_samples : 0;
	bool base = a && a->memory.base.mem && (!n || a->memory.base.t_s < a->samples[0].t_s);
	struct report_sample *v = malloc((n + 1) * sizeof(*v));

	*nr = 0;
	if (!v)
		return NULL;
	if (base)
		v[(*nr)++] = a->memory.base;
	if (n)
		memcpy(v + *nr, a->samples, n * sizeof(*v));
	*nr += n;
	return v;
}

/* Calls per second over the interval that ends at row i. */
static double rate(const struct report_sample *s, size_t i, bool frees)
{
	double t0 = i ? s[i - 1].t_s : 0, dt = s[i].t_s - t0;
	uint64_t now = frees ? s[i].frees : s[i].allocs;
	uint64_t before = !i ? 0 : frees ? s[i - 1].frees : s[i - 1].allocs;

	/* An exec starts the counts over: no negative rates. */
	return dt > 0 && now > before ? (double)(now - before) / dt : 0;
}

int report_timeline__csv(const struct report *r, FILE *f)
{
	size_t nr;
	struct report_sample *s = rows(r, &nr);

	if (!s)
		return -ENOMEM;
	fputs("t_s,live_bytes,rss_bytes,anon_bytes,heap_bytes,arena_bytes,allocs_per_s,frees_per_s\n", f);
	for (size_t i = 0; i < nr; i++) {
		fprintf(f, "%.3f,%llu,", s[i].t_s, (unsigned long long)s[i].live);
		/* Empty fields: the target could not be read (it had exited). */
		if (s[i].mem)
			fprintf(f, "%llu,%llu,%llu,%llu,", (unsigned long long)s[i].rss,
				(unsigned long long)s[i].anon, (unsigned long long)s[i].heap,
				(unsigned long long)s[i].arena);
		else
			fputs(",,,,", f);
		fprintf(f, "%.1f,%.1f\n", rate(s, i, false), rate(s, i, true));
	}
	free(s);
	return ferror(f) ? -EIO : 0;
}

/* ------------------------------------------------------------ scales */

struct scale {
	double max;		/* the axis' top value */
	double step;		/* between ticks */
	double unit;		/* labels are value / unit ... */
	const char *name;	/* ... followed by this */
};

/* 1, 2 or 5 times a power of ten, at least x. */
static double nice(double x)
{
	double p = pow(10, floor(log10(x))), m = x / p;

	return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

static struct scale byte_scale(double max)
{
	static const char *const names[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	struct scale s = { .unit = 1, .name = names[0] };

	for (int i = 1; i < 5 && max / s.unit >= 1024; i++) {
		s.unit *= 1024;
		s.name = names[i];
	}
	s.step = nice(fmax(max / s.unit, 1) / 5) * s.unit;
	s.max = ceil(fmax(max, 1) / s.step) * s.step;
	return s;
}

static struct scale time_scale(double max)
{
	struct scale s = { .unit = 1, .name = "s" };

	s.step = nice(fmax(max, 0.001) / 8);
	s.max = ceil(fmax(max, 0.001) / s.step) * s.step;
	return s;
}

static double px_x(const struct scale *x, double t)
{
	return LEFT + PLOT_W * t / x->max;
}

static double px_y(const struct scale *y, double v)
{
	return TOP + PLOT_H - PLOT_H * v / y->max;
}

/* ------------------------------------------------------------ drawing */

static void axes(const struct scale *x, const struct scale *y, FILE *f)
{
	for (double v = 0; v <= y->max * 1.0001; v += y->step) {
		double py = px_y(y, v);

		fprintf(f, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n",
			LEFT, py, W - RIGHT, py);
		fprintf(f, "<text class=\"yl\" x=\"%d\" y=\"%.1f\">%g %s</text>\n", LEFT - 6, py + 4,
			v / y->unit, y->name);
	}
	for (double t = 0; t <= x->max * 1.0001; t += x->step)
		fprintf(f, "<text class=\"xl\" x=\"%.1f\" y=\"%d\">%g</text>\n", px_x(x, t),
			H - BOTTOM + 16, t);
	fprintf(f, "<text class=\"xl\" x=\"%d\" y=\"%d\">seconds since tracing began</text>\n",
		LEFT + PLOT_W / 2, H - 8);
	fprintf(f, "<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>\n", LEFT,
		TOP, PLOT_W, PLOT_H);
}

enum series { LIVE, RSS, ANON };

static bool has(const struct report_sample *s, enum series which)
{
	return which == LIVE || s->mem;
}

static double value(const struct report_sample *s, enum series which)
{
	return which == LIVE ? (double)s->live : which == RSS ? (double)s->rss : (double)s->anon;
}

/* One polyline per run of rows that have the figure. */
static void line(const struct report_sample *s, size_t nr, enum series which,
		 const struct scale *x, const struct scale *y, FILE *f)
{
	static const char *const cls[] = { "live", "rss", "anon" };
	bool open = false;

	for (size_t i = 0; i < nr; i++) {
		if (!has(&s[i], which)) {
			if (open)
				fputs("\"/>\n", f);
			open = false;
			continue;
		}
		if (!open)
			fprintf(f, "<polyline class=\"%s\" points=\"", cls[which]);
		fprintf(f, "%s%.1f,%.1f", open ? " " : "", px_x(x, s[i].t_s), px_y(y, value(&s[i], which)));
		open = true;
	}
	if (open)
		fputs("\"/>\n", f);
}

/* A dot per report with its figures as a tooltip. */
static void dots(const struct report_sample *s, size_t nr, const struct scale *x,
		 const struct scale *y, FILE *f)
{
	char a[64], b[64], c[64];

	if (nr > MAX_DOTS)
		return;
	for (size_t i = 0; i < nr; i++) {
		fprintf(f, "<circle class=\"dot\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\"><title>%.1f s: live %s",
			px_x(x, s[i].t_s), px_y(y, (double)s[i].live), s[i].t_s,
			report__human_size(s[i].live, a, sizeof(a)));
		if (s[i].mem)
			fprintf(f, ", RSS %s, anonymous %s", report__human_size(s[i].rss, b, sizeof(b)),
				report__human_size(s[i].anon, c, sizeof(c)));
		fprintf(f, "; %.0f allocations/s, %.0f frees/s</title></circle>\n", rate(s, i, false),
			rate(s, i, true));
	}
}

static void peak_mark(const struct report *r, const struct scale *x, const struct scale *y,
		      FILE *f)
{
	const struct report_peak *p = &r->analysis->peak;
	char a[64];
	double px;

	if (!p->known || p->t_s < 0 || p->t_s > x->max)
		return;
	px = px_x(x, p->t_s);
	fprintf(f, "<line class=\"peak\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>\n", px, TOP, px,
		TOP + PLOT_H);
	/* Near the right edge, the label goes left of the line, not past the plot. */
	fprintf(f, "<text class=\"pl\" x=\"%.1f\" y=\"%.1f\"%s>peak %s live</text>\n",
		px > LEFT + PLOT_W * 0.8 ? px - 4 : px + 4, fmax(px_y(y, (double)p->bytes) - 6, TOP + 12),
		px > LEFT + PLOT_W * 0.8 ? " text-anchor=\"end\"" : "",
		report__human_size(p->bytes, a, sizeof(a)));
	/* Reached between reports: it may lie above the line through them. */
	fprintf(f, "<circle class=\"pk\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\"><title>peak at %.1f s: %s live</title></circle>\n",
		px, px_y(y, (double)p->bytes), p->t_s, a);
}

/* Start-up, shaded up to its last report: trends are measured from there (history.c). */
static void startup_mark(const struct report *r, const struct scale *x, FILE *f)
{
	const struct report_startup *st = &r->analysis->memory.startup;
	double px;

	if (!(st->end_s > 0) || st->end_s > x->max)
		return;
	px = px_x(x, st->end_s);
	fprintf(f, "<rect class=\"su\" x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\">"
		"<title>start-up: until %.1f s%s</title></rect>\n", LEFT, TOP, px - LEFT, PLOT_H,
		st->end_s, st->ongoing ? " (still going on at the last report)" : "");
	fprintf(f, "<text class=\"pl\" x=\"%.1f\" y=\"%d\">start-up</text>\n", LEFT + 4.0, TOP + 14);
}

static void legend(FILE *f)
{
	static const struct { const char *cls, *text; } items[] = {
		{ "rss", "RSS (resident)" },
		{ "anon", "anonymous RSS" },
		{ "live", "live heap (outstanding bytes memleakbpf tracks)" },
	};
	int x = LEFT;

	for (size_t i = 0; i < sizeof(items) / sizeof(items[0]); i++) {
		fprintf(f, "<line class=\"%s\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n",
			items[i].cls, x, TOP - 14, x + 24, TOP - 14);
		fprintf(f, "<text class=\"lg\" x=\"%d\" y=\"%d\">%s</text>\n", x + 30, TOP - 10,
			items[i].text);
		x += 54 + 7 * (int)strlen(items[i].text);
	}
}

/* As the text's verdict says it: "not a leak" only with the live blocks' trend known. */
static void put_verdict(const struct report_memory *m, FILE *f)
{
	static const char *const words[] = {
		[VERDICT_UNKNOWN] = "none yet",
		[VERDICT_NO_LEAK] = "no leak seen",
		[VERDICT_LEAK] = "leak",
		[VERDICT_FRAGMENTATION] = "fragmentation",
		[VERDICT_LEAK_AND_FRAGMENTATION] = "leak and fragmentation",
		[VERDICT_STARTUP] = "start-up, not judged yet",
		[VERDICT_INCOMPLETE] = "no leak in incomplete figures",
		[VERDICT_GROWTH] = "growing, no one stack",
		[VERDICT_STOPPED] = "grew, then stopped",
	};
	enum report_verdict v = m ? m->verdict : VERDICT_UNKNOWN;

	fputs((unsigned)v < sizeof(words) / sizeof(words[0]) ? words[v] : "?", f);
	if (v == VERDICT_FRAGMENTATION && m->trend_known && !m->grew.stacks)
		fputs(", not a leak", f);
	if (m && m->incomplete)
		fputs(" (figures incomplete)", f);
}

static void header(const struct report *r, FILE *f)
{
	fputs("<text class=\"title\" x=\"10\" y=\"22\">memleakbpf: live heap against RSS</text>\n", f);
	char target[REPORT_TARGET_LEN];

	fprintf(f, "<text class=\"sub\" x=\"10\" y=\"40\">%s", report__target(r, target));
	if (r->command) {
		fputs(" (", f);
		xml__put_max(r->command, TEXT_MAX, f);
		fputc(')', f);
	}
	fprintf(f, ", %.1f s traced; verdict: ", r->duration_s);
	put_verdict(r->analysis ? &r->analysis->memory : NULL, f);
	fputs("</text>\n", f);
}

static const char style[] =
	"<style>\n"
	"text { font-family: sans-serif; font-size: 12px; fill: #222; }\n"
	".title { font-size: 17px; font-weight: bold; } .sub { fill: #555; }\n"
	".yl { text-anchor: end; } .xl { text-anchor: middle; }\n"
	".grid { stroke: #e4e4e4; } .frame { fill: none; stroke: #999; }\n"
	"polyline, line.rss, line.anon, line.live { fill: none; stroke-width: 2; }\n"
	".rss { stroke: #1f6fb4; } .anon { stroke: #7fb2de; stroke-dasharray: 6 3; }\n"
	".live { stroke: #d62728; stroke-width: 2.5; }\n"
	".dot { fill: #d62728; } .peak { stroke: #888; stroke-dasharray: 3 3; } .pl { fill: #555; }\n"
	".pk { fill: #fff; stroke: #d62728; stroke-width: 2; }\n"
	".su { fill: #3b7dd8; fill-opacity: 0.10; }\n"
	"</style>\n";

static void bounds(const struct report_sample *s, size_t nr, double *tmax, double *vmax)
{
	*tmax = *vmax = 0;
	for (size_t i = 0; i < nr; i++) {
		*tmax = fmax(*tmax, s[i].t_s);
		*vmax = fmax(*vmax, (double)s[i].live);
		if (s[i].mem)
			*vmax = fmax(*vmax, fmax((double)s[i].rss, (double)s[i].anon));
	}
}

int report_timeline__svg(const struct report *r, FILE *f)
{
	size_t nr;
	struct report_sample *s = rows(r, &nr);
	struct scale x, y;
	double tmax, vmax;

	if (!s)
		return -ENOMEM;
	bounds(s, nr, &tmax, &vmax);
	if (r->analysis && r->analysis->peak.known)
		vmax = fmax(vmax, (double)r->analysis->peak.bytes);
	x = time_scale(tmax);
	y = byte_scale(vmax);
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\">\n", W, H, W, H);
	fputs(style, f);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", W, H);
	header(r, f);
	legend(f);
	axes(&x, &y, f);
	if (r->analysis)
		startup_mark(r, &x, f);
	if (!nr)
		fprintf(f, "<text class=\"sub\" x=\"%d\" y=\"%d\">no report was made</text>\n",
			LEFT + 10, TOP + 20);
	line(s, nr, RSS, &x, &y, f);
	line(s, nr, ANON, &x, &y, f);
	line(s, nr, LIVE, &x, &y, f);
	dots(s, nr, &x, &y, f);
	if (r->analysis)
		peak_mark(r, &x, &y, f);
	fputs("</svg>\n", f);
	free(s);
	return ferror(f) ? -EIO : 0;
}
