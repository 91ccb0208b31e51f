// SPDX-License-Identifier: GPL-2.0
/*
 * Interning for the --html page (html_pool.h): open addressing over the
 * rows' indices, doubled at half full.
 */
#include <stdlib.h>
#include <string.h>
#include "html_pool.h"
#include "util/hash.h"
#include "util/vec.h"
#include "json_put.h"

struct frame_row {
	long function, file, module;
	int line;
	unsigned flags;
	uint64_t offset;
};

struct index {
	uint32_t *slot;		/* row + 1; 0: empty */
	size_t cap;		/* a power of two */
};

struct html_pool {
	char **strings;
	size_t nr_strings, cap_strings;
	struct frame_row *frames;
	size_t nr_frames, cap_frames;
	struct index by_string, by_frame;
	bool failed;
};

struct html_pool *html_pool__new(void)
{
	return calloc(1, sizeof(struct html_pool));
}

void html_pool__free(struct html_pool *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nr_strings; i++)
		free(p->strings[i]);
	free(p->strings);
	free(p->frames);
	free(p->by_string.slot);
	free(p->by_frame.slot);
	free(p);
}

bool html_pool__failed(const struct html_pool *p)
{
	return p->failed;
}

static uint64_t frame_hash(const struct frame_row *f)
{
	uint64_t h = hash__mix(0x9e3779b97f4a7c15ULL ^ (uint64_t)f->function);

	h = hash__mix(h ^ (uint64_t)f->file ^ (uint64_t)f->line << 32);
	h = hash__mix(h ^ (uint64_t)f->module ^ (uint64_t)f->flags << 40);
	return hash__mix(h ^ f->offset);
}

static bool frame_eq(const struct frame_row *a, const struct frame_row *b)
{
	return a->function == b->function && a->file == b->file && a->line == b->line &&
	       a->module == b->module && a->flags == b->flags && a->offset == b->offset;
}

static uint64_t row_hash(const struct html_pool *p, bool frames, uint32_t row)
{
	return frames ? frame_hash(&p->frames[row]) : hash__str(0, p->strings[row]);
}

/* Room for one more row at half full at most: the index rebuilt twice as big. */
static int grow(struct html_pool *p, struct index *ix, bool frames, size_t rows)
{
	struct index n;

	if ((rows + 1) * 2 <= ix->cap)
		return 0;
	n.cap = ix->cap ? ix->cap * 2 : 1024;
	n.slot = calloc(n.cap, sizeof(*n.slot));
	if (!n.slot)
		return -1;
	for (uint32_t r = 0; r < rows; r++) {
		size_t i = row_hash(p, frames, r) & (n.cap - 1);

		while (n.slot[i])
			i = (i + 1) & (n.cap - 1);
		n.slot[i] = r + 1;
	}
	free(ix->slot);
	*ix = n;
	return 0;
}

long html_pool__string(struct html_pool *p, const char *s)
{
	size_t i;

	if (!s || p->failed)
		return -1;
	if (grow(p, &p->by_string, false, p->nr_strings))
		goto fail;
	for (i = hash__str(0, s) & (p->by_string.cap - 1); p->by_string.slot[i];
	     i = (i + 1) & (p->by_string.cap - 1))
		if (!strcmp(p->strings[p->by_string.slot[i] - 1], s))
			return p->by_string.slot[i] - 1;
	if (vec__reserve(&p->strings, &p->cap_strings, p->nr_strings + 1, sizeof(*p->strings)) ||
	    !(p->strings[p->nr_strings] = strdup(s)))
		goto fail;
	p->by_string.slot[i] = (uint32_t)++p->nr_strings;
	return (long)p->nr_strings - 1;
fail:
	p->failed = true;
	return -1;
}

long html_pool__frame(struct html_pool *p, const struct report_frame *fr)
{
	struct frame_row row = {
		.function = html_pool__string(p, fr->function),
		.file = html_pool__string(p, fr->file),
		.module = html_pool__string(p, fr->module),
		.line = fr->line > 0 ? fr->line : 0,
		.flags = (fr->own ? HTML_FRAME_OWN : 0) |
			 (fr->language == FRAME_PYTHON ? HTML_FRAME_PYTHON : 0) |
			 (fr->inlined ? HTML_FRAME_INLINED : 0),
		.offset = fr->module ? fr->module_offset : fr->address,
	};
	size_t i;

	if (p->failed || grow(p, &p->by_frame, true, p->nr_frames))
		goto fail;
	for (i = frame_hash(&row) & (p->by_frame.cap - 1); p->by_frame.slot[i];
	     i = (i + 1) & (p->by_frame.cap - 1))
		if (frame_eq(&p->frames[p->by_frame.slot[i] - 1], &row))
			return p->by_frame.slot[i] - 1;
	if (vec__reserve(&p->frames, &p->cap_frames, p->nr_frames + 1, sizeof(*p->frames)))
		goto fail;
	p->frames[p->nr_frames] = row;
	p->by_frame.slot[i] = (uint32_t)++p->nr_frames;
	return (long)p->nr_frames - 1;
fail:
	p->failed = true;
	return -1;
}

void html_pool__write(const struct html_pool *p, FILE *f)
{
	fputs("\"strings\": [", f);
	for (size_t i = 0; i < p->nr_strings; i++) {
		fputs(i ? ",\n" : "\n", f);
		json_put__script_string(p->strings[i], f);
	}
	fputs("],\n\"frames\": [", f);
	for (size_t i = 0; i < p->nr_frames; i++) {
		const struct frame_row *r = &p->frames[i];

		fprintf(f, "%s[%ld,%ld,%d,%ld,%u,%llu]", i ? (i % 16 ? "," : ",\n") : "\n",
			r->function, r->file, r->line, r->module, r->flags,
			(unsigned long long)r->offset);
	}
	fputs("]", f);
}
