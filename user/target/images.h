/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --follow: the files of each followed process that exec'd, by its tag
 * (bpf/memleak.h: struct memleak_proc): its stacks are symbolized among
 * its own modules, not the target's. The loop adds while a report reads,
 * so each access takes the set's lock; a module set, once added, is never
 * changed or freed until the end.
 */
#ifndef IMAGES_H
#define IMAGES_H

#include <stdint.h>
#include "modules.h"

struct images;

struct images *images__new(void);
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
void images__free(struct images *im);

#endif
