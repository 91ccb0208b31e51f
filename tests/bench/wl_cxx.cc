// SPDX-License-Identifier: GPL-2.0
/*
 * wl_cxx: the C++ workload of `make bench`, timing itself as wl does.
 *
 *   wl_cxx loop N SIZE    N new char[SIZE] / delete[] pairs, back to back
 *   wl_cxx obj N          N new / delete pairs of a 64-byte object
 *
 * Prints "ns_per_pair=X pairs=N cpu_ns_per_pair=C" to the file named by $BENCH_OUT (else to
 * stderr).
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

/* Keep the compiler from folding new/delete pairs away. */
#define ESCAPE(p) asm volatile("" : : "r"(p) : "memory")

struct obj {
	char bytes[64];
};

static uint64_t ns_of(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns()
{
	return ns_of(CLOCK_MONOTONIC);
}

__attribute__((noinline)) static void array_pairs(uint64_t n, size_t size)
{
	for (uint64_t i = 0; i < n; i++) {
		char *p = new char[size];

		ESCAPE(p);
		delete[] p;
	}
}

__attribute__((noinline)) static void object_pairs(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		obj *p = new obj;

		ESCAPE(p);
		delete p;
	}
}

/* cpu: the process's CPU time, traps and BPF programs included (wl.c's cpu_ns_per_pair). */
static void report(uint64_t ns, uint64_t cpu, uint64_t n)
{
	const char *path = getenv("BENCH_OUT");
	FILE *f = path ? fopen(path, "w") : stderr;

	if (!f)
		exit(1);
	fprintf(f, "ns_per_pair=%.1f pairs=%llu cpu_ns_per_pair=%.1f\n", (double)ns / (double)n,
		(unsigned long long)n, (double)cpu / (double)n);
	if (f != stderr)
		fclose(f);
}

int main(int argc, char **argv)
{
	uint64_t n, t0, c0 = ns_of(CLOCK_PROCESS_CPUTIME_ID);

	if (argc < 3 || (strcmp(argv[1], "loop") && strcmp(argv[1], "obj"))) {
		fprintf(stderr, "usage: wl_cxx loop N SIZE | obj N\n");
		return 2;
	}
	n = strtoull(argv[2], NULL, 10);
	t0 = now_ns();
	if (!strcmp(argv[1], "loop"))
		array_pairs(n, argc > 3 ? strtoull(argv[3], NULL, 10) : 64);
	else
		object_pairs(n);
	report(now_ns() - t0, ns_of(CLOCK_PROCESS_CPUTIME_ID) - c0, n);
	return 0;
}
