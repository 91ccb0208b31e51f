// SPDX-License-Identifier: GPL-2.0
/*
 * Python code objects: the location table decoder against the lines CPython
 * 3.11 itself gives (co_lines()), and the reader on a made-up address space.
 */
#include <errno.h>
#include <stdlib.h>
#include "python/pycode.h"
#include "python/pystack.h"
#include "unit.h"

/*
 * def f(a) of a 3.11 compile: negative line deltas, entries without a
 * location, long and one-line forms. firstlineno 2; the ranges are
 * co_lines() (bytes start, end, line; 0 for None).
 */
static const uint8_t table_f[] = {
	0x80, 0x00, 0xd8, 0x08, 0x1d, 0xd0, 0x08, 0x1d, 0x95, 0x45, 0x98, 0x21, 0x91, 0x48,
	0x94, 0x48, 0xd0, 0x08, 0x1d, 0xd1, 0x08, 0x1d, 0xd4, 0x08, 0x1d, 0x80, 0x41, 0xd8,
	0x07, 0x08, 0x88, 0x31, 0x82, 0x75, 0x80, 0x75, 0xd8, 0x0d, 0x0e, 0xd8, 0x0d, 0x0e,
	0xf1, 0x03, 0x01, 0x0e, 0x0f, 0x88, 0x01, 0x88, 0x01, 0xf0, 0x06, 0x00, 0x0d, 0x0e,
	0x88, 0x01, 0xf0, 0x02, 0x03, 0x05, 0x11, 0xd8, 0x0c, 0x0d, 0x88, 0x62, 0x8c, 0x45,
	0x88, 0x01, 0x88, 0x01, 0xf8, 0xdd, 0x0b, 0x15, 0xf0, 0x00, 0x01, 0x05, 0x11, 0xf0,
	0x00, 0x01, 0x05, 0x11, 0xf0, 0x00, 0x01, 0x05, 0x11, 0xd8, 0x0c, 0x10, 0x88, 0x01,
	0x88, 0x01, 0x88, 0x01, 0xf0, 0x03, 0x01, 0x05, 0x11, 0xf8, 0xf8, 0xf8, 0xe0, 0x0c,
	0x0d, 0xd8, 0x0c, 0x0d, 0xd8, 0x0c, 0x0d, 0xf0, 0x05, 0x02, 0x0c, 0x0f, 0xf0, 0x00,
	0x02, 0x05, 0x0f,
};

static const int lines_f[][3] = {
	{ 0, 2, 2 }, { 2, 50, 3 }, { 50, 52, 3 }, { 52, 64, 4 }, { 64, 66, 5 }, { 66, 68, 6 },
	{ 68, 76, 5 }, { 76, 80, 8 }, { 80, 82, 9 }, { 82, 100, 10 }, { 100, 102, 0 },
	{ 102, 120, 11 }, { 120, 128, 12 }, { 128, 130, 11 }, { 130, 136, 0 }, { 136, 138, 13 },
	{ 138, 140, 14 }, { 140, 142, 15 }, { 142, 146, 13 },
};

TEST(pycode_line_as_cpython_311)
{
	for (size_t i = 0; i < sizeof(lines_f) / sizeof(lines_f[0]); i++)
		for (int off = lines_f[i][0]; off < lines_f[i][1]; off += 2)
			ASSERT_EQ_U64(pycode__line(table_f, sizeof(table_f), 2, off), lines_f[i][2]);
	/* Past the table, and an empty table: no line. */
	ASSERT_EQ_U64(pycode__line(table_f, sizeof(table_f), 2, 146), 0);
	ASSERT_EQ_U64(pycode__line(table_f, 0, 2, 0), 0);
	return true;
}

TEST(pycode_line_far_from_firstlineno)
{
	/* def g(): return 1, 314 lines into its module. */
	static const uint8_t table_g[] = { 0x80, 0x00, 0xd8, 0x0b, 0x0c, 0x88, 0x31 };

	ASSERT_EQ_U64(pycode__line(table_g, sizeof(table_g), 316, 0), 316);
	ASSERT_EQ_U64(pycode__line(table_g, sizeof(table_g), 316, 2), 317);
	ASSERT_EQ_U64(pycode__line(table_g, sizeof(table_g), 316, 4), 317);
	/* A table cut in the middle of a varint ends cleanly. */
	ASSERT_EQ_U64(pycode__line((const uint8_t[]){ 0xe8, 0x44 }, 2, 1, 0), 1 + 2);
	return true;
}

/* ---------------------------------------------------------------- a fake target */

#define BASE 0x10000
#define CODE_TYPE 0x7777
#define CODE (BASE + 0x100)
#define NAME (BASE + 0x400)
#define FILE_ (BASE + 0x500)
#define TABLE (BASE + 0x600)

static const struct py_layout layout_311 = {
	.code_filename = 0x70, .code_qualname = 0x80, .code_linetable = 0x88,
	.code_firstlineno = 0x48, .code_firsttraceable = 0xa8, .code_code = 0xb8,
	.ascii_size = 48, .compact_size = 72, .bytes_data = 32,
};

struct space {
	uint8_t mem[0x1000];
	int reads;
};

static int space_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct space *s = ctx;

	s->reads++;
	if (addr < BASE || addr + len > BASE + sizeof(s->mem))
		return -EFAULT;
	memcpy(buf, s->mem + (addr - BASE), len);
	return 0;
}

static void put64(struct space *s, uint64_t addr, uint64_t v)
{
	memcpy(s->mem + (addr - BASE), &v, sizeof(v));
}

static void put32(struct space *s, uint64_t addr, uint32_t v)
{
	memcpy(s->mem + (addr - BASE), &v, sizeof(v));
}

/* A compact str: ASCII ones after a 48-byte head, others after 72, kind bytes a char. */
static void put_str(struct space *s, uint64_t addr, const void *chars, uint64_t n, int kind,
		    bool ascii)
{
	put64(s, addr + 16, n);
	put32(s, addr + 32, (uint32_t)(kind << 2 | 1 << 5 | (ascii ? 1 << 6 : 0)));
	memcpy(s->mem + (addr + (ascii ? 48 : 72) - BASE), chars, n * kind);
}

static void make_code(struct space *s)
{
	memset(s, 0, sizeof(*s));
	put64(s, CODE + 8, CODE_TYPE);
	put64(s, CODE + 0x70, FILE_);
	put64(s, CODE + 0x80, NAME);
	put64(s, CODE + 0x88, TABLE);
	put32(s, CODE + 0x48, 2);
	put32(s, CODE + 0xa8, 1);	/* one unit of frame setup */
	put_str(s, NAME, "Dataset.__getitem__", 19, 1, true);
	put_str(s, FILE_, "/srv/train/dataset.py", 21, 1, true);
	put64(s, TABLE + 16, sizeof(table_f));
	memcpy(s->mem + (TABLE + 32 - BASE), table_f, sizeof(table_f));
}

TEST(pycode_reads_a_code_object)
{
	struct space s;
	struct pycode *pc = pycode__new(&layout_311, CODE_TYPE);
	struct py_frame f = { .code = CODE, .instr = CODE + 0xb8 + 66, .linetable = TABLE };
	struct pycode_where w;
	int reads;

	make_code(&s);
	ASSERT(pc);
	ASSERT(!pycode__where(pc, &f, &w));
	ASSERT_EQ_U64(pycode__add(pc, &f, space_read, &s), 0);
	ASSERT(pycode__where(pc, &f, &w));
	ASSERT_EQ_STR(w.function, "Dataset.__getitem__");
	ASSERT_EQ_STR(w.file, "/srv/train/dataset.py");
	ASSERT_EQ_U64(w.line, 6);
	ASSERT_EQ_U64(w.offset, 66);
	ASSERT(!w.setup);
	/* Before _co_firsttraceable: the frame was being set up. */
	f.instr = CODE + 0xb8;
	ASSERT(pycode__where(pc, &f, &w) && w.setup && w.line == 2);
	/* Known: not read again. */
	reads = s.reads;
	ASSERT_EQ_U64(pycode__add(pc, &f, space_read, &s), 0);
	ASSERT_EQ_U64(s.reads, reads);
	ASSERT_EQ_U64(pycode__count(pc), 1);
	pycode__free(pc);
	return true;
}

TEST(pycode_names_beyond_ascii)
{
	static const uint16_t ucs2[] = { 'f', 0x00e9, 0x4e2d, '_' };
	static const uint8_t latin1[] = { 'c', 'a', 'f', 0xe9 };
	struct space s;
	struct pycode *pc = pycode__new(&layout_311, CODE_TYPE);
	struct py_frame f = { .code = CODE, .instr = CODE + 0xb8, .linetable = TABLE };
	struct pycode_where w;

	make_code(&s);
	put_str(&s, NAME, ucs2, 4, 2, false);
	put_str(&s, FILE_, latin1, 4, 1, false);
	ASSERT(pc && !pycode__add(pc, &f, space_read, &s) && pycode__where(pc, &f, &w));
	ASSERT_EQ_STR(w.function, "f\xc3\xa9\xe4\xb8\xad_");
	ASSERT_EQ_STR(w.file, "caf\xc3\xa9");
	pycode__free(pc);
	return true;
}

TEST(pycode_refuses_what_is_no_longer_that_code)
{
	struct space s;
	struct pycode *pc = pycode__new(&layout_311, CODE_TYPE);
	struct py_frame f = { .code = CODE, .instr = CODE + 0xb8, .linetable = TABLE };
	struct py_frame other = { .code = CODE, .instr = CODE + 0xb8, .linetable = TABLE + 8 };
	struct pycode_where w;

	make_code(&s);
	ASSERT(pc);
	/* Another code object at the address (its linetable elsewhere): not ours. */
	ASSERT(pycode__add(pc, &other, space_read, &s) == -ESTALE);
	ASSERT(!pycode__where(pc, &other, &w));
	/* Ours is a different key, still readable. */
	ASSERT(!pycode__add(pc, &f, space_read, &s) && pycode__where(pc, &f, &w));
	/* Memory of something else. */
	put64(&s, CODE + 8, CODE_TYPE + 1);
	f.code = other.code = CODE;
	f.linetable = TABLE + 16;
	ASSERT(pycode__add(pc, &f, space_read, &s) == -ESTALE);
	pycode__free(pc);
	return true;
}

static int gone_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return -ESRCH;
}

TEST(pycode_gone_target_learns_nothing)
{
	struct space s;
	struct pycode *pc = pycode__new(&layout_311, CODE_TYPE);
	struct py_frame f = { .code = CODE, .instr = CODE + 0xb8 + 66, .linetable = TABLE };
	struct pycode_where w;

	make_code(&s);
	ASSERT(pc && pycode__add(pc, &f, gone_read, NULL) == -ESRCH);
	ASSERT_EQ_U64(pycode__count(pc), 0);
	/* Many more: none takes a slot. */
	for (uint64_t i = 1; i <= 300; i++) {
		struct py_frame g = { .code = CODE + i * 0x1000, .linetable = TABLE };

		ASSERT(pycode__add(pc, &g, gone_read, NULL) == -ESRCH);
	}
	ASSERT(!pycode__add(pc, &f, space_read, &s) && pycode__where(pc, &f, &w) && w.line == 6);
	pycode__free(pc);
	return true;
}

/* BPF's copy of the code object at CODE: its names and its whole table (table_f). */
static void fill_copy(struct py_code *copy)
{
	copy->code = CODE;
	copy->linetable = TABLE;
	copy->firstlineno = 2;
	strcpy(copy->qualname, "<module>");
	strcpy(copy->filename, "/srv/train/dataset.py");
	memcpy(copy->table, table_f, sizeof(table_f));
	copy->table_len = sizeof(table_f);
}

TEST(pycode_from_bpf_copy)
{
	struct pycode *pc = pycode__new(&layout_311, CODE_TYPE);
	struct py_code *copy = calloc(1, sizeof(*copy));
	struct py_frame f = { .code = CODE, .instr = CODE + 0xb8 + 138, .linetable = TABLE };
	struct pycode_where w;
	struct space s;

	ASSERT(pc && copy);
	fill_copy(copy);
	/* Complete: the target is not read (it may be long gone). */
	ASSERT_EQ_U64(pycode__add_copy(pc, copy, gone_read, NULL), 0);
	ASSERT(pycode__where(pc, &f, &w));
	ASSERT_EQ_STR(w.function, "<module>");
	ASSERT_EQ_U64(w.line, 14);
	/* Every offset, through the table decoded once, on CPython's own lines; past it none. */
	for (size_t i = 0; i < sizeof(lines_f) / sizeof(lines_f[0]); i++)
		for (int off = lines_f[i][0]; off < lines_f[i][1]; off += 2) {
			f.instr = CODE + 0xb8 + off;
			ASSERT(pycode__where(pc, &f, &w));
			ASSERT_EQ_U64(w.line, lines_f[i][2]);
		}
	f.instr = CODE + 0xb8 + 146;
	ASSERT(pycode__where(pc, &f, &w) && w.line == 0);
	/* Cut names: the target's are better while it lives. */
	make_code(&s);
	copy->linetable = f.linetable = TABLE + 32;
	put64(&s, CODE + 0x88, TABLE + 32);
	put64(&s, TABLE + 32 + 16, 2);
	memcpy(s.mem + (TABLE + 64 - BASE), (const uint8_t[]){ 0x80, 0x00 }, 2);
	copy->flags = PY_CODE_NAMES_UNREAD;
	ASSERT_EQ_U64(pycode__add_copy(pc, copy, space_read, &s), 0);
	f.instr = CODE + 0xb8;
	ASSERT(pycode__where(pc, &f, &w));
	ASSERT_EQ_STR(w.function, "Dataset.__getitem__");
	/* ... and when it is gone, the copy is all there is. */
	copy->linetable = f.linetable = TABLE + 64;
	ASSERT_EQ_U64(pycode__add_copy(pc, copy, gone_read, NULL), 0);
	ASSERT(pycode__where(pc, &f, &w));
	ASSERT_EQ_STR(w.function, "<module>");
	free(copy);
	pycode__free(pc);
	return true;
}

/*
 * A report's Python frames borrow the code table's names (pystack.h):
 * the very strings pycode__where gives, not copies, in the frame of a
 * stack and in a site's frame; freeing the report's frame leaves them.
 */
TEST(pycode_names_borrowed_by_the_report)
{
	struct space s;
	struct pycode *pc = pycode__new(&layout_311, CODE_TYPE);
	struct py_stack *py = calloc(1, sizeof(*py));
	struct report_stack st = { 0 };
	struct report_frame f;
	struct pycode_where w;

	make_code(&s);
	ASSERT(pc && py);
	py->nr = 1;
	py->frames[0] = (struct py_frame){ .code = CODE, .instr = CODE + 0xb8 + 66, .linetable = TABLE };
	ASSERT(!pycode__add(pc, &py->frames[0], space_read, &s) && pycode__where(pc, &py->frames[0], &w));
	ASSERT_EQ_U64(pystack__frame(py, 0, pc, &f), 0);
	ASSERT(f.borrowed && f.function == w.function && f.file == w.file && f.module == w.file);
	report__frame_free(&f);
	ASSERT(!pystack__merge(&st, py, pc, "/usr/bin/python3.11"));
	ASSERT(st.nr_frames == 1 && st.frames[0].borrowed && st.frames[0].function == w.function);
	report__frame_free(&st.frames[0]);
	free(st.frames);
	ASSERT(pycode__where(pc, &py->frames[0], &w));
	ASSERT_EQ_STR(w.function, "Dataset.__getitem__");
	free(py);
	pycode__free(pc);
	return true;
}

/*
 * BPF's copy of a code object waited (the py_codes ring was full, or a
 * report held the copies) while the code object was freed: a reading of
 * the target found something else there, and left it unnamed, counted.
 * The copy, when it comes, names it, and the count the report's site
 * frames are kept by moves, so that they are worked out again.
 */
TEST(pycode_late_copy_names_a_freed_code)
{
	struct pycode *pc = pycode__new(&layout_311, CODE_TYPE);
	struct py_code *copy = calloc(1, sizeof(*copy));
	struct py_frame f = { .code = CODE, .instr = CODE + 0xb8 + 66, .linetable = TABLE };
	struct pycode_where w;
	struct space s;
	size_t count;

	ASSERT(pc && copy);
	make_code(&s);
	put64(&s, CODE + 8, CODE_TYPE + 1);	/* freed, its memory another object's */
	ASSERT(pycode__add(pc, &f, space_read, &s) == -ESTALE);
	ASSERT(!pycode__where(pc, &f, &w));
	ASSERT_EQ_U64(pycode__unnamed(pc), 1);
	count = pycode__count(pc);
	fill_copy(copy);
	ASSERT_EQ_U64(pycode__add_copy(pc, copy, gone_read, NULL), 0);
	ASSERT(pycode__where(pc, &f, &w));
	ASSERT_EQ_STR(w.function, "<module>");
	ASSERT_EQ_U64(w.line, 6);
	ASSERT_EQ_U64(pycode__unnamed(pc), 0);
	ASSERT(pycode__count(pc) > count);
	/* Named: a copy again changes nothing. */
	count = pycode__count(pc);
	strcpy(copy->qualname, "other");
	ASSERT_EQ_U64(pycode__add_copy(pc, copy, gone_read, NULL), 0);
	ASSERT(pycode__where(pc, &f, &w));
	ASSERT_EQ_STR(w.function, "<module>");
	ASSERT_EQ_U64(pycode__count(pc), count);
	/* A copy without names, of a code object gone: unnamed, counted. */
	copy->linetable = TABLE + 8;
	copy->qualname[0] = copy->filename[0] = '\0';
	ASSERT_EQ_U64(pycode__add_copy(pc, copy, gone_read, NULL), 0);
	ASSERT_EQ_U64(pycode__unnamed(pc), 1);
	free(copy);
	pycode__free(pc);
	return true;
}
