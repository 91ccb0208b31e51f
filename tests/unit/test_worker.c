// SPDX-License-Identifier: GPL-2.0
/* util/worker.c: one function on a thread of its own, its end on an eventfd. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include "util/worker.h"
#include "unit.h"

/* Holds the worker's function until the test lets it return. */
struct gate {
	pthread_mutex_t lock;
	bool open;
	int result;
};

static int wait_gate(void *arg)
{
	struct gate *g = arg;
	bool open = false;

	while (!open) {
		pthread_mutex_lock(&g->lock);
		open = g->open;
		pthread_mutex_unlock(&g->lock);
	}
	return g->result;
}

static bool readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, timeout_ms) == 1;
}

TEST(worker_runs_one_function_and_says_when_it_returned)
{
	struct gate g = { PTHREAD_MUTEX_INITIALIZER, false, -7 };
	struct worker *w = worker__new();

	ASSERT(w);
	ASSERT(!worker__busy(w));
	ASSERT_EQ_U64(worker__wait(w), 0);	/* nothing ran */
	ASSERT_EQ_U64(worker__start(w, wait_gate, &g), 0);
	ASSERT(worker__busy(w));
	ASSERT_EQ_U64(worker__start(w, wait_gate, &g), (uint64_t)-EBUSY);
	ASSERT(!readable(worker__fd(w), 20));	/* still running */
	pthread_mutex_lock(&g.lock);
	g.open = true;
	pthread_mutex_unlock(&g.lock);
	ASSERT(readable(worker__fd(w), 5000));
	ASSERT_EQ_U64(worker__wait(w), (uint64_t)-7);
	ASSERT(!worker__busy(w));
	ASSERT(!readable(worker__fd(w), 0));	/* the wait took the announcement */
	/* And again: one at a time, as often as asked. */
	g.result = 3;
	ASSERT_EQ_U64(worker__start(w, wait_gate, &g), 0);
	ASSERT_EQ_U64(worker__wait(w), 3);
	worker__free(w);
	return true;
}

TEST(worker_free_waits_for_the_function)
{
	struct gate g = { PTHREAD_MUTEX_INITIALIZER, true, 0 };
	struct worker *w = worker__new();

	ASSERT(w);
	ASSERT_EQ_U64(worker__start(w, wait_gate, &g), 0);
	worker__free(w);	/* joins: no thread outlives it (ASan would see one) */
	worker__free(NULL);
	return true;
}
