// SPDX-License-Identifier: GPL-2.0
/*
 * stamp.so: LD_PRELOADed into the whole-program workloads of `make bench`
 * (Python, jq) to time the program from its start to its exit, without the
 * tracer's own start and report. When /proc/self/exe is $BENCH_STAMP_EXE,
 * it writes "ns=<constructor to destructor>" to $BENCH_STAMP, and the
 * process's own CPU time by then, "user_ns=<N> sys_ns=<N>" (uprobe traps and
 * their BPF programs run in the program's context, as system time), and how
 * long its main thread waited runnable for a core, "wait_ns=<N>"
 * (/proc/self/schedstat): the rest of ns it was stopped (for a tracer) or
 * blocked. Other processes that inherit it (a shell, heaptrack's helpers)
 * write nothing.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static uint64_t start_ns;
static int active;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((constructor)) static void stamp_start(void)
{
	const char *want = getenv("BENCH_STAMP_EXE");
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (!want || n <= 0)
		return;
	exe[n] = '\0';
	active = !strcmp(exe, want) && getenv("BENCH_STAMP");
	start_ns = now_ns();
}

static unsigned long long tv_ns(const struct timeval *tv)
{
	return (unsigned long long)tv->tv_sec * 1000000000ull + (unsigned long long)tv->tv_usec * 1000;
}

/* Time the main thread spent runnable on a run queue: schedstat's second field. */
static unsigned long long wait_ns(void)
{
	unsigned long long run = 0, wait = 0;
	FILE *f = fopen("/proc/self/schedstat", "re");

	if (f) {
		if (fscanf(f, "%llu %llu", &run, &wait) != 2)
			wait = 0;
		fclose(f);
	}
	return wait;
}

__attribute__((destructor)) static void stamp_end(void)
{
	uint64_t dt = now_ns() - start_ns;
	struct rusage ru = { 0 };
	char line[160];
	int fd, len;

	if (!active)
		return;
	getrusage(RUSAGE_SELF, &ru);
	fd = open(getenv("BENCH_STAMP"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	len = snprintf(line, sizeof(line), "ns=%llu user_ns=%llu sys_ns=%llu wait_ns=%llu\n",
		       (unsigned long long)dt, tv_ns(&ru.ru_utime), tv_ns(&ru.ru_stime), wait_ns());
	if (write(fd, line, (size_t)len) != len)
		len = -1;
	close(fd);
}
