// SPDX-License-Identifier: GPL-2.0
/*
 * v_preempt: many threads on few CPUs, each allocating at a stack of its
 * own, so that a tracer whose per-CPU scratch (bpf/stack.bpf.h) another
 * thread's program writes over while the first is preempted reports a
 * block under the wrong stack.
 *   v_preempt [THREADS [ROUNDS]]   (defaults 12 and 1500; at most 16 threads)
 * Thread t leaks ROUNDS blocks of SIZE(t) bytes from site_t<t>, called
 * through via_t<t>_a, _b, _c and DEPTH(t) frames of via_recurse below
 * thr_main: a size, a site and a depth no other thread has. Each round
 * calls the site from a different stack pointer (alloca), which misses the
 * tracer's stack cache: most rounds walk the stack.
 * via_recurse does not TR_ENTER (truth.h keeps 8 callers only): the TRUTH
 * callers of site_t<t> are via_t<t>_c, via_t<t>_b, via_t<t>_a, thr_main.
 * Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH or stdout; exit status 0.
 *
 * Truth: THREADS TRUTH lines; thread t's site SIZE(t) * ROUNDS bytes in
 * ROUNDS blocks (12 threads, 1500 rounds: 19,584,000 bytes in 18,000 blocks).
 */
#define _GNU_SOURCE
#include <alloca.h>
#include "truth.h"

#define MAX_THREADS 16
#define SIZE(t) (1000 + 16 * (t))
#define DEPTH(t) (8 + 3 * (t))
#define PADS 61		/* stack pointers a site is called from, in turn */

static pthread_barrier_t start;

#define THREAD_SITE(t)                                                            \
	SITE void site_t##t(void)                                                 \
	{                                                                         \
		void *p = malloc(SIZE(t)); TR_ALLOC(p, SIZE(t), "malloc"); ESCAPE(p); \
	}                                                                         \
	VIA void via_t##t##_c(void)                                               \
	{                                                                         \
		TR_ENTER();                                                       \
		site_t##t();                                                      \
		TR_LEAVE();                                                       \
	}                                                                         \
	VIA void via_t##t##_b(void)                                               \
	{                                                                         \
		TR_ENTER();                                                       \
		via_t##t##_c();                                                   \
		TR_LEAVE();                                                       \
	}                                                                         \
	VIA void via_t##t##_a(void)                                               \
	{                                                                         \
		TR_ENTER();                                                       \
		via_t##t##_b();                                                   \
		TR_LEAVE();                                                       \
	}
THREAD_SITE(0) THREAD_SITE(1) THREAD_SITE(2) THREAD_SITE(3)
THREAD_SITE(4) THREAD_SITE(5) THREAD_SITE(6) THREAD_SITE(7)
THREAD_SITE(8) THREAD_SITE(9) THREAD_SITE(10) THREAD_SITE(11)
THREAD_SITE(12) THREAD_SITE(13) THREAD_SITE(14) THREAD_SITE(15)

static void (*const chains[MAX_THREADS])(void) = {
	via_t0_a, via_t1_a, via_t2_a, via_t3_a, via_t4_a, via_t5_a, via_t6_a, via_t7_a,
	via_t8_a, via_t9_a, via_t10_a, via_t11_a, via_t12_a, via_t13_a, via_t14_a, via_t15_a,
};

/*
 * n frames deep, then the chain from below pad bytes of stack. Not a tail
 * call: the barrier after the call keeps every frame.
 */
VIA void via_recurse(int n, size_t pad, void (*chain)(void))
{
	if (n) {
		via_recurse(n - 1, pad, chain);
	} else {
		char *room = alloca(pad);

		ESCAPE(room);
		chain();
	}
	asm volatile("" : : : "memory");
}

static int rounds = 1500;

VIA void *thr_main(void *arg)
{
	int t = (int)(intptr_t)arg;

	TR_ENTER();
	pthread_barrier_wait(&start);
	for (int i = 0; i < rounds; i++)
		via_recurse(DEPTH(t), 16 + 16 * (size_t)((i * 7 + t) % PADS), chains[t]);
	TR_LEAVE();
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 12;
	pthread_t tid[MAX_THREADS];

	if (argc > 2)
		rounds = atoi(argv[2]);
	if (threads < 1 || threads > MAX_THREADS || rounds < 1 ||
	    (size_t)threads * rounds > TR_CAP / 2)
		tr_die("usage: v_preempt [THREADS (1-16) [ROUNDS]], THREADS * ROUNDS <= 65536");
	TR_ENTER();
	pthread_barrier_init(&start, NULL, threads);
	for (int t = 0; t < threads; t++)
		if (pthread_create(&tid[t], NULL, thr_main, (void *)(intptr_t)t))
			tr_die("pthread_create");
	for (int t = 0; t < threads; t++)
		pthread_join(tid[t], NULL);
	tr_report();
	TR_LEAVE();
	return 0;
}
