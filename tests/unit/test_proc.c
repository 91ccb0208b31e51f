// SPDX-License-Identifier: GPL-2.0
/*
 * util/proc.c: a process whose main thread has ended (pthread_exit in main)
 * lives on in its other threads, its leader a zombie: /proc/PID/stat says
 * 'Z' and its maps are empty, its exe unreadable. Its files are read through
 * a live thread's /proc/PID/task/TID instead, so that the tracer neither
 * takes it for gone nor sees it without a library.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "util/proc.h"
#include "unit.h"

static int hold[2];

static void *wait_for_eof(void *arg)
{
	char c;

	while (read(hold[0], &c, 1) > 0)
		;
	return arg;
}

/* The child: a thread that waits on the pipe, and main ended. */
static void leave_main(void)
{
	pthread_t t;

	close(hold[1]);
	if (pthread_create(&t, NULL, wait_for_eof, NULL))
		_exit(1);
	pthread_exit(NULL);
}

/* The leader's own state letter, as /proc/PID/stat gives it. */
static char leader_letter(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p ? p[2] : 0;
}

TEST(proc_reads_a_process_whose_main_thread_ended_through_a_live_thread)
{
	char path[128], exe[256], *maps = NULL;
	pid_t pid;
	int status, waited = 0;
	char state = 0;
	bool ok;

	ASSERT(pipe(hold) == 0);
	pid = fork();
	ASSERT(pid >= 0);
	if (!pid)
		leave_main();
	close(hold[0]);
	while (leader_letter(pid) != 'Z' && waited++ < 5000)
		usleep(1000);
	ok = leader_letter(pid) == 'Z';
	if (ok) {
		proc__path(pid, "maps", path, sizeof(path));
		state = proc__state(pid);	/* the thread's: 'S' at its read, 'R' on its way there */
		ok = strstr(path, "/task/") && state && state != 'Z' && state != 'X' &&
		     !proc__read(pid, "maps", &maps) && strstr(maps, "libc") &&
		     proc__readlink(pid, "exe", exe, sizeof(exe)) > 0;
	}
	free(maps);
	close(hold[1]);
	waitpid(pid, &status, 0);
	ASSERT(ok);
	/* Gone: its own path again, and no state. */
	proc__path(pid, "maps", path, sizeof(path));
	ASSERT(!strstr(path, "/task/") && proc__state(pid) == 0);
	return true;
}
