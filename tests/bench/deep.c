// SPDX-License-Identifier: GPL-2.0
/*
 * deep: malloc/free pairs made DEPTH calls deep, for the cost of unwinding
 * per frame (make bench, the --unwind part).
 *
 *   deep N DEPTH    N malloc(64)/free pairs, each from DEPTH nested calls
 *
 * Prints "ns_per_pair=X pairs=N" to the file named by $BENCH_OUT (else to
 * stderr), timing the pairs only.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ESCAPE(p) asm volatile("" : : "r"(p) : "memory")

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Not a tail call: the barrier after the call keeps every frame. */
__attribute__((noinline)) static void nest(unsigned depth, uint64_t n)
{
	if (depth) {
		nest(depth - 1, n);
	} else {
		for (uint64_t i = 0; i < n; i++) {
			void *p = malloc(64);

			ESCAPE(p);
			free(p);
		}
	}
	asm volatile("" : : : "memory");
}

int main(int argc, char **argv)
{
	const char *out = getenv("BENCH_OUT");
	uint64_t n, t0, t1;
	unsigned depth;
	FILE *f;

	if (argc != 3) {
		fprintf(stderr, "usage: deep N DEPTH\n");
		return 2;
	}
	n = strtoull(argv[1], NULL, 10);
	depth = (unsigned)strtoul(argv[2], NULL, 10);
	t0 = now_ns();
	nest(depth, n);
	t1 = now_ns();
	f = out ? fopen(out, "w") : stderr;
	if (!f)
		return 1;
	fprintf(f, "ns_per_pair=%.2f pairs=%llu\n", (double)(t1 - t0) / (double)n,
		(unsigned long long)n);
	return f == stderr ? 0 : fclose(f);
}
