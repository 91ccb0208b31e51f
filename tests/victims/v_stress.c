// SPDX-License-Identifier: GPL-2.0
/*
 * v_stress: allocation under contention, most blocks freed or realloc'ed by
 * another thread than the one that allocated them.
 *
 *   v_stress THREADS OPS        churn, leak, write the truth, exit 0 (for -c)
 *   v_stress wait THREADS OPS   for -p: churn from the start (no end), leak
 *                               "pre" blocks, print "READY pid=N"; at a line
 *                               on stdin free 1,000 of the pre blocks from a
 *                               thread, churn OPS more, leak, write the truth,
 *                               print "LEAKED"; exit 0 at the next line or EOF
 *
 * Each of THREADS threads (>= 2) allocates OPS blocks of 16 to 2,015 bytes,
 * malloc and calloc in turn (site_churn_malloc, site_churn_calloc), and hands
 * each to the next thread through a lock-free ring (waiting for room, and
 * taking its own meanwhile). That thread reallocs one in three to a larger
 * size (site_churn_realloc) and hands it on again, and frees the others; the
 * third thread (the first one again, with 2) frees the realloc'ed blocks. A
 * realloc'ed block that finds the ring full is freed at once by the thread
 * that holds it. The churn sites end with THREADS blocks each
 * (the last malloc and calloc of every thread, and one realloc per thread
 * after the rings are empty), allocated from the very call instructions that
 * churned, so their stacks' totals count every churn allocation.
 *
 * What remains per thread t (truth.h registry, phase "post" in wait mode):
 *   site_leak_malloc    100 * (t + 1) mallocs of 48 bytes
 *   site_leak_calloc    10 * (t + 1) callocs of 20 * 8 bytes
 *   site_leak_realloc   5 blocks grown from 10 to 1,000 bytes by realloc
 *   site_leak_rehomed   20 blocks malloc'ed by the previous thread
 *                       (site_leak_given, which keeps nothing) and realloc'ed
 *                       to 128 bytes by this one
 * Wait mode adds, before READY, from main: site_pre_leak 100 blocks of 111
 * bytes (phase "pre", kept) and site_pre_freed 1,000 of 222 bytes, freed by
 * thread 0 after the trigger: frees of blocks a tracer attached after READY
 * never saw. Notes (# lines): per churn site "# total SITE API allocs=N
 * bytes=B", every allocation made there (wait mode: since the trigger only,
 * so not comparable); "# pre_freed: 1000"; "# in_flight_max: N", the most
 * blocks that can be held between threads when a tracer attaches.
 *
 * Truth (THREADS 2): 7 TRUTH lines; heap 34,320 bytes in 380 blocks at the
 * leak sites, plus the 6 churn blocks, whose sizes depend on OPS (43,336
 * bytes in 386 blocks in all with OPS 200,000); wait mode adds the pre phase
 * (site_pre_leak, 11,100 bytes in 100 blocks).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include "truth.h"

#define MAX_THREADS 16
#define RING 256		/* per producing thread, a power of two */
#define PRE_LEAK 100
#define PRE_FREED 1000
#define GIVEN 20

enum kind { K_CHURN, K_REALLOCED, K_GIVEN };

struct item {
	void *p;
	size_t size;
	enum kind kind;
};

/* One producer (its thread), one consumer (the next thread). */
struct ring {
	_Atomic unsigned head __attribute__((aligned(64)));
	_Atomic unsigned tail __attribute__((aligned(64)));
	struct item items[RING];
};

struct counts {
	uint64_t allocs, bytes;
};

struct thread {
	pthread_t id;
	int t;
	struct counts malloc_n, calloc_n, realloc_n;
	unsigned given_left;	/* K_GIVEN blocks still to hand over */
} __attribute__((aligned(64)));

static struct ring rings[MAX_THREADS];
static struct thread threads[MAX_THREADS];
static int nthreads;
static unsigned long ops;
static int waiting;			/* wait mode */
static _Atomic int go;			/* wait mode: the trigger came */
static pthread_barrier_t barrier;
static _Atomic int producing;		/* threads still handing blocks over */
static void *pre_freed[PRE_FREED];

static int push(struct ring *r, struct item it)
{
	unsigned t = atomic_load_explicit(&r->tail, memory_order_relaxed);

	if (t - atomic_load_explicit(&r->head, memory_order_acquire) == RING)
		return 0;
	r->items[t % RING] = it;
	atomic_store_explicit(&r->tail, t + 1, memory_order_release);
	return 1;
}

static int pop(struct ring *r, struct item *it)
{
	unsigned h = atomic_load_explicit(&r->head, memory_order_relaxed);

	if (h == atomic_load_explicit(&r->tail, memory_order_acquire))
		return 0;
	*it = r->items[h % RING];
	atomic_store_explicit(&r->head, h + 1, memory_order_release);
	return 1;
}

static void count(struct counts *c, size_t size)
{
	c->allocs++;
	c->bytes += size;
}

SITE void *site_churn_malloc(size_t n, int keep)
{
	void *p = malloc(n); if (keep) TR_ALLOC(p, n, "malloc"); ESCAPE(p);
	return p;
}

SITE void *site_churn_calloc(size_t n, int keep)
{
	void *p = calloc(n, 1); if (keep) TR_ALLOC(p, n, "calloc"); ESCAPE(p);
	return p;
}

SITE void *site_churn_realloc(void *old, size_t n, int keep)
{
	void *p = realloc(old, n); if (keep) TR_ALLOC(p, n, "realloc"); ESCAPE(p);
	return p;
}

SITE void *site_leak_given(void)
{
	void *p = malloc(64); ESCAPE(p);
	return p;
}

SITE void site_leak_rehomed(void *old)
{
	void *p = realloc(old, 128); TR_ALLOC(p, 128, "realloc"); ESCAPE(p);
}

SITE void site_leak_malloc(void)
{
	void *p = malloc(48); TR_ALLOC(p, 48, "malloc"); ESCAPE(p);
}

SITE void site_leak_calloc(void)
{
	void *p = calloc(20, 8); TR_ALLOC(p, 160, "calloc"); ESCAPE(p);
}

SITE void *site_leak_seed(void)
{
	void *p = malloc(10); ESCAPE(p);
	return p;
}

SITE void site_leak_realloc(void *old)
{
	void *p = realloc(old, 1000); TR_ALLOC(p, 1000, "realloc"); ESCAPE(p);
}

SITE void site_pre_leak(void)
{
	void *p = malloc(111); TR_ALLOC(p, 111, "malloc"); ESCAPE(p);
}

SITE void *site_pre_freed(void)
{
	void *p = malloc(222); TR_ALLOC(p, 222, "malloc"); ESCAPE(p);
	return p;
}

enum take { TAKE_FREE, TAKE_FORWARD, TAKE_KEEP };

/*
 * A block from the previous thread: free it, or realloc it and pass it on
 * (or keep it). One realloc call instruction for both, or the kept block
 * would not be in the churn's stack: so the caller decides, and nothing
 * before the call tells gcc which it is.
 */
VIA void via_take(struct thread *me, struct item it, enum take how)
{
	TR_ENTER();
	if (it.kind == K_GIVEN) {
		site_leak_rehomed(it.p);
	} else if (it.kind == K_CHURN && how != TAKE_FREE) {
		it.size += 512;
		it.p = site_churn_realloc(it.p, it.size, how == TAKE_KEEP);
		count(&me->realloc_n, it.size);
		it.kind = K_REALLOCED;
		if (how == TAKE_FORWARD && !push(&rings[me->t], it))
			free(it.p);
	} else {
		free(it.p);
	}
	TR_LEAVE();
}

/*
 * Everything the previous thread handed us. keep_one: then realloc and keep
 * one block of our own, through the same call instructions as the churn, so
 * that it lands in the churn's stack.
 */
VIA void via_take_all(struct thread *me, int forward, int keep_one)
{
	struct ring *in = &rings[(me->t + nthreads - 1) % nthreads];
	struct item it;
	int have;

	TR_ENTER();
	while ((have = pop(in, &it)) || keep_one) {
		if (!have) {
			it = (struct item){ malloc(64), 64, K_CHURN };
			keep_one = 0;
		}
		via_take(me, it, !have ? TAKE_KEEP :
			 forward && (uintptr_t)it.p % 3 == 0 ? TAKE_FORWARD : TAKE_FREE);
	}
	TR_LEAVE();
}

/*
 * Blocks that must reach the next thread: wait for room, taking ours
 * meanwhile (every thread that waits also empties its input: no deadlock).
 */
static void push_wait(struct thread *me, struct item it)
{
	while (!push(&rings[me->t], it)) {
		via_take_all(me, 0, 0);
		sched_yield();
	}
}

VIA void via_churn_one(struct thread *me, unsigned long i, int keep)
{
	struct item it = { .size = 16 + (i * 37 + (unsigned long)me->t * 11) % 2000 };

	TR_ENTER();
	if (i % 2) {
		it.p = site_churn_calloc(it.size, keep);
		count(&me->calloc_n, it.size);
	} else {
		it.p = site_churn_malloc(it.size, keep);
		count(&me->malloc_n, it.size);
	}
	if (!keep)
		push_wait(me, it);
	TR_LEAVE();
}

VIA void via_leak(struct thread *me)
{
	TR_ENTER();
	for (int i = 0; i < 100 * (me->t + 1); i++)
		site_leak_malloc();
	for (int i = 0; i < 10 * (me->t + 1); i++)
		site_leak_calloc();
	for (int i = 0; i < 5; i++)
		site_leak_realloc(site_leak_seed());
	TR_LEAVE();
}

/* Wait mode, before the trigger: churn at a pace that leaves the tracer a CPU. */
static void churn_until_go(struct thread *me)
{
	for (unsigned long i = 0; !atomic_load(&go); i++) {
		via_churn_one(me, i, 0);
		via_take_all(me, 1, 0);
		if (i % 64 == 63)
			usleep(200);
	}
	/* Counted from the trigger on: those calls were made from other stacks. */
	me->malloc_n = me->calloc_n = me->realloc_n = (struct counts){ 0, 0 };
}

static void *thr_main(void *arg)
{
	struct thread *me = arg;
	unsigned long every = ops / GIVEN ? ops / GIVEN : 1;

	TR_ENTER();
	if (waiting) {
		churn_until_go(me);
		/* Nobody takes from the rings through churn_until_go any more. */
		pthread_barrier_wait(&barrier);
	}
	if (waiting && me->t == 0)
		for (int i = 0; i < PRE_FREED; i++) {
			tr_free(pre_freed[i]);
			free(pre_freed[i]);
		}
	for (unsigned long i = 0; i < ops; i++) {
		via_churn_one(me, i, i + 2 >= ops);
		if (me->given_left && i % every == 0) {
			push_wait(me, (struct item){ site_leak_given(), 64, K_GIVEN });
			me->given_left--;
		}
		via_take_all(me, 1, i + 1 == ops);
	}
	while (me->given_left--)
		push_wait(me, (struct item){ site_leak_given(), 64, K_GIVEN });
	/* Keep taking until nobody hands anything over any more. */
	atomic_fetch_sub(&producing, 1);
	while (atomic_load(&producing)) {
		via_take_all(me, 0, 0);
		sched_yield();
	}
	via_take_all(me, 0, 0);
	pthread_barrier_wait(&barrier);	/* every ring is empty */
	via_leak(me);
	TR_LEAVE();
	return NULL;
}

static int wait_line(void)
{
	char c;
	ssize_t n;
	int got = 0;

	for (;;) {
		n = read(0, &c, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return got;
		got = 1;
		if (c == '\n')
			return 1;
	}
}

static void note_total(const char *site, const char *api, const struct counts *(*pick)(int))
{
	struct counts sum = { 0, 0 };
	char buf[128];

	for (int t = 0; t < nthreads; t++) {
		sum.allocs += pick(t)->allocs;
		sum.bytes += pick(t)->bytes;
	}
	snprintf(buf, sizeof(buf), "%s %s allocs=%llu bytes=%llu", site, api,
		 (unsigned long long)sum.allocs, (unsigned long long)sum.bytes);
	tr_note("total", buf);
}

static const struct counts *pick_malloc(int t) { return &threads[t].malloc_n; }
static const struct counts *pick_calloc(int t) { return &threads[t].calloc_n; }
static const struct counts *pick_realloc(int t) { return &threads[t].realloc_n; }

static void usage(void)
{
	tr_say(2, "usage: v_stress [wait] THREADS OPS\n");
	_exit(2);
}

int main(int argc, char **argv)
{
	char line[64];
	int a = 1, n;

	TR_ENTER();
	if (argc > 1 && !strcmp(argv[1], "wait"))
		waiting = a++;
	if (argc != a + 2)
		usage();
	nthreads = atoi(argv[a]);
	ops = strtoul(argv[a + 1], NULL, 10);
	if (nthreads < 2 || nthreads > MAX_THREADS || ops < 2)
		usage();
	pthread_barrier_init(&barrier, NULL, nthreads);
	atomic_store(&producing, nthreads);
	if (waiting) {
		tr_set_phase("pre");
		for (int i = 0; i < PRE_LEAK; i++)
			site_pre_leak();
		for (int i = 0; i < PRE_FREED; i++)
			pre_freed[i] = site_pre_freed();
	}
	for (int t = 0; t < nthreads; t++) {
		threads[t].t = t;
		threads[t].given_left = GIVEN;
		if (pthread_create(&threads[t].id, NULL, thr_main, &threads[t]))
			tr_die("pthread_create");
	}
	if (waiting) {
		n = snprintf(line, sizeof(line), "READY pid=%d\n", (int)getpid());
		tr_write_all(1, line, n);
		if (!wait_line())
			_exit(3);
		tr_set_phase("post");
		atomic_store(&go, 1);
	}
	for (int t = 0; t < nthreads; t++)
		pthread_join(threads[t].id, NULL);
	note_total("site_churn_malloc", "malloc", pick_malloc);
	note_total("site_churn_calloc", "calloc", pick_calloc);
	note_total("site_churn_realloc", "realloc", pick_realloc);
	snprintf(line, sizeof(line), "%d", PRE_FREED);
	tr_note("pre_freed", waiting ? line : "0");
	/* Each ring full, and each thread holding one block, at the attach. */
	snprintf(line, sizeof(line), "%d", nthreads * (RING + 1));
	tr_note("in_flight_max", line);
	tr_report();
	if (waiting) {
		tr_say(1, "LEAKED\n");
		wait_line();
	}
	TR_LEAVE();
	return 0;
}
