/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A set of strings, copied and sorted: which names were there before (the
 * link map's paths at the last stop), so that the new ones can be told.
 */
#ifndef STRSET_H
#define STRSET_H

#include <stdbool.h>
#include <stddef.h>

struct strset {
	char **v;
	size_t nr, cap;
	bool sorted;
};

/* Add a copy of s (kept unsorted until strset__has). A copy that fails is left out. */
void strset__add(struct strset *set, const char *s);
/* Is s in the set? Sorts it on the first call after adds. */
bool strset__has(struct strset *set, const char *s);
/* Empty it, and free what it held. */
void strset__clear(struct strset *set);

#endif
