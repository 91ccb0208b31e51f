// SPDX-License-Identifier: GPL-2.0
/*
 * v_many: N blocks outstanding at once, for the capacity tests.
 *
 *   v_many N [THREADS]
 *
 * THREADS threads (default 2) malloc N blocks of 16 bytes between them from
 * one call instruction (site_many, called from thr_many), keep every one,
 * write the truth and exit 0 without freeing anything. The truth.h registry
 * holds far fewer blocks, so the one TRUTH line is counted here:
 *   TRUTH site=site_many api=malloc bytes=16*N allocs=N
 * plus "# blocks: N".
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include "truth.h"

#define MAX_THREADS 16
#define SIZE 16

struct part {
	pthread_t id;
	void **slots;
	unsigned long n;
};

static struct part parts[MAX_THREADS];

SITE void *site_many(void)
{
	void *p = malloc(SIZE); ESCAPE(p);
	return p;
}

static void *thr_many(void *arg)
{
	struct part *me = arg;

	TR_ENTER();
	for (unsigned long i = 0; i < me->n; i++) {
		me->slots[i] = site_many();
		if (!me->slots[i])
			tr_die("malloc failed");
	}
	TR_LEAVE();
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 0, done = 0;
	int threads = argc > 2 ? atoi(argv[2]) : 2;
	void **slots;

	if (!n || threads < 1 || threads > MAX_THREADS) {
		tr_say(2, "usage: v_many N [THREADS]\n");
		return 2;
	}
	/* Not malloc: the bookkeeping must not be one of the N. */
	slots = mmap(NULL, n * sizeof(*slots), PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (slots == MAP_FAILED)
		tr_die("mmap");
	for (int t = 0; t < threads; t++) {
		parts[t].slots = slots + done;
		parts[t].n = n / threads + (t < (int)(n % threads));
		done += parts[t].n;
		if (pthread_create(&parts[t].id, NULL, thr_many, &parts[t]))
			tr_die("pthread_create");
	}
	for (int t = 0; t < threads; t++)
		pthread_join(parts[t].id, NULL);
	/* The blocks stay allocated; only the list of them goes (a traced mmap). */
	munmap(slots, n * sizeof(*slots));
	tr_report_counted("site_many", "thr_many", n, SIZE);
	return 0;
}
