// SPDX-License-Identifier: GPL-2.0
/*
 * Which Python, where, and how to read it. The offsets of each supported
 * version were taken from the interpreters' DWARF (gdb's ptype /o on Debian's
 * python3.11-dbg and on pyenv builds of 3.11.7, 3.12.1 and 3.13.0) and
 * checked against running interpreters through ctypes (Debian's 3.11.2 and
 * the pyenv ones): the GIL holder, thread_id == pthread_self(), each frame's
 * code object, qualname, file and line, as CPython itself reports them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gelf.h>
#include "python.h"
#include "util/elfsym.h"
#include "util/proc.h"

#define N MEMLEAK_PY_NONE

static const struct py_version {
	unsigned major, minor;
	struct py_offsets bpf;		/* without runtime */
	struct py_layout layout;
} versions[] = {
	/*
	 * 3.11: the GIL holder is _PyRuntime.gilstate.tstate_current; the
	 * frame is tstate->cframe->current_frame; is_entry marks the frame an
	 * evaluation loop was entered with.
	 */
	{ 3, 11,
	  { .holder = { 0x240 }, .nr_holder = 1, .frame = { 0x38, 0x8 }, .nr_frame = 2,
	    .thread_id = 0x98, .code = 32, .previous = 48, .instr = 56, .owner = 69,
	    .is_entry = 68, .owner_cstack = N, .code_linetable = 0x88 },
	  { .code_filename = 0x70, .code_qualname = 0x80, .code_linetable = 0x88,
	    .code_firstlineno = 0x48, .code_firsttraceable = 0xa8, .code_code = 0xb8,
	    .ascii_size = 48, .compact_size = 72, .bytes_data = 32 } },
	/*
	 * 3.12: the last GIL holder is interpreters.main->ceval.gil->last_holder;
	 * shim frames owned by the C stack separate evaluation loops.
	 */
	{ 3, 12,
	  { .holder = { 0x30, 0x180, 0x8 }, .nr_holder = 3, .frame = { 0x38, 0x0 }, .nr_frame = 2,
	    .thread_id = 0x88, .code = 0, .previous = 8, .instr = 56, .owner = 70,
	    .is_entry = N, .owner_cstack = 3, .code_linetable = 0x88 },
	  { .code_filename = 0x70, .code_qualname = 0x80, .code_linetable = 0x88,
	    .code_firstlineno = 0x44, .code_firsttraceable = 0xb0, .code_code = 0xc0,
	    .ascii_size = 40, .compact_size = 56, .bytes_data = 32 } },
	/* 3.13: no more _PyCFrame: tstate->current_frame; f_executable is the code. */
	{ 3, 13,
	  { .holder = { 0x280, 0x10, 0x8 }, .nr_holder = 3, .frame = { 0x48 }, .nr_frame = 1,
	    .thread_id = 0x98, .code = 0, .previous = 8, .instr = 56, .owner = 70,
	    .is_entry = N, .owner_cstack = 3, .code_linetable = 0x88 },
	  { .code_filename = 0x70, .code_qualname = 0x80, .code_linetable = 0x88,
	    .code_firstlineno = 0x44, .code_firsttraceable = 0xb8, .code_code = 0xc8,
	    .ascii_size = 40, .compact_size = 56, .bytes_data = 32 } },
};

#define NR_VERSIONS (sizeof(versions) / sizeof(versions[0]))

/* Load bias of the object mapped from path, from its first mapping. */
static int object_bias(const struct maps *maps, const char *path, const struct elf_file *ef,
		       uint64_t *bias)
{
	for (size_t i = 0; i < maps->nr; i++) {
		const struct map_entry *e = &maps->entries[i];

		if (e->path && !strcmp(e->path, path))
			return elf_file__load_bias(ef, e->start, e->offset, bias);
	}
	return -ENOENT;
}

/* "3.10" from ".../libpython3.10.so.1.0" or ".../python3.10", for a message. */
static void version_from_name(const char *path, char *buf, size_t len)
{
	const char *base = strrchr(path, '/'), *p;
	unsigned major, minor;

	base = base ? base + 1 : path;
	p = strstr(base, "python");
	if (p && sscanf(p, "python%u.%u", &major, &minor) == 2)
		snprintf(buf, len, "%u.%u", major, minor);
	else
		snprintf(buf, len, "before 3.11");
}

static const struct py_version *find_version(unsigned major, unsigned minor)
{
	for (size_t i = 0; i < NR_VERSIONS; i++)
		if (versions[i].major == major && versions[i].minor == minor)
			return &versions[i];
	return NULL;
}

/*
 * 3.13 describes its own layout at the start of _PyRuntime (_Py_DebugOffsets,
 * cookie "xdebugpy"): a build whose layout is not our table's is refused
 * rather than walked wrong.
 */
static int check_debug_offsets(pid_t pid, const struct python *py)
{
	static const struct { unsigned at; uint64_t want; } fields[] = {
		{ 184, 0x48 },	/* thread_state.current_frame */
		{ 192, 0x98 },	/* thread_state.thread_id */
		{ 232, 8 },	/* interpreter_frame.previous */
		{ 240, 0 },	/* interpreter_frame.executable */
		{ 248, 56 },	/* interpreter_frame.instr_ptr */
		{ 264, 70 },	/* interpreter_frame.owner */
		{ 280, 0x70 },	/* code_object.filename */
		{ 296, 0x80 },	/* code_object.qualname */
		{ 304, 0x88 },	/* code_object.linetable */
		{ 312, 0x44 },	/* code_object.firstlineno */
		{ 344, 0xc8 },	/* code_object.co_code_adaptive */
	};
	uint64_t d[45];
	int err;

	if (py->major != 3 || py->minor != 13)
		return 0;
	err = proc__read_mem(pid, py->bpf.runtime, d, sizeof(d));
	if (err)
		return err;
	if (memcmp(d, "xdebugpy", 8))
		return -ENOTSUP;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (d[fields[i].at / 8] != fields[i].want)
			return -ENOTSUP;
	return 0;
}

/* Version and table entry, from Py_Version (3.11 on) in the target's memory. */
static int set_version(pid_t pid, const struct elf_file *ef, uint64_t bias, struct python *py,
		       char *msg, size_t len)
{
	const struct py_version *v;
	uint64_t vaddr, hex;
	char name[32];

	if (elf_file__find_object(ef, "Py_Version", &vaddr) ||
	    proc__read_mem(pid, bias + vaddr, &hex, sizeof(hex))) {
		version_from_name(py->path, name, sizeof(name));
		snprintf(msg, len, "%s is Python %s: Python frames need 3.11, 3.12 or 3.13; its stacks stay native",
			 py->path, name);
		return -ENOTSUP;
	}
	py->major = hex >> 24 & 0xff;
	py->minor = hex >> 16 & 0xff;
	py->micro = hex >> 8 & 0xff;
	snprintf(py->version, sizeof(py->version), "%u.%u.%u", py->major, py->minor, py->micro);
	v = find_version(py->major, py->minor);
	if (!v) {
		snprintf(msg, len, "%s is Python %s: Python frames need 3.11, 3.12 or 3.13; its stacks stay native",
			 py->path, py->version);
		return -ENOTSUP;
	}
	py->bpf = v->bpf;
	py->layout = v->layout;
	/* What BPF copies of a code object, from the same layout. */
	py->bpf.code_filename = v->layout.code_filename;
	py->bpf.code_qualname = v->layout.code_qualname;
	py->bpf.code_firstlineno = v->layout.code_firstlineno;
	py->bpf.code_firsttraceable = v->layout.code_firsttraceable;
	py->bpf.ascii_size = v->layout.ascii_size;
	py->bpf.bytes_data = v->layout.bytes_data;
	return 0;
}

/* PyTypeObject.tp_dealloc: after ob_base (24 bytes), tp_name, tp_basicsize, tp_itemsize. */
#define PY_TP_DEALLOC 48

/*
 * Where PyCode_Type's tp_dealloc (code_dealloc, a static function) lies in
 * the file: the word the file holds there, when it is an address of this
 * object's code. An executable without relocations holds the address
 * itself (Debian's python3.11); in a shared libpython GNU ld writes the
 * R_X86_64_RELATIVE addend there too (pyenv's), a linker that writes 0
 * leaves it unprobed: BPF then reads every code object's linetable.
 */
static void find_dealloc(const struct lookup_object *obj, struct elf_file *ef, uint64_t code_type,
			 struct python *py)
{
	const struct elf_segment *segs;
	uint64_t fn;
	size_t nr;

	if (elf_file__read(ef, code_type + PY_TP_DEALLOC, &fn, sizeof(fn)))
		return;
	segs = elf_file__segments(ef, &nr);
	for (size_t i = 0; i < nr; i++)
		if ((segs[i].flags & PF_X) && fn >= segs[i].vaddr &&
		    fn < segs[i].vaddr + segs[i].filesz) {
			py->dealloc_path = strdup(obj->open_path);
			py->dealloc_offset = fn - segs[i].vaddr + segs[i].offset;
			return;
		}
}

/* The interpreter in the object at path: runtime address, version, probes. */
static int read_interpreter(pid_t pid, const struct maps *maps, const struct lookup_object *obj,
			    struct elf_file *ef, uint64_t runtime, struct python *py, char *msg,
			    size_t len)
{
	uint64_t bias, vaddr, off;
	int err;

	err = object_bias(maps, obj->path, ef, &bias);
	if (!err)
		err = set_version(pid, ef, bias, py, msg, len);
	if (err)
		return err;
	py->bpf.runtime = bias + runtime;
	if (check_debug_offsets(pid, py)) {
		snprintf(msg, len, "%s is Python %s, whose _Py_DebugOffsets differ from memleakbpf's table: its stacks stay native",
			 py->path, py->version);
		return -ENOTSUP;
	}
	if (elf_file__find_object(ef, "PyCode_Type", &vaddr)) {
		snprintf(msg, len, "%s defines no PyCode_Type: its stacks stay native", py->path);
		return -ENOTSUP;
	}
	py->code_type = bias + vaddr;
	find_dealloc(obj, ef, vaddr, py);
	if (!elf_file__find_func(ef, "Py_FinalizeEx", true, &vaddr, &off)) {
		py->finalize_path = strdup(obj->open_path);
		py->finalize_offset = off;
	}
	return 0;
}

/* _exit, in the first object of the lookup order that defines it (the C library). */
static void find_exit(const struct lookup_order *lo, struct python *py)
{
	for (size_t i = 0; i < lo->nr && !py->exit_path; i++) {
		struct elf_file *ef;
		uint64_t vaddr, off;

		if (elf_file__open(lo->objects[i].open_path, &ef))
			continue;
		if (!elf_file__find_func(ef, "_exit", true, &vaddr, &off)) {
			py->exit_path = strdup(lo->objects[i].open_path);
			py->exit_offset = off;
		}
		elf_file__close(ef);
	}
}

/* Does the command line have -E or -I, which make Python ignore PYTHONMALLOC? */
static bool ignores_environment(const char *argv, size_t len)
{
	const char *a = argv + strlen(argv) + 1;	/* after the program */
	bool skip = false;

	for (; a < argv + len && *a == '-' && strcmp(a, "-") && strcmp(a, "--");
	     a += strlen(a) + 1) {
		if (skip || a[1] == '-') {
			skip = false;
			continue;
		}
		for (const char *c = a + 1; *c; c++) {
			if (*c == 'I' || *c == 'E')
				return true;
			if (*c == 'c' || *c == 'm')
				return false;	/* the rest are the program's */
			if (*c == 'X' || *c == 'W') {
				skip = !c[1];	/* its argument: here or next */
				break;
			}
		}
	}
	return false;
}

/* PYTHONMALLOC as the interpreter saw it at its start. */
static void malloc_mode(pid_t pid, struct python *py)
{
	static char buf[65536];
	const char *v = NULL;
	ssize_t n = proc__read_buf(pid, "cmdline", buf, sizeof(buf));

	py->env_ignored = n > 0 && ignores_environment(buf, (size_t)n);
	n = proc__read_buf(pid, "environ", buf, sizeof(buf));
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(buf + i) + 1)
		if (!strncmp(buf + i, "PYTHONMALLOC=", 13))
			v = buf + i + 13;
	py->malloc = PY_MALLOC_PYMALLOC;
	if (!v || !*v) {
		snprintf(py->malloc_why, sizeof(py->malloc_why), "by default");
		return;
	}
	snprintf(py->malloc_why, sizeof(py->malloc_why), "PYTHONMALLOC=%.40s", v);
	if (strcmp(v, "malloc") && strcmp(v, "malloc_debug"))
		return;
	if (py->env_ignored) {
		snprintf(py->malloc_why, sizeof(py->malloc_why), "PYTHONMALLOC ignored (-E or -I)");
		return;
	}
	py->malloc = PY_MALLOC_MALLOC;
}

int python__detect(pid_t pid, const struct maps *maps, const struct lookup_order *lo,
		   struct python **out, char *msg, size_t len)
{
	struct python *py = NULL;
	int err = -ENOENT;

	*out = NULL;
	msg[0] = '\0';
	for (size_t i = 0; i < lo->nr && err == -ENOENT; i++) {
		struct elf_file *ef;
		uint64_t runtime;

		if (elf_file__open(lo->objects[i].open_path, &ef))
			continue;
		if (elf_file__find_object(ef, "_PyRuntime", &runtime)) {
			elf_file__close(ef);
			continue;
		}
		py = calloc(1, sizeof(*py));
		err = -ENOMEM;
		if (py && (py->path = strdup(lo->objects[i].path)))
			err = read_interpreter(pid, maps, &lo->objects[i], ef, runtime, py, msg,
					       len);
		elf_file__close(ef);
		if (err) {
			python__free(py);
			return err;
		}
	}
	if (err)
		return err;
	find_exit(lo, py);
	malloc_mode(pid, py);
	*out = py;
	return 0;
}

const char *python__malloc_name(enum py_malloc m)
{
	return m == PY_MALLOC_MALLOC ? "malloc" : "pymalloc";
}

void python__free(struct python *py)
{
	if (!py)
		return;
	free(py->path);
	free(py->finalize_path);
	free(py->dealloc_path);
	free(py->exit_path);
	free(py);
}
