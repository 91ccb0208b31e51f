// SPDX-License-Identifier: GPL-2.0
/*
 * stamp.so: LD_PRELOADed into the whole-program workloads of `make bench`
 * (Python, jq) to time the program from its start to its exit, without the
 * tracer's own start and report. When /proc/self/exe is $BENCH_STAMP_EXE,
 * it writes "ns=<constructor to destructor>" to $BENCH_STAMP; other processes
 * that inherit it (a shell, heaptrack's helpers) write nothing.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

__attribute__((destructor)) static void stamp_end(void)
{
	uint64_t dt = now_ns() - start_ns;
	char line[64];
	int fd, len;

	if (!active)
		return;
	fd = open(getenv("BENCH_STAMP"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	len = snprintf(line, sizeof(line), "ns=%llu\n", (unsigned long long)dt);
	if (write(fd, line, (size_t)len) != len)
		len = -1;
	close(fd);
}
