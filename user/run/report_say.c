// SPDX-License-Identifier: GPL-2.0
/*
 * What the report thread says on stderr beside a report (reports.c): what
 * exact tracing costs the target, and under -v each report's CPU time by
 * step and the tracer's memory.
 */
#include <stdio.h>
#include <time.h>
#include "analyze/insight.h"
#include "analyze/memuse.h"
#include "cli/opts.h"
#include "probe/snapshot.h"
#include "probe/snapshot_kept.h"
#include "report_say.h"
#include "symbolize/report_build.h"
#include "tracer.h"

static const char *const step_names[STEP__COUNT] = {
	"reading", "order", "history", "figures", "site frames", "growth, churn and peak",
	"sites", "frames", "writing",
};

static double thread_cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void report_say__start(struct report_steps *s)
{
	*s = (struct report_steps){ .at = thread_cpu_ms() };
}

void report_say__step(struct report_steps *s, enum report_step step)
{
	double now = thread_cpu_ms();

	s->ms[step] += now - s->at;
	s->at = now;
}

void report_say__steps(const struct report_steps *s)
{
	fputs("memleakbpf: its CPU by step:", stderr);
	for (int i = 0; i < STEP__COUNT; i++)
		fprintf(stderr, "%s %s %.0f ms", i ? "," : "", step_names[i], s->ms[i]);
	fputc('\n', stderr);
}

/*
 * What exact tracing costs the target, said once when it is much: a malloc
 * and its free traced add at least EXACT_PAIR_NS (make bench's tight loop
 * on the 2-core test machine, docs/PERFORMANCE.md; deep native or Python
 * stacks cost two to three times that). At a rate of n allocations in a
 * traced second, n * EXACT_PAIR_NS of it is ours: the target runs at most
 * 1 - that of its untraced speed. From a tenth on, --sample is named.
 */
#define EXACT_PAIR_NS 2400.0
#define COST_SAID_SHARE 0.1

void report_say__cost(struct tracer *tr, const struct report *r)
{
	char n[REPORT_COUNT_LEN];
	double rate, share;

	if (tr->cost_said || tr->opts->sample_mode || tr->kmem || r->duration_s < 0.5)
		return;
	tr->cost_said = true;
	rate = (double)r->totals.allocs / r->duration_s;
	share = rate * EXACT_PAIR_NS * 1e-9;
	if (share < COST_SAID_SHARE)
		return;
	fprintf(stderr, "memleakbpf: pid %d makes %s allocations a second traced: exact tracing adds %.1f us or more to each with its free on a machine like the one measured (docs/PERFORMANCE.md), about %.0f%% of its time: it runs at about %.2f of its speed or less; --sample 512K traces a sample of them for much less (docs/SAMPLING.md)\n",
		r->pid, report__count((uint64_t)rate, n), EXACT_PAIR_NS / 1e3,
		100 * (share < 1 ? share : 1), share < 0.95 ? 1 - share : 0.05);
}

/* -v: what our memory is for, at each report (the peak comes with one). */
void report_say__memory(struct tracer *tr, const struct snapshot *snap)
{
	struct snapshot_memory m = { 0 };
	size_t stacks, bytes = insight__bytes(tr->ins, &stacks);

	/* -k has no user-space tables: its maps' memory is said at its start. */
	if (tr->probes) {
		snapshot__memory(tr->probes, snap, &m);
		m.carried_bytes = snapshot_kept__bytes(tr->probes);
		m.unwritten_bytes = snapshot_kept__unwritten_bytes(tr->probes);
	}
	m.carried_bytes += report_sites__carry_bytes(tr->site_carry);
	memuse__say(stderr, &m, stacks, bytes);
}

/* Of the frames in r's stacks, those held through the frame table. */
static size_t shared_frames(const struct report *r)
{
	size_t n = 0;

	for (size_t i = 0; r && i < r->nr_stacks; i++)
		n += r->stacks[i].shared ? r->stacks[i].nr_frames : 0;
	return n;
}

void report_say__frames(const struct report *r, const struct report *freed,
			const struct frame_table *t)
{
	size_t refs = shared_frames(r) + shared_frames(freed);
	char b[2][32];

	fprintf(stderr, "memleakbpf: this report's frames: %zu in its stacks (with those freed), "
		"%zu distinct ones kept once (%s), the stacks' pointers to them %s\n",
		refs, frame_table__count(t), report__human_size(frame_table__bytes(t), b[0], 32),
		report__human_size(refs * sizeof(void *), b[1], 32));
}
