// SPDX-License-Identifier: GPL-2.0
/* Python frames merged into a symbolized native stack (pure). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "pystack.h"

/* The function of the interpreter's evaluation loop: one native frame per run. */
static bool is_eval_loop(const struct report_frame *f)
{
	return f->language == FRAME_NATIVE && !f->inlined && f->function &&
	       !strcmp(f->function, "_PyEval_EvalFrameDefault");
}

struct frames {
	struct report_frame *v;
	size_t nr;
};

static void push(struct frames *out, const struct report_frame *f)
{
	out->v[out->nr++] = *f;
}

/*
 * Python frame i of py as a report frame; false when it is left out. Its
 * names are the code table's, borrowed: a flame graph of a Python job has
 * millions of frames, three copies of names each before.
 */
static bool python_frame(const struct py_stack *py, uint32_t i, const struct pycode *pc,
			 struct report_frame *f)
{
	const struct py_frame *pf = &py->frames[i];
	struct pycode_where w;

	*f = (struct report_frame){ .address = pf->instr, .language = FRAME_PYTHON };
	if (!pc || !pycode__where(pc, pf, &w))
		return true;	/* unknown code: still a Python frame, by address */
	if (w.setup)
		return false;
	f->function = (char *)w.function;
	f->module = f->file = (char *)w.file;
	f->borrowed = true;
	f->module_offset = w.offset;
	f->line = w.line;
	return true;
}

int pystack__frame(const struct py_stack *py, uint32_t i, const struct pycode *pc,
		   struct report_frame *f)
{
	return python_frame(py, i, pc, f) ? 0 : 1;
}

/* The Python frames of runs [first, last] (0 is the innermost run). */
static void push_runs(struct frames *out, const struct py_stack *py, uint32_t first,
		      uint32_t last, const struct pycode *pc)
{
	uint32_t run = 0;

	for (uint32_t i = 0; i < py->nr && i < MEMLEAK_PY_MAX_FRAMES && run <= last; i++) {
		struct report_frame f;

		if (run >= first && python_frame(py, i, pc, &f))
			push(out, &f);
		if (py->entries >> i & 1)
			run++;
	}
}

/* Runs of the evaluation loop in py: one per entry bit, the last one open. */
static uint32_t count_runs(const struct py_stack *py)
{
	uint32_t n = py->nr < MEMLEAK_PY_MAX_FRAMES ? py->nr : MEMLEAK_PY_MAX_FRAMES;
	uint64_t mask = n < 64 ? (1ULL << n) - 1 : ~0ULL;
	uint32_t runs = (uint32_t)__builtin_popcountll(py->entries & mask);

	/* The outermost frames form a run of their own unless a bit closed it. */
	if (n && !(py->entries >> (n - 1) & 1))
		runs++;
	return runs;
}

/* The interpreter's native frames outside the innermost Python frame go. */
static void drop_plumbing(struct frames *out, const char *interp)
{
	size_t kept = 0;
	bool python = false;

	for (size_t i = 0; i < out->nr; i++) {
		struct report_frame *f = &out->v[i];

		python |= f->language == FRAME_PYTHON;
		if (python && interp && f->language == FRAME_NATIVE && f->module &&
		    !strcmp(f->module, interp)) {
			report__frame_free(f);
			continue;
		}
		out->v[kept++] = *f;
	}
	out->nr = kept;
}

#define PY_ARENA_SIZE (1ULL << 20)

bool pystack__arena_sized(const struct report_stack *s)
{
	return s->api == API_MMAP && s->allocs && s->total_bytes == s->total_allocs * PY_ARENA_SIZE;
}

bool pystack__is_arena(const struct report_stack *s, const char *interp)
{
	const struct report_frame *f = s->nr_frames ? report__frame(s, 0) : NULL;

	return pystack__arena_sized(s) && f && f->language == FRAME_NATIVE && f->module &&
	       interp && !strcmp(f->module, interp);
}

int pystack__merge(struct report_stack *s, const struct py_stack *py, const struct pycode *pc,
		   const char *interp)
{
	uint32_t runs = count_runs(py), loops = 0, run = 0;
	struct frames out = { calloc(s->nr_frames + py->nr + 1, sizeof(*out.v)), 0 };

	if (!out.v)
		return -ENOMEM;
	for (size_t i = 0; i < s->nr_frames; i++)
		loops += is_eval_loop(&s->frames[i]);
	for (size_t i = 0; i < s->nr_frames; i++) {
		if (!is_eval_loop(&s->frames[i]) || run >= runs) {
			push(&out, &s->frames[i]);
			continue;
		}
		/* The outermost loop frame also takes the runs no loop frame is left for. */
		run++;
		push_runs(&out, py, run - 1, run == loops ? runs - 1 : run - 1, pc);
		report__frame_free(&s->frames[i]);
	}
	if (!loops && runs)
		push_runs(&out, py, 0, runs - 1, pc);
	drop_plumbing(&out, interp);
	s->truncated |= py->flags & PY_STACK_TRUNCATED;
	free(s->frames);
	s->frames = out.v;
	s->nr_frames = out.nr;
	return 0;
}
