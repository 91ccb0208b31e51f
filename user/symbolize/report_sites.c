// SPDX-License-Identifier: GPL-2.0
/*
 * Each stack's site frame (analyze/sites.h), found without symbolizing the
 * whole stack: its Python frames are named from BPF's copy of them, and of
 * its native addresses only those in the program's own objects, innermost
 * first, until one is found. A report of thousands of deep stacks, of which
 * the text prints a few, so costs one lookup per stack, not one per frame.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include "analyze/sites.h"
#include "python/pycode.h"
#include "python/pystack.h"
#include "report_build.h"
#include "target/images.h"

/* The innermost of ip's frames (the inlined call's, when it is one): *out, or -ENOMEM. */
static int innermost_frame(struct symbolizer *sym, const struct modules *mods, uint64_t ip,
			   struct report_frame **out)
{
	struct report_frame *frames = NULL;
	size_t nr = 0;
	int err = sym ? symbolizer__resolve(sym, mods, ip, true, &frames, &nr) : 0;

	/* Any other failure only costs names, as in the report's frames. */
	*out = err == -ENOMEM ? NULL : calloc(1, sizeof(**out));
	if (*out && nr) {
		**out = frames[0];
		frames[0] = (struct report_frame){ 0 };
	}
	if (*out)
		(*out)->address = ip;	/* the captured address, as every frame shows */
	for (size_t i = 0; i < nr; i++)
		report__frame_free(&frames[i]);
	free(frames);
	return *out ? 0 : -ENOMEM;
}

static void frame_destroy(struct report_frame *f)
{
	if (f)
		report__frame_free(f);
	free(f);
}

/*
 * Can Python frame i be a site: not left out, and the program's own? Asked
 * of the code's table, without building the frame: the library frames a
 * torch stack passes over would cost three copies of names each.
 */
static bool python_own(const struct py_stack *py, uint32_t i, const struct pycode *pc)
{
	struct pycode_where w;

	if (!pc || !pycode__where(pc, &py->frames[i], &w))
		return true;	/* unknown code: still a Python frame, by address */
	return !w.setup && sites__own_python_file(w.file);
}

/* The innermost Python frame of the program's own, or none (*out NULL). */
static int python_site(const struct py_stack *py, const struct pycode *pc,
		       struct report_frame **out)
{
	struct report_frame f;
	int ret;

	for (uint32_t i = 0; i < py->nr && i < MEMLEAK_PY_MAX_FRAMES; i++) {
		if (!python_own(py, i, pc))
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
 * The innermost native frame of the program's own, or none. Addresses in
 * a module that is not the program's are passed over unresolved; those in
 * none may be a JIT's, named by its perf map.
 */
static int native_site(const struct snap_site *site, uint32_t first, struct symbolizer *sym,
		       const struct modules *mods, const char *interp, struct report_frame **out)
{
	for (uint32_t i = first; i < site->nr_ips && i < MEMLEAK_MAX_STACK_DEPTH; i++) {
		const struct module *m = mods ? modules__find(mods, site->ips[i]) : NULL;
		int err;

		if (m && !sites__own_module(m->path, interp))
			continue;
		err = innermost_frame(sym, mods, site->ips[i], out);
		if (err || sites__own_frame(*out, false, interp))
			return err;
		frame_destroy(*out);
		*out = NULL;
	}
	return 0;
}

static int site_frame(const struct snap_site *site, struct symbolizer *sym,
		      const struct modules *mods, const struct report_meta *meta,
		      struct report_stack *st)
{
	const char *interp = meta->python ? meta->python->path : NULL;
	uint32_t first = st->wrapper_ips;
	int err = 0;

	if (site->py && site->py->nr)
		err = python_site(site->py, meta->pycode, &st->site_frame);
	else
		err = native_site(site, first, sym, mods, interp, &st->site_frame);
	/* None of the program's own: where the allocation function was called. */
	if (!err && !st->site_frame && first < site->nr_ips)
		err = innermost_frame(sym, mods, site->ips[first], &st->site_frame);
	return err;
}

int report__sites(struct report *r, const struct aggregate *agg, struct symbolizer *sym,
		  const struct modules *mods, const struct report_meta *meta)
{
	size_t all = meta->all_stacks ? SIZE_MAX : 0;
	int err = 0;

	for (size_t i = 0; i < r->nr_stacks && i < agg->nr && !err; i++)
		err = site_frame(agg->sites[i], sym,
				 images__of(meta->images, agg->sites[i]->proc, mods), meta,
				 &r->stacks[i]);
	if (!err)
		err = sites__group(r, all ?: SITES_FILE_SITES, all ?: SITES_FILE_STACKS);
	return err;
}
