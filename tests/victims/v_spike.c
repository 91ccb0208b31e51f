// SPDX-License-Identifier: GPL-2.0
/*
 * v_spike: a peak far shorter than a sampling tick, and an mmap beside the
 * heap, for the exact peak and for heap blocks and mmaps kept apart.
 *   site_small  leaks SMALL_N blocks of 1 KiB at the start (kept to the end),
 *   site_map    maps MAP_BYTES of anonymous memory (kept to the end: an mmap,
 *               not heap),
 *   then, after LEAD_MS, site_spike allocates SPIKE_N blocks of 4 MiB
 *   (48 MiB), holds them SPIKE_MS and frees them; TAIL_MS later it exits 0.
 * Nothing else is live meanwhile (truth.h does not allocate), so the heap's
 * peak is exactly the spike and the small blocks.
 * Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH or stdout, and the notes
 * "# peak_heap_bytes", "# peak_mmap_bytes", "# spike_ms".
 *
 * Truth: site_small 10,240 bytes in 10, site_map 8,388,608 in 1 (mmap); the
 * heap's peak 50,341,888 bytes, the mmaps' 8,388,608.
 *
 * valgrind 3.19 (--leak-check=full --show-leak-kinds=all), once:
 *   definitely lost: 10,240 bytes in 10 blocks = site_small's TRUTH line.
 * massif (--heap-admin=0 --peak-inaccuracy=0.0), once: peak mem_heap_B
 *   50,341,888 = peak_heap_bytes.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <time.h>
#include "truth.h"

#define SMALL_N 10
#define SPIKE_N 12
#define SPIKE_SIZE (4 << 20)
#define MAP_BYTES (8 << 20)
#define LEAD_MS 400
#define SPIKE_MS 20
#define TAIL_MS 400

static void *spike[SPIKE_N];

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

SITE void site_small(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
}

#define ANON (MAP_PRIVATE | MAP_ANONYMOUS)

SITE void site_map(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, ANON, -1, 0); TR_ALLOC(p, n, "mmap");

	if (p == MAP_FAILED)
		tr_die("mmap failed");
	ESCAPE(p);
}

SITE void *site_spike(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
	return p;
}

VIA void via_run(void)
{
	int i;

	TR_ENTER();
	for (i = 0; i < SMALL_N; i++)
		site_small(1024);
	site_map(MAP_BYTES);
	pause_ms(LEAD_MS);
	for (i = 0; i < SPIKE_N; i++)
		spike[i] = site_spike(SPIKE_SIZE);
	pause_ms(SPIKE_MS);
	for (i = 0; i < SPIKE_N; i++) {
		tr_free(spike[i]);
		free(spike[i]);
	}
	pause_ms(TAIL_MS);
	TR_LEAVE();
}

int main(void)
{
	TR_ENTER();
	via_run();
	tr_note_u64("peak_heap_bytes", SMALL_N * 1024ull + (unsigned long long)SPIKE_N * SPIKE_SIZE);
	tr_note_u64("peak_mmap_bytes", MAP_BYTES);
	tr_note_u64("spike_ms", SPIKE_MS);
	tr_report();
	TR_LEAVE();
	return 0;
}
