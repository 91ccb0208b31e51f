// SPDX-License-Identifier: GPL-2.0
/*
 * Code objects of a Python target, read once each, kept for the run: an
 * open-addressing table keyed by the code object's address.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "pycode.h"

#define MAX_NAME_CHARS 1024		/* longer names and paths are cut */
#define MAX_LINETABLE (1u << 20)	/* a bigger location table is not believed */
#define CODE_HEAD 0x100			/* bytes of a code object read: past its fields */
#define STR_HEAD 40			/* bytes of a str read: past its state */
#define OB_TYPE 8			/* PyObject.ob_type */
#define OB_SIZE 16			/* PyVarObject.ob_size; PyASCIIObject.length */
#define STR_STATE 32			/* PyASCIIObject.state */

struct code {
	uint64_t addr;		/* 0: free slot */
	uint64_t linetable_addr;	/* its co_linetable, as BPF read it */
	uint64_t born;		/* when its address was last freed, as BPF noted (py_frame.born) */
	bool valid;		/* read, and a code object */
	char *function, *file;
	int firstlineno, firsttraceable;
	uint8_t *linetable;
	size_t linetable_len;
	/*
	 * The location table decoded once: a report names the line of every
	 * stack's frames, and decoding a module's table from its start for
	 * each cost more than the rest of the report. NULL: decode each time.
	 */
	struct line_run *lines;
	size_t nr_lines;
};

/* Code units [previous end, end) of a code object are on line (0: none). */
struct line_run {
	uint32_t end;
	int32_t line;
};

static void index_lines(struct code *c);
static int code_line(const struct code *c, uint64_t offset);

struct pycode {
	struct py_layout layout;
	uint64_t code_type;
	struct code *slots;
	size_t cap, nr;		/* cap: a power of two */
	size_t unnamed;		/* entries not valid */
	size_t named_late;	/* entries a copy named after a reading could not */
	uint64_t id;		/* pycode__id */
};

struct pycode *pycode__new(const struct py_layout *layout, uint64_t code_type)
{
	struct pycode *pc = calloc(1, sizeof(*pc));

	if (!pc)
		return NULL;
	static _Atomic uint64_t last_id;

	pc->id = ++last_id;
	pc->layout = *layout;
	pc->code_type = code_type;
	pc->cap = 256;
	pc->slots = calloc(pc->cap, sizeof(*pc->slots));
	if (!pc->slots) {
		free(pc);
		return NULL;
	}
	return pc;
}

static size_t slot_of(const struct pycode *pc, uint64_t addr, uint64_t linetable, uint64_t born)
{
	size_t i = (size_t)(((addr ^ linetable ^ born) >> 4) * 0x9e3779b97f4a7c15ULL) &
		   (pc->cap - 1);

	while (pc->slots[i].addr &&
	       (pc->slots[i].addr != addr || pc->slots[i].linetable_addr != linetable ||
		pc->slots[i].born != born))
		i = (i + 1) & (pc->cap - 1);
	return i;
}

static int grow(struct pycode *pc)
{
	struct pycode bigger = *pc;

	bigger.cap = pc->cap * 2;
	bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots));
	if (!bigger.slots)
		return -ENOMEM;
	for (size_t i = 0; i < pc->cap; i++)
		if (pc->slots[i].addr)
			bigger.slots[slot_of(&bigger, pc->slots[i].addr, pc->slots[i].linetable_addr,
					     pc->slots[i].born)] = pc->slots[i];
	free(pc->slots);
	*pc = bigger;
	return 0;
}

/* One code point as UTF-8; its length. */
static size_t put_utf8(uint32_t cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18 & 7));
	out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/*
 * A compact str (how CPython makes every name and path): its characters
 * follow the header, one to four bytes each (state.kind), as UTF-8.
 */
static char *read_str(const struct pycode *pc, uint64_t addr, pycode_read_fn read, void *ctx)
{
	uint8_t head[STR_HEAD], data[MAX_NAME_CHARS * 4];
	uint32_t state, kind;
	uint64_t n;
	char *out;
	size_t o = 0;

	if (!addr || read(ctx, addr, head, sizeof(head)))
		return NULL;
	memcpy(&n, head + OB_SIZE, sizeof(n));
	memcpy(&state, head + STR_STATE, sizeof(state));
	kind = state >> 2 & 7;
	if (!(state >> 5 & 1) || (kind != 1 && kind != 2 && kind != 4))
		return NULL;	/* not compact: never a code object's name */
	if (n > MAX_NAME_CHARS)
		n = MAX_NAME_CHARS;
	/* ASCII text right after PyASCIIObject, any other after PyCompactUnicodeObject. */
	addr += state >> 6 & 1 ? pc->layout.ascii_size : pc->layout.compact_size;
	if (n && read(ctx, addr, data, n * kind))
		return NULL;
	out = malloc(n * 4 + 1);
	if (!out)
		return NULL;
	for (uint64_t i = 0; i < n; i++) {
		uint32_t cp = 0;

		memcpy(&cp, data + i * kind, kind);	/* little-endian */
		o += put_utf8(cp > 0x10ffff ? 0xfffd : cp, out + o);
	}
	out[o] = '\0';
	return out;
}

static uint64_t u64_at(const uint8_t *head, uint32_t off)
{
	uint64_t v = 0;

	if (off + 8 <= CODE_HEAD)
		memcpy(&v, head + off, sizeof(v));
	return v;
}

static int i32_at(const uint8_t *head, uint32_t off)
{
	int32_t v = 0;

	if (off + 4 <= CODE_HEAD)
		memcpy(&v, head + off, sizeof(v));
	return v;
}

static int read_linetable(const struct pycode *pc, uint64_t addr, struct code *c,
			  pycode_read_fn read, void *ctx)
{
	uint64_t n;

	if (!addr || read(ctx, addr + OB_SIZE, &n, sizeof(n)))
		return -EFAULT;
	if (n > MAX_LINETABLE)
		return -EINVAL;
	c->linetable = malloc(n ? n : 1);
	if (!c->linetable)
		return -ENOMEM;
	c->linetable_len = n;
	return n ? read(ctx, addr + pc->layout.bytes_data, c->linetable, n) : 0;
}

static int read_code(const struct pycode *pc, struct code *c, pycode_read_fn read, void *ctx)
{
	const struct py_layout *l = &pc->layout;
	uint8_t head[CODE_HEAD];
	int err;

	err = read(ctx, c->addr, head, sizeof(head));
	if (err)
		return err;
	/* Freed, and its memory reused by something else or by another code object. */
	if (u64_at(head, OB_TYPE) != pc->code_type ||
	    u64_at(head, l->code_linetable) != c->linetable_addr)
		return -ESTALE;
	c->firstlineno = i32_at(head, l->code_firstlineno);
	c->firsttraceable = i32_at(head, l->code_firsttraceable);
	c->function = read_str(pc, u64_at(head, l->code_qualname), read, ctx);
	c->file = read_str(pc, u64_at(head, l->code_filename), read, ctx);
	if (!c->function || !c->file)
		return -EFAULT;
	return read_linetable(pc, u64_at(head, l->code_linetable), c, read, ctx);
}

static void code_clear(struct code *c)
{
	free(c->function);
	free(c->file);
	free(c->linetable);
	free(c->lines);
	c->function = c->file = NULL;
	c->linetable = NULL;
	c->linetable_len = 0;
	c->lines = NULL;
	c->nr_lines = 0;
}

int pycode__add(struct pycode *pc, const struct py_frame *f, pycode_read_fn read, void *ctx)
{
	struct code *c;
	int err;

	if (!f->code || pc->slots[slot_of(pc, f->code, f->linetable, f->born)].addr)
		return 0;
	if (2 * (pc->nr + 1) > pc->cap && grow(pc))
		return -ENOMEM;
	c = &pc->slots[slot_of(pc, f->code, f->linetable, f->born)];
	*c = (struct code){ .addr = f->code, .linetable_addr = f->linetable, .born = f->born };
	pc->nr++;
	err = read_code(pc, c, read, ctx);
	if (err)
		code_clear(c);
	else
		index_lines(c);
	c->valid = !err;
	if (err == -ESRCH) {
		/* The target is gone, not the code: it stays unknown, not unreadable.
		 * The newest entry ends every probe chain through it: clear it. */
		c->addr = 0;
		pc->nr--;
	} else if (err) {
		pc->unnamed++;
	}
	return err;
}

/* The copy's text, which BPF ended with a NUL (or left empty); NULL when empty. */
static char *copied(const char *s, size_t len)
{
	return s[0] ? strndup(s, len - 1) : NULL;
}

static int fill_from_copy(struct code *c, const struct py_code *copy)
{
	size_t n = copy->table_len < MEMLEAK_PY_TABLE_LEN ? copy->table_len : MEMLEAK_PY_TABLE_LEN;

	c->firstlineno = copy->firstlineno;
	c->firsttraceable = copy->firsttraceable;
	c->function = copied(copy->qualname, sizeof(copy->qualname));
	c->file = copied(copy->filename, sizeof(copy->filename));
	c->linetable = malloc(n ? n : 1);
	if (!c->linetable)
		return -ENOMEM;
	memcpy(c->linetable, copy->table, n);
	c->linetable_len = n;
	return c->function || c->file ? 0 : -EINVAL;
}

/*
 * The entry a copy goes to, new or one a reading of the target could not
 * name (the copy waited in the ring while the code object was freed);
 * NULL when it is named already, or without memory (*err).
 */
static struct code *copy_slot(struct pycode *pc, const struct py_code *copy, int *err)
{
	struct code *c = &pc->slots[slot_of(pc, copy->code, copy->linetable, copy->born)];

	*err = 0;
	if (c->addr) {
		if (c->valid)
			return NULL;
		pc->unnamed--;
		pc->named_late++;
		return c;
	}
	if (2 * (pc->nr + 1) > pc->cap && grow(pc)) {
		*err = -ENOMEM;
		return NULL;
	}
	c = &pc->slots[slot_of(pc, copy->code, copy->linetable, copy->born)];
	*c = (struct code){ .addr = copy->code, .linetable_addr = copy->linetable,
			    .born = copy->born };
	pc->nr++;
	return c;
}

int pycode__add_copy(struct pycode *pc, const struct py_code *copy, pycode_read_fn read,
		     void *ctx)
{
	struct code *c;
	int err;

	if (!copy->code)
		return 0;
	c = copy_slot(pc, copy, &err);
	if (!c)
		return err;
	/* A name that is not plain ASCII, a longer table: the target, while it has them. */
	err = copy->flags && read ? read_code(pc, c, read, ctx) : -ENODATA;
	if (err) {
		code_clear(c);
		err = fill_from_copy(c, copy);
	}
	if (err)
		code_clear(c);
	else
		index_lines(c);
	c->valid = !err;
	pc->unnamed += !c->valid;
	return err == -ENOMEM ? err : 0;
}

uint64_t pycode__id(const struct pycode *pc)
{
	return pc ? pc->id : 0;
}

size_t pycode__count(const struct pycode *pc)
{
	return pc->nr + pc->named_late;
}

size_t pycode__unnamed(const struct pycode *pc)
{
	return pc ? pc->unnamed : 0;
}

bool pycode__where(const struct pycode *pc, const struct py_frame *f, struct pycode_where *out)
{
	const struct code *c = &pc->slots[slot_of(pc, f->code, f->linetable, f->born)];
	uint64_t start = f->code + pc->layout.code_code, instr = f->instr;

	if (!f->code || c->addr != f->code || !c->valid)
		return false;
	out->function = c->function;
	out->file = c->file;
	out->offset = instr >= start ? instr - start : 0;
	out->line = instr >= start ? code_line(c, out->offset) : 0;
	/* Before its first instruction (3.12: prev_instr starts one unit early), or
	 * before the first traceable one: the frame has not started. */
	out->setup = instr < start ||
		     out->offset / 2 < (uint64_t)(c->firsttraceable > 0 ? c->firsttraceable : 0);
	return true;
}

void pycode__free(struct pycode *pc)
{
	if (!pc)
		return;
	for (size_t i = 0; i < pc->cap; i++)
		code_clear(&pc->slots[i]);
	free(pc->slots);
	free(pc);
}

/* ---------------------------------------------------------------- location table */

/*
 * Entries follow each other, each a first byte with the top bit set: bits
 * 3..6 say its form, bits 0..2 how many code units (2 bytes each) it covers,
 * minus one. The bytes after it, top bit clear, carry the form's numbers as
 * varints of 6 bits a byte (bit 6: more follow), the least significant
 * first; a signed one keeps its sign in bit 0. Forms: 15 no location; 14 a
 * long one and 13 one without columns, both starting with the signed line
 * delta; 10..12 a line delta of 0..2 with two column bytes; 0..9 the same
 * line with one column byte.
 */
static uint32_t varint(const uint8_t *t, size_t len, size_t *i)
{
	uint32_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (*i >= len || shift > 30)
			return v;
		b = t[(*i)++];
		v |= (uint32_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	return v;
}

/*
 * The next entry of the table from *i: the code units it covers end at
 * *end (in bytes from the code's start), on *line (updated; *none: no
 * location). false at the table's end.
 */
static bool next_entry(const uint8_t *t, size_t len, size_t *i, uint64_t *end, int *line,
		       bool *none)
{
	while (*i < len) {
		uint8_t b = t[(*i)++];
		unsigned form = b >> 3 & 15;
		uint32_t u;

		if (!(b & 0x80))
			continue;	/* not an entry's first byte: the table is damaged */
		*end += ((b & 7) + 1) * 2;
		if (form == 13 || form == 14) {
			u = varint(t, len, i);
			*line += u & 1 ? -(int)(u >> 1) : (int)(u >> 1);
		} else if (form >= 10 && form <= 12) {
			*line += (int)form - 10;
		}
		*none = form == 15 || *line < 0;
		while (*i < len && !(t[*i] & 0x80))
			(*i)++;
		return true;
	}
	return false;
}

int pycode__line(const uint8_t *table, size_t len, int firstlineno, uint64_t offset)
{
	uint64_t end = 0;
	int line = firstlineno;
	size_t i = 0;
	bool none;

	while (next_entry(table, len, &i, &end, &line, &none))
		if (offset < end)
			return none ? 0 : line;
	return 0;
}

static void index_lines(struct code *c)
{
	uint64_t end = 0;
	int line = c->firstlineno;
	size_t i = 0, n = 0;
	bool none;

	/* An entry takes at least a byte: the table's length bounds their number. */
	c->lines = malloc((c->linetable_len ?: 1) * sizeof(*c->lines));
	if (!c->lines)
		return;		/* decoded at each lookup instead */
	while (next_entry(c->linetable, c->linetable_len, &i, &end, &line, &none) &&
	       end <= UINT32_MAX)
		c->lines[n++] = (struct line_run){ (uint32_t)end, none ? 0 : line };
	c->nr_lines = n;
}

/* The line of the code unit at offset: a binary search of the decoded table. */
static int code_line(const struct code *c, uint64_t offset)
{
	size_t lo = 0, hi = c->nr_lines;

	if (!c->lines)
		return pycode__line(c->linetable, c->linetable_len, c->firstlineno, offset);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (offset < c->lines[mid].end)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo < c->nr_lines ? c->lines[lo].line : 0;
}
