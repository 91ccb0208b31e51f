/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The retired store inside (retired.c: what it keeps, the sweeps' intake,
 * the trim; retired_fold.c: folding), as both see it.
 */
#ifndef RETIRED_INTERNAL_H
#define RETIRED_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include "retired.h"
#include "stackcache.h"
#include "util/idmap.h"

/* A native stack or a Python one: its frames, in a blob it may share with the stack cache. */
struct kept {
	uint64_t id;
	uint32_t sweep;		/* when it was last let go of */
	bool python;
	uint64_t weight;	/* allocations of the retired sites it stands in (trim) */
	struct stack_blob *blob;
};

/* A pair's id, and when it was last let go of (as a kept stack's sweep). */
struct pair_tag {
	uint64_t id;
	uint32_t sweep;
};

/*
 * A folded site's figures; allocs FOLDED_BACK: it came back
 * (retired__unfold), they are its own again. 16 bytes, not 24 with a flag:
 * one for each site ever folded (450,000 by a torch job's end).
 */
struct folded {
	uint64_t bytes, allocs;
};
#define FOLDED_BACK UINT64_MAX	/* never a count of allocations */

struct retired {
	struct idmap site_of;	/* site key -> index in sites */
	struct retired_site *sites;
	size_t nr_sites, cap_sites;
	struct idmap native_of, python_of;	/* stack id -> index in kept */
	/* In place, not each malloc'ed: 435,000 of them in a torch job, 24 bytes less each. */
	struct kept *kept;
	size_t nr_kept, cap_kept;
	struct idmap pair_of;	/* pair id -> index in pairs */
	struct stack_pair *pairs;
	struct pair_tag *pair_tags;
	size_t nr_pairs, cap_pairs, cap_pair_tags;
	size_t kept_bytes;
	uint32_t sweep;
	uint32_t named_sweep;	/* the last whose walk named every live site's stacks (retired__named) */
	uint64_t seq, epoch;	/* retired__seq, retired__epoch */
	/* Figures of sites whose frames were let go of (retired__trim), or folded. */
	uint64_t forgotten_allocs, forgotten_bytes, forgotten_sites;
	/* The folded sites' figures, by site key (retired__fold_end, retired__unfold). */
	struct idmap folded_of;
	struct folded *folded;
	size_t nr_folded, cap_folded, nr_out;
};

/*
 * What a kept stack counts for in the budget: its blob with its frames as
 * arrays, shared or not (the store's budget is its own). The frames are
 * shared prefixes now, far cheaper; the budget still bounds the index.
 */
static inline size_t retired_size_of(const struct kept *k)
{
	return sizeof(*k) + stack_blob__flat_size(k->blob);
}

static inline void retired_let_go(struct kept *k)
{
	stack_blob__put(k->blob);
	k->blob = NULL;
}

/*
 * What a stack or a pair let go of here must serve until BPF sends it
 * anew if it comes back. The sweep that let it go told BPF so (reclaim.c's
 * step 2), but a site made while that sweep ran, after its walk passed the
 * slot, names it without BPF sending it again: live, and in no reading
 * made before. The next sweep's walk names it (retired__named): what was
 * let go of since the last sweep that named (since), or named by it,
 * stays; and what a site kept here names (not in unnamed, which holds
 * every id let go of before since that nothing kept here names) or the
 * reading's sites hold (keep). NULL maps name nothing.
 */
struct serving {
	const struct idmap *unnamed, *keep;
	uint32_t since;
};

static inline bool retired_serves(const struct serving *sv, uint64_t id, uint32_t sweep)
{
	return sweep >= sv->since || (sv->unnamed && !idmap__get(sv->unnamed, id, NULL)) ||
	       (sv->keep && idmap__get(sv->keep, id, NULL));
}

/*
 * Pairs that no longer serve, neither of whose stacks is kept any more;
 * pair_of made anew. 0 or -ENOMEM.
 */
int retired__drop_pairs(struct retired *r, const struct serving *sv);

#endif
