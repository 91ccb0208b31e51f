// SPDX-License-Identifier: GPL-2.0
/* One function at a time on a thread of its own (worker.h). */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "worker.h"

struct worker {
	int fd;			/* eventfd: the function returned */
	pthread_t thread;
	bool busy;		/* the caller's: a thread to join */
	int (*fn)(void *);
	void *arg;
	int result;		/* the thread's, read after the join */
};

struct worker *worker__new(void)
{
	struct worker *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->fd < 0) {
		free(w);
		return NULL;
	}
	return w;
}

int worker__fd(const struct worker *w)
{
	return w->fd;
}

static void *run(void *arg)
{
	struct worker *w = arg;
	uint64_t one = 1;

	w->result = w->fn(w->arg);
	/* Cannot fail: the counter is far from full, and the join does not depend on it. */
	(void)!write(w->fd, &one, sizeof(one));
	return NULL;
}

int worker__start(struct worker *w, int (*fn)(void *), void *arg)
{
	int err;

	if (w->busy)
		return -EBUSY;
	w->fn = fn;
	w->arg = arg;
	w->result = 0;
	err = pthread_create(&w->thread, NULL, run, w);
	if (err)
		return -err;
	w->busy = true;
	return 0;
}

bool worker__busy(const struct worker *w)
{
	return w->busy;
}

int worker__wait(struct worker *w)
{
	uint64_t n;

	if (!w->busy)
		return 0;
	pthread_join(w->thread, NULL);
	w->busy = false;
	(void)!read(w->fd, &n, sizeof(n));
	return w->result;
}

void worker__free(struct worker *w)
{
	if (!w)
		return;
	worker__wait(w);
	close(w->fd);
	free(w);
}
