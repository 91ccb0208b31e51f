// SPDX-License-Identifier: GPL-2.0
/*
 * Folded stacks, the input of flamegraph.pl and speedscope: one line per
 * stack, "root;...;leaf;api bytes". The widths are outstanding bytes, or
 * outstanding blocks with --folded-weight allocs (r->folded_allocs).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/sites.h"
#include "model/report.h"
#include "report_folded.h"

struct folded_line {
	char *text;	/* frames without the count */
	uint64_t bytes;
};

/*
 * ';' separates frames and a newline ends the line: neither may be in a
 * name. Names come from the target and may hold any byte: what is not UTF-8
 * becomes U+FFFD, so that every reader can decode the file.
 */
static void put_name(const char *s, FILE *f)
{
	while (*s) {
		int n = report__utf8_len(s);

		if (*s == ';')
			fputc(':', f);
		else if ((unsigned char)*s < 0x20 || *s == 0x7f)
			fputc(' ', f);
		else if (n)
			fwrite(s, 1, n, f);
		else
			fputs("\xef\xbf\xbd", f);
		s += n ? n : 1;
	}
}

/* A Python function: "load_batch (train.py:42)", its file told apart from others'. */
static void put_python(const struct report_frame *fr, FILE *f)
{
	const char *slash = strrchr(fr->file, '/');

	put_name(fr->function, f);
	fputs(" (", f);
	put_name(slash ? slash + 1 : fr->file, f);
	if (fr->line > 0)
		fprintf(f, ":%d", fr->line);
	fputc(')', f);
}

static void put_frame(const struct report_frame *fr, FILE *f)
{
	if (fr->language == FRAME_PYTHON && fr->function && fr->file) {
		put_python(fr, f);
	} else if (fr->function) {
		put_name(fr->function, f);
	} else if (fr->module) {
		const char *slash = strrchr(fr->module, '/');

		put_name(slash ? slash + 1 : fr->module, f);
		fprintf(f, "+0x%llx", (unsigned long long)fr->module_offset);
	} else {
		fprintf(f, "0x%llx", (unsigned long long)fr->address);
	}
}

/*
 * Frames are stored innermost first; flame graphs want the root first. A
 * truncated stack, or one cut where an unwind table was still loading, does
 * not reach its root, so it hangs under a marker rather than passing its
 * outermost kept frame off as a root.
 */
/* --folded-by-process: "pid 1234 (./server --port 80)", the root of its process's stacks. */
static void put_process(const struct report *r, const struct report_stack *s, FILE *f)
{
	const char *command = r->command;
	int pid = r->pid;

	for (size_t i = 0; i < r->nr_processes; i++) {
		if (r->processes[i].tag == s->proc) {
			pid = r->processes[i].pid;
			command = r->processes[i].command;
			break;
		}
	}
	fprintf(f, "pid %d", pid);
	if (command) {
		fputs(" (", f);
		put_name(command, f);
		fputc(')', f);
	}
	fputc(';', f);
}

static char *fold_stack(const struct report *r, const struct report_stack *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	if (r->folded_by_process)
		put_process(r, s, f);
	if (s->no_stack)
		fputs("[stack unavailable];", f);
	else if (s->truncated)
		fputs("[truncated];", f);
	else if (s->unwind_pending)
		fputs("[unwind table loading];", f);
	for (size_t i = s->nr_frames; i-- > 0;) {
		put_frame(report__frame(s, i), f);
		fputc(';', f);
	}
	put_name(report__api_name(s->api), f);
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

static int by_text(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->text, ((const struct folded_line *)b)->text);
}

static int by_bytes_then_text(const void *a, const void *b)
{
	const struct folded_line *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return strcmp(x->text, y->text);
}

/* Different stacks may fold to the same names (e.g. two call sites on one line). */
static size_t merge_lines(struct folded_line *l, size_t nr)
{
	size_t out = 0;

	qsort(l, nr, sizeof(*l), by_text);
	for (size_t i = 0; i < nr; i++) {
		if (out && !strcmp(l[out - 1].text, l[i].text)) {
			l[out - 1].bytes += l[i].bytes;
			free(l[i].text);
			continue;
		}
		l[out++] = l[i];
	}
	qsort(l, out, sizeof(*l), by_bytes_then_text);
	return out;
}

/*
 * The stacks the files leave out (analyze/sites.h), as one line of their
 * own under the root, so that the widths still add up to the whole and the
 * flame graph says what brings them back.
 */
static void put_left_out(const struct report *r, FILE *f)
{
	struct sites_left_out lo = sites__left_out(r, NULL);

	if (lo.stacks)
		fprintf(f, "[%zu smaller %s left out: --all-stacks writes them] %llu\n", lo.stacks,
			report__plural(lo.stacks, "stack", "stacks"),
			(unsigned long long)(r->folded_allocs ? lo.allocs : lo.bytes));
}

int report_folded__write(const struct report *r, FILE *f)
{
	struct folded_line *lines;
	size_t nr = 0;
	int err = 0;

	if (!r->nr_stacks)
		return ferror(f) ? -EIO : 0;
	lines = calloc(r->nr_stacks, sizeof(*lines));
	if (!lines)
		return -ENOMEM;
	for (size_t i = 0; i < r->nr_stacks; i++) {
		if (r->stacks[i].left_out)
			continue;
		lines[nr].text = fold_stack(r, &r->stacks[i]);
		lines[nr].bytes = r->folded_allocs ? r->stacks[i].allocs : r->stacks[i].bytes;
		if (!lines[nr++].text) {
			err = -ENOMEM;
			goto out;
		}
	}
	nr = merge_lines(lines, nr);
	for (size_t i = 0; i < nr; i++)
		fprintf(f, "%s %llu\n", lines[i].text, (unsigned long long)lines[i].bytes);
	put_left_out(r, f);
	err = ferror(f) ? -EIO : 0;
out:
	for (size_t i = 0; i < nr; i++)
		free(lines[i].text);
	free(lines);
	return err;
}
