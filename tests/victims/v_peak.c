// SPDX-License-Identifier: GPL-2.0
/*
 * v_peak: memory that peaks mid-run and is given back, for the peak and its
 * breakdown. In steps of STEP_MS:
 *   site_small   leaks SMALL_N blocks of 1 KiB at the start (kept to the end),
 *   site_ramp    allocates RAMP_N blocks of 1 MiB, one a step (the climb),
 *   site_peak    then allocates PEAK_N blocks of 4 MiB at once (glibc mmaps
 *                them), holds everything for HOLD_MS (many peak samples),
 *   all of them written to, so that RSS follows,
 *   then frees the ramp and the peak blocks, waits TAIL_MS and exits 0.
 * Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH or stdout (site_small
 * only: the rest is freed), and the notes "# peak_ramp_bytes",
 * "# peak_peak_bytes", "# peak_small_bytes": each site's bytes at the peak.
 *
 * Truth: site_small 10,240 bytes in 10; at the peak site_peak 50,331,648 bytes
 * in 12 and site_ramp 16,777,216 in 16.
 *
 * valgrind 3.19 (--leak-check=full --show-leak-kinds=all), once:
 *   definitely lost: 10,240 bytes in 10 blocks = the TRUTH line.
 */
#define _GNU_SOURCE
#include <time.h>
#include "truth.h"

#define STEP_MS 50
#define SMALL_N 10
#define RAMP_N 16
#define RAMP_SIZE (1 << 20)
#define PEAK_N 12
#define PEAK_SIZE (4 << 20)
#define HOLD_MS 1200
#define TAIL_MS 1200

static void *ramp[RAMP_N], *peak[PEAK_N];

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

SITE void *site_ramp(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
	memset(p, 1, n);	/* resident, so that RSS climbs with it */
	return p;
}

SITE void *site_peak(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
	memset(p, 1, n);
	return p;
}

static void give_back(void **v, int n)
{
	for (int i = 0; i < n; i++) {
		tr_free(v[i]);
		free(v[i]);
	}
}

VIA void via_run(void)
{
	int i;

	TR_ENTER();
	for (i = 0; i < SMALL_N; i++)
		site_small(1024);
	for (i = 0; i < RAMP_N; i++) {
		ramp[i] = site_ramp(RAMP_SIZE);
		pause_ms(STEP_MS);
	}
	for (i = 0; i < PEAK_N; i++)
		peak[i] = site_peak(PEAK_SIZE);
	pause_ms(HOLD_MS);
	give_back(peak, PEAK_N);
	give_back(ramp, RAMP_N);
	pause_ms(TAIL_MS);
	TR_LEAVE();
}

int main(void)
{
	TR_ENTER();
	via_run();
	tr_note_u64("peak_small_bytes", SMALL_N * 1024ull);
	tr_note_u64("peak_ramp_bytes", (unsigned long long)RAMP_N * RAMP_SIZE);
	tr_note_u64("peak_peak_bytes", (unsigned long long)PEAK_N * PEAK_SIZE);
	tr_report();
	TR_LEAVE();
	return 0;
}
