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
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BATCHES 4
#define REQUESTS_PER_BATCH 50
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

static __attribute__((noinline)) void serve_batch(int batch)
{
	for (int i = 0; i < REQUESTS_PER_BATCH; i++)
		handle_request(batch * REQUESTS_PER_BATCH + i);
}

int main(void)
{
	/* A static buffer: stdout's own would be one more outstanding block. */
	static char outbuf[BUFSIZ];
	const struct timespec pause = { .tv_nsec = 900 * 1000 * 1000 };

	setvbuf(stdout, outbuf, _IOLBF, sizeof(outbuf));
	printf("demo: pid %d, %d batches of %d requests\n", (int)getpid(),
	       BATCHES, REQUESTS_PER_BATCH);
	for (int b = 0; b < BATCHES; b++) {
		serve_batch(b);
		printf("demo: batch %d/%d done\n", b + 1, BATCHES);
		nanosleep(&pause, NULL);
	}
	cache_clear();
	printf("demo: leaked %d request headers of %d bytes = %d bytes\n",
	       BATCHES * REQUESTS_PER_BATCH, HEADER_SIZE,
	       BATCHES * REQUESTS_PER_BATCH * HEADER_SIZE);
	return 0;
}
