// SPDX-License-Identifier: GPL-2.0
/* -t/--trace: the records of bpf/trace.bpf.h, printed as they come (trace_ring.h). */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "clock.h"
#include "model/report.h"
#include "probes.h"
#include "probes_internal.h"
#include "trace_ring.h"
#include "util/fatal.h"

/*
 * BPF wakes the reader only once a quarter of the ring waits (a wake-up
 * per record would cost the target an interrupt each); the reader looks
 * this often by itself, so a quiet target's lines come within this.
 */
#define TRACE_POLL_MS 20

struct trace_ring {
	struct ring_buffer *rb;
	pthread_t thread;
	volatile bool stop;
	uint64_t t0_ns;		/* CLOCK_MONOTONIC when tracing began: the lines' time 0 */
	uint64_t dropped;	/* CNT_TRACE_DROPS said so far */
	uint64_t ring_bytes;	/* --trace-buffer */
	const __u64 *counters;	/* BPF's (.bss) */
};

void trace_ring__configure(struct probes *p, const struct probes_config *cfg)
{
	p->skel->rodata->trace_calls = cfg->trace;
	if (!cfg->trace)
		return;	/* the ring keeps its one page: nothing is written to it */
	bpfmaps__size_trace_ring(p->skel, (__u32)cfg->trace_buffer);
	p->skel->rodata->trace_wake_bytes = cfg->trace_buffer / 4;
	p->trace.bytes = cfg->trace_buffer;
}

/*
 * "trace 1.234567 pid=12 tid=13 realloc size=200 addr=0x... old=0x...":
 * seconds since tracing began; addr=0 for a call that failed; size=? for
 * a free of a block not tracked (allocated before -p attached, filtered,
 * or freed twice).
 */
void trace_ring__format(const struct memleak_trace *t, uint64_t t0_ns, char *buf, size_t len)
{
	unsigned long long dt = t->time_ns > t0_ns ? t->time_ns - t0_ns : 0;
	int n = snprintf(buf, len, "trace %llu.%06llu pid=%u tid=%u %s ", dt / 1000000000ull,
			 dt % 1000000000ull / 1000, (unsigned)(t->pid_tgid >> 32),
			 (unsigned)t->pid_tgid, report__api_name(t->api));

	if (n < 0 || (size_t)n >= len)
		return;
	if (t->flags & TRACE_SIZE_UNKNOWN)
		n += snprintf(buf + n, len - n, "size=? addr=%#llx", (unsigned long long)t->addr);
	else
		n += snprintf(buf + n, len - n, "size=%llu addr=%#llx", (unsigned long long)t->size,
			      (unsigned long long)t->addr);
	if (t->old && (size_t)n < len)
		snprintf(buf + n, len - n, " old=%#llx", (unsigned long long)t->old);
}

static int on_record(void *ctx, void *data, size_t size)
{
	const struct trace_ring *tr = ctx;
	char line[192];

	if (size < sizeof(struct memleak_trace))
		return 0;
	trace_ring__format(data, tr->t0_ns, line, sizeof(line));
	fputs(line, stdout);
	fputc('\n', stdout);
	return 0;
}

/* Lines lost since the last look: said where they were lost, in the stream. */
static void say_drops(struct trace_ring *tr)
{
	uint64_t n = __atomic_load_n(&tr->counters[CNT_TRACE_DROPS], __ATOMIC_RELAXED);

	if (n == tr->dropped)
		return;
	printf("trace: %llu lines lost here: the ring (%llu KiB) was full (--trace-buffer)\n",
	       (unsigned long long)(n - tr->dropped), (unsigned long long)tr->ring_bytes >> 10);
	tr->dropped = n;
}

/* All that waits, under stdout's lock: never inside a report's lines. */
static void drain(struct trace_ring *tr)
{
	flockfile(stdout);
	ring_buffer__consume(tr->rb);
	say_drops(tr);
	fflush(stdout);
	funlockfile(stdout);
}

static void *trace_thread(void *arg)
{
	struct trace_ring *tr = arg;
	struct pollfd pfd = { .fd = ring_buffer__epoll_fd(tr->rb), .events = POLLIN };

	while (!tr->stop) {
		poll(&pfd, 1, TRACE_POLL_MS);
		drain(tr);
	}
	return NULL;
}

int trace_ring__start(struct probes *p)
{
	struct trace_ring *tr;
	sigset_t all, old;
	int err;

	if (!p->trace.bytes)
		return 0;
	tr = calloc(1, sizeof(*tr));
	if (!tr)
		return -ENOMEM;
	tr->t0_ns = clock__now_ns();
	tr->ring_bytes = p->trace.bytes;
	tr->counters = bpfmaps__counters(p->skel);
	tr->rb = bpfmaps__trace_reader(p->skel, on_record, tr);
	/*
	 * No signal for it: they are the loop's. It starts before SIGINT and
	 * SIGTERM are held for the loop's signalfd (main.c): taking one with
	 * their default action, it ended the run without its final report.
	 */
	err = tr->rb ? 0 : -errno;
	fatal__thread_signals(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (!err)
		err = -pthread_create(&tr->thread, NULL, trace_thread, tr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		fprintf(stderr, "memleakbpf: -t: cannot start reading the trace ring: %s\n",
			strerror(-err));
		ring_buffer__free(tr->rb);
		free(tr);
		return err;
	}
	p->trace.ring = tr;
	return 0;
}

void trace_ring__stop(struct probes *p)
{
	struct trace_ring *tr = p ? p->trace.ring : NULL;

	if (!tr)
		return;
	tr->stop = true;
	pthread_join(tr->thread, NULL);
	drain(tr);
	if (tr->dropped)
		fprintf(stderr, "memleakbpf: -t: %" PRIu64 " trace lines lost, the ring (%" PRIu64 " KiB) full: raise --trace-buffer\n",
			tr->dropped, tr->ring_bytes >> 10);
	ring_buffer__free(tr->rb);
	free(tr);
	p->trace.ring = NULL;
}
