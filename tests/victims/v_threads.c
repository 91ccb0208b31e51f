// SPDX-License-Identifier: GPL-2.0
/*
 * v_threads: NTHREADS threads allocate and free concurrently, and most blocks
 * are freed (or realloc'ed) by another thread than the one that allocated
 * them: thread t hands every block to thread t+1 through a locked queue;
 * thread t+1 reallocs half of those it gets (passing them on once more) and
 * frees the rest. After joining, main frees whatever is still queued. So the
 * busy sites (site_thr_*) end with nothing outstanding, and what remains is:
 *   site_leak_t<t>  thread t's own site: LEAK_N mallocs of 64 * (t + 1) bytes
 *   site_thr_leak   shared by all threads: thread t leaks t + 1 callocs of
 *                   10 * 100 bytes
 * all called from thr_main (frames[1]).
 * Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH or stdout; exit status 0.
 *
 * Truth: 5 TRUTH lines; heap 42,000 bytes in 210 blocks (4 threads, LEAK_N
 * 50: 64*50*(1+2+3+4) = 32,000 in 200, plus 1,000 * (1+2+3+4) = 10,000 in 10).
 *
 * valgrind 3.19 (--leak-check=full --show-leak-kinds=all), once:
 *   definitely lost: 42,000 bytes in 210 blocks
 *   indirectly lost: 0, possibly lost: 0
 *   still reachable: 0 bytes in 0 blocks
 *   = the sum of the TRUTH lines. (glibc keeps the exited threads' stacks and
 *   their TLS in its own cache; valgrind does not count those as leaks.)
 */
#define _GNU_SOURCE
#include <stdint.h>
#include "truth.h"

#define NTHREADS 4
#define ITER 10000
#define LEAK_N 50
#define QCAP (4 * ITER)		/* more than one thread can ever push into one queue */

struct item {
	void *p;
	size_t size;
	int hops;
};

struct queue {
	pthread_mutex_t lock;
	unsigned head, tail;	/* tail - head items, indices modulo QCAP */
	struct item items[QCAP];
};

static struct queue queues[NTHREADS];
static pthread_barrier_t start;

static void q_push(struct queue *q, struct item it)
{
	pthread_mutex_lock(&q->lock);
	if (q->tail - q->head == QCAP)
		tr_die("queue full");
	q->items[q->tail++ % QCAP] = it;
	pthread_mutex_unlock(&q->lock);
}

static int q_pop(struct queue *q, struct item *it)
{
	int ok = 0;

	pthread_mutex_lock(&q->lock);
	if (q->tail != q->head) {
		*it = q->items[q->head++ % QCAP];
		ok = 1;
	}
	pthread_mutex_unlock(&q->lock);
	return ok;
}

SITE void *site_thr_malloc(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
	return p;
}

SITE void *site_thr_calloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb, size); TR_ALLOC(p, nmemb * size, "calloc"); ESCAPE(p);
	return p;
}

SITE void *site_thr_realloc_new(size_t n)
{
	void *z = NULL;

	OPAQUE(z);
	void *p = realloc(z, n); TR_ALLOC(p, n, "realloc"); ESCAPE(p);
	return p;
}

/* Reallocs a block another thread allocated (tr_take: see truth.h). */
SITE void *site_thr_realloc(void *old, size_t n)
{
	struct tr_block taken = tr_take(old);
	void *p = realloc(old, n); ESCAPE(p); TR_MOVED(&taken, p, n, "realloc");
	return p;
}

SITE void site_thr_leak(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb, size); TR_ALLOC(p, nmemb * size, "calloc"); ESCAPE(p);
}

#define LEAK_SITE(t)                                                              \
	SITE void site_leak_t##t(size_t n)                                        \
	{                                                                         \
		void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);         \
	}
LEAK_SITE(0)
LEAK_SITE(1)
LEAK_SITE(2)
LEAK_SITE(3)

static void (*const leak_sites[NTHREADS])(size_t) = {
	site_leak_t0, site_leak_t1, site_leak_t2, site_leak_t3,
};

static void release(struct item it)
{
	tr_free(it.p);
	free(it.p);
}

VIA void *thr_main(void *arg)
{
	int t = (int)(intptr_t)arg, i, k;
	struct queue *mine = &queues[t], *next = &queues[(t + 1) % NTHREADS];
	struct item it;
	size_t size;
	void *p;

	TR_ENTER();
	pthread_barrier_wait(&start);
	for (i = 0; i < ITER; i++) {
		size = 16 + (size_t)((i * 7 + t * 13) % 480);
		switch (i % 3) {
		case 0:
			p = site_thr_malloc(size);
			break;
		case 1:
			p = site_thr_calloc(size / 8 + 1, 8);
			size = (size / 8 + 1) * 8;
			break;
		default:
			p = site_thr_realloc_new(size);
			break;
		}
		if (!p)
			tr_die("allocation failed");
		q_push(next, (struct item){ p, size, 0 });

		for (k = 0; k < 2 && q_pop(mine, &it); k++) {
			if (it.hops == 0 && (i + k) % 2 == 0) {
				p = site_thr_realloc(it.p, it.size + 64);
				if (!p) {
					release(it);
					continue;
				}
				q_push(next, (struct item){ p, it.size + 64, 1 });
			} else {
				release(it);
			}
		}
	}
	for (i = 0; i < LEAK_N; i++)
		leak_sites[t](64 * (size_t)(t + 1));
	for (i = 0; i <= t; i++)
		site_thr_leak(10, 100);
	TR_LEAVE();
	return NULL;
}

int main(void)
{
	pthread_t th[NTHREADS];
	struct item it;
	int t;

	TR_ENTER();
	for (t = 0; t < NTHREADS; t++)
		pthread_mutex_init(&queues[t].lock, NULL);
	pthread_barrier_init(&start, NULL, NTHREADS);
	for (t = 0; t < NTHREADS; t++)
		if (pthread_create(&th[t], NULL, thr_main, (void *)(intptr_t)t))
			tr_die("pthread_create");
	for (t = 0; t < NTHREADS; t++)
		pthread_join(th[t], NULL);
	for (t = 0; t < NTHREADS; t++)
		while (q_pop(&queues[t], &it))
			release(it);
	pthread_barrier_destroy(&start);

	tr_report();
	TR_LEAVE();
	return 0;
}
