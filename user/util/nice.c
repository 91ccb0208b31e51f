// SPDX-License-Identifier: GPL-2.0
/* A thread's nice value (nice.h). */
#include <errno.h>
#include <unistd.h>
#include <sys/resource.h>
#include "nice.h"

int nice__raise(int nice)
{
	int was;

	/* -1 is a nice value too: errno tells a failure apart. */
	errno = 0;
	was = getpriority(PRIO_PROCESS, (id_t)gettid());
	if (errno)
		was = 0;
	setpriority(PRIO_PROCESS, (id_t)gettid(), nice);
	return was;
}

void nice__restore(int was)
{
	setpriority(PRIO_PROCESS, (id_t)gettid(), was);
}
