/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A map from non-zero 64-bit ids (hashes already: stack ids, site keys) to
 * 32-bit values, open-addressed, grown at three quarters full (at half
 * full, a torch job's dozen maps of 200,000 to 700,000 ids held twice the
 * room half the time; a lookup at three quarters reads 2.5 slots on average
 * for an id present, 8.5 for one absent, mostly in one cache line). For
 * sets of ids and for indexes into arrays kept beside it.
 */
#ifndef IDMAP_H
#define IDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct idmap {
	uint64_t *keys;		/* 0: empty */
	uint32_t *vals;
	size_t cap;		/* a power of two, or 0 */
	size_t nr;
};

/* The value of id in *val (when val is not NULL); false when id is absent. */
bool idmap__get(const struct idmap *m, uint64_t id, uint32_t *val);
/* Set id's value; 0 or -ENOMEM. id 0 is -EINVAL. */
int idmap__put(struct idmap *m, uint64_t id, uint32_t val);
/*
 * Set id's value unless it has one (a lookup and an insert in one probe):
 * 1 if set, 0 if id had a value (left as it was), -ENOMEM; id 0 is -EINVAL.
 */
int idmap__put_new(struct idmap *m, uint64_t id, uint32_t val);
/*
 * Room for nr ids without growing (0 or -ENOMEM): a map filled from empty
 * with a known bound grows a dozen times to 500,000 ids, each growth a
 * new array faulted in and every id moved; one room is faulted in once.
 */
int idmap__reserve(struct idmap *m, size_t nr);
/*
 * Forget id (true if it had a value), moving back the ids that probed past
 * it: no tombstones, so a map that loses a few ids at a time (a sweep's
 * stacks let go of) stays as fast as one made anew, without being made
 * anew. The room stays.
 */
bool idmap__del(struct idmap *m, uint64_t id);
/*
 * The next entry from *pos on (0: the first), in no set order: true with
 * its id and value (either pointer may be NULL) and *pos past it, false
 * when none is left. The map must not change meanwhile.
 */
bool idmap__next(const struct idmap *m, size_t *pos, uint64_t *id, uint32_t *val);
/* Forget every id, keeping the room. */
void idmap__clear(struct idmap *m);
/*
 * Forget every id, with room for nr of them at two thirds full at most
 * (none for 0): a map whose ids fell far gives back what it no longer
 * needs; one whose room holds nr under three quarters full (as a put
 * would grow it) keeps its room. 0, or -ENOMEM with the room kept
 * (cleared all the same).
 */
int idmap__reset(struct idmap *m, size_t nr);
void idmap__free(struct idmap *m);
/* Bytes of memory it holds. */
size_t idmap__bytes(const struct idmap *m);

#endif
