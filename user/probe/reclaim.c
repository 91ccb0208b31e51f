// SPDX-License-Identifier: GPL-2.0
/*
 * Room in the BPF tables for what is outstanding, not for everything that
 * ever happened. A torch import makes a million allocations from some
 * 200,000 stacks and frees most of them; keeping every stack filled the
 * maps within seconds. When a table is a quarter full, a sweep:
 *
 * 1. retires each site none of whose blocks is left: its figures go to
 *    the retired store (model/retired.h), its slot becomes RETIRED, which
 *    a new site may take. The handshake with record() in the BPF programs
 *    (bpf/tables.bpf.h, site_enter): we mark the slot RETIRING, then read
 *    its counts; an allocation counts itself, then looks at the key again.
 *    Both are locked instructions, so either we see its count and give the
 *    slot back, or it sees the mark and takes its count back.
 * 2. lets go of the pairs, Python stacks and native stacks (stack_ring.c)
 *    no live site names, keeping a copy in the retired
 *    store: a stack id may still come back from a thread's stack cache, the
 *    stacks BPF knows it sent or a walk in flight, and is then read from
 *    there; the caches are told to forget (stacks_cleared). A copy stays
 *    until a later sweep's walk finds no live site naming it (a site made
 *    while this sweep ran may: retired__named), or a site kept there does.
 * 3. empties the set of code objects sent when it is half full: a code
 *    object met again is sent again, and pytrace knows it already.
 *
 * Runs on a thread of its own (sweeper), woken by BPF through the loop or
 * every 10 ms (a look at the fill counts, when the loop is busy with a
 * report), at nice -10. A churn of new stacks with almost nothing live (a
 * torch import; v_churn) fills the room as fast as the target allocates:
 * the sweep has the other three quarters of the room to finish in.
 *
 * Sites are retired under the lock snapshot.c reads them with; stacks are
 * let go of while a report reads its stacks (each copied to the retired
 * store, under its lock, before it leaves its map): the maps fill while a
 * report is built, and a sweep must not wait for one.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "probes.h"
#include "clock.h"
#include "probes_internal.h"
#include "sample.h"
#include "snapshot.h"
#include "model/retired.h"
#include "model/stackcache.h"
#include "util/idmap.h"
#include "util/vec.h"
#include "util/nice.h"
#include "util/fatal.h"

/*
 * The frames of stacks let go of kept at most, counted as if each stack
 * had its own (they are shared prefixes: model/prefixes.h): beyond, those
 * whose sites allocated least are forgotten (their figures stay in the
 * totals). A torch job lets go of 450,000 stacks, 240 MiB of them counted
 * so: trimming sorts everything kept (1 to 2 s there), so it should come
 * seldom.
 */
#define RETIRED_MAX_BYTES (256u << 20)

struct reclaim {
	uint64_t next[BPFMAPS__TABLES];	/* sweep when a table holds more than this */
	/* The stack ids the live sites name, this sweep (with repeats), kept for the next. */
	uint64_t *ids;
	size_t nr_ids, cap_ids;
	bool named_whole;		/* ids holds every live site's: the walk ended */
	/* A sweep retired sites and did not let go of their stacks (no memory): step 2 is due. */
	bool let_go_due;
	uint64_t sweeps, sites, stacks, longest_ns;
	uint64_t cpu_ns;		/* the sweeps' CPU time: what they cost, load or not */
	/* The stacks the live sites named at the last sweep, and the most. */
	uint64_t live, live_max;
	/* The thread that sweeps, woken by reclaim__kick or every tick. */
	pthread_t thread;
	bool running, stop, kicked;
	bool asked;			/* reclaim__sweep_wait: one sweep, due or not */
	uint64_t begun, done;		/* sweeps begun and ended by the thread, under mu */
	pthread_mutex_t mu;
	pthread_cond_t cond;
};

/* How often the thread looks whether a sweep is due when nobody says so. */
#define SWEEPER_TICK_MS 10

/*
 * Under sampling the tables fill only as fast as calls are sampled, a
 * fraction of them (one in N under -s N): the look can wait that many
 * times longer, up to ten, and the tracer's own CPU time on an idle
 * target falls with it (at 10 ms, some 5% of a core on the 2-core test VM).
 */
static long sweeper_tick_ms(const struct probes *p)
{
	if (p->sample.mode == SAMPLE_BYTES)
		return 10 * SWEEPER_TICK_MS;
	if (p->sample.mode == SAMPLE_COUNT)	/* rodata's sample_mean: -s's N */
		return SWEEPER_TICK_MS * (long)(p->skel->rodata->sample_mean < 10 ?
						p->skel->rodata->sample_mean : 10);
	return SWEEPER_TICK_MS;
}

static volatile __u64 *fill_of(struct probes *p, enum bpfmaps_table k)
{
	return bpfmaps__fill(p->skel, k);
}

static volatile __u64 *mark_of(struct probes *p, enum bpfmaps_table k)
{
	return bpfmaps__fill_mark(p->skel, k);
}

static uint64_t room_of(struct probes *p, enum bpfmaps_table k)
{
	return bpfmaps__room(p->skel, k);
}

static uint64_t mark_for(uint64_t room, uint64_t live);

static void first_marks(struct probes *p)
{
	for (int k = 0; k < BPFMAPS__TABLES; k++) {
		p->rc.sweep->next[k] = mark_for(room_of(p, k), 0);
		*mark_of(p, k) = p->rc.sweep->next[k] + 1;
	}
}

int reclaim__new(struct probes *p)
{
	p->rc.sweep = calloc(1, sizeof(*p->rc.sweep));
	p->rc.retired = retired__new();
	p->rc.stacks = stackcache__new();
	if (!p->rc.sweep || !p->rc.retired || !p->rc.stacks)
		return -ENOMEM;
	pthread_mutex_init(&p->rc.sweep->mu, NULL);
	pthread_cond_init(&p->rc.sweep->cond, NULL);
	first_marks(p);
	return 0;
}

int reclaim__reset(struct probes *p)
{
	pthread_mutex_lock(&p->rc.retired_lock);
	retired__free(p->rc.retired);
	p->rc.retired = retired__new();
	p->rc.resets++;	/* a reading carried over starts anew */
	pthread_mutex_unlock(&p->rc.retired_lock);
	if (!p->rc.retired)
		return -ENOMEM;
	first_marks(p);
	stack_ring__clear(p);
	return 0;
}

void reclaim__free(struct probes *p)
{
	if (p->rc.sweep) {
		free(p->rc.sweep->ids);
		pthread_mutex_destroy(&p->rc.sweep->mu);
		pthread_cond_destroy(&p->rc.sweep->cond);
	}
	free(p->rc.sweep);
	if (p->rc.kept_free)	/* it holds stacks the cache and the retired store share */
		p->rc.kept_free(p);
	retired__free(p->rc.retired);
	stackcache__free(p->rc.stacks);
	p->rc.sweep = NULL;
	p->rc.retired = NULL;
	p->rc.stacks = NULL;
}

static void sweep(struct probes *p, bool asked);

/* Until told to stop: sweep when kicked, or when due at a tick, or when asked. */
static void *sweeper(void *arg)
{
	struct probes *p = arg;
	struct reclaim *r = p->rc.sweep;

	nice__raise(PROBES_SWEEP_NICE);
	/* Its own name: top -H and perf tell its CPU from the loop's and the reader's. */
	pthread_setname_np(pthread_self(), "memleakbpf-swp");
	pthread_mutex_lock(&r->mu);
	while (!r->stop) {
		struct timespec until;
		bool asked;

		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += sweeper_tick_ms(p) * 1000000L;
		until.tv_sec += until.tv_nsec / 1000000000L;
		until.tv_nsec %= 1000000000L;
		while (!r->stop && !r->kicked &&
		       pthread_cond_timedwait(&r->cond, &r->mu, &until) == 0)
			;
		asked = r->asked;
		r->kicked = r->asked = false;
		if (r->stop)
			break;
		r->begun++;
		pthread_mutex_unlock(&r->mu);
		sweep(p, asked);
		pthread_mutex_lock(&r->mu);
		r->done = r->begun;
		pthread_cond_broadcast(&r->cond);	/* reclaim__sweep_wait's */
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

int reclaim__start_thread(struct probes *p)
{
	struct reclaim *r = p->rc.sweep;
	pthread_condattr_t attr;
	sigset_t all, old;
	int err;

	/* The waits are on CLOCK_MONOTONIC, as the deadlines. */
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_destroy(&r->cond);
	pthread_cond_init(&r->cond, &attr);
	pthread_condattr_destroy(&attr);
	/* No signal for it: they are the loop's (a SIGINT here would end the tracer). */
	fatal__thread_signals(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&r->thread, NULL, sweeper, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return -err;
	r->running = true;
	return 0;
}

void reclaim__stop_thread(struct probes *p)
{
	struct reclaim *r = p->rc.sweep;

	if (!r || !r->running)
		return;
	pthread_mutex_lock(&r->mu);
	r->stop = true;
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->mu);
	pthread_join(r->thread, NULL);
	r->running = false;
}

void reclaim__kick(struct probes *p)
{
	struct reclaim *r = p->rc.sweep;

	if (!r || !r->running)
		return;
	pthread_mutex_lock(&r->mu);
	r->kicked = true;
	pthread_cond_broadcast(&r->cond);	/* the thread; a waiter for a sweep waits on */
	pthread_mutex_unlock(&r->mu);
}

void reclaim__sweep_wait(struct probes *p, long wait_ms)
{
	struct reclaim *r = p->rc.sweep;
	struct timespec until;
	uint64_t want;

	if (!r || !r->running)
		return;
	clock_gettime(CLOCK_MONOTONIC, &until);	/* the clock of the thread's cond */
	until.tv_sec += wait_ms / 1000;
	until.tv_nsec += wait_ms % 1000 * 1000000L;
	until.tv_sec += until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&r->mu);
	want = r->begun + 1;	/* the next one to begin, after this */
	r->kicked = r->asked = true;
	pthread_cond_broadcast(&r->cond);
	while (r->running && !r->stop && r->done < want &&
	       pthread_cond_timedwait(&r->cond, &r->mu, &until) == 0)
		;
	pthread_mutex_unlock(&r->mu);
}

static bool outstanding(const struct site_counts *c)
{
	return c->total_allocs != c->freed_allocs || c->total_bytes != c->freed_bytes;
}

/* Its figures into the retired store: 0 or -ENOMEM. */
static int keep_site(struct probes *p, const struct site_slot *s, const struct site_counts *c)
{
	int err;

	pthread_mutex_lock(&p->rc.retired_lock);
	err = retired__add_site(p->rc.retired, s->stack_id, s->api, c->total_bytes - s->base_bytes,
				c->total_allocs - s->base_allocs);
	pthread_mutex_unlock(&p->rc.retired_lock);
	return err;
}

/* Step 1 for one slot: true when it was retired. */
static bool retire_site(struct probes *p, struct site_slot *s)
{
	__u64 key = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
	struct site_counts c;

	if (!site_slot__live(s))
		return false;
	site_slot__counts(&p->tables, s, &c);
	if (outstanding(&c) ||
	    !__atomic_compare_exchange_n(&s->key, &key, MEMLEAK_SITE_RETIRING, false,
					 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		return false;
	site_slot__counts(&p->tables, s, &c);
	if (outstanding(&c) || (c.total_allocs > s->base_allocs && keep_site(p, s, &c))) {
		__atomic_store_n(&s->key, key, __ATOMIC_SEQ_CST);
		return false;
	}
	s->base_allocs = c.total_allocs;
	s->base_bytes = c.total_bytes;
	__atomic_store_n(&s->ready, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&s->key, MEMLEAK_SITE_RETIRED, __ATOMIC_SEQ_CST);
	__atomic_fetch_sub(fill_of(p, BPFMAPS_SITES_HELD), 1, __ATOMIC_SEQ_CST);
	return true;
}

/*
 * A RETIRED slot just before an EMPTY one ends no chain: it becomes EMPTY,
 * and so, from the end, the run of RETIRED slots before it (a site made
 * meanwhile past it may be made twice: snapshot.c adds up both slots).
 * Slot s, whose next slot's key was next when the walk, going down, met
 * it: true when it became EMPTY.
 */
static bool trim_slot(struct probes *p, struct site_slot *s, __u64 next)
{
	__u64 retired = MEMLEAK_SITE_RETIRED;

	/*
	 * Looked at before the locked exchange, which an EMPTY slot fails: one
	 * on each of a used group's empty slots was 83% of a sweep's CPU,
	 * 600-700 ms on the test machine with 1,041 sites in the table. A
	 * slot retired after the look is trimmed by the next sweep.
	 */
	if (next != MEMLEAK_SITE_EMPTY ||
	    __atomic_load_n(&s->key, __ATOMIC_RELAXED) != MEMLEAK_SITE_RETIRED ||
	    !__atomic_compare_exchange_n(&s->key, &retired, MEMLEAK_SITE_EMPTY, false,
					 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		return false;
	__atomic_fetch_sub(fill_of(p, BPFMAPS_SITES), 1, __ATOMIC_SEQ_CST);
	return true;
}

/* The run that wraps round the table's end: from its last slot down, while it goes on. */
static void trim_wrapped(struct probes *p, struct mapwin *w, __u64 next)
{
	for (size_t k = p->tables.slots; k-- > 0;) {
		struct site_slot *s = site_slot__used(&p->tables, k) ? mapwin__at(w, k) : NULL;

		if (!s || !trim_slot(p, s, next))
			return;
		next = MEMLEAK_SITE_EMPTY;
	}
}

/* The stacks the live sites named at the last step 2, and the most so far (under mu). */
static void note_live(struct reclaim *r, size_t live)
{
	pthread_mutex_lock(&r->mu);
	r->live = live;
	if (r->live > r->live_max)
		r->live_max = r->live;
	pthread_mutex_unlock(&r->mu);
}

/* A live site's stack id into r->ids: 0 or -ENOMEM. */
static int name_id(struct reclaim *r, uint64_t id)
{
	if (vec__reserve_min(&r->ids, &r->cap_ids, r->nr_ids + 1, sizeof(*r->ids), 4096))
		return -ENOMEM;
	r->ids[r->nr_ids++] = id;
	return 0;
}

/*
 * Step 1: the sites retired, and the chains they ended trimmed; the stack
 * ids the others name go in r->ids, a plain array: step 2 makes a set of
 * them only when it has stacks to let go of (a sweep that retired no site
 * has none: the stacks are the live sites', and those BPF sent since for
 * new ones). One walk down the table through a window (each window mapped
 * once, the groups that never held a site passed over): a slot is trimmed
 * after the one above it, whose key the walk has just seen.
 */
static size_t retire_sites(struct probes *p, struct reclaim *r)
{
	__u64 next = MEMLEAK_SITE_RETIRED;	/* the last slot's next: trim_wrapped sees to it */
	struct mapwin w;
	size_t n = 0;

	r->nr_ids = 0;
	r->named_whole = false;
	probes_tables__sites(&p->tables, &w);
	for (size_t k = p->tables.slots; k-- > 0;) {
		struct site_slot *s;

		if (!site_slot__used(&p->tables, k)) {
			/* A group that never held a site: EMPTY slots, passed over unmapped. */
			k &= ~(((size_t)1 << p->tables.group_shift) - 1);
			next = MEMLEAK_SITE_EMPTY;
			continue;
		}
		s = mapwin__at(&w, k);
		if (s && retire_site(p, s))
			n++;
		else if (!s || (site_slot__live(s) && s->stack_id != MEMLEAK_NO_STACK &&
				name_id(r, s->stack_id))) {
			mapwin__end(&w);
			r->let_go_due = true;	/* some may have been retired */
			return 0;	/* no memory, or no window */
		}
		next = trim_slot(p, s, next) ? MEMLEAK_SITE_EMPTY
					      : __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
	}
	trim_wrapped(p, &w, next);
	mapwin__end(&w);
	r->named_whole = true;
	return n;
}

/*
 * The set of r->ids, in *named (sized as the last one: grown from empty,
 * its room was faulted in a dozen times): 0 or -ENOMEM.
 */
static int make_named(struct reclaim *r, struct idmap *named)
{
	if (idmap__reserve(named, r->live > r->nr_ids ? r->live : r->nr_ids))
		return -ENOMEM;
	for (size_t i = 0; i < r->nr_ids; i++)
		if (idmap__put(named, r->ids[i], 0))
			return -ENOMEM;
	return 0;
}

/*
 * Step 2: the stacks no live site names; and those the retired store
 * keeps that one does are the latest let go of (retired__named). Without
 * every live site's (no memory), none. Only after a sweep that retired
 * sites (this one, or one that could not let go of their stacks): with
 * none retired, every stack held is a live site's, or came since for a
 * new one. The set of 200,000 to 400,000 ids named, the stores split by
 * it and the retired store's walk were a third of a sweep's 100 to 150 ms
 * of CPU on a torch job, for nothing let go of. What it leaves waits for
 * a sweep that retires a site: a stack BPF sent for a site it found no
 * slot for (sites_map_full; e2e sweeps_idle), and the retired store's
 * copies stay as they were marked (retired__named: a mark keeps, and its
 * absence only lets a later fold or trim let go).
 */
static size_t let_go_stacks(struct probes *p, struct reclaim *r, size_t sites)
{
	struct idmap named = {};
	size_t n;

	if (!r->named_whole || (!sites && !r->let_go_due))
		return 0;
	if (make_named(r, &named)) {
		idmap__free(&named);
		r->let_go_due = true;
		return 0;
	}
	pthread_mutex_lock(&p->rc.stacks_lock);
	pthread_mutex_lock(&p->rc.retired_lock);
	n = stack_ring__let_go(p, &named);
	retired__named(p->rc.retired, &named);
	pthread_mutex_unlock(&p->rc.retired_lock);
	pthread_mutex_unlock(&p->rc.stacks_lock);
	r->let_go_due = false;
	note_live(r, named.nr);
	/*
	 * Made anew at each sweep: a torch job sweeps some ten times, and
	 * between them its ids (24 MiB of room at 210,000 live stacks) would
	 * stay in our resident set for nothing, a report's peak among them.
	 */
	idmap__free(&named);
	/* Threads' stack caches and BPF's known stacks may hold the ids let go of: send again. */
	if (n)
		bpfmaps__stacks_cleared(p->skel);
	return n;
}

/* Step 3. */
static void forget_codes(struct probes *p)
{
	bpfmaps__forget_codes(p->skel);
}

/* Is a table past its mark? */
static bool due(struct probes *p)
{
	for (int k = 0; k < BPFMAPS__TABLES; k++)
		if (*fill_of(p, k) > p->rc.sweep->next[k])
			return true;
	return false;
}

/*
 * A table's next mark, from the entries the live sites hold in it: a
 * quarter of the room, or an eighth more than what is live when more than
 * an eighth of it is, so that a job whose live stacks fill the room is not
 * swept at every tick. Counted from what is live, not from what the table
 * holds when the sweep ends: under churn that is what came in while it
 * ran, and a mark set past the room from it (as it once was: an eighth
 * more than that) is never reached, and no sweep comes again. Below the
 * room always, by a sixteenth, which new stacks fill while a sweep starts.
 */
static uint64_t mark_for(uint64_t room, uint64_t live)
{
	uint64_t next = live + room / 8 > room / 4 ? live + room / 8 : room / 4;

	return next < room - room / 16 ? next : room - room / 16;
}

/*
 * Each gauge's next mark from its count when the sweep ends. The site
 * table has two: its slots not EMPTY, and those that hold a site. The
 * first does not grow when a new site takes a RETIRED slot, which it does
 * before an EMPTY one: where the sweep leaves RETIRED slots between held
 * sites (a torch import), the sites grew by that many before that mark
 * came, and with the sweep's own time the table reached the three
 * quarters where probes of MEMLEAK_SITE_PROBES slots start to find no
 * room (sites_map_full on 4 of 42 torch jobs). The second counts what a
 * new site's probe passes over, and its mark comes an eighth of the room
 * after what the sweep left.
 */
static void set_marks(struct probes *p)
{
	for (int k = 0; k < BPFMAPS__TABLES; k++) {
		p->rc.sweep->next[k] = mark_for(room_of(p, k), *fill_of(p, k));
		*mark_of(p, k) = p->rc.sweep->next[k] + 1;
	}
}


void reclaim__sweep_stats(struct probes *p, struct sweep_stats *out)
{
	struct reclaim *r = p->rc.sweep;

	memset(out, 0, sizeof(*out));
	if (!r)
		return;
	pthread_mutex_lock(&r->mu);
	out->live = r->live;
	out->live_max = r->live_max;
	out->room = bpfmaps__known_room(p->skel);
	out->stacks = r->stacks;
	out->cpu_ns = r->cpu_ns;
	pthread_mutex_unlock(&r->mu);
}

/* This thread's CPU time in ns. */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* A sweep's figures into r, under the lock reclaim__sweep_stats reads them with. */
static void tally(struct probes *p, struct reclaim *r, size_t sites, size_t stacks, uint64_t dt,
		  uint64_t cpu, uint64_t held)
{
	pthread_mutex_lock(&r->mu);
	r->cpu_ns += cpu;
	r->sweeps++;
	r->sites += sites;
	r->stacks += stacks;
	if (dt > r->longest_ns)
		r->longest_ns = dt;
	pthread_mutex_unlock(&r->mu);
	if (p->verbose) {
		size_t py, pairs, native = stack_ring__held(p, &py, &pairs);

		fprintf(stderr, "memleakbpf: reclaimed %zu sites and %zu stacks in %.1f ms (%.1f ms of CPU), "
			"%zu stacks (%llu live), %zu Python stacks, %zu pairs and %llu sites left "
			"(%llu at its start; %llu slots not empty); %zu stacks kept aside (%.1f MiB)\n",
			sites, stacks, dt / 1e6, cpu / 1e6, native, (unsigned long long)r->live, py, pairs,
			(unsigned long long)*fill_of(p, BPFMAPS_SITES_HELD), (unsigned long long)held,
			(unsigned long long)*fill_of(p, BPFMAPS_SITES),
			retired__nr_stacks(p->rc.retired), retired__bytes(p->rc.retired) / 1048576.0);
	}
}

static void sweep(struct probes *p, bool asked)
{
	struct reclaim *r = p->rc.sweep;
	uint64_t t0, c0, held = *fill_of(p, BPFMAPS_SITES_HELD);
	size_t sites, stacks;

	if (!r || !(asked || due(p)))
		return;
	t0 = clock__now_ns();
	c0 = thread_cpu_ns();
	pthread_mutex_lock(&p->rc.retired_lock);
	retired__next_sweep(p->rc.retired);
	pthread_mutex_unlock(&p->rc.retired_lock);
	pthread_mutex_lock(&p->rc.tables_lock);
	sites = retire_sites(p, r);
	pthread_mutex_unlock(&p->rc.tables_lock);
	stacks = let_go_stacks(p, r, sites);
	pthread_mutex_lock(&p->rc.retired_lock);
	retired__trim(p->rc.retired, RETIRED_MAX_BYTES);	/* no memory: it stays bigger */
	pthread_mutex_unlock(&p->rc.retired_lock);
	if (*fill_of(p, BPFMAPS_PY_CODES) > room_of(p, BPFMAPS_PY_CODES) / 2)
		forget_codes(p);
	set_marks(p);
	tally(p, r, sites, stacks, clock__now_ns() - t0, thread_cpu_ns() - c0, held);
}

/* ------------------------------------------------------------ folding */

/*
 * id into held if it is going. Every id of the reading was asked of the
 * retired store before, up to three lookups in its maps for each of a
 * torch job's 200,000 sites, 50 to 75 ms a fold, two folds a report; the
 * ids going are a few thousand, a map that stays in the cache.
 */
static int held_if_going(const struct idmap *going, uint64_t id, struct idmap *held)
{
	return idmap__get(going, id, NULL) ? idmap__put(held, id, 0) : 0;
}

#define HELD_AHEAD 8

int reclaim__held(void *ctx, const struct idmap *going, struct idmap *held)
{
	const struct reclaim_held *h = ctx;

	for (size_t i = 0; i < h->snap->nr && held->nr < going->nr; i++) {
		const struct snap_site *s = &h->snap->sites[i];

		/* The blobs a few sites on, read by then: each a cache miss, most of the walk. */
		if (i + HELD_AHEAD < h->snap->nr) {
			__builtin_prefetch(h->snap->sites[i + HELD_AHEAD].stack);
			__builtin_prefetch(h->snap->sites[i + HELD_AHEAD].pystack);
		}
		if (h->folded && h->folded[i])
			continue;
		if ((s->stack && held_if_going(going, s->stack->id, held)) ||
		    (s->pystack && held_if_going(going, s->pystack->id, held)) ||
		    (s->stack_id && held_if_going(going, s->stack_id, held)))
			return -ENOMEM;
	}
	return 0;
}

size_t reclaim__fold(struct probes *p, const struct snapshot *snap, const uint32_t *sites,
		     size_t nr, size_t min, uint64_t *keys)
{
	bool *folded = calloc(snap->nr ?: 1, sizeof(*folded));
	size_t n = 0;

	if (!folded || p->sample.mode)
		goto out;
	pthread_mutex_lock(&p->rc.stacks_lock);
	pthread_mutex_lock(&p->rc.retired_lock);
	for (size_t i = 0; i < nr; i++) {
		const struct snap_site *s = &snap->sites[sites[i]];

		if (retired__fold_site(p->rc.retired, s->stack_id, s->api, s->stats.total_bytes,
				       s->stats.total_allocs)) {
			folded[sites[i]] = true;
			keys[n++] = retired__site_key(s->stack_id, s->api);
		}
	}
	if (n < min) {	/* not worth moving the next reading's sites */
		if (n)	/* a walk of every retired site: none to unmark, none walked */
			retired__fold_cancel(p->rc.retired);
		memset(folded, 0, snap->nr * sizeof(*folded));
		n = 0;
	}
	/*
	 * And the stacks no site names any more (those a reading folded unread
	 * kept theirs). Without the stacks to keep, none is let go of. With no
	 * site gone, a stack a sweep let go of is still named by the site it
	 * retired, or by one of the reading's: only one no site ever named
	 * could go, and it waits for the next fold. The walk of every site and
	 * every kept stack cost 130 of v_stacks' 250 ms a report at 262,144
	 * stacks, none folded. Those folded unread went at the reading
	 * already when it could (snapshot.unread_let_go).
	 */
	if (n || (snap->unread_sites && !snap->unread_let_go))
		(void)retired__fold_end(p->rc.retired, reclaim__held,
					&(struct reclaim_held){ snap, folded });
	pthread_mutex_unlock(&p->rc.retired_lock);
	pthread_mutex_unlock(&p->rc.stacks_lock);
out:
	free(folded);
	return n;
}
