// SPDX-License-Identifier: GPL-2.0
/*
 * Each stack's site frame (analyze/sites.h), found without symbolizing the
 * whole stack: its Python frames are named from BPF's copy of them, and of
 * its native addresses only those in objects that may hold the user's
 * code, innermost first, until one is found. A report of thousands of deep
 * stacks, of which the text prints a few, so costs a few lookups per
 * stack, not one per frame.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include "analyze/sites.h"
#include "model/stackcache.h"
#include "python/pycode.h"
#include "python/pystack.h"
#include "report_build.h"
#include "target/images.h"

/* What decides whether a frame is the user's: --own, and the interpreter's object. */
struct site_rules {
	const struct sites_own *own;
	const char *interp;
};

static void frames_free(struct report_frame *frames, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		report__frame_free(&frames[i]);
	free(frames);
}

/* Frame `at` of frames (moved out of them), in *out: 0 or -ENOMEM. */
static int take_frame(struct report_frame *frames, size_t nr, size_t at, uint64_t ip,
		      struct report_frame **out)
{
	*out = calloc(1, sizeof(**out));
	if (*out && at < nr) {
		**out = frames[at];
		frames[at] = (struct report_frame){ 0 };
	}
	if (*out)
		(*out)->address = ip;	/* the captured address, as every frame shows */
	frames_free(frames, nr);
	return *out ? 0 : -ENOMEM;
}

/*
 * Of ip's frames (its inlined calls' innermost first, then its function's),
 * the first that is the user's, or with rules NULL the innermost: *out, or
 * NULL when none is. 0 or -ENOMEM.
 */
static int frame_at(struct symbolizer *sym, const struct modules *mods, uint64_t ip,
		    const struct site_rules *rules, struct report_frame **out)
{
	struct report_frame *frames = NULL;
	size_t nr = 0, at = 0;
	int err = sym ? symbolizer__resolve(sym, mods, ip, true, &frames, &nr) : 0;

	*out = NULL;
	/* Any other failure only costs names, as in the report's frames. */
	if (err == -ENOMEM) {
		frames_free(frames, nr);
		return err;
	}
	if (rules) {
		while (at < nr && !sites__own_native(&frames[at], rules->own, rules->interp))
			at++;
		if (at == nr) {	/* none, or not even a name: not the user's */
			frames_free(frames, nr);
			return 0;
		}
	}
	return take_frame(frames, nr, at, ip, out);
}

/*
 * Can Python frame i be a site: the user's (strict), or at least not
 * importlib's bootstrap (the fallback)? Asked of the code's table, without
 * building the frame: the library frames a torch stack passes over would
 * cost three copies of names each. Code the table does not know (a
 * module's body, freed once it ran) is no user's line, but a fallback.
 */
static bool python_candidate(const struct py_stack *py, uint32_t i, const struct pycode *pc,
			     const struct site_rules *rules, bool strict)
{
	struct pycode_where w;

	if (!pc || !pycode__where(pc, &py->frames[i], &w))
		return !strict;
	if (w.setup)
		return false;
	return strict ? sites__own_python_file(w.file, rules->own) : !sites__import_file(w.file);
}

/* Was the stack's allocation made by an import: importlib's bootstrap among its frames? */
static bool python_import(const struct py_stack *py, const struct pycode *pc)
{
	struct pycode_where w;

	for (uint32_t i = 0; pc && i < py->nr && i < MEMLEAK_PY_MAX_FRAMES; i++)
		if (pycode__where(pc, &py->frames[i], &w) && sites__import_file(w.file))
			return true;
	return false;
}

/* The innermost Python frame the user's (strict), else outside importlib: *out, or none (NULL). */
static int python_site(const struct py_stack *py, const struct pycode *pc,
		       const struct site_rules *rules, bool strict, struct report_frame **out)
{
	struct report_frame f;
	int ret;

	for (uint32_t i = 0; i < py->nr && i < MEMLEAK_PY_MAX_FRAMES; i++) {
		if (!python_candidate(py, i, pc, rules, strict))
			continue;
		ret = pystack__frame(py, i, pc, &f);
		if (ret < 0)
			return ret;
		if (ret)
			continue;
		*out = malloc(sizeof(**out));
		if (!*out) {
			report__frame_free(&f);
			return -ENOMEM;
		}
		**out = f;
		return 0;
	}
	return 0;
}

/*
 * The innermost native frame of the user's code, or none. Addresses in an
 * object that holds none of it are passed over unresolved (with --own,
 * every address is resolved: its source file decides); those in no object
 * may be a JIT's, named by its perf map.
 */
static int native_site(const uint64_t *ips, uint32_t nr, uint32_t first, struct symbolizer *sym,
		       const struct modules *mods, const struct site_rules *rules,
		       struct report_frame **out)
{
	bool by_file = rules->own && rules->own->nr;

	for (uint32_t i = first; i < nr; i++) {
		const struct module *m = mods ? modules__find(mods, ips[i]) : NULL;
		int err;

		if (m && !by_file && !sites__own_module(m->path, rules->interp))
			continue;
		err = frame_at(sym, mods, ips[i], rules, out);
		if (err || *out)
			return err;
	}
	return 0;
}

static int site_frame(const struct snap_site *site, struct symbolizer *sym,
		      const struct modules *mods, const struct report_meta *meta,
		      struct report_stack *st)
{
	struct site_rules rules = { &meta->own, meta->python ? meta->python->path : NULL };
	uint32_t first = st->wrapper_ips;
	uint64_t ips[MEMLEAK_MAX_STACK_DEPTH];
	uint32_t nr = stack_blob__ips(site->stack, ips, MEMLEAK_MAX_STACK_DEPTH);
	struct py_stack pybuf;
	const struct py_stack *py = stack_blob__py(site->pystack, &pybuf);
	int err = 0;

	if (py && py->nr) {
		err = python_site(py, meta->pycode, &rules, true, &st->site_frame);
		st->site_own = st->site_frame != NULL;
		/* None of the user's: the innermost Python line, as the rules had it. */
		if (!err && !st->site_frame)
			err = python_site(py, meta->pycode, &rules, false, &st->site_frame);
		st->site_import = python_import(py, meta->pycode);
	} else {
		err = native_site(ips, nr, first, sym, mods, &rules, &st->site_frame);
		st->site_own = st->site_frame != NULL;
	}
	/* None of the user's: where the allocation function was called. */
	if (!err && !st->site_frame && first < nr)
		err = frame_at(sym, mods, ips[first], NULL, &st->site_frame);
	return err;
}

int report_sites__frames(struct report *r, const struct aggregate *agg, struct symbolizer *sym,
			 const struct modules *mods, const struct report_meta *meta)
{
	int err = 0;

	for (size_t i = 0; i < r->nr_stacks && i < agg->nr && !err; i++)
		err = site_frame(agg->sites[i], sym,
				 images__of(meta->images, agg->sites[i]->proc, mods), meta,
				 &r->stacks[i]);
	return err;
}

int report_sites__group(struct report *r, const struct report_meta *meta)
{
	size_t all = meta->all_stacks ? SIZE_MAX : 0;

	return sites__group(r, all ?: SITES_FILE_SITES, all ?: SITES_FILE_STACKS);
}
