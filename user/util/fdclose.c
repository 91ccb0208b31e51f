// SPDX-License-Identifier: GPL-2.0
/* Closing fds side by side (fdclose.h). */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <unistd.h>
#include "fdclose.h"
#include "fatal.h"

static void *close_fd(void *arg)
{
	close((int)(long)arg);
	return NULL;
}

void fdclose__together(const int *fds, size_t n)
{
	pthread_t threads[n ?: 1];
	bool started[n ?: 1];
	sigset_t all, old;

	/* No signal for them: they are the caller's loop's. */
	fatal__thread_signals(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (size_t i = 0; i < n; i++)
		started[i] = !pthread_create(&threads[i], NULL, close_fd, (void *)(long)fds[i]);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	for (size_t i = 0; i < n; i++) {
		if (started[i])
			pthread_join(threads[i], NULL);
		else
			close(fds[i]);
	}
}
