// SPDX-License-Identifier: GPL-2.0
/* A set of strings, copied and sorted (strset.h). */
#include <stdlib.h>
#include <string.h>
#include "strset.h"
#include "vec.h"

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void strset__add(struct strset *set, const char *s)
{
	char *copy;

	if (vec__reserve(&set->v, &set->cap, set->nr + 1, sizeof(*set->v)) || !(copy = strdup(s)))
		return;
	set->v[set->nr++] = copy;
	set->sorted = false;
}

bool strset__has(struct strset *set, const char *s)
{
	if (!set->sorted && set->nr)
		qsort(set->v, set->nr, sizeof(*set->v), cmp);
	set->sorted = true;
	return set->nr && bsearch(&s, set->v, set->nr, sizeof(*set->v), cmp);
}

void strset__clear(struct strset *set)
{
	for (size_t i = 0; i < set->nr; i++)
		free(set->v[i]);
	free(set->v);
	*set = (struct strset){ 0 };
}
