// SPDX-License-Identifier: GPL-2.0
/*
 * The run's history, fed and read out (see insight.h).
 *
 * The peak's bytes are exact: the probes keep the high-water mark
 * (bpf/peak.bpf.h). Its stacks are sampled: the per-site figures are read
 * every INSIGHT_TICK_MS and whenever BPF says the peak rose by a 64th, and
 * the sample that held the most gives them, with what it held and when.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include "history.h"
#include "history_sites.h"
#include "model/retired.h"
#include "insight.h"
#include "insight_internal.h"
#include "sites.h"
#include "target/memstat.h"
#include "util/idmap.h"
#include "util/vec.h"
#include "verdict.h"

static uint64_t ns_of(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
}

static double seconds(const struct insight *in, uint64_t ns)
{
	return ns > in->start_ns ? (double)(ns - in->start_ns) / 1e9 : 0;
}

void insight__kernel(struct insight *in)
{
	in->kernel = true;
	history__startup_first(in->h);
}

struct insight *insight__new(bool attached)
{
	struct insight *in = calloc(1, sizeof(*in));

	if (!in)
		return NULL;
	in->attached = attached;
	in->h = history__new();
	in->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (!in->h || in->timerfd < 0) {
		insight__free(in);
		return NULL;
	}
	return in;
}

size_t insight__bytes(const struct insight *in, size_t *stacks)
{
	return history__bytes(in->h, stacks);
}

void insight__free(struct insight *in)
{
	if (!in)
		return;
	if (in->timerfd >= 0)
		close(in->timerfd);
	history__free(in->h);
	free(in->stack_of);
	free(in);
}

int insight__fd(const struct insight *in)
{
	return in->timerfd;
}

/* The baseline is a reading too: the last one, should the target exit at once. */
static void take_base(struct insight *in, pid_t pid)
{
	struct memstat ms;

	in->have_last = !memstat__read(pid, &ms);
	history__set_base(in->h, in->have_last ? &ms : NULL);
	if (in->have_last)
		in->last = (struct mem_reading){ .ms = ms, .t_s = history__base(in->h)->t_s };
}

void insight__start(struct insight *in, pid_t pid, const struct timespec *start)
{
	struct itimerspec its = {
		.it_interval = { 0, INSIGHT_TICK_MS * 1000000L },
		.it_value = { 0, INSIGHT_TICK_MS * 1000000L },
	};

	in->start_ns = ns_of(start);
	in->started = true;
	in->pid = pid;
	take_base(in, pid);
	timerfd_settime(in->timerfd, 0, &its, NULL);
}

void insight__reset(struct insight *in, pid_t pid)
{
	in->pid = pid;
	in->exited = false;
	in->grew = (struct report_grew){ 0 };
	history__reset(in->h);
	take_base(in, pid);
}

/*
 * The thread's CPU time in ns: what reading the target's memory costs.
 * smaps_rollup walks the target's page tables: 15 ms on a torch job
 * holding 300 MiB, which every 500 ms was a third of what the tracer
 * spent beside it under --sample.
 */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	return clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) ? 0 : ns_of(&ts);
}

/*
 * Every INSIGHT_MEM_TICKS at most, and no more often than keeps reading it
 * under 1% of a CPU, the target's memory: when it has exited by the final
 * report, the last of these readings stands for its end.
 */
static void read_memory(struct insight *in, uint64_t now_ns, uint64_t live_bytes)
{
	uint64_t cost = thread_cpu_ns(), every = INSIGHT_MEM_TICKS * INSIGHT_TICK_MS * 1000000ull;
	struct memstat ms;

	if (now_ns < in->mem_next_ns || !in->pid)
		return;
	if (memstat__read(in->pid, &ms))
		return;
	cost = thread_cpu_ns() - cost;
	in->mem_next_ns = now_ns + (100 * cost > every ? 100 * cost : every);
	in->last = (struct mem_reading){ .ms = ms, .t_s = seconds(in, now_ns), .live = live_bytes };
	in->have_last = true;
}

bool insight__due(struct insight *in)
{
	uint64_t ticks;

	return read(in->timerfd, &ticks, sizeof(ticks)) == sizeof(ticks) && in->started;
}

void insight__tick(struct insight *in, const struct timespec *now, uint64_t live_bytes)
{
	read_memory(in, ns_of(now), live_bytes);
}

bool insight__peak_due(const struct insight *in, uint64_t heap_bytes)
{
	const struct history_peak *pk = history__peak(in->h);

	return !pk || heap_bytes > pk->bytes + (pk->bytes >> 6);
}

void insight__sample(struct insight *in, const struct timespec *now,
		     const struct snap_live *live, size_t nr)
{
	history__tick(in->h, seconds(in, ns_of(now)), live, nr);
}

int insight__add(struct insight *in, pid_t pid, const struct snapshot *snap,
		 const struct aggregate *agg)
{
	double t_s = seconds(in, snap->time_ns);
	struct mem_reading now = { .t_s = t_s, .live = agg->totals.outstanding_bytes };
	const struct mem_reading *mem = NULL;

	if (pid <= 0 && !in->kernel) {
		in->exited = true;
		history__exited(in->h);
	}
	if (pid > 0 && !memstat__read(pid, &now.ms)) {
		mem = &now;
		in->last = now;
		in->have_last = true;
	} else if (in->have_last) {
		mem = &in->last;	/* gone: its last reading, with its time */
	}
	/* The listed sites' stacks are caught up as their growth is read (growth()). */
	return history__add(in->h, t_s, snap, &agg->totals, mem);
}

/* ------------------------------------------------------------ growth */

static int rank_cmp(const void *a, const void *b, void *stacks)
{
	const struct report_growth *x = &((struct report_stack *)stacks)[*(const size_t *)a].growth;
	const struct report_growth *y = &((struct report_stack *)stacks)[*(const size_t *)b].growth;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	if (x->slope != y->slope)
		return x->slope > y->slope ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

/* Snapshot site of report stack i. */
static size_t snap_index(const struct snapshot *snap, const struct aggregate *agg, size_t i)
{
	return (size_t)(agg->sites[i] - snap->sites);
}

static double age_of(const struct snapshot *snap, const struct snap_site *s)
{
	if (!s->oldest_ns)
		return -1;
	return s->oldest_ns < snap->time_ns ? (snap->time_ns - s->oldest_ns) / 1e9 : 0;
}

/*
 * The report's sites before sites__group (sampling): the stacks of each as
 * a list, head[first] -> next[...], first the site's first stack
 * (sites__stack_groups), SIZE_MAX ending it.
 */
struct site_lists {
	size_t *group, *head, *next;
};

static void lists_free(struct site_lists *l)
{
	free(l->group);
	free(l->head);
	free(l->next);
}

static int lists_make(const struct report *r, size_t n, struct site_lists *l)
{
	l->group = calloc(r->nr_stacks ?: 1, sizeof(size_t));
	l->head = malloc((n ?: 1) * sizeof(size_t));
	l->next = malloc((n ?: 1) * sizeof(size_t));
	if (!l->group || !l->head || !l->next || sites__stack_groups(r, l->group))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		l->head[i] = SIZE_MAX;
	for (size_t i = n; i-- > 0;) {
		l->next[i] = l->head[l->group[i]];
		l->head[l->group[i]] = i;
	}
	return 0;
}

/* Start-up judged by the report's sites (history_sites.h). */
static int startup_by_site(struct insight *in, const struct snapshot *snap,
			   const struct aggregate *agg, const struct report *r, size_t n,
			   const struct site_lists *l)
{
	struct history_site *v = malloc((n ?: 1) * sizeof(*v));
	size_t nr = 0;
	int err;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (l->group[i] != i)
			continue;
		v[nr] = (struct history_site){ .key = sites__key(r->stacks[i].site_frame),
					       .import = true };
		for (size_t j = i; j != SIZE_MAX; j = l->next[j]) {
			v[nr].allocs += history_sites__interval_allocs(in->h, snap_index(snap, agg, j));
			v[nr].samples += r->stacks[j].samples;
			v[nr].import = v[nr].import && r->stacks[j].site_import;
		}
		nr++;
	}
	err = history_sites__startup(in->h, v, nr);
	free(v);
	return err;
}

/*
 * Growth judged by site: a site grows when the sum of its stacks does,
 * beyond the sum of their variances; then its stacks whose estimate rose
 * are its growing ones, scored as the site. A stack of a site that does not
 * grow is not growing, whatever its own noise allowed.
 */
static void site_growth(struct insight *in, const struct snapshot *snap,
			const struct aggregate *agg, struct report *r, size_t first,
			const struct site_lists *l, size_t *idx)
{
	struct report_growth g;
	double age = -1;
	size_t nr = 0;

	for (size_t j = first; j != SIZE_MAX; j = l->next[j]) {
		idx[nr++] = snap_index(snap, agg, j);
		if (r->stacks[j].growth.age_s > age)
			age = r->stacks[j].growth.age_s;
	}
	history_sites__growth_sum(in->h, idx, nr, age, &g);
	for (size_t j = first; j != SIZE_MAX; j = l->next[j]) {
		struct report_growth *s = &r->stacks[j].growth;
		bool rose = s->slope > 0 &&
			    (s->trend == TREND_STABLE || s->trend == TREND_GROWING);

		s->trend = g.trend == TREND_GROWING && rose ? TREND_GROWING :
			   s->trend == TREND_GROWING ? TREND_STABLE : s->trend;
		s->score = s->trend == TREND_GROWING ? g.score : 0;
	}
}

/* Sampling: start-up, then each stack's growth, then each site's. */
static int growth_by_site(struct insight *in, const struct snapshot *snap,
			  const struct aggregate *agg, struct report *r, size_t n)
{
	struct site_lists l = { 0 };
	size_t *idx = malloc((n ?: 1) * sizeof(*idx));
	int err = idx ? lists_make(r, n, &l) : -ENOMEM;

	history_sites__by_site(in->h);
	if (!err)
		err = startup_by_site(in, snap, agg, r, n, &l);
	for (size_t i = 0; !err && i < n; i++)
		history__growth_site(in->h, snap_index(snap, agg, i), age_of(snap, agg->sites[i]),
				     &r->stacks[i].growth);
	for (size_t i = 0; !err && i < n; i++)
		if (l.group[i] == i)
			site_growth(in, snap, agg, r, i, &l, idx);
	lists_free(&l);
	free(idx);
	return err;
}

/* How many sites ahead growth_in_order asks for a site's stack, and for its report stack. */
#define AHEAD 16

/* in->stack_of: no report stack for the site. */
#define NO_STACK UINT32_MAX

/*
 * The report's stack of each of snap's sites (NO_STACK: none) into
 * in->stack_of, kept from report to report (its pages touched once).
 */
static int stacks_by_site(struct insight *in, const struct snapshot *snap,
			  const struct aggregate *agg, size_t n)
{
	if (vec__reserve(&in->stack_of, &in->cap_stack_of, snap->nr ?: 1, sizeof(*in->stack_of)))
		return -ENOMEM;
	memset(in->stack_of, 0xff, snap->nr * sizeof(*in->stack_of));
	for (size_t i = 0; i < n; i++)
		in->stack_of[snap_index(snap, agg, i)] = (uint32_t)i;
	return 0;
}

/*
 * Each stack's growth, read in the order of snap's sites, not the
 * report's (by bytes): the sites, their stacks in the history and those
 * stacks' points all lie in the order the sites came, and are read one
 * after the other instead of three or four cache misses for each of a
 * torch job's 210,000 stacks; only the report stacks are written out of
 * order. Each stack's growth is its own: the order changes nothing else.
 */
static void growth_in_order(struct insight *in, const struct snapshot *snap, struct report *r,
			    bool quick)
{
	const uint32_t *of = in->stack_of;

	for (size_t at = 0; at < snap->nr; at++) {
		struct report_growth *g;
		double age;

		if (at + AHEAD < snap->nr && of[at + AHEAD] != NO_STACK) {
			__builtin_prefetch(&r->stacks[of[at + AHEAD]].growth, 1);
			history__prefetch_site(in->h, at + AHEAD, 1);
		}
		if (of[at] == NO_STACK)
			continue;
		g = &r->stacks[of[at]].growth;
		age = age_of(snap, &snap->sites[at]);
		/* Most stacks: held the same since they came, left as they are. */
		if (quick && history__flat_site(in->h, at, age, g))
			continue;
		history__catch_up_site(in->h, at);
		(quick ? history__trend_site : history__growth_site)(in->h, at, age, g);
	}
}

/*
 * Each stack's growth; the growing ones ranked, the most leak-like first.
 * Each listed site's stack caught up in place (not in a copy per reading)
 * in the same pass, its lines read next; with quick, one that held the
 * same since it came is left implicit (history__flat_site).
 */
static int growth(struct insight *in, const struct snapshot *snap, const struct aggregate *agg,
		  struct report *r, bool quick, struct report_analysis *a)
{
	size_t n = r->nr_stacks < agg->nr ? r->nr_stacks : agg->nr;
	int err = 0;

	a->growing = calloc(r->nr_stacks ?: 1, sizeof(*a->growing));
	if (!a->growing)
		return -ENOMEM;
	for (size_t i = 0; r->sampling && i < n; i++)
		history__catch_up_site(in->h, snap_index(snap, agg, i));
	if (r->sampling)
		err = growth_by_site(in, snap, agg, r, n);
	/* The snapshot insight__add gave the history: its merge found each site's stack. */
	else if (!(err = stacks_by_site(in, snap, agg, n)))
		growth_in_order(in, snap, r, quick);
	for (size_t i = 0; i < n; i++)
		if (r->stacks[i].growth.trend == TREND_GROWING)
			a->growing[a->nr_growing++] = i;
	qsort_r(a->growing, a->nr_growing, sizeof(*a->growing), rank_cmp, r->stacks);
	for (size_t i = 0; i < a->nr_growing; i++)
		r->stacks[a->growing[i]].growth.rank = i + 1;
	return err;
}

/* ------------------------------------------------------------ churn, peak */

static int churn(struct insight *in, const struct snapshot *snap, insight_stacks_fn *stacks,
		 void *ctx, struct report_analysis *a)
{
	const struct snap_site *sites[INSIGHT_CHURN];
	struct report_rate rates[INSIGHT_CHURN];
	int n = history__churn(in->h, snap, sites, rates, INSIGHT_CHURN);
	int err;

	if (n <= 0)
		return n;
	err = stacks(&(struct aggregate){ .sites = sites, .nr = n }, ctx, &a->churn, &a->nr_churn);
	for (size_t i = 0; !err && i < a->nr_churn; i++)
		a->churn[i].rate = rates[i];
	return err;
}

static int live_cmp(const void *a, const void *b)
{
	const struct snap_live *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->stack_id != y->stack_id)
		return x->stack_id < y->stack_id ? -1 : 1;
	return x->api < y->api ? -1 : x->api > y->api;
}

/*
 * The biggest max of the n sites of a sample, biggest first (live_cmp), into
 * top: a pass with an insertion each, where sorting a peak of 200,000
 * sites at every report cost more than the rest of the peak.
 */
size_t insight__top_of(const struct snap_live *v, size_t n, struct snap_live *top, size_t max)
{
	size_t nr = 0;

	for (size_t k = 0; k < n && max; k++) {
		size_t i = nr < max ? nr++ : max;

		if (i == max && live_cmp(&v[k], &top[max - 1]) >= 0)
			continue;
		if (i == max)
			i = max - 1;
		for (; i > 0 && live_cmp(&v[k], &top[i - 1]) < 0; i--)
			top[i] = top[i - 1];
		top[i] = v[k];
	}
	return nr;
}

/* A small table of the peak's keys: INSIGHT_PEAK of them in 4 times the slots. */
#define PEAK_SLOTS 128

static size_t peak_slot(uint64_t stack_id, uint32_t api)
{
	return (size_t)((stack_id * 0x9e3779b97f4a7c15ull ^ api) >> 57) & (PEAK_SLOTS - 1);
}

/*
 * The sites of snap with the keys of top (n of them) into copies, with
 * top's figures; only the key where snap lacks it. One pass over snap for
 * them all, a slot of a small table looked at per site (not n compares):
 * keys are unique in a snapshot.
 */
static void sites_at_peak(const struct snapshot *snap, const struct snap_live *top, size_t n,
			  struct snap_site *copies)
{
	uint8_t slots[PEAK_SLOTS];	/* k + 1 of top[k]; 0: free */
	size_t found = 0;

	_Static_assert(INSIGHT_PEAK * 4 <= PEAK_SLOTS && PEAK_SLOTS < 256, "the peak's table");
	memset(slots, 0, sizeof(slots));
	for (size_t k = 0; k < n; k++) {
		size_t at = peak_slot(top[k].stack_id, top[k].api);

		while (slots[at])
			at = (at + 1) & (PEAK_SLOTS - 1);
		slots[at] = (uint8_t)(k + 1);
		copies[k] = (struct snap_site){ .stack_id = top[k].stack_id, .api = top[k].api };
	}
	/* A reading carried over has an index by key: no pass at all. */
	for (size_t k = 0; snap->by_key && k < n; k++) {
		uint32_t at;

		if (idmap__get(snap->by_key, retired__site_key(top[k].stack_id, top[k].api), &at) &&
		    at < snap->nr)
			copies[k] = snap->sites[at];
	}
	for (size_t i = 0; !snap->by_key && i < snap->nr && found < n; i++) {
		const struct snap_site *s = &snap->sites[i];

		for (size_t at = peak_slot(s->stack_id, s->api); slots[at];
		     at = (at + 1) & (PEAK_SLOTS - 1)) {
			const struct snap_live *t = &top[slots[at] - 1];

			if (t->stack_id == s->stack_id && t->api == s->api) {
				copies[slots[at] - 1] = *s;
				found++;
				break;
			}
		}
	}
	for (size_t k = 0; k < n; k++) {
		copies[k].stats.outstanding_bytes = top[k].bytes;
		copies[k].stats.outstanding_allocs = top[k].allocs;
	}
}

/* seconds() of a peak's time, which the probes keep to 5 ms; < 0 for none. */
static double peak_time(const struct insight *in, uint64_t ns)
{
	return ns ? seconds(in, ns) : -1;
}

/*
 * The exact peaks, from agg's totals; the biggest stacks of the best
 * sample. The sites hold their stacks in snap (sites never leave).
 */
static int peak(struct insight *in, const struct snapshot *snap, const struct aggregate *agg,
		insight_stacks_fn *stacks, void *ctx, struct report_analysis *a)
{
	const struct history_peak *hp = history__peak(in->h);
	const struct report_totals *t = &agg->totals;
	struct snap_site copies[INSIGHT_PEAK];
	const struct snap_site *sites[INSIGHT_PEAK];
	struct snap_live v[INSIGHT_PEAK];
	size_t n;

	if (!hp)
		return 0;
	n = insight__top_of(hp->sites, hp->nr, v, INSIGHT_PEAK);
	a->peak = (struct report_peak){ .known = true, .t_s = hp->t_s, .bytes = hp->bytes,
					.allocs = hp->allocs, .sample_s = INSIGHT_TICK_MS / 1000.0,
					.stacks_t_s = hp->t_s, .stacks_bytes = hp->bytes,
					.other_bytes = hp->bytes, .other_allocs = hp->allocs,
					.mmap_bytes = t->peak_bytes[KIND_MMAP],
					.mmap_t_s = peak_time(in, t->peak_ns[KIND_MMAP]) };
	/* A sample is never above the peak the probes kept, read after it. */
	if (t->peak_bytes[KIND_HEAP] >= hp->bytes) {
		a->peak.bytes = t->peak_bytes[KIND_HEAP];
		a->peak.t_s = peak_time(in, t->peak_ns[KIND_HEAP]);
		a->peak.exact = true;
	}
	sites_at_peak(snap, v, n, copies);
	for (size_t i = 0; i < n; i++) {
		sites[i] = &copies[i];
		a->peak.other_bytes -= v[i].bytes;
		a->peak.other_allocs -= v[i].allocs;
	}
	return stacks(&(struct aggregate){ .sites = sites, .nr = n }, ctx, &a->peak.stacks,
		      &a->peak.nr_stacks);
}

/*
 * A report that names a leak is remembered, so that a later one that sees
 * no stack grow says it stopped rather than that there was none.
 */
/* The site of the most leak-like stack, kept by name: its frames are the report's. */
static void note_site(struct report_grew *g, const struct report_frame *f)
{
	snprintf(g->function, sizeof(g->function), "%s", f && f->function ? f->function : "");
	snprintf(g->file, sizeof(g->file), "%s", f && f->file ? f->file : "");
	g->line = f ? f->line : 0;
}

static void note_leak(struct insight *in, const struct snapshot *snap, const struct aggregate *agg,
		      const struct report *r)
{
	const struct report_analysis *a = r->analysis;
	double t_s = seconds(in, snap->time_ns), slope = 0;

	if (a->memory.verdict != VERDICT_LEAK && a->memory.verdict != VERDICT_LEAK_AND_FRAGMENTATION)
		return;
	if (!a->nr_growing)
		return;	/* allocations untracked that grow: no stack to name */
	for (size_t i = 0; i < a->nr_growing; i++)
		slope += r->stacks[a->growing[i]].growth.slope;
	if (!in->grew.stacks)
		in->grew.from_s = t_s;
	in->grew.to_s = t_s;
	in->grew.stacks = a->nr_growing;
	in->grew.slope = slope;
	in->grew.live = agg->totals.outstanding_bytes;
	note_site(&in->grew, r->stacks[a->growing[0]].site_frame);
}

/*
 * A leak keeps what it allocated: growing over three reports or more, its
 * oldest block is two intervals old at least. A growing stack whose every
 * block is younger than an interval (the longest of the last two: the
 * final one is cut short by the exit) frees and makes them again: what
 * grows is how many are held at once (a connection's buffer, a request in
 * flight). Exact only: the oldest of the sampled blocks may not be the
 * oldest.
 */
static void mark_renewed(struct report *r, const struct report_analysis *a)
{
	const struct report_sample *s = a->samples;
	size_t n = a->nr_samples;
	double interval;

	if (r->sampling || n < 3)
		return;
	interval = fmax(s[n - 1].t_s - s[n - 2].t_s, s[n - 2].t_s - s[n - 3].t_s);
	for (size_t i = 0; i < a->nr_growing; i++) {
		struct report_growth *g = &r->stacks[a->growing[i]].growth;

		g->renewed = g->age_s >= 0 && g->age_s < interval;
	}
}

static int fill(struct insight *in, const struct snapshot *snap, const struct aggregate *agg,
		insight_stacks_fn *stacks, void *ctx, struct report *r, bool quick)
{
	struct report_analysis *a = calloc(1, sizeof(*a));
	struct report_growth live;
	int err;

	if (!a)
		return -ENOMEM;
	r->analysis = a;
	err = growth(in, snap, agg, r, quick && !r->sampling, a);
	if (!err)
		err = churn(in, snap, stacks, ctx, a);
	if (!err)
		err = peak(in, snap, agg, stacks, ctx, a);
	a->samples = history__samples(in->h, &a->nr_samples);
	mark_renewed(r, a);
	history__live_growth(in->h, &live);
	verdict__judge(history__base(in->h), a->samples, a->nr_samples, &live, a->nr_growing,
		       in->attached, &a->memory);
	a->memory.startup = *history__startup(in->h);
	a->memory.exited = in->exited;
	verdict__all_freed(&a->memory, agg->totals.outstanding_allocs);
	verdict__pymalloc(&a->memory, r->python ? &r->python->arenas : NULL);
	if (in->kernel)
		verdict__kernel(&a->memory);
	note_leak(in, snap, agg, r);
	verdict__stopped(&a->memory, &in->grew);
	return err;
}

int insight__fill(struct insight *in, const struct snapshot *snap, const struct aggregate *agg,
		  insight_stacks_fn *stacks, void *ctx, struct report *r)
{
	return fill(in, snap, agg, stacks, ctx, r, false);
}

int insight__fill_unfitted(struct insight *in, const struct snapshot *snap,
			   const struct aggregate *agg, insight_stacks_fn *stacks, void *ctx,
			   struct report *r)
{
	return fill(in, snap, agg, stacks, ctx, r, true);
}

/* The rank growth() gave stays: an unfitted stack is stable, with none, fitted or not. */
void insight__fit(const struct insight *in, const struct snapshot *snap,
		  const struct aggregate *agg, struct report *r, const bool *want)
{
	size_t n = r->nr_stacks < agg->nr ? r->nr_stacks : agg->nr;

	for (size_t i = 0; i < n; i++)
		if (r->stacks[i].growth.unfitted && (!want || want[i]))
			history__growth_site(in->h, snap_index(snap, agg, i),
					     age_of(snap, agg->sites[i]), &r->stacks[i].growth);
}
