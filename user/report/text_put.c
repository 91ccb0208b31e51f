// SPDX-License-Identifier: GPL-2.0
/* Pieces of the text reports (text_put.h), below the sections and writers that print them. */
#include <stdlib.h>
#include <string.h>
#include "cxx_names.h"
#include "model/report.h"
#include "text_put.h"

#define COUNT_LEN REPORT_COUNT_LEN
#define SIZE_LEN 64

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * Names, paths and the command line come from the target, and this goes to a
 * terminal, often root's: no control character (C0, DEL, and C1 such as
 * U+009B, a CSI to some terminals) may reach it, and no byte that is not
 * UTF-8. Each becomes '?'; the line stays one line.
 */
void text_put__oneline(const char *s, FILE *f)
{
	while (*s) {
		const unsigned char *u = (const unsigned char *)s;
		int n = report__utf8_len(s);
		bool c1 = n == 2 && u[0] == 0xc2 && u[1] < 0xa0;

		if (!n || c1 || u[0] < 0x20 || u[0] == 0x7f)
			fputc('?', f);
		else
			fwrite(s, 1, n, f);
		s += n ? n : 1;
	}
}

/* One frame of fstminimize's ran to 1,500 characters. Without memory, whole. */
void text_put__function(const char *function, bool full, FILE *f)
{
	char *short_name = full ? NULL : cxx_names__short(function);

	text_put__oneline(short_name ? short_name : function, f);
	free(short_name);
}

/*
 * "func (file:line, inlined) [module]", or the best that is known. The
 * module is shown once per address: not on the inlined calls that share it
 * with the frame that follows them.
 */
static void put_frame(const struct report_frame *fr, bool show_module, bool full, FILE *f)
{
	if (fr->function) {
		text_put__function(fr->function, full, f);
	} else if (fr->module) {
		text_put__oneline(basename_of(fr->module), f);
		fprintf(f, "+0x%llx", (unsigned long long)fr->module_offset);
	} else {
		fprintf(f, "0x%llx", (unsigned long long)fr->address);
	}

	if (fr->file) {
		fputs(" (", f);
		text_put__oneline(fr->file, f);
		if (fr->line > 0)
			fprintf(f, ":%d", fr->line);
		fputs(fr->inlined ? ", inlined)" : ")", f);
	} else if (fr->inlined) {
		fputs(" (inlined)", f);
	}

	if (fr->language == FRAME_PYTHON)
		fputs(" [python]", f);
	else if (!fr->module)
		fputs(" [unknown]", f);
	else if (fr->function && show_module && fr->language == FRAME_KERNEL) {
		fputc(' ', f);
		text_put__oneline(fr->module, f);	/* "[kernel.kallsyms]", "[ext4]" as perf has them */
	} else if (fr->function && show_module) {
		fputs(" [", f);
		text_put__oneline(basename_of(fr->module), f);
		fputc(']', f);
	}
}

/* "2.0 MiB (2,097,152 bytes) in 512 allocations", "100 bytes in 1 allocation" */
void text_put__amount(uint64_t bytes, uint64_t allocs, FILE *f)
{
	char human[SIZE_LEN], exact[COUNT_LEN], n[COUNT_LEN];

	report__count(bytes, exact);
	if (bytes < 1024)
		fprintf(f, "%s %s", exact, report__plural(bytes, "byte", "bytes"));
	else
		fprintf(f, "%s (%s bytes)", report__human_size(bytes, human, sizeof(human)), exact);
	fprintf(f, " in %s %s", report__count(allocs, n),
		report__plural(allocs, "allocation", "allocations"));
}

void text_put__frames(const struct report_stack *s, bool full, FILE *f)
{
	if (s->no_stack)
		fputs("      [stack unavailable]\n", f);
	for (size_t i = 0; i < s->nr_frames; i++) {
		const struct report_frame *fr = report__frame(s, i);
		bool shared = fr->inlined && i + 1 < s->nr_frames &&
			      report__frame(s, i + 1)->address == fr->address;

		fprintf(f, "      #%zu ", i);
		put_frame(fr, !shared, full, f);
		fputc('\n', f);
	}
	if (s->truncated)
		fprintf(f, "      [truncated: deeper than %d frames]\n", MEMLEAK_MAX_STACK_DEPTH);
	if (s->unwind_pending)
		fputs("      [cut short: an unwind table was still loading (-p, just after attaching)]\n", f);
}

void text_put__stack_site(const struct report_stack *s, bool full, FILE *f)
{
	if (s->site_frame)
		put_frame(s->site_frame, true, full, f);
	else
		fputs("[stack unavailable]", f);
}

void text_put__site_frame(const struct report_site *site, bool full, FILE *f)
{
	if (site->frame)
		put_frame(site->frame, true, full, f);
	else
		fputs("[stack unavailable]", f);
}

/* "and 11 more stacks: 26.2 MiB in 287,905 allocations" */
void text_put__more(const char *what, size_t n, uint64_t bytes, uint64_t allocs, FILE *f)
{
	char h[SIZE_LEN], a[COUNT_LEN], m[COUNT_LEN];

	fprintf(f, "  and %s more %s: %s in %s %s\n", report__count(n, m), what,
		report__human_size(bytes, h, sizeof(h)), report__count(allocs, a),
		report__plural(allocs, "allocation", "allocations"));
}
