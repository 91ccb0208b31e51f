// SPDX-License-Identifier: GPL-2.0
/*
 * A flame graph of the outstanding bytes, as one self-contained SVG file: it
 * opens in any browser without a network, a <title> on every frame is its
 * tooltip, and a small inline script zooms into a frame on click.
 *
 * The root ("all") is at the bottom and callees stack above their callers,
 * the allocation function on top, as in --folded. A frame's width is its
 * share of the bytes. Frames merge when function and module are equal, so
 * under one caller a native function is one box however many of its lines
 * lead to the allocation; its tooltip lists those lines. A Python frame is
 * its line ("train (train.py:42)", as in --folded): Python code is read by
 * the line. Siblings are in name order, not size order, so the picture of
 * one site does not jump around between two runs.
 *
 * Frames narrower than MIN_WIDTH pixels are not drawn one by one, as with
 * flamegraph.pl's --minwidth: a run of such siblings becomes one grey box
 * ("[12 narrow frames]") when together they are wide enough, and nothing
 * otherwise; what is above them is left out. The file stays a few MB
 * however many thousand stacks a report has, and the header counts them.
 *
 * Layout without building a tree: with the stacks sorted by their frames from
 * the root, every frame's stacks are adjacent, so one pass keeps the open
 * path (one frame per depth) and writes each frame when its run of stacks
 * ends. The x of a frame is the bytes of all the stacks sorted before it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "model/report.h"
#include "xml.h"
#include "report_svg.h"
#include "svg_item.h"

#define SVG_WIDTH 1200
#define SVG_MARGIN 10
#define FRAME_H 16
#define TOP 66		/* title, subtitle, legend */
#define BOTTOM 8
#define CHAR_W 6.6	/* average advance of a 12px sans-serif glyph */
#define LABEL_PAD 3
#define NAME_LEN 256
#define TITLE_LINES 4	/* source lines a tooltip lists before "and more" */
#define MIN_WIDTH 0.1	/* pixels: narrower frames are merged (flamegraph.pl's default) */

/* Colour ranges: a base and how far the name's hash may move each channel. */
static const struct {
	const char *legend;	/* NULL: not in the legend */
	unsigned char r, g, b, dr, dg, db;
} kinds[K__COUNT] = {
	[K_PROGRAM] = { "program", 225, 120, 40, 30, 90, 30 },
	[K_LIBC] = { "C library", 70, 130, 210, 40, 50, 30 },
	[K_CXX] = { "C++ runtime", 160, 110, 215, 40, 40, 30 },
	[K_LIB] = { "other libraries", 80, 175, 85, 50, 50, 40 },
	[K_UNKNOWN] = { "unknown module", 165, 165, 165, 25, 25, 25 },
	[K_API] = { "allocation function", 205, 45, 45, 40, 30, 30 },
	[K_PYTHON] = { "Python", 225, 190, 45, 25, 45, 40 },
	[K_PYLIB] = { "Python libraries", 120, 170, 160, 40, 40, 40 },
	[K_OTHER] = { NULL, 200, 200, 200, 0, 0, 0 },
	[K_NATIVE] = { NULL, 200, 200, 200, 0, 0, 0 },	/* never drawn as such */
};

struct open_frame {
	struct svg_item it;
	uint64_t x;		/* bytes to its left */
	uint64_t bytes, allocs;
	const struct report_frame *lines[TITLE_LINES];	/* distinct file:line seen */
	unsigned nlines;
	bool more;		/* more lines than listed */
};

/* Adjacent siblings too narrow to draw, not written yet. */
struct narrow_run {
	uint64_t x, bytes, allocs;
	size_t n;
};

struct layout {
	const struct report *r;
	uint64_t total_bytes, total_allocs;
	unsigned depth;		/* deepest frame; the root is depth 0 */
	struct open_frame *open;	/* the open path, one per depth */
	unsigned nopen;
	struct narrow_run *narrow;	/* one run per depth */
	size_t nr_narrow;	/* frames too narrow to draw one by one */
};

static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * By file name: the C library's family (with the dynamic linker), the C++
 * runtime, other shared objects, and everything else is the program (a static
 * binary's libc included, since it is in the program's file).
 */
static enum kind module_kind(const char *module)
{
	static const char *const libc[] = { "libc.so", "libc-", "ld-linux", "ld-musl", "ld.so",
					    "libm.so", "libpthread.so", "libdl.so", "librt.so" };
	static const char *const cxx[] = { "libstdc++.so", "libc++.so", "libc++abi.so",
					   "libsupc++", "libgcc_s.so" };
	const char *base;

	if (!module)
		return K_UNKNOWN;
	base = base_of(module);
	if (!report__is_shared_object(base))
		return K_PROGRAM;
	for (size_t i = 0; i < sizeof(libc) / sizeof(libc[0]); i++)
		if (report__starts(base, libc[i]))
			return K_LIBC;
	for (size_t i = 0; i < sizeof(cxx) / sizeof(cxx[0]); i++)
		if (report__starts(base, cxx[i]))
			return K_CXX;
	return K_LIB;
}

/*
 * A box's colour says whose code it is, as the sites do (frame.own): the
 * user's native code is the program's, code of the program's file that is
 * not the user's (inlined from libstdc++'s headers, or outside --own) the
 * C++ runtime's or a library's; Python, the user's or a library's.
 */
static enum kind drawn_kind(const struct svg_item *it)
{
	enum kind k;

	if (it->kind == K_PYTHON)
		return it->fr->own ? K_PYTHON : K_PYLIB;
	if (it->kind != K_NATIVE)
		return it->kind;
	if (it->fr->own)
		return K_PROGRAM;
	k = module_kind(it->fr->module);
	if (k != K_PROGRAM)
		return k;
	return it->fr->file && strstr(it->fr->file, "/c++/") ? K_CXX : K_LIB;
}

/* ------------------------------------------------------------- frames */

/*
 * The name a frame shows: function, else module+0xoffset, else the address;
 * a Python function with its file's name and its line.
 */
static const char *item_name(const struct svg_item *it, char *buf, size_t len)
{
	if (it->name && it->kind == K_PYTHON && it->fr->file) {
		snprintf(buf, len, "%s (%s:%d)", it->name, base_of(it->fr->file), it->fr->line);
		return buf;
	}
	if (it->name)
		return it->name;
	if (it->fr->module)
		snprintf(buf, len, "%s+0x%llx", base_of(it->fr->module),
			 (unsigned long long)it->fr->module_offset);
	else
		snprintf(buf, len, "0x%llx", (unsigned long long)it->fr->address);
	return buf;
}

static uint32_t hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* The kind's colour, moved a little by the name so that neighbours differ. */
static void put_fill(enum kind k, const char *name, FILE *f)
{
	uint32_t h = hash(name);

	fprintf(f, "rgb(%u,%u,%u)", kinds[k].r + (h & 0xff) * kinds[k].dr / 255,
		kinds[k].g + (h >> 8 & 0xff) * kinds[k].dg / 255,
		kinds[k].b + (h >> 16 & 0xff) * kinds[k].db / 255);
}

static void put_title(const struct layout *l, const struct open_frame *o, const char *name,
		      FILE *f)
{
	const struct report_frame *fr = o->it.fr;
	const char *est = l->r->sampling ? "~" : "";	/* every figure an estimate */
	char size[32];

	fputs("<title>", f);
	xml__put(name, XML_ALL, f);
	for (unsigned i = 0; i < o->nlines; i++) {
		fputs(i ? ", " : "\nat ", f);
		xml__put(o->lines[i]->file, XML_ALL, f);
		if (o->lines[i]->line)
			fprintf(f, ":%d", o->lines[i]->line);
	}
	if (o->more)
		fputs(" and more", f);
	if (fr && fr->inlined)
		fputs(" (inlined)", f);
	if (fr && fr->module) {
		fputs("\nin ", f);
		xml__put(fr->module, XML_ALL, f);
	}
	if (o->it.kind == K_API)
		fputs("\nallocation function", f);
	fprintf(f, "\n%s%llu bytes (%s), %.2f%% of all outstanding\n%s%llu allocation%s%s</title>",
		est, (unsigned long long)o->bytes, report__human_size(o->bytes, size, sizeof(size)),
		100.0 * (double)o->bytes / (double)l->total_bytes, est, (unsigned long long)o->allocs,
		o->allocs == 1 ? "" : "s", *est ? " (estimates, by sampling)" : "");
}

/* As much of the name as fits in w pixels, ".." marking a cut; nothing below 3 characters. */
static void put_label(const char *name, double w, FILE *f)
{
	size_t fit = w > 2 * LABEL_PAD ? (size_t)((w - 2 * LABEL_PAD) / CHAR_W) : 0;
	size_t len = strlen(name);

	if (fit < 3)
		return;
	if (len <= fit) {
		xml__put(name, len, f);
		return;
	}
	len = fit - 2;
	/* Cut between characters, not inside one. */
	while (len && ((unsigned char)name[len] & 0xc0) == 0x80)
		len--;
	xml__put(name, len, f);
	fputs("..", f);
}

static void put_frame(const struct layout *l, const struct open_frame *o, unsigned depth, FILE *f)
{
	double scale = (double)(SVG_WIDTH - 2 * SVG_MARGIN) / (double)l->total_bytes;
	double x = SVG_MARGIN + (double)o->x * scale, w = (double)o->bytes * scale;
	unsigned y = TOP + (l->depth - depth) * FRAME_H;
	char buf[NAME_LEN];
	const char *name = depth ? item_name(&o->it, buf, sizeof(buf)) : "all";

	fprintf(f, "<g class=\"f\" data-x=\"%llu\" data-w=\"%llu\" data-d=\"%u\">",
		(unsigned long long)o->x, (unsigned long long)o->bytes, depth);
	put_title(l, o, name, f);
	fprintf(f, "<rect x=\"%.3f\" y=\"%u\" width=\"%.3f\" height=\"%u\" fill=\"", x, y, w,
		FRAME_H - 1);
	put_fill(!depth ? K_OTHER : drawn_kind(&o->it), name, f);
	fprintf(f, "\"/><text x=\"%.3f\" y=\"%u\">", x + LABEL_PAD, y + FRAME_H - 4);
	put_label(name, w, f);
	fputs("</text></g>\n", f);
}

/* ------------------------------------------------------------- layout */

static int cmp_line(const struct report_frame *a, const struct report_frame *b)
{
	int c = strcmp(a->file, b->file);

	return c ? c : a->line - b->line;
}

/* Remember where in the source fr is, once per distinct file:line. */
static void note_line(struct open_frame *o, const struct report_frame *fr)
{
	unsigned i;

	if (!fr || !fr->file)
		return;
	for (i = 0; i < o->nlines; i++)
		if (!cmp_line(o->lines[i], fr))
			return;
	if (o->nlines == TITLE_LINES) {
		o->more = true;
		return;
	}
	/* Kept in file, line order: a tooltip reads top-down through the source. */
	for (i = o->nlines++; i && cmp_line(o->lines[i - 1], fr) > 0; i--)
		o->lines[i] = o->lines[i - 1];
	o->lines[i] = fr;
}

static double width_of(const struct layout *l, uint64_t bytes)
{
	return (double)bytes * (SVG_WIDTH - 2 * SVG_MARGIN) / (double)l->total_bytes;
}

/* The run of narrow frames at depth, as one box when it is wide enough; then none. */
static void flush_narrow(struct layout *l, unsigned depth, FILE *f)
{
	struct narrow_run *n = &l->narrow[depth];
	char name[64];

	if (n->n && width_of(l, n->bytes) >= MIN_WIDTH) {
		snprintf(name, sizeof(name), "[%zu narrow frames]", n->n);
		put_frame(l, &(struct open_frame){ .it = { K_OTHER, name, NULL }, .x = n->x,
						   .bytes = n->bytes, .allocs = n->allocs },
			  depth, f);
	}
	*n = (struct narrow_run){ 0 };
}

/*
 * Frame depth has ended: drawn, with the narrow frames just above it, or,
 * too narrow itself, added to its depth's run and whatever is above it
 * left out (narrower still).
 */
static void close_frame(struct layout *l, unsigned depth, FILE *f)
{
	const struct open_frame *o = &l->open[depth];
	struct narrow_run *n = &l->narrow[depth];

	if (depth && width_of(l, o->bytes) < MIN_WIDTH) {
		l->narrow[depth + 1] = (struct narrow_run){ 0 };
		if (!n->n)
			n->x = o->x;
		n->bytes += o->bytes;
		n->allocs += o->allocs;
		n->n++;
		l->nr_narrow++;
		return;
	}
	flush_narrow(l, depth + 1, f);
	flush_narrow(l, depth, f);
	put_frame(l, o, depth, f);
}

/* Write the open frames deeper than keep: their run of stacks has ended. */
static void close_frames(struct layout *l, unsigned keep, FILE *f)
{
	while (l->nopen > keep + 1) {
		l->nopen--;
		close_frame(l, l->nopen, f);
	}
}

static void add_stack(struct layout *l, const struct report_stack *prev,
		      const struct report_stack *s, uint64_t x, FILE *f)
{
	size_t n = svg_item__count(s), same = 0;

	/* Frames shared with the previous stack stay open. */
	while (prev && same < n && same < svg_item__count(prev)) {
		struct svg_item a = svg_item__at(prev, same), b = svg_item__at(s, same);

		if (svg_item__cmp(&a, &b))
			break;
		same++;
	}
	close_frames(l, same, f);
	for (size_t i = same; i < n; i++)
		l->open[l->nopen++] = (struct open_frame){ .it = svg_item__at(s, i), .x = x };
	for (unsigned d = 0; d < l->nopen; d++) {
		l->open[d].bytes += s->bytes;
		l->open[d].allocs += s->allocs;
		if (d)
			note_line(&l->open[d], svg_item__at(s, d - 1).fr);
	}
}

/* The stacks that take room (bytes > 0), sorted from the root; NULL on ENOMEM. */
static const struct report_stack **sorted_stacks(struct layout *l, size_t *nr)
{
	const struct report_stack **v = calloc(l->r->nr_stacks ?: 1, sizeof(*v));

	*nr = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < l->r->nr_stacks; i++) {
		const struct report_stack *s = &l->r->stacks[i];

		if (!s->bytes)
			continue;
		v[(*nr)++] = s;
		l->total_bytes += s->bytes;
		l->total_allocs += s->allocs;
		if (svg_item__count(s) > l->depth)
			l->depth = svg_item__count(s);
	}
	if (svg_item__sort(v, *nr)) {
		free(v);
		return NULL;
	}
	return v;
}

/* ------------------------------------------------------------- document */

/*
 * Zoom: the clicked frame fills the width, its callees scale with it, its
 * callers stay full width (dimmed), everything else hides. Frames carry their
 * position in bytes (data-x, data-w) so that zooming loses no precision.
 */
static const char script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"(function () {\n"
	"\tvar W = %d, M = %d, PAD = %d, CW = %g;\n"
	"\tvar frames = document.querySelectorAll('g.f'), root = null;\n"
	"\tfunction num(g, a) { return Number(g.getAttribute('data-' + a)); }\n"
	"\tfunction name(g) { return g.querySelector('title').textContent.split('\\n')[0]; }\n"
	"\tfunction place(g, x, w, dim) {\n"
	"\t\tvar r = g.querySelector('rect'), t = g.querySelector('text');\n"
	"\t\tvar fit = Math.floor((w - 2 * PAD) / CW), n = name(g);\n"
	"\t\tg.removeAttribute('display');\n"
	"\t\tg.setAttribute('opacity', dim ? '0.5' : '1');\n"
	"\t\tr.setAttribute('x', x.toFixed(3));\n"
	"\t\tr.setAttribute('width', w.toFixed(3));\n"
	"\t\tt.setAttribute('x', (x + PAD).toFixed(3));\n"
	"\t\tt.textContent = fit >= 3 ? (n.length > fit ? n.slice(0, fit - 2) + '..' : n) : '';\n"
	"\t}\n"
	"\tfunction zoom(z) {\n"
	"\t\tvar zx = num(z, 'x'), zw = num(z, 'w'), zd = num(z, 'd');\n"
	"\t\tfor (var i = 0; i < frames.length; i++) {\n"
	"\t\t\tvar g = frames[i], x = num(g, 'x'), w = num(g, 'w'), d = num(g, 'd');\n"
	"\t\t\tvar inside = x >= zx && x + w <= zx + zw;\n"
	"\t\t\tif (d < zd && x <= zx && x + w >= zx + zw)\n"
	"\t\t\t\tplace(g, M, W, true);\n"
	"\t\t\telse if (d >= zd && inside)\n"
	"\t\t\t\tplace(g, M + (x - zx) * W / zw, w * W / zw, false);\n"
	"\t\t\telse\n"
	"\t\t\t\tg.setAttribute('display', 'none');\n"
	"\t\t}\n"
	"\t\tdocument.getElementById('reset')\n"
	"\t\t\t.setAttribute('display', z === root ? 'none' : 'inline');\n"
	"\t}\n"
	"\tfor (var i = 0; i < frames.length; i++) {\n"
	"\t\tif (num(frames[i], 'd') === 0)\n"
	"\t\t\troot = frames[i];\n"
	"\t\tframes[i].addEventListener('click', function (e) { zoom(e.currentTarget); });\n"
	"\t}\n"
	"\tdocument.getElementById('reset').addEventListener('click', function () {\n"
	"\t\tif (root) zoom(root);\n"
	"\t});\n"
	"})();\n"
	"]]></script>\n";

/* Sampling: the total's 95% interval, and the samples and the rate behind it. */
static void sampled_text(const struct layout *l, char *margin, char *from, size_t len)
{
	const struct report_sampling *sm = l->r->sampling;
	char m[32], mean[32];

	report__human_size((uint64_t)report__margin(l->r->totals.outstanding_var), m, sizeof(m));
	snprintf(margin, len, " ±%s", m);
	snprintf(mean, sizeof(mean), "%llu", (unsigned long long)sm->mean);
	snprintf(from, len, ", estimated from %llu samples (%s %s)",
		 (unsigned long long)l->r->totals.outstanding_samples, sm->by_bytes ? "--sample" : "-s",
		 sm->by_bytes ? report__human_size(sm->mean, mean, sizeof(mean)) : mean);
}

static void put_header(const struct layout *l, unsigned height, FILE *f)
{
	const char *est = l->r->sampling ? "~" : "";
	char size[32], target[REPORT_TARGET_LEN], margin[96] = "", from[96] = "";

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
		"height=\"%u\" viewBox=\"0 0 %d %u\" "
		"font-family=\"Verdana, DejaVu Sans, sans-serif\" font-size=\"12\">\n",
		SVG_WIDTH, height, SVG_WIDTH, height);
	fputs("<style>g.f { cursor: pointer; } g.f:hover rect { stroke: #222; stroke-width: 0.5; }"
	      " #reset { cursor: pointer; fill: #0645ad; }</style>\n", f);
	fprintf(f, script, SVG_WIDTH - 2 * SVG_MARGIN, SVG_MARGIN, LABEL_PAD, CHAR_W);
	fprintf(f, "<rect width=\"%d\" height=\"%u\" fill=\"#fbfbf8\"/>\n", SVG_WIDTH, height);
	fprintf(f, "<text x=\"%d\" y=\"22\" font-size=\"16\" text-anchor=\"middle\">"
		"Outstanding memory of %s", SVG_WIDTH / 2, report__target(l->r, target));
	if (l->r->command) {
		fputs(" (", f);
		xml__put(l->r->command, XML_ALL, f);
		fputc(')', f);
	}
	if (l->r->sampling)
		sampled_text(l, margin, from, sizeof(from));
	fprintf(f, "</text>\n<text x=\"%d\" y=\"40\" text-anchor=\"middle\" fill=\"#555\">"
		"%s%llu bytes (%s%s) in %s%llu allocations%s%s; width is bytes, click a frame to "
		"zoom</text>\n"
		"<text id=\"reset\" x=\"%d\" y=\"22\" display=\"none\">Reset zoom</text>\n",
		SVG_WIDTH / 2, est, (unsigned long long)l->total_bytes,
		report__human_size(l->total_bytes, size, sizeof(size)), margin, est,
		(unsigned long long)l->total_allocs, l->r->older_ms ? " (older blocks only)" : "",
		from, SVG_MARGIN);
}

static void put_legend(FILE *f)
{
	int x = SVG_MARGIN;

	for (int k = 0; k < K__COUNT; k++) {
		if (!kinds[k].legend)
			continue;
		fprintf(f, "<rect x=\"%d\" y=\"48\" width=\"10\" height=\"10\" "
			"fill=\"rgb(%u,%u,%u)\"/>"
			"<text x=\"%d\" y=\"57\" font-size=\"11\">%s</text>\n", x,
			kinds[k].r + kinds[k].dr / 2, kinds[k].g + kinds[k].dg / 2,
			kinds[k].b + kinds[k].db / 2, x + 14, kinds[k].legend);
		x += 14 + (int)(strlen(kinds[k].legend) * 6.0) + 16;
	}
}

/* Below the subtitle, right: how many frames were too narrow to draw one by one. */
static void put_narrow_note(const struct layout *l, FILE *f)
{
	if (l->nr_narrow)
		fprintf(f, "<text x=\"%d\" y=\"57\" font-size=\"11\" text-anchor=\"end\" fill=\"#555\">"
			"%zu frames narrower than %.1f px: merged into grey boxes, or left out</text>\n",
			SVG_WIDTH - SVG_MARGIN, l->nr_narrow, MIN_WIDTH);
}

static void layout_free(struct layout *l)
{
	if (!l)
		return;
	free(l->open);
	free(l->narrow);
	free(l);
}

int report_svg__write(const struct report *r, FILE *f)
{
	struct layout *l = calloc(1, sizeof(*l));
	const struct report_stack **v = NULL;
	uint64_t x = 0;
	size_t nr;
	unsigned height;

	if (l) {
		l->r = r;
		v = sorted_stacks(l, &nr);
		l->open = calloc(l->depth + 1, sizeof(*l->open));
		l->narrow = calloc(l->depth + 2, sizeof(*l->narrow));
	}
	if (!l || !v || !l->open || !l->narrow) {
		layout_free(l);
		free(v);
		return -ENOMEM;
	}
	height = TOP + (l->depth + 1) * FRAME_H + BOTTOM;
	put_header(l, height, f);
	put_legend(f);
	if (!nr)
		fprintf(f, "<text x=\"%d\" y=\"%d\">No outstanding bytes.</text>\n", SVG_MARGIN,
			TOP + FRAME_H);
	fputs("<g id=\"frames\">\n", f);
	if (nr) {
		l->open[0] = (struct open_frame){ .it = { K_OTHER, "all", NULL } };
		l->nopen = 1;
	}
	for (size_t i = 0; i < nr; i++) {
		add_stack(l, i ? v[i - 1] : NULL, v[i], x, f);
		x += v[i]->bytes;
	}
	close_frames(l, 0, f);
	if (nr)
		close_frame(l, 0, f);
	fputs("</g>\n", f);
	put_narrow_note(l, f);
	fputs("</svg>\n", f);
	free(v);
	layout_free(l);
	return ferror(f) ? -EIO : 0;
}
