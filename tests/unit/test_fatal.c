// SPDX-License-Identifier: GPL-2.0
/*
 * fatal.c: a death by signal says so in one line on stderr, and still ends
 * by the signal (the exit status, a core dump). Each death is a child's.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "util/fatal.h"
#include "unit.h"

/* A write to a page past the end of its file: a SIGBUS, as a BPF map's page dropped gave. */
static void bus_error(void)
{
	int fd = memfd_create("fatal-test", 0);
	char *m;

	if (fd < 0 || ftruncate(fd, 4096))
		_exit(2);
	m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		_exit(2);
	printf("addr=%p\n", (void *)(m + 4096));
	fflush(stdout);
	m[4096] = 1;
	_exit(3);	/* not reached */
}

static void *bus_thread(void *arg)
{
	bus_error();
	return NULL;
}

/* As the probes' threads start: every signal blocked but the faults (fatal__thread_signals). */
static void bus_error_in_thread(void)
{
	sigset_t set, old;
	pthread_t t;

	fatal__thread_signals(&set);
	pthread_sigmask(SIG_SETMASK, &set, &old);
	if (pthread_create(&t, NULL, bus_thread, NULL))
		_exit(2);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_join(t, NULL);
	_exit(3);
}

static void wait_for_hangup(void)
{
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}

/* Run fn in a child with fatal__setup, its stdout and stderr into out; its wait status. */
static int die_in_child(void (*fn)(void), bool hang_up, char *out, size_t len)
{
	int pfd[2], status = -1;
	ssize_t n, got = 0;
	pid_t pid;

	if (pipe(pfd))
		return -1;
	fflush(NULL);	/* what the runner printed stays the runner's */
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], STDOUT_FILENO);
		dup2(pfd[1], STDERR_FILENO);
		close(pfd[0]);
		signal(SIGBUS, SIG_DFL);	/* a sanitizer's handler is kept (fatal.c): not in this test */
		signal(SIGHUP, SIG_DFL);	/* under nohup it is ignored, and stays so (fatal.c) */
		fatal__setup();
		fn();
		_exit(4);
	}
	close(pfd[1]);
	while (got + 1 < (ssize_t)len && (n = read(pfd[0], out + got, len - 1 - got)) > 0) {
		got += n;
		out[got] = '\0';
		if (hang_up && strstr(out, "ready\n")) {
			kill(pid, SIGHUP);
			hang_up = false;
		}
	}
	out[got > 0 ? got : 0] = '\0';
	close(pfd[0]);
	waitpid(pid, &status, 0);
	return status;
}

/* The line says the signal and the address of the fault, then the signal ends the child. */
static bool said_bus_error(void (*fn)(void))
{
	char out[1024], want[128];
	void *addr = NULL;
	int status = die_in_child(fn, false, out, sizeof(out));

	ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS);
	ASSERT(strstr(out, "addr=") && sscanf(strstr(out, "addr="), "addr=%p", &addr) == 1);
	snprintf(want, sizeof(want), "memleakbpf: killed by SIGBUS (Bus error) at %p in thread ",
		 addr);
	ASSERT(strstr(out, want));
	ASSERT(strstr(out, ": the tracer ends here, without its final report (a bug in "
			   "memleakbpf: please report it)\n"));
	return true;
}

TEST(fatal_bus_error_says_so_and_dies_of_it)
{
	return said_bus_error(bus_error);
}

/* In a thread that blocks the other signals: a fault blocked would die by the default action. */
TEST(fatal_bus_error_in_a_quiet_thread_says_so_too)
{
	return said_bus_error(bus_error_in_thread);
}

TEST(fatal_signal_sent_names_its_sender)
{
	char out[1024], want[128];
	int status = die_in_child(wait_for_hangup, true, out, sizeof(out));

	ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGHUP);
	snprintf(want, sizeof(want), "memleakbpf: killed by SIGHUP (Hangup), sent by pid %d in "
		 "thread ", (int)getpid());
	ASSERT(strstr(out, want));
	ASSERT(strstr(out, "without its final report\n"));	/* not ours: no bug to report */
	return true;
}

TEST(fatal_line_fits_its_buffer)
{
	char buf[32];
	size_t n = fatal__line(buf, sizeof(buf), SIGSEGV, 1, (void *)0x40, 0, 7);

	ASSERT(n == sizeof(buf) - 1 && strlen(buf) == n);
	ASSERT(!strncmp(buf, "memleakbpf: killed by SIGSEGV (", n));
	ASSERT(fatal__line(buf, 0, SIGSEGV, 1, NULL, 0, 7) == 0);
	return true;
}
