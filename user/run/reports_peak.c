// SPDX-License-Identifier: GPL-2.0
/*
 * The peak's samples (reports_peak.h), each a scan of every site: 20 ms of
 * CPU for the default site table read through its windows (probe/
 * snapshot.c), 4 ms mapped whole as it once was. A heap that grows for
 * seconds (a torch import) asks for one at every sixty-fourth it grows,
 * hundreds of them: they may take 2% of a CPU in the long run, and 200 ms
 * at once after a quiet time, so that a spike is sampled. One put off
 * comes at a later tick, if the heap is still past its peak; the peak's
 * bytes are BPF's, exact, whenever its stacks are sampled.
 */
#include <stdint.h>
#include "analyze/insight.h"
#include "probe/snapshot.h"
#include "reports_peak.h"
#include "tracer.h"

#define PEAK_SAMPLE_SHARE 50
#define PEAK_SAMPLE_BURST_NS 200000000ll

static uint64_t ns_of(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000ull + (uint64_t)t->tv_nsec;
}

/* The budget now: what it was, and a fiftieth of the time since. */
static bool budget(struct tracer *tr, uint64_t now)
{
	tr->live_budget_ns += (int64_t)(now - tr->live_budget_at) / PEAK_SAMPLE_SHARE;
	if (!tr->live_budget_at || tr->live_budget_ns > PEAK_SAMPLE_BURST_NS)
		tr->live_budget_ns = PEAK_SAMPLE_BURST_NS;
	tr->live_budget_at = now;
	return tr->live_budget_ns > 0;
}

void reports_peak__sample(struct tracer *tr, const struct timespec *at)
{
	struct timespec c0, c1;
	size_t nr;

	if (!budget(tr, ns_of(at)))
		return;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	if (!snapshot__live(tr->probes, &tr->live, &tr->live_cap, &nr))
		insight__sample(tr->ins, at, tr->live, nr);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	tr->live_budget_ns -= (int64_t)(ns_of(&c1) - ns_of(&c0));
}
