// SPDX-License-Identifier: GPL-2.0
/* Python frames merged into native stacks (user/pystack.c). */
#include <stdlib.h>
#include "python/pystack.h"
#include "unit.h"

#define INTERP "/usr/bin/python3.11"

static struct report_frame native(const char *fn, const char *module)
{
	return (struct report_frame){
		.address = 0x1000,
		.function = fn ? strdup(fn) : NULL,
		.module = module ? strdup(module) : NULL,
	};
}

static struct report_stack stack_of(const struct report_frame *f, size_t nr)
{
	struct report_stack s = { .frames = calloc(nr, sizeof(*f)), .nr_frames = nr };

	memcpy(s.frames, f, nr * sizeof(*f));
	return s;
}

static void stack_free(struct report_stack *s)
{
	for (size_t i = 0; i < s->nr_frames; i++) {
		free(s->frames[i].function);
		free(s->frames[i].module);
		free(s->frames[i].file);
	}
	free(s->frames);
}

/* "fn" per frame, "py:fn" for Python ones, joined by spaces. */
static const char *names(const struct report_stack *s)
{
	static char buf[1024];
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < s->nr_frames; i++) {
		const struct report_frame *f = &s->frames[i];

		o += snprintf(buf + o, sizeof(buf) - o, "%s%s%s", i ? " " : "",
			      f->language == FRAME_PYTHON ? "py:" : "",
			      f->function ? f->function : "?");
	}
	return buf;
}

/* Python frames whose code objects nobody read: they show by address. */
static struct py_stack *py_of(uint32_t nr, uint64_t entries)
{
	struct py_stack *py = calloc(1, sizeof(*py));

	py->nr = nr;
	py->entries = entries;
	for (uint32_t i = 0; i < nr; i++)
		py->frames[i] = (struct py_frame){ .code = 0x100 * (i + 1), .instr = i + 1 };
	return py;
}

TEST(pystack_runs_replace_eval_loops)
{
	struct report_frame f[] = {
		native("PyByteArray_Resize", INTERP), native("_PyObject_MakeTpCall", INTERP),
		native("_PyEval_EvalFrameDefault", INTERP), native("_PyFunction_Vectorcall", INTERP),
		native("map_next", INTERP), native("ext_callback", "/usr/lib/ext.so"),
		native("_PyEval_EvalFrameDefault", INTERP), native("Py_RunMain", INTERP),
		native("__libc_start_call_main", "/lib/libc.so.6"),
	};
	struct report_stack s = stack_of(f, 9);
	/* Frames 0, 1 are the inner run (bit 1), 2 the outer one. */
	struct py_stack *py = py_of(3, 1 << 1);

	ASSERT(!pystack__merge(&s, py, NULL, INTERP));
	ASSERT_EQ_STR(names(&s), "PyByteArray_Resize _PyObject_MakeTpCall py:? py:? "
				 "ext_callback py:? __libc_start_call_main");
	ASSERT_EQ_U64(s.frames[2].address, 1);
	ASSERT_EQ_U64(s.frames[5].address, 3);
	stack_free(&s);
	free(py);
	return true;
}

TEST(pystack_runs_without_loop_frames)
{
	/* The unwinder lost everything above the allocation: runs go last. */
	struct report_frame f[] = { native("PyObject_Malloc", INTERP), native(NULL, NULL) };
	struct report_stack s = stack_of(f, 2);
	struct py_stack *py = py_of(3, 1 << 0);

	ASSERT(!pystack__merge(&s, py, NULL, INTERP));
	ASSERT_EQ_STR(names(&s), "PyObject_Malloc ? py:? py:? py:?");
	stack_free(&s);
	free(py);
	return true;
}

TEST(pystack_more_runs_than_loops)
{
	/* One loop frame found for three runs: the outermost found takes the rest. */
	struct report_frame f[] = {
		native("list_resize", INTERP), native("_PyEval_EvalFrameDefault", INTERP),
		native("main", "/usr/bin/embedder"),
	};
	struct report_stack s = stack_of(f, 3);
	struct py_stack *py = py_of(4, 1 << 0 | 1 << 2);

	ASSERT(!pystack__merge(&s, py, NULL, INTERP));
	ASSERT_EQ_STR(names(&s), "list_resize py:? py:? py:? py:? main");
	stack_free(&s);
	free(py);
	return true;
}

TEST(pystack_more_loops_than_runs)
{
	/* Python frames cut at MEMLEAK_PY_MAX_FRAMES: outer loops stay native. */
	struct report_frame f[] = {
		native("dict_resize", INTERP), native("_PyEval_EvalFrameDefault", INTERP),
		native("_PyEval_EvalFrameDefault", INTERP),
	};
	struct report_stack s = stack_of(f, 3);
	struct py_stack *py = py_of(2, 0);

	py->flags = PY_STACK_TRUNCATED;
	ASSERT(!pystack__merge(&s, py, NULL, INTERP));
	ASSERT_EQ_STR(names(&s), "dict_resize py:? py:?");
	ASSERT(s.truncated);
	stack_free(&s);
	free(py);
	return true;
}
