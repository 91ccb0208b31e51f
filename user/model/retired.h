/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the BPF tables let go of (user/probe/reclaim.c): the figures of the
 * sites none of whose blocks was left, and the stacks, Python frames and
 * (native, Python) pairs no live site named any more. A site that comes
 * back adds its new figures to those kept here, and a stack id met again
 * (a thread's stack cache may still hand one out) is read back from here:
 * reclaiming changes no figure of any report.
 */
#ifndef RETIRED_H
#define RETIRED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "memleak.h"

struct stack_blob;
struct idmap;

struct retired_site {
	uint64_t stack_id;
	uint32_t api;
	bool folding;		/* retired__fold_site: goes at retired__fold_end */
	uint64_t total_bytes;	/* all of it freed */
	uint64_t total_allocs;
	uint64_t seq;		/* retired__seq when its figures last changed */
	/*
	 * Of those, the figures it had when it was folded, back with it
	 * (retired__unfold): what the history took in of it already.
	 */
	uint64_t folded_bytes, folded_allocs;
};

struct retired;

/* A site's one key, (stack_id, api) in 64 bits, never 0: for idmap. */
uint64_t retired__site_key(uint64_t stack_id, uint32_t api);

struct retired *retired__new(void);
void retired__free(struct retired *r);

/* Add what a reclaimed site allocated (and freed). 0 or -ENOMEM. */
int retired__add_site(struct retired *r, uint64_t stack_id, uint32_t api, uint64_t bytes,
		      uint64_t allocs);
/* The figures kept for (stack_id, api), or NULL. */
const struct retired_site *retired__site(const struct retired *r, uint64_t stack_id, uint32_t api);
size_t retired__nr_sites(const struct retired *r);
/*
 * The figures (total_allocs, total_bytes) of the n-th entry of all by
 * them, most first; false with fewer than n entries (or n past
 * RETIRED_NTH_MAX).
 */
#define RETIRED_NTH_MAX 64
bool retired__nth_most(const struct retired *r, size_t n, uint64_t *allocs, uint64_t *bytes);
const struct retired_site *retired__site_at(const struct retired *r, size_t i);
/*
 * For a reader that carries the sites over (probe/snapshot_kept.c): each
 * change of a site's figures takes the next seq, so the sites whose seq is
 * past the last one it took in are those that changed since; the epoch
 * changes when sites move or go (retired__trim, retired__fold_end), and
 * then it finds each site's index again by its key (a moved site keeps
 * its seq).
 */
uint64_t retired__seq(const struct retired *r);
uint64_t retired__epoch(const struct retired *r);

/*
 * Keep a stack the BPF map lets go of (once per id): shared, the blob the
 * stack cache has of it (held here too), else a copy of st. 0 or -ENOMEM.
 */
int retired__keep_native(struct retired *r, uint64_t id, const struct stack_trace *st,
			 struct stack_blob *shared);
/* The same, of a native stack's blob (held here too). */
int retired__keep_native_blob(struct retired *r, uint64_t id, struct stack_blob *b);
int retired__keep_pair(struct retired *r, uint64_t id, const struct stack_pair *pair);
int retired__keep_python(struct retired *r, uint64_t id, const struct py_stack *st,
			 struct stack_blob *shared);
/* A kept stack's blob, not held for the caller (valid under the store's lock), or NULL. */
struct stack_blob *retired__native(const struct retired *r, uint64_t id);
struct stack_blob *retired__python(const struct retired *r, uint64_t id);
bool retired__pair(const struct retired *r, uint64_t id, struct stack_pair *out);

/* A sweep begins: stacks let go of from now on are the latest. */
void retired__next_sweep(struct retired *r);
/*
 * This sweep's walk named named: the stacks, pairs and their stacks of
 * every live site. Those kept here stay the latest let go of; the others
 * no live site named, and BPF sends them again (as it was told at the
 * sweep that let them go) to any site made since: a fold may let them go.
 * Only with every live site named (a whole walk).
 */
void retired__named(struct retired *r, const struct idmap *named);
/*
 * Keep the frames of the stacks whose retired sites allocated most (then
 * the latest let go of), within max_bytes; the sites whose frames that
 * lets go of add their figures to the forgotten ones: still in the totals,
 * no longer a site of their own. What is forgotten is the churn of least
 * account: a start-up's one-off allocations. 0 or -ENOMEM.
 */
int retired__trim(struct retired *r, size_t max_bytes);
void retired__forgotten(const struct retired *r, uint64_t *sites, uint64_t *allocs,
			uint64_t *bytes);

/*
 * Folding (run/reports.c): a retired site that a report took in and that
 * no report will need by itself again goes to the forgotten figures, as
 * retired__trim's do, so that what is kept follows what is live, not all
 * that ever was; only its key and figures stay (16 bytes and its key's
 * slot), to be taken back should it come back (retired__unfold). Only while its figures are still (bytes, allocs), those
 * the report took in: one that allocated since (it came back) stays.
 * True when it will be folded.
 */
bool retired__fold_site(struct retired *r, uint64_t stack_id, uint32_t api, uint64_t bytes,
			uint64_t allocs);
/*
 * Which of going's ids (stacks and pairs a fold would let go of) the
 * caller's reading holds, into held: those stay. 0 or -ENOMEM.
 */
typedef int retired_held_fn(void *ctx, const struct idmap *going, struct idmap *held);
/*
 * The sites retired__fold_site named go (their indexes move: a new epoch;
 * none named, none moves), and the stacks and pairs no site kept here
 * names, let go of before the last sweep that named (retired__named) and
 * not named then, but those held says the reading holds (held NULL: every
 * stack stays). held is asked of those only, and only when one would go:
 * each fold asked a torch job's 200,000 sites of every id they hold. 0 or
 * -ENOMEM (then the store may still hold what it could not let go of).
 */
int retired__fold_end(struct retired *r, retired_held_fn *held, void *ctx);
/* The sites retired__fold_site named stay after all. */
void retired__fold_cancel(struct retired *r);
/*
 * A folded site (stack_id, api) back in a reading with a live slot: its
 * figures a retired site's again, no longer the forgotten ones (a site
 * that retires again takes them back in retired__add_site): its figures
 * since tracing began stay exact. 0 (also when it was not folded) or -ENOMEM.
 */
int retired__unfold(struct retired *r, uint64_t stack_id, uint32_t api);
/* The sites folded and not back, and the bytes their figures take. */
size_t retired__nr_folded(const struct retired *r);

/*
 * Stacks kept, and the bytes all of it takes (their frames are the stack
 * cache's shared prefixes, counted there; a blob the cache shares is
 * counted here too).
 */
size_t retired__nr_stacks(const struct retired *r);
size_t retired__bytes(const struct retired *r);
/* What the budget of retired__trim counts: the stacks as if their frames were arrays. */
size_t retired__frame_bytes(const struct retired *r);

#endif
