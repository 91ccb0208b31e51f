/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tables sized from the options against the memory available
 * (util/mapmem.h), for each BPF object (probes.c's, -k's kmem.c): the cost
 * of a sizing, the largest that fits, and the one-line refusal that names
 * the option to change.
 */
#ifndef MAPFIT_H
#define MAPFIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mapfit {
	/* The kernel memory of obj's maps sized for (max_allocs, stacks). */
	uint64_t (*cost)(void *obj, uint32_t max_allocs, uint32_t stacks);
	void *obj;
	uint32_t max_allocs, stacks;	/* as the options ask */
};

/* The largest --max-allocs (allocs) or --stack-storage-size whose cost is within allowed, or 0. */
uint32_t mapfit__largest(const struct mapfit *f, bool allocs, uint64_t allowed);
/*
 * 0 when the tables fit half of the memory available (or it is unknown);
 * else -ENOMEM and one line in err, prefix first ("" or "-k: "), that
 * names the option to lower and the largest value that fits.
 */
int mapfit__check(const struct mapfit *f, const char *prefix, char *err, size_t errlen);

#endif
