// SPDX-License-Identifier: GPL-2.0
/* The clock feed (clock.h): one thread, a word, a sleep. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include "clock.h"
#include "util/fatal.h"

struct clock_feed {
	volatile uint64_t *word;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t stop_cv;	/* signalled to stop: the sleep ends at once */
	bool stop;
};

uint64_t clock__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void feed(struct clock_feed *cf)
{
	__atomic_store_n(cf->word, clock__now_ns(), __ATOMIC_RELAXED);
}

/* The condition variable's clock is CLOCK_MONOTONIC: its deadline is absolute. */
static void *run(void *arg)
{
	struct clock_feed *cf = arg;
	struct timespec next;

	clock_gettime(CLOCK_MONOTONIC, &next);
	pthread_mutex_lock(&cf->lock);
	while (!cf->stop) {
		next.tv_nsec += CLOCK_FEED_PERIOD_MS * 1000000L;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&cf->stop_cv, &cf->lock, &next);
		feed(cf);
	}
	pthread_mutex_unlock(&cf->lock);
	return NULL;
}

struct clock_feed *clock__feed_start(volatile uint64_t *word)
{
	struct clock_feed *cf = calloc(1, sizeof(*cf));
	pthread_condattr_t attr;
	sigset_t all, old;
	int err;

	if (!cf)
		return NULL;
	cf->word = word;
	feed(cf);
	pthread_mutex_init(&cf->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&cf->stop_cv, &attr);
	pthread_condattr_destroy(&attr);
	/* Signals are the main thread's (signalfd): the feed blocks them all. */
	fatal__thread_signals(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&cf->thread, NULL, run, cf);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pthread_cond_destroy(&cf->stop_cv);
		pthread_mutex_destroy(&cf->lock);
		free(cf);
		errno = err;
		return NULL;
	}
	return cf;
}

void clock__feed_stop(struct clock_feed *cf)
{
	if (!cf)
		return;
	pthread_mutex_lock(&cf->lock);
	cf->stop = true;
	pthread_cond_signal(&cf->stop_cv);
	pthread_mutex_unlock(&cf->lock);
	pthread_join(cf->thread, NULL);
	pthread_cond_destroy(&cf->stop_cv);
	pthread_mutex_destroy(&cf->lock);
	free(cf);
}

/* Milliseconds from t_ns (bpf_ktime_get_ns()'s clock) until now. */
double clock__ms_since_ns(uint64_t t_ns)
{
	struct timespec now;
	uint64_t n;

	clock_gettime(CLOCK_MONOTONIC, &now);	/* bpf_ktime_get_ns()'s clock */
	n = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	return n > t_ns ? (double)(n - t_ns) / 1e6 : 0;
}
