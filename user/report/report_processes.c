// SPDX-License-Identifier: GPL-2.0
/*
 * --follow: what each traced process holds. The text lists the target and
 * the processes holding the most, each with its biggest stacks (by their
 * site frame: the sites above are the summary across processes); the JSON
 * lists every process, with its stacks as positions in "stacks", as the
 * sites do. A process's figures are its own: blocks it inherited at its
 * fork stay its parent's.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "model/report.h"
#include "json_put.h"
#include "report_processes.h"
#include "text_put.h"

#define PROCESS_STACKS 3	/* stacks shown under each process */

static void put_process_head(const struct report_process *p, FILE *f)
{
	char all[REPORT_COUNT_LEN], frees[REPORT_COUNT_LEN];

	fprintf(f, "  pid %d (", p->pid);
	if (!p->tag)
		fputs("the target", f);
	else
		fprintf(f, "parent %d", p->ppid);
	if (p->exited)
		fputs(", exited", f);
	if (p->after_exec)
		fputs(", after its exec", f);
	if (p->execed) {
		fputs(", ran exec: ", f);
		text_put__amount(p->exec_freed_bytes, p->exec_freed_allocs, f);
		fputs(" freed by it", f);
	}
	if (!p->traced)
		fputs(", could not be probed", f);
	if (p->attached)
		fputs(", running before the attach", f);
	fputs(")", f);
	if (p->command) {
		fputc(' ', f);
		text_put__oneline(p->command, f);
	}
	fputs(": ", f);
	text_put__amount(p->totals.outstanding_bytes, p->totals.outstanding_allocs, f);
	fprintf(f, " (%s %s, %s %s since tracing began)\n", report__count(p->totals.allocs, all),
		report__plural(p->totals.allocs, "allocation", "allocations"),
		report__count(p->totals.frees, frees),
		report__plural(p->totals.frees, "free", "frees"));
}

static void put_process_stacks(const struct report *r, const struct report_process *p, FILE *f)
{
	size_t shown = 0;

	for (size_t i = 0; i < r->nr_stacks && shown < PROCESS_STACKS; i++) {
		const struct report_stack *s = &r->stacks[i];

		if (s->proc != p->tag)
			continue;
		fputs("      ", f);
		text_put__amount(s->bytes, s->allocs, f);
		fprintf(f, " from %s, at ", report__api_name(s->api));
		text_put__stack_site(s, r->full_names, f);
		fputc('\n', f);
		shown++;
	}
}

static int by_tag(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

void report_processes__site(const struct report *r, const struct report_site *site, FILE *f)
{
	uint32_t *tags;
	size_t n = 1;

	if (r->nr_processes < 2 || site->nr_stacks < 2)
		return;
	tags = malloc(site->nr_stacks * sizeof(*tags));
	if (!tags)
		return;
	for (size_t j = 0; j < site->nr_stacks; j++)
		tags[j] = r->stacks[site->stacks[j]].proc;
	qsort(tags, site->nr_stacks, sizeof(*tags), by_tag);
	for (size_t j = 1; j < site->nr_stacks; j++)
		n += tags[j] != tags[j - 1];
	if (n > 1)
		fprintf(f, " in %zu processes", n);
	free(tags);
}

/* Processes by outstanding bytes, the target first: indices into r->processes. */
static int by_bytes(const void *a, const void *b, void *arg)
{
	const struct report_process *v = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	if (!x || !y)
		return !y - !x;
	return -report__cmp_u64(v[x].totals.outstanding_bytes, v[y].totals.outstanding_bytes) ?:
	       report__cmp_u64(x, y);
}

void report_processes__text(const struct report *r, FILE *f)
{
	size_t n = r->nr_processes, top = r->top ? r->top : n, shown = 0, idle = 0;
	uint64_t more_bytes = 0, more_allocs = 0;
	size_t *order;

	if (n < 2)
		return;
	order = malloc(n * sizeof(*order));
	if (!order)
		return;
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof(*order), by_bytes, r->processes);
	fprintf(f, "\nProcesses: the target and %zu it started (--follow), each holding its own:\n",
		n - 1);
	for (size_t i = 0; i < n; i++) {
		const struct report_process *p = &r->processes[order[i]];

		if (i && !p->totals.outstanding_allocs) {
			idle++;
			continue;
		}
		if (shown++ > top) {
			more_bytes += p->totals.outstanding_bytes;
			more_allocs += p->totals.outstanding_allocs;
			continue;
		}
		put_process_head(p, f);
		if (!r->brief)
			put_process_stacks(r, p, f);
	}
	if (shown > top + 1)
		text_put__more("processes", shown - top - 1, more_bytes, more_allocs, f);
	if (idle)
		fprintf(f, "  and %zu more %s holding nothing\n", idle,
			report__plural(idle, "process", "processes"));
	free(order);
}

/* Where each kept stack is in the JSON's "stacks" (SIZE_MAX: left out). */
static size_t *stack_positions(const struct report *r)
{
	size_t *pos = calloc(r->nr_stacks ?: 1, sizeof(*pos));
	size_t n = 0;

	for (size_t i = 0; pos && i < r->nr_stacks; i++)
		pos[i] = r->stacks[i].left_out ? SIZE_MAX : n++;
	return pos;
}

static void put_json_process(const struct report *r, const struct report_process *p,
			     const size_t *pos, FILE *f)
{
	const struct report_totals *t = &p->totals;
	bool first = true;

	fprintf(f, "    {\"pid\": %d, \"ppid\": ", p->pid);
	if (p->tag)
		fprintf(f, "%d", p->ppid);
	else
		fputs("null", f);
	fputs(", \"command\": ", f);
	json_put__string(p->command, f);
	fprintf(f, ", \"target\": %s, \"exited\": %s, \"execed\": %s, \"after_exec\": %s, "
		"\"traced\": %s, \"attached\": %s,\n", p->tag ? "false" : "true",
		p->exited ? "true" : "false", p->execed ? "true" : "false",
		p->after_exec ? "true" : "false", p->traced ? "true" : "false",
		p->attached ? "true" : "false");
	if (p->execed)
		fprintf(f, "     \"exec_freed_bytes\": %llu, \"exec_freed_allocs\": %llu,\n",
			(unsigned long long)p->exec_freed_bytes,
			(unsigned long long)p->exec_freed_allocs);
	fprintf(f, "     \"totals\": {\"outstanding_bytes\": %llu, \"outstanding_allocs\": %llu, "
		"\"allocs\": %llu, \"frees\": %llu},\n     \"stacks\": [",
		(unsigned long long)t->outstanding_bytes, (unsigned long long)t->outstanding_allocs,
		(unsigned long long)t->allocs, (unsigned long long)t->frees);
	for (size_t i = 0; i < r->nr_stacks; i++) {
		if (r->stacks[i].proc != p->tag || pos[i] == SIZE_MAX)
			continue;
		fprintf(f, "%s%zu", first ? "" : ", ", pos[i]);
		first = false;
	}
	/* The memory figures (RSS, the verdict) are read for the target alone. */
	fputs("],\n     \"memory\": null}", f);
}

void report_processes__json(const struct report *r, FILE *f)
{
	size_t *pos;

	if (!r->nr_processes)
		return;
	pos = stack_positions(r);
	if (!pos)
		return;
	fputs(",\n  \"processes\": [", f);
	for (size_t i = 0; i < r->nr_processes; i++) {
		fputs(i ? ",\n" : "\n", f);
		put_json_process(r, &r->processes[i], pos, f);
	}
	fputs("\n  ]", f);
	free(pos);
}
