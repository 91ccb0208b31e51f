// SPDX-License-Identifier: GPL-2.0
/*
 * v_thread_exit: the threads that leaked are gone when the report is made.
 * A joined thread and a detached one each leak and exit (the detached one
 * signals main before it returns; main then waits for it to be gone);
 * their stacks must still end cleanly in the thread start (start_thread,
 * then clone3, whose return address is undefined in CFI) with no frame the
 * unwinder could not follow.
 *   site_joined_leak    100 bytes x 3, from thr_joined
 *   site_detached_leak  200 bytes x 2, from thr_detached
 * Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH or stdout; exit status 0.
 *
 * Truth: 2 TRUTH lines; heap 700 bytes in 5 blocks.
 *
 * valgrind 3.19 (--leak-check=full --show-leak-kinds=all), once:
 *   definitely lost: 700 bytes in 5 blocks; nothing else
 *   = the sum of the TRUTH lines.
 */
#include <semaphore.h>
#include "truth.h"

static sem_t done;

SITE void site_joined_leak(void)
{
	void *p = malloc(100); TR_ALLOC(p, 100, "malloc"); ESCAPE(p);
}

SITE void site_detached_leak(void)
{
	void *p = malloc(200); TR_ALLOC(p, 200, "malloc"); ESCAPE(p);
}

VIA void *thr_joined(void *arg)
{
	TR_ENTER();
	for (int i = 0; i < 3; i++)
		site_joined_leak();
	TR_LEAVE();
	return arg;
}

VIA void *thr_detached(void *arg)
{
	TR_ENTER();
	site_detached_leak();
	site_detached_leak();
	TR_LEAVE();
	sem_post(&done);
	return arg;
}

/* Threads: in /proc/self/status (its FILE is malloc'ed and freed: not a leak). */
static int nr_threads(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[128];
	int n = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* The detached thread has posted: wait until its task is gone too. */
static void wait_threads_gone(void)
{
	for (int i = 0; i < 5000 && nr_threads() > 1; i++)
		usleep(1000);
	if (nr_threads() != 1)
		tr_die("the detached thread did not exit");
}

int main(void)
{
	pthread_attr_t attr;
	pthread_t t;

	TR_ENTER();
	sem_init(&done, 0, 0);
	if (pthread_create(&t, NULL, thr_joined, NULL) || pthread_join(t, NULL))
		tr_die("joined thread");
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, thr_detached, NULL))
		tr_die("detached thread");
	sem_wait(&done);
	wait_threads_gone();
	tr_report();
	TR_LEAVE();
	return 0;
}
