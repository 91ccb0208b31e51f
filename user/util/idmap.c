// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "idmap.h"

/* Ids are hashes, but a second mix costs nothing and guards against ones that are not. */
static size_t slot_of(const struct idmap *m, uint64_t id)
{
	id ^= id >> 33;
	id *= 0xff51afd7ed558ccdULL;
	id ^= id >> 33;
	return (size_t)id & (m->cap - 1);
}

static size_t find(const struct idmap *m, uint64_t id)
{
	size_t i = slot_of(m, id);

	while (m->keys[i] && m->keys[i] != id)
		i = (i + 1) & (m->cap - 1);
	return i;
}

bool idmap__get(const struct idmap *m, uint64_t id, uint32_t *val)
{
	size_t i;

	if (!m->cap || !id)
		return false;
	i = find(m, id);
	if (!m->keys[i])
		return false;
	if (val)
		*val = m->vals[i];
	return true;
}

/* Room for cap slots (a power of two, above nr), every id moved into it. */
static int resize(struct idmap *m, size_t cap)
{
	struct idmap bigger = { .cap = cap };

	bigger.keys = calloc(bigger.cap, sizeof(*bigger.keys));
	bigger.vals = malloc(bigger.cap * sizeof(*bigger.vals));
	if (!bigger.keys || !bigger.vals) {
		free(bigger.keys);
		free(bigger.vals);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->keys[i])
			continue;
		j = find(&bigger, m->keys[i]);
		bigger.keys[j] = m->keys[i];
		bigger.vals[j] = m->vals[i];
	}
	bigger.nr = m->nr;
	idmap__free(m);
	*m = bigger;
	return 0;
}

static int grow(struct idmap *m)
{
	return resize(m, m->cap ? 2 * m->cap : 64);
}

int idmap__reserve(struct idmap *m, size_t nr)
{
	size_t cap = m->cap ?: 64;

	while (4 * nr > 3 * cap)
		cap *= 2;
	return cap == m->cap ? 0 : resize(m, cap);
}

int idmap__put(struct idmap *m, uint64_t id, uint32_t val)
{
	size_t i;

	if (!id)
		return -EINVAL;
	if (4 * (m->nr + 1) > 3 * m->cap && grow(m))
		return -ENOMEM;
	i = find(m, id);
	if (!m->keys[i]) {
		m->keys[i] = id;
		m->nr++;
	}
	m->vals[i] = val;
	return 0;
}

int idmap__put_new(struct idmap *m, uint64_t id, uint32_t val)
{
	size_t i;

	if (!id)
		return -EINVAL;
	/* One probe for the lookup and the insert; a second only when the map grows. */
	i = m->cap ? find(m, id) : 0;
	if (m->cap && m->keys[i])
		return 0;
	if (4 * (m->nr + 1) > 3 * m->cap) {
		if (grow(m))
			return -ENOMEM;
		i = find(m, id);
	}
	m->keys[i] = id;
	m->vals[i] = val;
	m->nr++;
	return 1;
}

bool idmap__del(struct idmap *m, uint64_t id)
{
	size_t i, j;

	if (!m->cap || !id)
		return false;
	i = find(m, id);
	if (!m->keys[i])
		return false;
	/* Each id after the gap, up to an empty slot, moves into it unless its home lies in (i, j]. */
	for (j = (i + 1) & (m->cap - 1); m->keys[j]; j = (j + 1) & (m->cap - 1)) {
		size_t h = slot_of(m, m->keys[j]);

		if (i <= j ? (i < h && h <= j) : (i < h || h <= j))
			continue;
		m->keys[i] = m->keys[j];
		m->vals[i] = m->vals[j];
		i = j;
	}
	m->keys[i] = 0;
	m->nr--;
	return true;
}

bool idmap__next(const struct idmap *m, size_t *pos, uint64_t *id, uint32_t *val)
{
	for (size_t i = *pos; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		if (id)
			*id = m->keys[i];
		if (val)
			*val = m->vals[i];
		*pos = i + 1;
		return true;
	}
	*pos = m->cap;
	return false;
}

void idmap__clear(struct idmap *m)
{
	if (m->cap)
		memset(m->keys, 0, m->cap * sizeof(*m->keys));
	m->nr = 0;
}

int idmap__reset(struct idmap *m, size_t nr)
{
	struct idmap fit = { .cap = 64 };

	if (!nr) {	/* none to come: no room (a put makes its own) */
		idmap__free(m);
		return 0;
	}
	while (3 * nr > 2 * fit.cap)
		fit.cap *= 2;
	/* Never grown here past a room that holds nr as a put would (three quarters full). */
	if (fit.cap == m->cap || (fit.cap > m->cap && 4 * nr <= 3 * m->cap)) {
		idmap__clear(m);
		return 0;
	}
	fit.keys = calloc(fit.cap, sizeof(*fit.keys));
	fit.vals = malloc(fit.cap * sizeof(*fit.vals));
	if (!fit.keys || !fit.vals) {
		free(fit.keys);
		free(fit.vals);
		idmap__clear(m);
		return -ENOMEM;
	}
	idmap__free(m);
	*m = fit;
	return 0;
}

void idmap__free(struct idmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

size_t idmap__bytes(const struct idmap *m)
{
	return m->cap * (sizeof(*m->keys) + sizeof(*m->vals));
}
