// SPDX-License-Identifier: GPL-2.0
/*
 * A pprof profile's tables (pprof_tables.h). Each table is an array and an
 * idmap from its entries' content hashes to their indices; two contents
 * with one hash are told apart by comparing them, the later one filed
 * under the next key of a probe sequence, so that nothing is ever merged
 * by a collision.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "model/report.h"
#include "pprof_tables.h"
#include "util/vec.h"

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

static uint64_t mix(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * FNV_PRIME;
	return h;
}

/* An idmap key is never 0. */
static uint64_t key_of(uint64_t h)
{
	return h ? h : 1;
}

typedef bool (*same_fn)(const struct pprof_tables *t, uint32_t idx, const void *item);

/*
 * The index of the entry that is item (true), or false with *key the free
 * key to file it under.
 */
static bool lookup(const struct pprof_tables *t, const struct idmap *ix, same_fn same,
		   const void *item, uint64_t *key, uint32_t *idx)
{
	*key = key_of(*key);
	while (idmap__get(ix, *key, idx)) {
		if (same(t, *idx, item))
			return true;
		*key = key_of(*key * FNV_PRIME + 1);
	}
	return false;
}

/* Room for one more entry of an array, and its index filed under key. */
static bool add_room(struct pprof_tables *t, void *arr, size_t *cap, size_t nr, size_t size,
		     struct idmap *ix, uint64_t key)
{
	if (t->err)
		return false;
	if (nr >= UINT32_MAX || vec__reserve(arr, cap, nr + 1, size) ||
	    idmap__put(ix, key, (uint32_t)nr)) {
		t->err = -ENOMEM;
		return false;
	}
	return true;
}

static bool same_string(const struct pprof_tables *t, uint32_t idx, const void *s)
{
	return !strcmp(t->strings[idx], s);
}

static bool is_utf8(const char *s)
{
	for (int n; *s; s += n)
		if (!(n = report__utf8_len(s)))
			return false;
	return true;
}

/* s with each byte that starts no well-formed sequence as U+FFFD, as the JSON writes it. */
static char *utf8_copy(const char *s)
{
	char *d = malloc(3 * strlen(s) + 1), *p = d;

	for (int n; d && *s; s += n) {
		n = report__utf8_len(s);
		memcpy(p, n ? s : "\xef\xbf\xbd", n ? (size_t)n : 3);
		p += n ? n : 3;
		n = n ?: 1;
	}
	if (d)
		*p = '\0';
	return d;
}

static uint64_t add_string(struct pprof_tables *t, const char *s)
{
	uint64_t key = mix(FNV_OFFSET, s, strlen(s));
	uint32_t idx;
	char *copy;

	if (lookup(t, &t->string_ix, same_string, s, &key, &idx))
		return idx;
	copy = strdup(s);
	if (!copy || !add_room(t, &t->strings, &t->cap_strings, t->nr_strings,
			       sizeof(*t->strings), &t->string_ix, key)) {
		free(copy);
		t->err = -ENOMEM;
		return 0;
	}
	t->strings[t->nr_strings] = copy;
	return t->nr_strings++;
}

/* protobuf's strings are UTF-8, and strict readers refuse a profile with any other. */
uint64_t pprof_tables__string(struct pprof_tables *t, const char *s)
{
	char *fixed;
	uint64_t idx;

	if (t->err)
		return 0;
	if (is_utf8(s))
		return add_string(t, s);
	fixed = utf8_copy(s);
	if (!fixed) {
		t->err = -ENOMEM;
		return 0;
	}
	idx = add_string(t, fixed);
	free(fixed);
	return idx;
}

static bool same_function(const struct pprof_tables *t, uint32_t idx, const void *fn)
{
	return !memcmp(&t->functions[idx], fn, sizeof(t->functions[idx]));
}

uint64_t pprof_tables__function(struct pprof_tables *t, const struct pprof_function *fn)
{
	uint64_t key = mix(FNV_OFFSET, fn, sizeof(*fn));
	uint32_t idx;

	if (t->err)
		return 0;
	if (lookup(t, &t->function_ix, same_function, fn, &key, &idx))
		return idx + 1;
	if (!add_room(t, &t->functions, &t->cap_functions, t->nr_functions,
		      sizeof(*t->functions), &t->function_ix, key))
		return 0;
	t->functions[t->nr_functions] = *fn;
	return ++t->nr_functions;
}

/* A location being looked up: its lines not in the table yet. */
struct location_item {
	struct pprof_location loc;
	const struct pprof_line *lines;
};

static bool same_location(const struct pprof_tables *t, uint32_t idx, const void *item)
{
	const struct location_item *it = item;
	const struct pprof_location *l = &t->locations[idx];

	return l->mapping == it->loc.mapping && l->address == it->loc.address &&
	       l->nr_lines == it->loc.nr_lines &&
	       !memcmp(&t->lines[l->line], it->lines, l->nr_lines * sizeof(*it->lines));
}

uint64_t pprof_tables__location(struct pprof_tables *t, uint64_t mapping, uint64_t address,
				const struct pprof_line *lines, size_t nr_lines)
{
	struct location_item it = { { mapping, address, t->nr_lines, nr_lines }, lines };
	uint64_t key = mix(mix(mix(FNV_OFFSET, &mapping, sizeof(mapping)), &address,
			       sizeof(address)), lines, nr_lines * sizeof(*lines));
	uint32_t idx;

	if (t->err)
		return 0;
	if (lookup(t, &t->location_ix, same_location, &it, &key, &idx))
		return idx + 1;
	if (vec__reserve(&t->lines, &t->cap_lines, t->nr_lines + nr_lines, sizeof(*t->lines))) {
		t->err = -ENOMEM;
		return 0;
	}
	if (!add_room(t, &t->locations, &t->cap_locations, t->nr_locations,
		      sizeof(*t->locations), &t->location_ix, key))
		return 0;
	if (nr_lines)
		memcpy(&t->lines[t->nr_lines], lines, nr_lines * sizeof(*lines));
	t->nr_lines += nr_lines;
	t->locations[t->nr_locations] = it.loc;
	return ++t->nr_locations;
}

int pprof_tables__init(struct pprof_tables *t)
{
	*t = (struct pprof_tables){ 0 };
	pprof_tables__string(t, "");
	return t->err;
}

void pprof_tables__free(struct pprof_tables *t)
{
	for (size_t i = 0; i < t->nr_strings; i++)
		free(t->strings[i]);
	free(t->strings);
	free(t->functions);
	free(t->locations);
	free(t->lines);
	idmap__free(&t->string_ix);
	idmap__free(&t->function_ix);
	idmap__free(&t->location_ix);
	*t = (struct pprof_tables){ 0 };
}
