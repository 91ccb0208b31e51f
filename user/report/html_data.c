// SPDX-License-Identifier: GPL-2.0
/*
 * The --html page's data: what the JSON report keeps (each site, and of
 * each its kept stacks, analyze/sites.h), with short keys, every string and
 * frame by its index in the pool. Trends are the text's words, so that the
 * page's colours say what the text says.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include "analyze/reach.h"
#include "analyze/runtime_blocks.h"
#include "analyze/sites.h"
#include "analyze/verdict.h"
#include "html_data.h"
#include "report_trend.h"

/* A stack's trend, one word (a CSS class too): "stepped" for bytes that rose, not steadily. */
static const char *trend_word(const struct report_growth *g)
{
	static const char *const words[] = { "unknown", "growing", "stable", "shrinking",
					     "start-up" };

	if (report_trend__stepped(g))
		return g->shrank ? "varying" : "stepped";
	return (unsigned)g->trend < sizeof(words) / sizeof(words[0]) ? words[g->trend] : "unknown";
}

/* JSON has no NaN or infinity. */
static void put_num(const char *key, double v, FILE *f)
{
	fprintf(f, "\"%s\":%.3f", key, isfinite(v) && v != 0 ? v : 0.0);
}

static void put_stack(const struct report *r, const struct report_stack *s, struct html_pool *p,
		      FILE *f)
{
	fprintf(f, "{\"b\":%llu,\"a\":%llu,\"tb\":%llu,\"ta\":%llu,\"api\":%ld,\"trend\":%ld,",
		(unsigned long long)s->bytes, (unsigned long long)s->allocs,
		(unsigned long long)s->total_bytes, (unsigned long long)s->total_allocs,
		html_pool__string(p, report__api_name(s->api)),
		html_pool__string(p, r->analysis ? trend_word(&s->growth) : "unknown"));
	put_num("slope", r->analysis ? s->growth.slope : 0, f);
	fprintf(f, ",\"proc\":%u,\"site\":%zu,\"marker\":%ld,\"reach\":", s->proc,
		r->nr_sites ? s->site : 0, html_pool__string(p, report__marker(s)));
	if (s->reach)
		fprintf(f, "[%llu,%llu,%llu,%llu]", (unsigned long long)s->reach->bytes[0],
			(unsigned long long)s->reach->bytes[1],
			(unsigned long long)s->reach->bytes[2],
			(unsigned long long)s->reach->bytes[3]);
	else
		fputs("null", f);
	fputs(",\"f\":[", f);
	for (size_t i = 0; i < s->nr_frames; i++)
		fprintf(f, "%s%ld", i ? "," : "", html_pool__frame(p, report__frame(s, i)));
	fputs("]}", f);
}

/*
 * A site's word: growing when a stack of it grows, start-up for an import's
 * or a library initializer's, else its first stack's.
 */
static const char *site_trend(const struct report *r, const struct report_site *site)
{
	if (!r->analysis)
		return "unknown";
	if (site->growing)
		return "growing";
	if (site->import || site->preinit)
		return "start-up";
	return site->nr_stacks ? trend_word(&r->stacks[site->stacks[0]].growth) : "unknown";
}

/* --reach: the site's bytes of each kind, all its stacks summed; nothing without a scan. */
static void put_site_reach(const struct report *r, const struct report_site *site, FILE *f)
{
	uint64_t sum[REPORT_REACH_KINDS] = { 0 };

	if (!r->reach)
		return;
	for (size_t j = 0; j < site->nr_stacks; j++) {
		const struct report_stack *s = &r->stacks[site->stacks[j]];

		for (int k = 0; k < REPORT_REACH_KINDS && s->reach; k++)
			sum[k] += s->reach->bytes[k];
	}
	fprintf(f, ",\"reach\":[%llu,%llu,%llu,%llu]", (unsigned long long)sum[0],
		(unsigned long long)sum[1], (unsigned long long)sum[2], (unsigned long long)sum[3]);
}

static void put_site(const struct report *r, const struct report_site *site, const size_t *pos,
		     struct html_pool *p, FILE *f)
{
	struct sites_left_out lo = sites__left_out(r, site);

	fprintf(f, "{\"b\":%llu,\"a\":%llu,\"tb\":%llu,\"ta\":%llu,\"n\":%zu,\"growing\":%zu,"
		"\"rank\":%u,\"own\":%s,\"import\":%s,\"runtime\":%ld,\"trend\":%ld,\"frame\":%ld,",
		(unsigned long long)site->bytes, (unsigned long long)site->allocs,
		(unsigned long long)site->total_bytes, (unsigned long long)site->total_allocs,
		site->nr_stacks, site->growing, site->rank, site->own ? "true" : "false",
		site->import ? "true" : "false",
		site->runtime ? html_pool__string(p, runtime_blocks__what(site->runtime)) : -1,
		html_pool__string(p, site_trend(r, site)),
		site->frame ? html_pool__frame(p, site->frame) : -1);
	put_num("slope", site->slope, f);
	put_site_reach(r, site, f);
	fprintf(f, ",\"left_out\":[%zu,%llu,%llu],\"stacks\":[", lo.stacks,
		(unsigned long long)lo.bytes, (unsigned long long)lo.allocs);
	for (size_t j = 0; j < site->kept; j++)
		fprintf(f, "%s%zu", j ? "," : "", pos[site->stacks[j]]);
	fputs("]}", f);
}

/*
 * The sites, then the stacks they keep (positions in "stacks"). A report
 * never grouped has no site: its stacks are those the files keep.
 */
static int put_sites_and_stacks(const struct report *r, struct html_pool *p, FILE *f)
{
	size_t *pos = malloc((r->nr_stacks ?: 1) * sizeof(*pos)), n = 0;
	bool *kept = calloc(r->nr_stacks ?: 1, sizeof(*kept));

	if (!pos || !kept) {
		free(pos);
		free(kept);
		return -ENOMEM;
	}
	for (size_t i = 0; i < r->nr_sites; i++)
		for (size_t j = 0; j < r->sites[i].kept; j++)
			kept[r->sites[i].stacks[j]] = true;
	for (size_t i = 0; i < r->nr_stacks; i++) {
		kept[i] = r->nr_sites ? kept[i] : !r->stacks[i].left_out;
		pos[i] = kept[i] ? n++ : SIZE_MAX;
	}
	fputs("\"sites\": [", f);
	for (size_t i = 0; i < r->nr_sites; i++) {
		fputs(i ? ",\n" : "\n", f);
		put_site(r, &r->sites[i], pos, p, f);
	}
	fputs("],\n\"stacks\": [", f);
	for (size_t i = 0, k = 0; i < r->nr_stacks; i++) {
		if (!kept[i])
			continue;
		fputs(k++ ? ",\n" : "\n", f);
		put_stack(r, &r->stacks[i], p, f);
	}
	fputs("],\n", f);
	free(pos);
	free(kept);
	return 0;
}

static void put_processes(const struct report *r, struct html_pool *p, FILE *f)
{
	fputs("\"processes\": [", f);
	for (size_t i = 0; i < r->nr_processes; i++) {
		const struct report_process *q = &r->processes[i];

		fprintf(f, "%s{\"tag\":%u,\"pid\":%d,\"ppid\":%d,\"command\":%ld,\"exited\":%s,"
			"\"execed\":%s,\"b\":%llu,\"a\":%llu,\"allocs\":%llu,\"frees\":%llu}",
			i ? ",\n" : "\n", q->tag, q->pid, q->ppid, html_pool__string(p, q->command),
			q->exited ? "true" : "false", q->execed ? "true" : "false",
			(unsigned long long)q->totals.outstanding_bytes,
			(unsigned long long)q->totals.outstanding_allocs,
			(unsigned long long)q->totals.allocs, (unsigned long long)q->totals.frees);
	}
	fputs("],\n", f);
}

/* memcheck's four kinds, in all; null without a scan. */
static void put_reach(const struct report *r, struct html_pool *p, FILE *f)
{
	const struct report_reach *h = r->reach;

	fputs("\"reach\": ", f);
	if (!h) {
		fputs("null,\n", f);
		return;
	}
	fputs("{\"kinds\":[", f);
	for (int k = 0; k < REPORT_REACH_KINDS; k++)
		fprintf(f, "%s[%ld,%llu,%llu]", k ? "," : "", html_pool__string(p, reach__kind_text(k)),
			(unsigned long long)h->total.bytes[k], (unsigned long long)h->total.blocks[k]);
	fprintf(f, "],\"at_exit\":%s,", h->at_exit ? "true" : "false");
	put_num("t_s", h->t_s, f);
	fputs("},\n", f);
}

int html_data__write(const struct report *r, struct html_pool *p, FILE *f)
{
	const struct report_memory *m = r->analysis ? &r->analysis->memory : NULL;

	fprintf(f, "\"version\": 1, \"pid\": %d, \"command\": %ld, ", r->pid,
		html_pool__string(p, r->command));
	put_num("duration_s", r->duration_s, f);
	fprintf(f, ", \"sampling\": %s", r->sampling ? "true" : "false");
	fprintf(f, ", \"verdict\": %ld, \"python\": %s, \"older_ms\": %llu,\n"
		"\"outstanding\": [%llu,%llu], \"nr_stacks\": %zu, \"all_stacks\": %s,\n",
		html_pool__string(p, m ? verdict__name(m->verdict) : NULL),
		r->python ? "true" : "false", (unsigned long long)r->older_ms,
		(unsigned long long)r->totals.outstanding_bytes,
		(unsigned long long)r->totals.outstanding_allocs, r->nr_stacks,
		r->all_stacks ? "true" : "false");
	put_reach(r, p, f);
	put_processes(r, p, f);
	return put_sites_and_stacks(r, p, f);
}
