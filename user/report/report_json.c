// SPDX-License-Identifier: GPL-2.0
/*
 * The JSON report. Its schema is a contract with scripts and CI jobs: add
 * fields if needed, never rename or remove one, and bump "version" if a
 * meaning changes.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include "analyze/runtime_blocks.h"
#include "analyze/sites.h"
#include "analyze/verdict.h"
#include "model/report.h"
#include "json_put.h"
#include "report_json.h"
#include "report_processes.h"
#include "report_pyarenas.h"
#include "report_allocs.h"
#include "report_reach.h"

#define JSON_VERSION 1

/* The order of totals.dropped, as documented. */
static const enum memleak_counter dropped_order[] = {
	CNT_ALLOCS_MAP_FULL, CNT_STACK_ERRORS, CNT_MISSED_RETURNS,
	CNT_SITES_MAP_FULL,  CNT_STATE_ERRORS, CNT_REPLACED,
	CNT_STACKS_MAP_FULL, CNT_STACK_COLLISIONS, CNT_UNWIND_STOPS,
	CNT_PY_STACKS_MAP_FULL, CNT_PY_STACK_ERRORS, CNT_UNWIND_PENDING,
	CNT_PROCS_MAP_FULL, CNT_KERNEL_MISSED, CNT_PY_CODES_UNTOLD,
	CNT_STACK_RING_FULL, CNT_STACK_MERGED, CNT_PY_RING_FULL,
	CNT_STACK_PREEMPTED, CNT_STACKS_LOST, CNT_PY_CODES_UNNAMED,
};

static void put_hex_or_null(bool known, uint64_t v, FILE *f)
{
	if (known)
		fprintf(f, "\"0x%llx\"", (unsigned long long)v);
	else
		fputs("null", f);
}

/* Heap blocks and mmaps apart, and the exact peak of each (bpf/peak.bpf.h). */
static void put_kinds(const struct report_totals *t, FILE *f)
{
	fprintf(f, "\"heap_bytes\": %llu, \"heap_allocs\": %llu, \"mmap_bytes\": %llu, "
		"\"mmap_allocs\": %llu, \"peak_heap_bytes\": %llu, \"peak_mmap_bytes\": %llu",
		(unsigned long long)t->kind_bytes[KIND_HEAP],
		(unsigned long long)t->kind_allocs[KIND_HEAP],
		(unsigned long long)t->kind_bytes[KIND_MMAP],
		(unsigned long long)t->kind_allocs[KIND_MMAP],
		(unsigned long long)t->peak_bytes[KIND_HEAP],
		(unsigned long long)t->peak_bytes[KIND_MMAP]);
}

/*
 * Under sampling: the sampled blocks behind an estimate of bytes of
 * variance var, and its 95% interval (report__margin), cut at 0.
 */
static void put_estimate(const struct report *r, uint64_t bytes, uint64_t samples, double var,
			 FILE *f)
{
	double m = report__margin(var);

	if (!r->sampling)
		return;
	fprintf(f, ", \"samples\": %llu, \"bytes_interval\": [%.0f, %.0f]",
		(unsigned long long)samples, fmax(0, (double)bytes - m), (double)bytes + m);
}

/* --sample, -s: how the figures were sampled (null: exact). */
static void put_sampling(const struct report *r, FILE *f)
{
	const struct report_sampling *s = r->sampling;

	if (!s) {
		fputs("  \"sampling\": null,\n", f);
		return;
	}
	fprintf(f, "  \"sampling\": {\"method\": \"%s\", \"mean\": %llu, \"seed\": ",
		s->by_bytes ? "bytes" : "count", (unsigned long long)s->mean);
	if (s->seed)
		fprintf(f, "%llu", (unsigned long long)s->seed);
	else
		fputs("null", f);
	fprintf(f, ", \"calls\": %llu, \"call_bytes\": %llu, \"sampled_calls\": %llu, "
		"\"interval\": 0.95},\n", (unsigned long long)s->calls,
		(unsigned long long)s->bytes, (unsigned long long)s->sampled);
}

static void put_totals(const struct report *r, const struct report_totals *t, FILE *f)
{
	fprintf(f, "  \"totals\": {\"outstanding_bytes\": %llu, \"outstanding_allocs\": %llu, "
		"\"allocs\": %llu, \"frees\": %llu, \"untracked_frees\": %llu, "
		"\"untraced_children\": %llu, \"followed_execs\": %llu,\n             \"dropped\": {",
		(unsigned long long)t->outstanding_bytes,
		(unsigned long long)t->outstanding_allocs, (unsigned long long)t->allocs,
		(unsigned long long)t->frees, (unsigned long long)t->counters[CNT_UNTRACKED_FREES],
		(unsigned long long)t->counters[CNT_UNTRACED_CHILDREN],
		(unsigned long long)t->counters[CNT_FOLLOW_EXECS]);
	for (size_t i = 0; i < sizeof(dropped_order) / sizeof(dropped_order[0]); i++) {
		enum memleak_counter c = dropped_order[i];

		fprintf(f, "%s\"%s\": %llu", i ? ", " : "", report__counter_name(c),
			(unsigned long long)t->counters[c]);
	}
	fputs("},\n             ", f);
	put_kinds(t, f);
	put_estimate(r, t->outstanding_bytes, t->outstanding_samples, t->outstanding_var, f);
	fputs("},\n", f);
}

static void put_frame(const struct report_frame *fr, FILE *f)
{
	fprintf(f, "{\"address\": \"0x%llx\", \"function\": ", (unsigned long long)fr->address);
	json_put__string(fr->function, f);
	fputs(", \"symbol\": ", f);
	json_put__string(fr->symbol, f);
	fputs(", \"module\": ", f);
	json_put__string(fr->module, f);
	/* An offset means nothing without the module it is in. */
	fputs(", \"offset\": ", f);
	put_hex_or_null(fr->module, fr->module_offset, f);
	fputs(", \"file\": ", f);
	json_put__string(fr->file, f);
	if (fr->line > 0)
		fprintf(f, ", \"line\": %d", fr->line);
	else
		fputs(", \"line\": null", f);
	fprintf(f, ", \"inlined\": %s, \"language\": \"%s\"}", fr->inlined ? "true" : "false",
		report__language_name(fr->language));
}

/* The target's interpreter, when it is Python; null otherwise. */
static void put_python(const struct report_python *py, FILE *f)
{
	fputs("  \"python\": ", f);
	if (!py) {
		fputs("null,\n", f);
		return;
	}
	fputs("{\"version\": ", f);
	json_put__string(py->version, f);
	fputs(", \"path\": ", f);
	json_put__string(py->path, f);
	fputs(", \"malloc\": ", f);
	json_put__string(py->malloc, f);
	fputs(", \"malloc_why\": ", f);
	json_put__string(py->malloc_why, f);
	fprintf(f, ", \"objects\": %s, \"shutdown\": %s, \"arenas\": ",
		py->objects ? "true" : "false", py->shutdown ? "true" : "false");
	report_pyarenas__json(&py->arenas, f);
	fputs("},\n", f);
}

/* ------------------------------------------------ the analysis (insight.c) */

/* What a stack object carries besides the common fields. */
enum stack_extra {
	EXTRA_NONE,
	EXTRA_GROWTH,	/* stacks[] of a report with an analysis */
	EXTRA_RATE,	/* churn[] */
};

static const char *trend_name(enum report_trend t)
{
	static const char *const names[] = { "unknown", "growing", "stable", "shrinking",
					     "startup" };

	return (unsigned)t < sizeof(names) / sizeof(names[0]) ? names[t] : "unknown";
}

/* JSON has no NaN or infinity: those are null. */
static void put_num(double v, FILE *f)
{
	if (isfinite(v))
		fprintf(f, "%.3f", v == 0 ? 0.0 : v);	/* never "-0.000" */
	else
		fputs("null", f);
}

static void put_growth(const struct report_growth *g, FILE *f)
{
	fputs("     \"trend\": ", f);
	json_put__string(trend_name(g->trend), f);
	fputs(", \"slope_bytes_per_s\": ", f);
	put_num(g->slope, f);
	fputs(", \"r2\": ", f);
	put_num(g->trend == TREND_UNKNOWN || g->trend == TREND_STARTUP ? NAN : g->r2, f);
	fprintf(f, ", \"grew_intervals\": %u, \"shrank_intervals\": %u, \"intervals\": %u, "
		"\"oldest_age_s\": ", g->grew, g->shrank, g->intervals);
	put_num(g->age_s < 0 ? NAN : g->age_s, f);
	fputs(", \"leak_score\": ", f);
	put_num(g->score, f);
	fprintf(f, ", \"renewed\": %s", g->renewed ? "true" : "false");
	if (g->rank)
		fprintf(f, ", \"leak_rank\": %u,\n", g->rank);
	else
		fputs(", \"leak_rank\": null,\n", f);
}

static void put_rate(const struct report_rate *r, FILE *f)
{
	fputs("     \"allocs_per_s\": ", f);
	put_num(r->allocs_per_s, f);
	fputs(", \"bytes_per_s\": ", f);
	put_num(r->bytes_per_s, f);
	fputs(", \"last_allocs_per_s\": ", f);
	put_num(r->last_allocs_per_s, f);
	fputs(", \"last_bytes_per_s\": ", f);
	put_num(r->last_bytes_per_s, f);
	fputs(",\n", f);
}

static void put_stack_extra(const struct report_stack *s, enum stack_extra extra, FILE *f)
{
	if (extra == EXTRA_GROWTH)
		put_growth(&s->growth, f);
	else if (extra == EXTRA_RATE)
		put_rate(&s->rate, f);
}

/* site: its index in "sites", or SIZE_MAX when the stack has none (churn, peak). */
static void put_stack(const struct report *r, const struct report_stack *s,
		      enum stack_extra extra, size_t site, FILE *f)
{
	fprintf(f, "    {\"bytes\": %llu, \"allocs\": %llu, \"api\": ", (unsigned long long)s->bytes,
		(unsigned long long)s->allocs);
	json_put__string(report__api_name(s->api), f);
	fprintf(f, ", \"total_bytes\": %llu, \"total_allocs\": %llu, \"truncated\": %s,",
		(unsigned long long)s->total_bytes, (unsigned long long)s->total_allocs,
		s->truncated ? "true" : "false");
	fprintf(f, " \"unwind_pending\": %s", s->unwind_pending ? "true" : "false");
	put_estimate(r, s->bytes, s->samples, s->var, f);
	if (site != SIZE_MAX)
		fprintf(f, ", \"site\": %zu", site);
	if (site != SIZE_MAX && s->site_runtime)	/* in a site of the program's too */
		fprintf(f, ", \"runtime\": \"%s\"", runtime_blocks__key(s->site_runtime));
	report_reach__json_stack(s, f);
	if (site != SIZE_MAX)
		report_allocs__json(r, s, f);
	fputs(",\n", f);
	put_stack_extra(s, extra, f);
	fputs("     \"frames\": [", f);
	for (size_t i = 0; i < s->nr_frames; i++) {
		fputs(i ? ",\n                " : "", f);
		put_frame(report__frame(s, i), f);
	}
	fputs("]}", f);
}

static void put_stacks(const struct report *r, const char *key, const struct report_stack *s,
		       size_t nr,
		       enum stack_extra extra, const char *indent, FILE *f)
{
	fprintf(f, "\"%s\": [", key);
	for (size_t i = 0; i < nr; i++) {
		fputs(i ? ",\n" : "\n", f);
		put_stack(r, &s[i], extra, SIZE_MAX, f);
	}
	fprintf(f, nr ? "\n%s]" : "]", indent);
}

static void put_peak(const struct report *r, const struct report_peak *p, FILE *f)
{
	if (!p->known) {
		fputs("  \"peak\": null", f);
		return;
	}
	fprintf(f, "  \"peak\": {\"bytes\": %llu, \"allocs\": %llu, \"t_s\": ",
		(unsigned long long)p->bytes, (unsigned long long)p->allocs);
	put_num(p->t_s < 0 ? NAN : p->t_s, f);
	fputs(", \"sample_interval_s\": ", f);
	put_num(p->sample_s, f);
	fprintf(f, ", \"other_bytes\": %llu, \"other_allocs\": %llu,\n           ",
		(unsigned long long)p->other_bytes, (unsigned long long)p->other_allocs);
	fprintf(f, "\"exact\": %s, \"stacks_bytes\": %llu, \"stacks_t_s\": ",
		p->exact ? "true" : "false", (unsigned long long)p->stacks_bytes);
	put_num(p->stacks_t_s, f);
	fprintf(f, ", \"mmap_bytes\": %llu, \"mmap_t_s\": ", (unsigned long long)p->mmap_bytes);
	put_num(!p->mmap_bytes || p->mmap_t_s < 0 ? NAN : p->mmap_t_s, f);
	fputs(",\n           ", f);
	put_stacks(r, "stacks", p->stacks, p->nr_stacks, EXTRA_NONE, "           ", f);
	fputc('}', f);
}

/* ------------------------------------------------ sites (analyze/sites.h) */

static void put_left_out(const struct sites_left_out *l, FILE *f)
{
	fprintf(f, "{\"stacks\": %zu, \"bytes\": %llu, \"allocs\": %llu", l->stacks,
		(unsigned long long)l->bytes, (unsigned long long)l->allocs);
}

static void put_site_growth(const struct report_site *site, FILE *f)
{
	fprintf(f, "     \"growing_stacks\": %zu, \"slope_bytes_per_s\": ", site->growing);
	put_num(site->slope, f);
	fputs(", \"leak_score\": ", f);
	put_num(site->score, f);
	if (site->rank)
		fprintf(f, ", \"leak_rank\": %u,\n", site->rank);
	else
		fputs(", \"leak_rank\": null,\n", f);
}

/* pos[i]: where r->stacks[i] is in the stacks written, when it is written. */
static void put_site(const struct report *r, const struct report_site *site, const size_t *pos,
		     FILE *f)
{
	struct sites_left_out lo = sites__left_out(r, site);

	fprintf(f, "    {\"bytes\": %llu, \"allocs\": %llu, \"total_bytes\": %llu, "
		"\"total_allocs\": %llu, \"stack_count\": %zu",
		(unsigned long long)site->bytes, (unsigned long long)site->allocs,
		(unsigned long long)site->total_bytes, (unsigned long long)site->total_allocs,
		site->nr_stacks);
	put_estimate(r, site->bytes, site->samples, site->var, f);
	fputs(",\n", f);
	if (r->analysis)
		put_site_growth(site, f);
	fputs("     \"left_out\": ", f);
	put_left_out(&lo, f);
	fputs("},\n     \"stacks\": [", f);
	for (size_t j = 0; j < site->kept; j++)
		fprintf(f, "%s%zu", j ? ", " : "", pos[site->stacks[j]]);
	fprintf(f, "],\n     \"own\": %s, \"import\": %s, \"initializer\": %s, \"runtime\": ",
		site->own ? "true" : "false", site->import ? "true" : "false",
		site->preinit ? "true" : "false");
	if (site->runtime)
		fprintf(f, "\"%s\"", runtime_blocks__key(site->runtime));
	else
		fputs("null", f);
	fputs(", \"frame\": ", f);
	if (site->frame)
		put_frame(site->frame, f);
	else
		fputs("null", f);
	fputc('}', f);
}

static void put_sites(const struct report *r, const size_t *pos, FILE *f)
{
	struct sites_left_out lo = sites__left_out(r, NULL);

	fputs("  \"sites\": [", f);
	for (size_t i = 0; i < r->nr_sites; i++) {
		fputs(i ? ",\n" : "\n", f);
		put_site(r, &r->sites[i], pos, f);
	}
	fputs(r->nr_sites ? "\n  ],\n" : "],\n", f);
	/* Nothing is lost silently: what the stacks below leave out, and how to have it. */
	fputs("  \"left_out\": ", f);
	put_left_out(&lo, f);
	fputs(", \"option\": \"--all-stacks\"},\n", f);
}

/* The sites, then the stacks the files keep, by bytes descending. */
static int put_sites_and_stacks(const struct report *r, FILE *f)
{
	size_t *pos = calloc(r->nr_stacks ?: 1, sizeof(*pos));
	size_t n = 0;

	if (!pos)
		return -ENOMEM;
	for (size_t i = 0; i < r->nr_stacks; i++)
		pos[i] = r->stacks[i].left_out ? SIZE_MAX : n++;
	put_sites(r, pos, f);
	fputs("  \"stacks\": [", f);
	for (size_t i = 0, k = 0; i < r->nr_stacks; i++) {
		if (r->stacks[i].left_out)
			continue;
		fputs(k++ ? ",\n" : "\n", f);
		put_stack(r, &r->stacks[i], r->analysis ? EXTRA_GROWTH : EXTRA_NONE,
			  r->nr_sites ? r->stacks[i].site : SIZE_MAX, f);
	}
	fputs(n ? "\n  ]" : "]", f);
	free(pos);
	return 0;
}

/* A moment's figures; the target's are null when they could not be read. */
static void put_sample(const char *key, const struct report_sample *s, FILE *f)
{
	fprintf(f, "             \"%s\": {\"t_s\": ", key);
	put_num(s->t_s, f);
	fprintf(f, ", \"live_bytes\": %llu", (unsigned long long)s->live);
	if (s->mem)
		fprintf(f, ", \"read_at_s\": %.3f, \"rss_bytes\": %llu, \"anon_bytes\": %llu, \"heap_bytes\": %llu, "
			"\"arena_bytes\": %llu, \"arena_reserved_bytes\": %llu, \"arenas\": %u}",
			s->mem_t_s, (unsigned long long)s->rss, (unsigned long long)s->anon,
			(unsigned long long)s->heap, (unsigned long long)s->arena,
			(unsigned long long)s->arena_reserved, s->arenas);
	else
		fputs(", \"read_at_s\": null, \"rss_bytes\": null, \"anon_bytes\": null, \"heap_bytes\": null, "
		      "\"arena_bytes\": null, \"arena_reserved_bytes\": null, \"arenas\": null}", f);
}

static void put_startup(const struct report_startup *st, FILE *f)
{
	fputs("             \"startup\": {\"end_s\": ", f);
	put_num(st->end_s, f);
	fprintf(f, ", \"ongoing\": %s, \"new_stacks\": %u, \"unstored_allocs\": %llu, "
		"\"new_share\": ", st->ongoing ? "true" : "false", st->new_stacks,
		(unsigned long long)st->unstored);
	put_num(st->new_share, f);
	/* Sampling: judged by site (analyze/history_sites.h); exact mode has no such key. */
	if (st->by_site)
		fprintf(f, ", \"new_sites\": %u", st->new_sites);
	fputs("},\n", f);
}

/*
 * What the target left outstanding when it exited (never freed), whatever
 * the verdict; null when it had not exited by this report.
 */
static void put_at_exit(const struct report *r, FILE *f)
{
	const struct report_totals *t = &r->totals;

	fputs("             \"at_exit\": ", f);
	if (!r->analysis->memory.exited) {
		fputs("null,\n", f);
		return;
	}
	fprintf(f, "{\"heap_bytes\": %llu, \"heap_allocs\": %llu, \"mmap_bytes\": %llu, "
		"\"mmap_allocs\": %llu},\n",
		(unsigned long long)t->kind_bytes[KIND_HEAP],
		(unsigned long long)t->kind_allocs[KIND_HEAP],
		(unsigned long long)t->kind_bytes[KIND_MMAP],
		(unsigned long long)t->kind_allocs[KIND_MMAP]);
}

/*
 * What the verdict knows: its live trend measured on complete figures (else
 * "fragmentation" is not "not a leak"), the drops that made the figures
 * incomplete, and the allocator whose advice the text gives.
 */
static void put_drops(const struct report *r, FILE *f)
{
	const struct report_memory *m = &r->analysis->memory;
	uint64_t hint = verdict__max_allocs_hint(&r->totals);

	fprintf(f, "             \"trend_known\": %s, \"incomplete\": %s, \"dropped\": %llu, "
		"\"untracked_allocs\": %llu, \"untracked_growing\": %s, "
		"\"untracked_rose_intervals\": %u, \"untracked_intervals\": %u,\n"
		"             \"suggested_max_allocs\": ",
		m->trend_known ? "true" : "false", m->incomplete ? "true" : "false",
		(unsigned long long)m->drops, (unsigned long long)m->untracked,
		m->untracked_growing ? "true" : "false", m->untracked_rose, m->untracked_intervals);
	if (hint)
		fprintf(f, "%llu", (unsigned long long)hint);
	else
		fputs("null", f);
	fputs(", \"allocator\": ", f);
	json_put__string(report__allocator_name(r->allocator), f);
	fputs(",\n", f);
}

/* The last leak an earlier report named, when none grows now (VERDICT_STOPPED); else null. */
static void put_grew(const struct report_grew *g, FILE *f)
{
	if (!g->stacks) {
		fputs("             \"grew\": null,\n", f);
		return;
	}
	fprintf(f, "             \"grew\": {\"from_s\": %.3f, \"to_s\": %.3f, \"stacks\": %zu, "
		"\"bytes_per_s\": ", g->from_s, g->to_s, g->stacks);
	put_num(g->slope, f);
	fprintf(f, ", \"live_bytes\": %llu, \"site\": ", (unsigned long long)g->live);
	if (!g->function[0]) {
		fputs("null},\n", f);
		return;
	}
	fputs("{\"function\": ", f);
	json_put__string(g->function, f);
	fputs(", \"file\": ", f);
	if (g->file[0])
		json_put__string(g->file, f);
	else
		fputs("null", f);
	fprintf(f, ", \"line\": %d}},\n", g->line);
}

static void put_memory(const struct report *r, FILE *f)
{
	const struct report_memory *m = &r->analysis->memory;

	fputs("  \"memory\": {\"verdict\": ", f);
	json_put__string(verdict__name(m->verdict), f);
	fprintf(f, ", \"pymalloc\": %s", m->pymalloc ? "true" : "false");
	fprintf(f, ", \"released\": %s, \"reused\": %s, \"attached\": %s, \"reports\": %zu, "
		"\"growing_stacks\": %zu,\n             \"live_trend\": ",
		m->released ? "true" : "false", m->reused ? "true" : "false",
		m->attached ? "true" : "false", m->reports, m->growing);
	json_put__string(trend_name(m->live.trend), f);
	fputs(", \"live_slope_bytes_per_s\": ", f);
	put_num(m->live.slope, f);
	if (m->reports)
		fprintf(f, ", \"retained_bytes\": %lld, \"max_retained_bytes\": %lld, "
			"\"max_retained_in_heap_bytes\": %lld,\n",
			(long long)m->now_retained, (long long)m->worst_retained,
			(long long)m->worst_in_heap);
	else
		fputs(", \"retained_bytes\": null, \"max_retained_bytes\": null, "
		      "\"max_retained_in_heap_bytes\": null,\n", f);
	put_startup(&m->startup, f);
	put_grew(&m->grew, f);
	put_drops(r, f);
	put_at_exit(r, f);
	put_sample("baseline", &m->base, f);
	fputs(",\n", f);
	put_sample("max_retained_at", &m->worst, f);
	fputs(",\n", f);
	put_sample("now", &m->now, f);
	fputc('}', f);
}

static void put_analysis(const struct report *r, FILE *f)
{
	const struct report_analysis *a = r->analysis;

	fputs(",\n  ", f);
	put_stacks(r, "churn", a->churn, a->nr_churn, EXTRA_RATE, "  ", f);
	fputs(",\n", f);
	put_peak(r, &a->peak, f);
	fputs(",\n", f);
	put_memory(r, f);
}

int report_json__write(const struct report *r, FILE *f)
{
	fprintf(f, "{\n  \"version\": %d,\n  \"target\": {\"pid\": %d, \"kernel\": %s, \"command\": ",
		JSON_VERSION, r->pid, r->kernel ? "true" : "false");
	json_put__string(r->command, f);
	/* JSON has no NaN or infinity. */
	fprintf(f, "},\n  \"duration_s\": %.3f,\n", isfinite(r->duration_s) ? r->duration_s : 0.0);
	fprintf(f, "  \"sort\": \"%s\",\n", r->sort_count ? "count" : "size");	/* sites[]' order */
	put_python(r->python, f);
	report_reach__json(r, f);
	put_sampling(r, f);
	put_totals(r, &r->totals, f);
	if (put_sites_and_stacks(r, f))
		return -ENOMEM;
	report_processes__json(r, f);
	if (r->analysis)
		put_analysis(r, f);
	fputs("\n}\n", f);
	return ferror(f) ? -EIO : 0;
}
