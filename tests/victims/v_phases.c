// SPDX-License-Identifier: GPL-2.0
/*
 * v_phases: leaks in three phases with pauses in between, for snapshots and
 * `pprof --base` diffs between two moments.
 *   v_phases             prints "READY pid=<pid>"; then, for each phase, waits
 *                        for a line on stdin (EOF: exits 3), leaks and prints
 *                        "PHASE <k>" (after the last phase, once its truth is
 *                        written); then waits for one more line (or EOF) and
 *                        exits 0.
 *   v_phases auto [MS]   the same without stdin: MS milliseconds (default
 *                        1000) of pause before each phase and after the last.
 * Every phase leaks at site_every (the leak that grows), at its own site
 * (site_once_a, _b, _c), and allocates and frees at site_churn (nothing
 * outstanding, 12,800 bytes allocated per phase: a heap profile's
 * alloc_space). Nothing leaked is ever freed, so the truth after phase k is
 * the TRUTH lines with phase=p1..pk.
 * Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH or stdout, written once
 * after the last phase, each with phase=p1, p2 or p3, and the note
 * "# churn_bytes_per_phase: 12800".
 *
 * Truth: after p1 13,288 bytes in 13 blocks; after p2 17,619 bytes in 30;
 * after p3 21,389 bytes in 42 (6 TRUTH lines). From p1 to p3: 8,101 bytes.
 *
 * valgrind 3.19 (--leak-check=full --show-leak-kinds=all), once, with
 * "auto 0":
 *   definitely lost: 21,389 bytes in 42 blocks
 *   indirectly lost: 0, possibly lost: 0, still reachable: 0 bytes in 0 blocks
 *   = the sum of all TRUTH lines.
 */
#define _GNU_SOURCE
#include <time.h>
#include "truth.h"

#define PHASES 3
#define EVERY_BLOCKS 10
#define CHURN_BLOCKS 50
#define CHURN_SIZE 256

/* One line from stdin, without stdio: 1 when a line (or partial line) came, 0 at EOF. */
static int wait_line(void)
{
	char c;
	ssize_t n;
	int got = 0;

	for (;;) {
		n = read(0, &c, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return got;
		got = 1;
		if (c == '\n')
			return 1;
	}
}

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

SITE void site_every(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
}

SITE void site_once_a(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb, size); TR_ALLOC(p, nmemb * size, "calloc"); ESCAPE(p);
}

SITE void site_once_b(size_t n)
{
	void *p = malloc(n); TR_ALLOC(p, n, "malloc"); ESCAPE(p);
}

SITE void site_once_c(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb, size); TR_ALLOC(p, nmemb * size, "calloc"); ESCAPE(p);
}

SITE void site_churn(size_t n)
{
	void *p = malloc(n); ESCAPE(p);
	free(p);
}

VIA void via_phase(int k)
{
	int i;

	TR_ENTER();
	for (i = 0; i < EVERY_BLOCKS; i++)
		site_every(100 * k);
	if (k == 1)
		for (i = 0; i < 3; i++)
			site_once_a(4, 1024);
	if (k == 2)
		for (i = 0; i < 7; i++)
			site_once_b(333);
	if (k == 3)
		for (i = 0; i < 2; i++)
			site_once_c(5, 77);
	for (i = 0; i < CHURN_BLOCKS; i++)
		site_churn(CHURN_SIZE);
	TR_LEAVE();
}

int main(int argc, char **argv)
{
	static const char *const phase[PHASES + 1] = { NULL, "p1", "p2", "p3" };
	int automatic = argc > 1 && !strcmp(argv[1], "auto");
	long ms = automatic && argc > 2 ? atol(argv[2]) : 1000;
	char line[64];
	int k, n;

	TR_ENTER();
	snprintf(line, sizeof(line), "%d", CHURN_BLOCKS * CHURN_SIZE);
	tr_note("churn_bytes_per_phase", line);
	n = snprintf(line, sizeof(line), "READY pid=%d\n", (int)getpid());
	tr_write_all(1, line, n);
	for (k = 1; k <= PHASES; k++) {
		if (automatic)
			pause_ms(ms);
		else if (!wait_line())
			_exit(3);
		tr_set_phase(phase[k]);
		via_phase(k);
		if (k == PHASES)
			tr_report();	/* once: it sums into static arrays */
		n = snprintf(line, sizeof(line), "PHASE %d\n", k);
		tr_write_all(1, line, n);
	}
	if (automatic)
		pause_ms(ms);
	else
		wait_line();
	TR_LEAVE();
	return 0;
}
