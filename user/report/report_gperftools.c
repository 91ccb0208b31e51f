// SPDX-License-Identifier: GPL-2.0
/*
 * A gperftools heap profile in its legacy text format, the one its pprof
 * (Debian's google-pprof) and Go's pprof both read:
 *
 *   heap profile: <n>: <bytes> [<n>: <bytes>] @ heapprofile
 *   <in use n>: <in use bytes> [<allocated n>: <allocated bytes>] @ 0xa 0xb ...
 *   ...
 *
 *   MAPPED_LIBRARIES:
 *   <the target's executable mappings, as /proc/PID/maps lines>
 *
 * Both readers want whitespace after each ':' and before '[', so a number
 * wider than its column still gets a blank. "@ heapprofile" tells them the
 * figures are exact: any other tag makes them scale the figures up as if
 * the profile were sampled.
 */
#include <errno.h>
#include <sys/sysmacros.h>
#include "model/report.h"
#include "util/procmaps.h"
#include "report_gperftools.h"

/* Where the kernel starts the path in /proc/PID/maps (on 64-bit). */
#define MAPS_PATH_COLUMN 73

struct figures {
	uint64_t allocs, bytes, total_allocs, total_bytes;
};

static void add_stacks(struct figures *t, const struct report *r)
{
	for (size_t i = 0; r && i < r->nr_stacks; i++) {
		t->allocs += r->stacks[i].allocs;
		t->bytes += r->stacks[i].bytes;
		t->total_allocs += r->stacks[i].total_allocs;
		t->total_bytes += r->stacks[i].total_bytes;
	}
}

static void put_figures(const struct figures *t, FILE *f)
{
	fprintf(f, "%6llu: %8llu [%6llu: %8llu] @", (unsigned long long)t->allocs,
		(unsigned long long)t->bytes, (unsigned long long)t->total_allocs,
		(unsigned long long)t->total_bytes);
}

/*
 * One address per captured address, innermost first. An inlined frame shares
 * its address with the frame after it, so only that one is written. The
 * readers take the first address for a program counter and subtract 1 from
 * every other one to land on the call. Ours are all return addresses, the
 * first one too (it is where the allocation call returns to), so it is
 * written minus 1 to land on its call like the others. A stack that could
 * not be captured gets the address 0, which names nothing: its bytes still
 * count, under an unknown frame.
 */
static void put_stack(const struct report_stack *s, FILE *f)
{
	struct figures t = { s->allocs, s->bytes, s->total_allocs, s->total_bytes };
	size_t written = 0;

	put_figures(&t, f);
	for (size_t i = 0; i < s->nr_frames; i++) {
		const struct report_frame *fr = report__frame(s, i);
		uint64_t a = fr->address;

		/* Python frames are no machine code: the readers could not name them. */
		if (fr->inlined || fr->language == FRAME_PYTHON)
			continue;
		fprintf(f, " 0x%llx", (unsigned long long)(written || !a ? a : a - 1));
		written++;
	}
	if (!written)
		fputs(" 0x0", f);
	fputc('\n', f);
}

/* The kernel escapes a newline in a path as "\012"; a hand-made path may not. */
static void put_path(const char *s, FILE *f)
{
	for (; *s; s++) {
		if (*s == '\n')
			fputs("\\012", f);
		else
			fputc(*s, f);
	}
}

/* Only executable mappings: neither reader looks at the others. */
static void put_maps(const struct maps *maps, FILE *f)
{
	for (size_t i = 0; maps && i < maps->nr; i++) {
		const struct map_entry *e = &maps->entries[i];
		int n;

		if (!e->executable)
			continue;
		n = fprintf(f, "%08llx-%08llx %c%c%c%c %08llx %02x:%02x %llu",
			    (unsigned long long)e->start, (unsigned long long)e->end,
			    e->readable ? 'r' : '-', e->writable ? 'w' : '-', 'x',
			    e->shared ? 's' : 'p', (unsigned long long)e->offset,
			    major(e->dev), minor(e->dev), (unsigned long long)e->inode);
		if (e->path && e->path[0]) {
			int pad = n > 0 && n < MAPS_PATH_COLUMN ? MAPS_PATH_COLUMN - n : 1;

			fprintf(f, "%*s", pad, "");
			put_path(e->path, f);
			if (e->deleted)
				fputs(" (deleted)", f);
		}
		fputc('\n', f);
	}
}

int report_gperftools__write(const struct report *r, FILE *f)
{
	struct figures t = { 0 };

	add_stacks(&t, r);
	add_stacks(&t, r->freed);
	fputs("heap profile: ", f);
	put_figures(&t, f);
	fputs(" heapprofile\n", f);
	for (size_t i = 0; i < r->nr_stacks; i++)
		put_stack(&r->stacks[i], f);
	for (size_t i = 0; r->freed && i < r->freed->nr_stacks; i++)
		put_stack(&r->freed->stacks[i], f);
	fputs("\nMAPPED_LIBRARIES:\n", f);
	put_maps(r->maps, f);
	return ferror(f) ? -EIO : 0;
}
