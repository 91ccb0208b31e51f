// SPDX-License-Identifier: GPL-2.0
/*
 * v_frag: glibc fragmentation, no leak. NTHREADS threads (each in an arena
 * of its own) allocate PER_THREAD bytes in BLOCK-byte blocks at site_block,
 * 1 GiB in all, then free 9 blocks of every 10 (all but i % 10 == 0). What
 * is freed lies between the kept blocks, so glibc cannot give it back by
 * itself: RSS stays near 1 GiB for about 100 MiB of live blocks.
 *   v_frag         then prints "FRAGMENTED pid=<pid>" and waits (at most
 *                  WAIT_S seconds; then it exits 3) for SIGUSR2, which makes
 *                  it call malloc_trim(0) and print "TRIMMED"; it goes on for
 *                  HOLD_MS more, with the blocks still live, and exits 0.
 * The threads keep running (blocked) until the end, their arenas attached.
 * Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH or stdout, and the
 * notes "# live_bytes", "# allocated_bytes", "# trimmed: yes".
 *
 * Truth: 6,556 blocks of 16 KiB at site_block (1,639 of 16,384 per thread):
 * 107,413,504 bytes, about a tenth of the 1 GiB allocated.
 *
 * valgrind 3.19 (--leak-check=full): not run: it would take minutes on 1 GiB,
 * and the blocks are only referenced through the victim's masked registry, so
 * it would call them all definitely lost (the same sum as the TRUTH line).
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <signal.h>
#include <time.h>
#include "truth.h"

#define NTHREADS 4
#define BLOCK (16 * 1024)
#define PER_THREAD (256ull << 20)
#define NBLOCKS (PER_THREAD / BLOCK)
#define KEEP_EVERY 10
#define WAIT_S 30
#define HOLD_MS 1500

static void *blocks[NTHREADS][NBLOCKS];
static pthread_barrier_t done;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t finish = PTHREAD_COND_INITIALIZER;
static int finished;

SITE void *site_block(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
	return p;
}

static void *thr_main(void *arg)
{
	void **mine = blocks[(long)arg];

	TR_ENTER();
	for (size_t i = 0; i < NBLOCKS; i++) {
		mine[i] = site_block(BLOCK);
		memset(mine[i], 1, BLOCK);	/* resident, as real data would be */
	}
	/* Interleaved: every kept block pins the freed ones around it in place. */
	for (size_t i = 0; i < NBLOCKS; i++) {
		if (i % KEEP_EVERY == 0)
			continue;
		tr_free(mine[i]);
		free(mine[i]);
	}
	TR_LEAVE();
	pthread_barrier_wait(&done);
	pthread_mutex_lock(&lock);
	while (!finished)
		pthread_cond_wait(&finish, &lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void say(const char *what)
{
	char line[64];
	int n = snprintf(line, sizeof(line), "%s pid=%d\n", what, (int)getpid());

	tr_write_all(1, line, n);
}

int main(void)
{
	struct timespec wait = { WAIT_S, 0 }, hold = { HOLD_MS / 1000, HOLD_MS % 1000 * 1000000L };
	pthread_t t[NTHREADS];
	sigset_t usr2;
	long k;

	TR_ENTER();
	/* Blocked in every thread, so that sigtimedwait is the one to take it. */
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &usr2, NULL);
	pthread_barrier_init(&done, NULL, NTHREADS + 1);
	for (k = 0; k < NTHREADS; k++)
		if (pthread_create(&t[k], NULL, thr_main, (void *)k))
			tr_die("pthread_create");
	pthread_barrier_wait(&done);
	say("FRAGMENTED");
	if (sigtimedwait(&usr2, NULL, &wait) != SIGUSR2)
		_exit(3);
	malloc_trim(0);
	say("TRIMMED");
	while (nanosleep(&hold, &hold) && errno == EINTR)
		;
	pthread_mutex_lock(&lock);
	finished = 1;
	pthread_cond_broadcast(&finish);
	pthread_mutex_unlock(&lock);
	for (k = 0; k < NTHREADS; k++)
		pthread_join(t[k], NULL);
	tr_note_u64("allocated_bytes", NTHREADS * PER_THREAD);
	tr_note_u64("live_bytes", (unsigned long long)NTHREADS * ((NBLOCKS + KEEP_EVERY - 1) / KEEP_EVERY) * BLOCK);
	tr_note("trimmed", "yes");
	tr_report();
	TR_LEAVE();
	return 0;
}
