// SPDX-License-Identifier: GPL-2.0
/*
 * The leaky example that `make demo` traces: a toy server that handles
 * requests in batches, about a second apart, so each interval report shows
 * what grew. Per request it
 *   - copies the request header into a buffer it forgets to free (the leak),
 *   - builds a response body and frees it (no leak),
 *   - sometimes keeps the response in a small cache that evicts its oldest
 *     entry and is emptied at exit (memory in use, but bounded: not a leak).
 * Built with frame pointers so that every stack is complete.
 *
 * `make demo` runs it bare: 4 batches of 50 requests, 100 KiB leaked, which
 * exact tracing names at once. `demo_leaky BATCHES REQUESTS` serves more, at
 * a server's rate, so that a sampled run sees the leak as in production:
 * --sample 512K takes a 512-byte header one time in 1,024, so it needs
 * megabytes leaked, not kilobytes (docs/SAMPLING.md, what sampling sees).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BATCHES 4		/* the defaults, `make demo`'s run */
#define REQUESTS_PER_BATCH 50
#define MAX_COUNT 1000000
#define HEADER_SIZE 512
#define BODY_SIZE 4096
#define CACHE_SLOTS 4
#define CACHE_EVERY 10		/* every tenth response is cached */
#define RESPONSE_SIZE 1024

static void *cache[CACHE_SLOTS];
static unsigned cache_next;
static unsigned long checksum;	/* keeps the "work" observable */

/* Hide a pointer from the optimizer: -O2 may drop a malloc/free pair. */
static inline void escape(void *p)
{
	asm volatile("" : : "r"(p) : "memory");
}

static unsigned long sum(const char *buf, size_t len)
{
	unsigned long s = 0;

	for (size_t i = 0; i < len; i++)
		s += (unsigned char)buf[i];
	return s;
}

/* The bug: the caller uses the header and never frees it. */
static __attribute__((noinline)) char *parse_header(int id)
{
	char *hdr = malloc(HEADER_SIZE);

	if (!hdr)
		return NULL;
	escape(hdr);
	snprintf(hdr, HEADER_SIZE, "GET /item/%d HTTP/1.1\r\nHost: demo\r\n\r\n", id);
	return hdr;
}

/* The correct path: allocated, used, freed. */
static __attribute__((noinline)) unsigned long build_body(const char *hdr)
{
	char *body = malloc(BODY_SIZE);
	unsigned long s;

	if (!body)
		return 0;
	escape(body);
	memset(body, 'x', BODY_SIZE);
	memcpy(body, hdr, strlen(hdr));
	s = sum(body, BODY_SIZE);
	escape(body);
	free(body);
	return s;
}

/* A bounded cache: its memory stays outstanding, but it does not grow. */
static __attribute__((noinline)) void cache_store(int id)
{
	char *resp = malloc(RESPONSE_SIZE);

	if (!resp)
		return;
	escape(resp);
	snprintf(resp, RESPONSE_SIZE, "200 OK item %d", id);
	free(cache[cache_next]);	/* evict the oldest */
	cache[cache_next] = resp;
	cache_next = (cache_next + 1) % CACHE_SLOTS;
}

static __attribute__((noinline)) void cache_clear(void)
{
	for (int i = 0; i < CACHE_SLOTS; i++) {
		free(cache[i]);
		cache[i] = NULL;
	}
}

static __attribute__((noinline)) void handle_request(int id)
{
	char *hdr = parse_header(id);

	if (!hdr)
		return;
	checksum += build_body(hdr);
	if (id % CACHE_EVERY == 0)
		cache_store(id);
	/* BUG: free(hdr) is missing. */
	escape(hdr);
}

static __attribute__((noinline)) void serve_batch(int batch, int requests)
{
	for (int i = 0; i < requests; i++)
		handle_request(batch * requests + i);
}

/* argv[i] as a count in [1, MAX_COUNT], or `dflt` when absent; -1 if bad. */
static int count_arg(int argc, char **argv, int i, int dflt)
{
	char *end;
	long v;

	if (i >= argc)
		return dflt;
	v = strtol(argv[i], &end, 10);
	if (end == argv[i] || *end || v < 1 || v > MAX_COUNT)
		return -1;
	return (int)v;
}

int main(int argc, char **argv)
{
	/* A static buffer: stdout's own would be one more outstanding block. */
	static char outbuf[BUFSIZ];
	const struct timespec pause = { .tv_nsec = 900 * 1000 * 1000 };
	int batches = count_arg(argc, argv, 1, BATCHES);
	int requests = count_arg(argc, argv, 2, REQUESTS_PER_BATCH);

	if (argc > 3 || batches < 0 || requests < 0 ||
	    (long)batches * requests > MAX_COUNT) {
		fprintf(stderr, "usage: %s [BATCHES [REQUESTS_PER_BATCH]] (each 1 to %d, "
			"%d requests in all at most)\n", argv[0], MAX_COUNT, MAX_COUNT);
		return 2;
	}
	setvbuf(stdout, outbuf, _IOLBF, sizeof(outbuf));
	printf("demo: pid %d, %d batches of %d requests\n", (int)getpid(),
	       batches, requests);
	for (int b = 0; b < batches; b++) {
		serve_batch(b, requests);
		printf("demo: batch %d/%d done\n", b + 1, batches);
		nanosleep(&pause, NULL);
	}
	cache_clear();
	printf("demo: leaked %d request headers of %d bytes = %ld bytes\n",
	       batches * requests, HEADER_SIZE, (long)batches * requests * HEADER_SIZE);
	return 0;
}
