// SPDX-License-Identifier: GPL-2.0
/* The only reader of the BPF maps: copies them into a plain snapshot. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "clock.h"
#include "probes.h"
#include "probes_internal.h"
#include "snapshot.h"
#include "site_scan.h"
#include "sample.h"
#include "model/retired.h"
#include "model/stackcache.h"
#include "util/idmap.h"
#include "util/vec.h"
#include "util/nice.h"

static __u64 less(__u64 a, __u64 b)
{
	return a > b ? a - b : 0;
}

/* Blocks from BPF's counts: under sampling those are weights, in 2^-16 units. */
__u64 snapshot__blocks_of(const struct probes *p, __u64 count)
{
	if (!p->sample.mode)
		return count;
	return (count + MEMLEAK_WEIGHT_ONE / 2) >> MEMLEAK_WEIGHT_SHIFT;
}

/*
 * The site table's slot, once BPF has written who it is. Frees are read
 * before allocations: a block is counted allocated before it can be freed,
 * so the difference is never short of a free that raced with the reading.
 * What the slot's earlier sites counted (its base) is not this one's.
 */
void snapshot__scanned_slot(const struct probes *p, const struct site_scan_rec *r,
			    struct slot_copy *out)
{
	const struct site_counts *c = &r->sum;

	out->stack_id = r->stack_id;
	out->api = r->api;
	out->stats.total_bytes = less(c->total_bytes, r->base_bytes);
	out->stats.total_allocs = snapshot__blocks_of(p, less(c->total_allocs, r->base_allocs));
	out->stats.outstanding_bytes = less(c->total_bytes, c->freed_bytes);
	out->stats.outstanding_allocs = snapshot__blocks_of(p, less(c->total_allocs, c->freed_allocs));
	out->stats.outstanding_samples = less(c->total_samples, c->freed_samples);
	out->stats.outstanding_var = less(c->total_var, c->freed_var);
}

bool snapshot__read_slot(const struct probes *p, const struct site_slot *slot,
			 struct slot_copy *out)
{
	struct site_scan_rec r;

	if (!site_slot__live(slot))
		return false;
	site_slot__counts(&p->tables, slot, &r.sum);
	r.stack_id = slot->stack_id;
	r.api = slot->api;
	r.base_allocs = slot->base_allocs;
	r.base_bytes = slot->base_bytes;
	snapshot__scanned_slot(p, &r, out);
	return true;
}


void snapshot__add_stats(struct site_stats *to, const struct site_stats *from)
{
	to->outstanding_bytes += from->outstanding_bytes;
	to->outstanding_allocs += from->outstanding_allocs;
	to->total_bytes += from->total_bytes;
	to->total_allocs += from->total_allocs;
	to->outstanding_samples += from->outstanding_samples;
	to->outstanding_var += from->outstanding_var;
}

/* The site of (stack_id, api) in snap, made if new; its index in *at. */
static int site_for(struct snapshot *snap, struct idmap *of_key, size_t *cap, uint64_t stack_id,
		    uint32_t api, uint32_t *at)
{
	uint64_t key = retired__site_key(stack_id, api);
	struct snap_site *s;

	if (idmap__get(of_key, key, at))
		return 0;
	if (vec__reserve_min(&snap->sites, cap, snap->nr + 1, sizeof(*s), 256) ||
	    idmap__put(of_key, key, (uint32_t)snap->nr))
		return -ENOMEM;
	*at = (uint32_t)snap->nr++;
	s = &snap->sites[*at];
	memset(s, 0, sizeof(*s));
	s->stack_id = stack_id;
	s->api = api;
	return 0;
}

struct live_sites {
	struct snapshot *snap;
	struct idmap *of_key;
	size_t *cap;
};

/* Slot i's figures, to its site's (made when new). */
static int add_slot(void *arg, size_t i, const struct slot_copy *slot)
{
	struct live_sites *l = arg;
	uint32_t at;

	if (site_for(l->snap, l->of_key, l->cap, slot->stack_id, slot->api, &at))
		return -ENOMEM;
	snapshot__add_stats(&l->snap->sites[at].stats, &slot->stats);
	l->snap->site_of_slot[i] = at + 1;
	return 0;
}

/* The live sites, one per (stack, API) however many slots it has. */
static int read_live(struct probes *p, struct snapshot *snap, struct idmap *of_key, size_t *cap)
{
	snap->site_of_slot = calloc(p->tables.slots, sizeof(*snap->site_of_slot));
	if (!snap->site_of_slot)
		return -ENOMEM;
	snap->site_of_slot_bytes = p->tables.slots * sizeof(*snap->site_of_slot);	/* at most */
	return snapshot__each_slot(p, add_slot, &(struct live_sites){ snap, of_key, cap });
}

/* What reclaimed sites allocated and freed before: theirs too. */
static int read_retired(struct probes *p, struct snapshot *snap, struct idmap *of_key,
			size_t *cap)
{
	size_t n;
	uint32_t at;

	/* A live site folded before takes its figures back: a retired entry again. */
	for (size_t i = 0; i < snap->nr; i++)
		if (retired__unfold(p->rc.retired, snap->sites[i].stack_id, snap->sites[i].api))
			return -ENOMEM;
	n = retired__nr_sites(p->rc.retired);
	retired__forgotten(p->rc.retired, &snap->forgotten_sites, &snap->forgotten_allocs,
			   &snap->forgotten_bytes);
	snap->forgotten_allocs = snapshot__blocks_of(p, snap->forgotten_allocs);
	for (size_t i = 0; i < n; i++) {
		const struct retired_site *r = retired__site_at(p->rc.retired, i);

		if (site_for(snap, of_key, cap, r->stack_id, r->api, &at))
			return -ENOMEM;
		snap->sites[at].stats.total_bytes += r->total_bytes;
		snap->sites[at].stats.total_allocs += snapshot__blocks_of(p, r->total_allocs);
		snap->sites[at].folded_bytes = r->folded_bytes;
		snap->sites[at].folded_allocs = r->folded_allocs;
	}
	return 0;
}

/*
 * Every site: those of the table, whose slots change only at a reclaim,
 * which runs on this same thread, then those reclaimed.
 */
static int read_sites(struct probes *p, struct snapshot *snap)
{
	struct idmap of_key = {};
	size_t cap = 0;
	int err = read_live(p, snap, &of_key, &cap);

	if (!err) {
		pthread_mutex_lock(&p->rc.retired_lock);
		err = read_retired(p, snap, &of_key, &cap);
		pthread_mutex_unlock(&p->rc.retired_lock);
	}
	idmap__free(&of_key);
	return err;
}

/*
 * The frames of native stack id, held: shared with the cache, the retired
 * store or the stacks BPF sent (stack_ring.c).
 */
static struct stack_blob *native_blob(struct probes *p, uint64_t id)
{
	struct stack_blob *blob = stackcache__native(p->rc.stacks, id) ?: retired__native(p->rc.retired, id);

	return blob ? stack_blob__hold(blob) : stack_ring__native(p, id);
}

/*
 * In a Python target a stack id may stand for a pair (native stack, Python
 * frames), and under --follow for a followed process's stack (its tag in
 * pair->proc). What id stands for, asked of the retired store first: it
 * costs no system call, and an id names the same frames wherever it is kept.
 * An id known as a native stack's is no pair's: its blob, held, in *native
 * (NULL otherwise), not looked up again in the three stores.
 */
static void read_pair(struct probes *p, uint64_t id, struct stack_pair *pair,
		      struct stack_blob **native)
{
	*pair = (struct stack_pair){ .native = id };
	*native = NULL;
	if (!p->py.used || retired__pair(p->rc.retired, id, pair) || (*native = native_blob(p, id)))
		return;
	if (!stack_ring__pair(p, id, pair))
		*pair = (struct stack_pair){ .native = id };
}

static struct stack_blob *python_blob(struct probes *p, uint64_t id)
{
	struct stack_blob *blob = stackcache__python(p->rc.stacks, id) ?: retired__python(p->rc.retired, id);

	return blob ? stack_blob__hold(blob) : stack_ring__python(p, id);
}

/*
 * The stack of a site's id, held in *out; false when its native frames are
 * nowhere (reported as a stack that could not be read). Python frames that
 * cannot be read leave the native ones alone.
 */
static bool read_stack_once(struct probes *p, uint64_t id, struct stack_ref *out)
{
	struct stack_pair pair;

	read_pair(p, id, &pair, &out->native);
	out->proc = (uint32_t)pair.proc;
	/* A followed process's allocation without a stack: its tag is all there is. */
	if (!out->native && pair.native == MEMLEAK_NO_STACK && pair.proc)
		out->native = stack_blob__new(MEMLEAK_NO_STACK, &(struct stack_copy){ 0 });
	else if (!out->native)
		out->native = native_blob(p, pair.native);
	if (!out->native)
		return false;
	out->python = pair.python ? python_blob(p, pair.python) : NULL;
	return true;
}

/* The site's stack, held by the site: the stack cache's, or read (and kept there). */
void snapshot__read_stack(struct probes *p, struct snap_site *s)
{
	struct stack_ref ref;

	if (s->stack_id == MEMLEAK_NO_STACK)
		return;
	if (!stackcache__get(p->rc.stacks, s->stack_id, &ref)) {
		bool found;

		pthread_mutex_lock(&p->rc.retired_lock);
		found = read_stack_once(p, s->stack_id, &ref);
		pthread_mutex_unlock(&p->rc.retired_lock);
		if (!found)
			return;
		/* A failure costs the next reading a lookup again: no more. */
		(void)stackcache__put(p->rc.stacks, s->stack_id, &ref);
	}
	s->stack = ref.native;
	s->pystack = ref.python;
	s->nr_ips = ref.native->nr_ips;
	s->stack_flags = ref.native->flags;
	s->proc = ref.proc;
}

void snapshot__start_recount(struct snapshot *snap)
{
	snap->older = true;
	for (size_t i = 0; i < snap->nr; i++) {
		struct site_stats *st = &snap->sites[i].stats;

		snap->all_outstanding_bytes += st->outstanding_bytes;
		snap->all_outstanding_allocs += st->outstanding_allocs;
		if (MEMLEAK_KIND_OF(snap->sites[i].api) == KIND_MMAP) {
			snap->all_mmap_bytes += st->outstanding_bytes;
			snap->all_mmap_allocs += st->outstanding_allocs;
		}
		st->outstanding_bytes = st->outstanding_allocs = 0;
		st->outstanding_samples = st->outstanding_var = 0;
	}
}

static void account(const struct probes *p, struct snapshot *snap, struct snap_site *s,
		    const struct alloc_info *a, uint64_t older_ns)
{
	struct sample_weight w;

	if (!s->oldest_ns || a->timestamp_ns < s->oldest_ns)
		s->oldest_ns = a->timestamp_ns;
	/* A block newer than the snapshot's clock is young, not 2^64 ns old. */
	if (older_ns && a->timestamp_ns <= snap->time_ns &&
	    snap->time_ns - a->timestamp_ns >= older_ns) {
		probes_sample__block_weight(p, s->api, a->size, &w);
		s->stats.outstanding_bytes += w.bytes;
		/* Under sampling, whole blocks: each old block's weight rounded. */
		s->stats.outstanding_allocs += snapshot__blocks_of(p, w.blocks);
		s->stats.outstanding_samples += !!p->sample.mode;
		s->stats.outstanding_var += w.var;
	}
}

/*
 * One walk of the live blocks: the age of each site's oldest, and with
 * -o/--older the figures of the old ones. A slot whose record is being
 * written (the busy bit) is an allocation still returning: left for the
 * next snapshot. The groups of buckets that never held a block are passed
 * over unread.
 */
int snapshot__each_block(struct probes *p, block_fn fn, void *arg)
{
	struct mapwin w;
	int ret = 0;

	probes_tables__allocs(&p->tables, &w);
	for (size_t b = alloc_bucket__next_used(&p->tables, 0); b < p->tables.buckets && !ret;
	     b = alloc_bucket__next_used(&p->tables, b + 1)) {
		struct alloc_bucket *bucket = mapwin__at(&w, b);

		if (!bucket) {
			ret = w.err;
			break;
		}
		for (int i = 0; i < MEMLEAK_BUCKET_SLOTS && !ret; i++) {
			uint64_t addr = __atomic_load_n(&bucket->addr[i], __ATOMIC_ACQUIRE);
			struct alloc_info info = bucket->info[i];

			if (addr && !(addr & MEMLEAK_ADDR_BUSY))
				ret = fn(arg, bucket, b, i, addr, &info);
		}
	}
	mapwin__end(&w);
	return ret;
}

struct walk {
	struct probes *p;
	struct snapshot *snap;
	uint64_t older_ns;
};

static int account_block(void *arg, struct alloc_bucket *bucket, size_t b, int i, uint64_t addr,
			 const struct alloc_info *info)
{
	struct walk *w = arg;
	uint32_t at = info->site < w->p->tables.slots ? w->snap->site_of_slot[info->site] : 0;

	if (at)
		account(w->p, w->snap, &w->snap->sites[at - 1], info, w->older_ns);
	return 0;
}

static int walk_allocs(struct probes *p, struct snapshot *snap, uint64_t older_ns)
{
	if (older_ns)
		snapshot__start_recount(snap);
	snap->ages = true;
	return snapshot__each_block(p, account_block, &(struct walk){ p, snap, older_ns });
}

static uint64_t live_blocks(const struct snapshot *snap)
{
	uint64_t n = 0;

	for (size_t i = 0; i < snap->nr; i++)
		n += snap->sites[i].stats.outstanding_allocs;
	return n;
}

int snapshot__walk_blocks(struct probes *p, struct snapshot *snap, uint64_t older_ns)
{
	if (older_ns || live_blocks(snap) <= SNAPSHOT_AGES_MAX)
		return walk_allocs(p, snap, older_ns);
	return 0;
}

/* A carried reading may have kept its sites' ages (snapshot_kept.c): walked anew, whole. */
static int ages(struct probes *p, struct snapshot *snap)
{
	if (snap->ages)
		return 0;
	for (size_t i = 0; i < snap->nr; i++)
		snap->sites[i].oldest_ns = 0;
	return walk_allocs(p, snap, 0);
}

static int collect(struct probes *p, uint64_t older_ns, struct snapshot **out)
{
	struct snapshot *snap = calloc(1, sizeof(*snap));
	int err;

	if (!snap)
		return -ENOMEM;
	for (int c = 0; c < CNT__COUNT; c++)
		snap->counters[c] = bpfmaps__counter(p->skel, c);
	peak__live(p, snap->live);
	reclaim__sweep_stats(p, &snap->sweep);
	snap->time_ns = clock__now_ns();
	err = read_sites(p, snap) ?: snapshot__walk_blocks(p, snap, older_ns);
	if (err) {
		snapshot__free(snap);
		return err;
	}
	*out = snap;
	return 0;
}

/* Stacks read between two chances for a sweep to take the lock. */
#define SNAPSHOT_STACKS_AT_ONCE 1024

/*
 * Every site's stack, freed sites too: a heap profile's allocation totals
 * name them. Outside the tables' lock, so that a sweep retiring sites need
 * not wait for it. A sweep copies a stack to the retired store (sharing
 * the cache's blob, under the cache's lock) before it deletes it from its
 * map, so one of the two has it; a stack the cache has is one lookup, and
 * only the others ask the retired store, under its own lock.
 */
static int read_stacks(struct probes *p, struct snapshot *snap)
{
	/* Every stack BPF sent before it counted these sites' allocations. */
	stack_ring__drain(p);
	pthread_mutex_lock(&p->rc.stacks_lock);
	stackcache__begin(p->rc.stacks);
	for (size_t i = 0; i < snap->nr; i++) {
		/*
		 * Let a sweep in now and then: a report of 131,072 sites held
		 * it off for 300 ms, while a churn of new stacks filled the
		 * room. Each site's stack is read under the lock, whole; the
		 * blobs are counted references, so a sweep or another reading
		 * that ends meanwhile frees none this one holds.
		 */
		if (i && !(i % SNAPSHOT_STACKS_AT_ONCE)) {
			pthread_mutex_unlock(&p->rc.stacks_lock);
			pthread_mutex_lock(&p->rc.stacks_lock);
		}
		snapshot__read_stack(p, &snap->sites[i]);
		snap->counters[CNT_STACKS_LOST] += !snap->sites[i].stack &&
						   snap->sites[i].stack_id != MEMLEAK_NO_STACK;
	}
	stackcache__end(p->rc.stacks);
	pthread_mutex_unlock(&p->rc.stacks_lock);
	return 0;
}

static int append_live(struct snap_live **buf, size_t *cap, size_t *nr, const struct slot_copy *slot)
{
	if (vec__reserve_min(buf, cap, *nr + 1, sizeof(**buf), 256))
		return -ENOMEM;
	(*buf)[(*nr)++] = (struct snap_live){ slot->stack_id, slot->api,
					      slot->stats.outstanding_bytes,
					      slot->stats.outstanding_allocs };
	return 0;
}

struct each_slot {
	const struct probes *p;
	int (*fn)(void *arg, size_t i, const struct slot_copy *slot);
	void *arg;
};

static int each_scanned(void *arg, const struct site_scan_rec *r)
{
	const struct each_slot *e = arg;
	struct slot_copy slot;

	snapshot__scanned_slot(e->p, r, &slot);
	return e->fn(e->arg, r->slot, &slot);
}

/* The live slots as BPF copies them out (site_scan.h); where it cannot, the table walked. */
int snapshot__each_slot(const struct probes *p,
			int (*fn)(void *arg, size_t i, const struct slot_copy *slot), void *arg)
{
	struct slot_copy slot;
	const struct site_slot *s;
	struct mapwin w;
	int err = site_scan__each(&p->tables, each_scanned, &(struct each_slot){ p, fn, arg });

	if (err != -EOPNOTSUPP)
		return err;
	err = 0;
	probes_tables__sites(&p->tables, &w);
	for (size_t i = site_slot__next_used(&p->tables, 0); i < p->tables.slots && !err;
	     i = site_slot__next_used(&p->tables, i + 1)) {
		if (!(s = mapwin__at(&w, i)))
			err = w.err;
		else if (snapshot__read_slot(p, s, &slot))
			err = fn(arg, i, &slot);
	}
	mapwin__end(&w);
	return err;
}

struct live_buf {
	struct snap_live **buf;
	size_t *cap, *nr;
};

static int add_live(void *arg, size_t i, const struct slot_copy *slot)
{
	struct live_buf *b = arg;

	(void)i;
	return append_live(b->buf, b->cap, b->nr, slot);
}

static int live(struct probes *p, struct snap_live **buf, size_t *cap, size_t *nr)
{
	*nr = 0;
	return snapshot__each_slot(p, add_live, &(struct live_buf){ buf, cap, nr });
}

/*
 * The sites are read under the lock a sweep takes to retire them
 * (reclaim.c): a reading must see a site's figures in its slot or in the
 * retired store, never in both or neither.
 */
int snapshot__ages(struct probes *p, struct snapshot *snap)
{
	int err;

	pthread_mutex_lock(&p->rc.tables_lock);
	err = ages(p, snap);
	pthread_mutex_unlock(&p->rc.tables_lock);
	return err;
}

/* At the sweeper's nice value: a sweep waits for the locks it holds. */
int snapshot__collect(struct probes *p, uint64_t older_ns, struct snapshot **out)
{
	int err, was = nice__raise(PROBES_SWEEP_NICE);

	pthread_mutex_lock(&p->rc.tables_lock);
	err = collect(p, older_ns, out);
	pthread_mutex_unlock(&p->rc.tables_lock);
	if (!err && (err = read_stacks(p, *out))) {
		snapshot__free(*out);
		*out = NULL;
	}
	nice__restore(was);
	return err;
}

/*
 * At the sweeper's nice value too: a torch import asks for a peak sample
 * at every sixty-fourth its heap grows, each a scan of the site table
 * under the lock, and at nice 0 on a loaded machine the import's first
 * sweeps waited 260 and 340 ms for the lock, before any report (docs/
 * PERFORMANCE.md, "The site table's mark on the sites it holds").
 */
int snapshot__live(struct probes *p, struct snap_live **buf, size_t *cap, size_t *nr)
{
	int err, was = nice__raise(PROBES_SWEEP_NICE);

	pthread_mutex_lock(&p->rc.tables_lock);
	err = live(p, buf, cap, nr);
	pthread_mutex_unlock(&p->rc.tables_lock);
	nice__restore(was);
	return err;
}

void snapshot__free_blocks(struct snapshot *snap)
{
	if (!snap->blocks)
		return;
	for (size_t i = 0; i < snap->nr; i++)
		free(snap->blocks[i].v);
	free(snap->blocks);
	snap->blocks = NULL;
}

void snapshot__free(struct snapshot *snap)
{
	if (!snap)
		return;
	snapshot__free_blocks(snap);	/* this reading's, carried over or not */
	if (snap->held) {	/* a reading carried over (snapshot_kept.c): handed back */
		atomic_store(snap->held, false);
		return;
	}
	for (size_t i = 0; i < snap->nr; i++)
		stack_ref__put(&(struct stack_ref){ .native = snap->sites[i].stack,
						 .python = snap->sites[i].pystack });
	free(snap->sites);
	free(snap->site_of_slot);
	free(snap);
}

/* The BPF maps' kernel memory, and what of it is mapped. */
static void maps_memory(struct probes *p, struct snapshot_memory *out)
{
	struct probes_cfi_spares *sp = &p->cfi.spares;
	const char *names[SNAPSHOT_MAPS_NAMED];
	uint64_t bytes[SNAPSHOT_MAPS_NAMED];

	out->allocs_bytes = p->tables.allocs_bytes;
	out->buckets = p->tables.buckets;
	out->sites_bytes = p->tables.sites_bytes;
	out->slots = p->tables.slots;
	out->slot_bytes = p->tables.slot_bytes;
	out->shards = p->tables.shards;
	out->window = MAPWIN_SPAN + (size_t)sysconf(_SC_PAGESIZE);
	mapwin__totals(&out->windows, &out->window_bytes);
	out->cfi_bytes = p->cfi.chunk_bytes;
	out->cfi_chunks = p->cfi.chunks + sp->nr - sp->next;
	out->cfi_mapped = (sp->nr - sp->next + !!p->cfi.fill) * PROBES_CFI_CHUNK_BYTES;
	out->maps_bytes = bpfmaps__memory(p->skel, names, bytes, SNAPSHOT_MAPS_NAMED) + out->cfi_bytes;
	for (int i = 0; i < SNAPSHOT_MAPS_NAMED; i++)
		out->largest[i] = (struct snapshot_map){ names[i], bytes[i] };
}

void snapshot__memory(struct probes *p, const struct snapshot *snap, struct snapshot_memory *out)
{
	maps_memory(p, out);
	pthread_mutex_lock(&p->rc.stacks_lock);
	out->stacks = stackcache__nr(p->rc.stacks);
	out->stack_bytes = stackcache__bytes(p->rc.stacks);
	out->frame_nodes = stackcache__frame_nodes();
	out->frame_bytes = stackcache__frame_bytes();
	pthread_mutex_lock(&p->rc.retired_lock);
	out->retired = retired__nr_stacks(p->rc.retired);
	out->retired_bytes = retired__bytes(p->rc.retired);
	out->folded = retired__nr_folded(p->rc.retired);
	pthread_mutex_unlock(&p->rc.retired_lock);
	pthread_mutex_unlock(&p->rc.stacks_lock);
	out->snapshot_bytes = snap ? snap->nr * sizeof(*snap->sites) + snap->site_of_slot_bytes : 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

int snapshot__tags(const struct snapshot *snap, uint32_t **tags, size_t *cap, size_t *nr)
{
	size_t n = 0;

	if (vec__reserve(tags, cap, snap->nr ?: 1, sizeof(**tags)))
		return -ENOMEM;
	for (size_t i = 0; i < snap->nr; i++)
		(*tags)[i] = snap->sites[i].proc;
	qsort(*tags, snap->nr, sizeof(**tags), cmp_u32);
	for (size_t i = 0; i < snap->nr; i++)
		if (!n || (*tags)[n - 1] != (*tags)[i])
			(*tags)[n++] = (*tags)[i];
	*nr = n;
	return 0;
}
