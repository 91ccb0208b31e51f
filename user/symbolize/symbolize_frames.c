// SPDX-License-Identifier: GPL-2.0
/* The frames a lookup gives, copied into a growing buffer (symbolize_internal.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "symbolize_internal.h"
#include "util/vec.h"

void symbolize_frames__free(struct report_frame *frames, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		report__frame_free(&frames[i]);
	free(frames);
}

/* Append a frame with copies of the strings; function is demangled. */
int symbolize_frames__push(struct frame_buf *b, const char *function, const char *file, int line,
			    bool inlined)
{
	struct report_frame *f;

	if (vec__reserve_min(&b->v, &b->cap, b->nr + 1, sizeof(*b->v), 4))
		return -ENOMEM;
	f = &b->v[b->nr];
	memset(f, 0, sizeof(*f));
	f->function = function ? symbolize_names__demangle(function) : NULL;
	/* Kept only when demangling changed it: most names are C's, the same. */
	if (f->function && strcmp(f->function, function))
		f->symbol = strdup(function);
	f->file = file ? strdup(file) : NULL;
	if ((function && !f->function) || (file && !f->file) ||
	    (f->function && strcmp(f->function, function) && !f->symbol)) {
		free(f->function);
		free(f->symbol);
		free(f->file);
		return -ENOMEM;
	}
	f->line = file ? line : 0;
	f->inlined = inlined;
	b->nr++;
	return 0;
}
