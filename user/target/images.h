/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --follow: the files of each followed process that exec'd, by its tag
 * (bpf/memleak.h: struct memleak_proc), shared with its forks: its stacks
 * are symbolized among its own modules, not the target's. So are those of
 * a fork of the target once it loads a library the target has not. The
 * loop adds while a report reads, so each access takes the set's lock; a
 * module set, once added, is changed only between reports (images__update)
 * and freed at the end.
 */
#ifndef IMAGES_H
#define IMAGES_H

#include <stdint.h>
#include "model/report.h"
#include "modules.h"

struct images;

/* peer: the target's modules, whose files the images' share (NULL: each its own). */
struct images *images__new(const struct modules *peer);
/* New modules for an exec'd image of pid, sharing files with the peer's. NULL: no memory. */
struct modules *images__new_modules(const struct images *im, pid_t pid);
/* The modules of process tag (taken over, freed with the set, even on error). 0 or -ENOMEM. */
int images__add(struct images *im, uint32_t tag, struct modules *mods);
/*
 * Process tag runs the image of process of (it forked from it): the same
 * modules. 0, -ENOENT (of has none: it was not probed), or -ENOMEM.
 */
int images__share(struct images *im, uint32_t tag, uint32_t of);
/* The modules of process tag, or fallback (the target's) when it has none of its own. */
const struct modules *images__of(struct images *im, uint32_t tag,
				 const struct modules *fallback);
/*
 * The libraries the processes of image tag map now, added to its modules
 * (maps: pid's, one of them, at a change of its libraries). A fork of the
 * target (no modules of its own) that maps code target's modules lack gets
 * its own, over them, from then on (and its forks share them). Not
 * while a report reads them: the caller waits for it (tracer.c: learn_maps).
 */
void images__update(struct images *im, uint32_t tag, pid_t pid, const struct maps *maps,
		    const struct modules *target);
/*
 * The code mappings of each process of an exec'd image (modules__code_maps),
 * by tag, ascending: one maps per image, shared by its processes' entries
 * (--pprof). 0 or -errno; free with images__free_code_maps (also on error).
 */
int images__code_maps(struct images *im, struct report_image_maps **out, size_t *nr);
void images__free_code_maps(struct report_image_maps **v, size_t *nr);
/*
 * Free the modules whose processes have all ended (ended(ctx, tag) for
 * every tag on them) and none of whose tags has a site in a report built
 * after those ends (site_tags, ascending): no later report names a frame
 * of theirs, so their files, those no other set has open, are closed.
 * Not while a report reads them. How many module sets were freed.
 */
size_t images__release(struct images *im, bool (*ended)(void *ctx, uint32_t tag), void *ctx,
		       const uint32_t *site_tags, size_t nr_tags);
void images__free(struct images *im);

#endif
