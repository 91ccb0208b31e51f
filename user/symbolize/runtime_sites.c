// SPDX-License-Identifier: GPL-2.0
/* Is a native stack's block the runtime's own (runtime_sites.h)? */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/runtime_blocks.h"
#include "analyze/runtime_frames.h"
#include "runtime_sites.h"

/* The most frames looked at by name: libc's run is a few deep, Python's start-up a dozen. */
#define NAMED_DEPTH 32

/* The functions of ip's frames (its inlined ones first), each to step(); 0 or -ENOMEM. */
static int each_name(struct symbolizer *sym, const struct modules *mods, uint64_t ip,
		     void (*step)(const char *function, void *arg), void *arg)
{
	struct report_frame *frames = NULL;
	size_t nr = 0;
	int err = sym ? symbolizer__resolve(sym, mods, ip, true, &frames, &nr) : 0;

	for (size_t i = 0; i < nr; i++) {
		if (frames[i].function)
			step(frames[i].function, arg);
		report__frame_free(&frames[i]);
	}
	free(frames);
	return err == -ENOMEM ? err : 0;	/* a failure only costs names */
}

struct libc_run {
	bool veto;
	enum report_runtime kind;
};

static void libc_step(const char *function, void *arg)
{
	struct libc_run *run = arg;

	runtime_blocks__libc_step(function, &run->veto, &run->kind);
}

static void py_step(const char *function, void *arg)
{
	*(bool *)arg = *(bool *)arg || runtime_blocks__py_init(function);
}

/* libc's own frames next to the allocation: which of its blocks, if one. */
static int libc_block(const uint64_t *ips, uint32_t nr, uint32_t first, struct symbolizer *sym,
		      const struct modules *mods, enum report_runtime *kind)
{
	struct libc_run run = { false, RUNTIME_NONE };
	int err = 0;

	for (uint32_t i = first; i < nr && i < first + NAMED_DEPTH && !err; i++) {
		const struct module *m = modules__find(mods, ips[i]);

		if (!m || !runtime_frames__libc(m->path))
			break;
		err = each_name(sym, mods, ips[i], libc_step, &run);
	}
	*kind = run.veto ? RUNTIME_NONE : run.kind;
	return err;
}

/* Every frame in the runtime's objects, the outermost the dynamic linker's. */
static bool runtime_init(const uint64_t *ips, uint32_t nr, uint32_t first,
			 const struct modules *mods)
{
	const struct module *m = NULL;

	for (uint32_t i = first; i < nr; i++)
		if (!(m = modules__find(mods, ips[i])) || !runtime_frames__object(m->path))
			return false;
	return m && runtime_frames__loader(m->path);
}

struct start_run {
	bool init, through_main;
};

static void start_step(const char *function, void *arg)
{
	struct start_run *run = arg;

	run->init = run->init || !strcmp(function, "call_init");
	run->through_main = run->through_main || !strcmp(function, "__libc_start_call_main");
}

/*
 * The executable's own constructors, run by __libc_start_main before main:
 * the C library's outermost frames (under _start) pass through its
 * call_init (csu/libc-start.c), not __libc_start_call_main. Only named with
 * libc's debug information (libc6-dbg): call_init is inlined.
 */
static int exe_init(const uint64_t *ips, uint32_t nr, uint32_t first, struct symbolizer *sym,
		    const struct modules *mods, bool *init)
{
	struct start_run run = { false, false };
	uint32_t i = nr;
	int err = 0;

	while (i-- > first) {	/* past _start, the executable's */
		const struct module *m = modules__find(mods, ips[i]);

		if (m && runtime_frames__libc(m->path))
			break;
	}
	for (i++; i-- > first && !err;) {
		const struct module *m = modules__find(mods, ips[i]);

		if (!m || !runtime_frames__libc(m->path))
			break;
		err = each_name(sym, mods, ips[i], start_step, &run);
	}
	*init = run.init && !run.through_main;
	return err;
}

/* The interpreter's own frames, the outermost first: one its initialization? */
static int py_init(const uint64_t *ips, uint32_t nr, uint32_t first, const char *interp,
		   struct symbolizer *sym, const struct modules *mods, bool *init)
{
	uint32_t named = 0;
	int err = 0;

	*init = false;
	for (uint32_t i = nr; i-- > first && !*init && !err && named < NAMED_DEPTH;) {
		const struct module *m = modules__find(mods, ips[i]);

		if (!m || strcmp(m->path, interp))
			continue;
		named++;
		err = each_name(sym, mods, ips[i], py_step, init);
	}
	return err;
}

int runtime_sites__classify(const uint64_t *ips, uint32_t nr, uint32_t first, bool complete,
			     const char *interp, struct symbolizer *sym,
			     const struct modules *mods, uint8_t *kind, bool *preinit)
{
	enum report_runtime k = RUNTIME_NONE;
	const struct module *outer;
	bool init = false;
	int err;

	*kind = RUNTIME_NONE;
	*preinit = false;
	if (!mods || first >= nr)
		return 0;
	outer = modules__find(mods, ips[nr - 1]);
	*preinit = complete && outer && runtime_frames__loader(outer->path);
	if (complete && !*preinit && (err = exe_init(ips, nr, first, sym, mods, preinit)))
		return err;
	err = libc_block(ips, nr, first, sym, mods, &k);
	if (!err && k == RUNTIME_NONE && complete && runtime_init(ips, nr, first, mods))
		k = RUNTIME_INIT;
	if (!err && k == RUNTIME_NONE && interp) {
		err = py_init(ips, nr, first, interp, sym, mods, &init);
		k = init ? RUNTIME_PYINIT : k;
	}
	*kind = (uint8_t)k;
	return err;
}
