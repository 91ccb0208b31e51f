// SPDX-License-Identifier: GPL-2.0
/* analyze/reach_sum.c and report/report_reach.c: a scan's figures by stack, and as written. */
#include <stdlib.h>
#include "analyze/reach.h"
#include "analyze/reach_sum.h"
#include "helpers.h"
#include "unit.h"
#include "report/report_json.h"
#include "report/report_reach.h"
#include "report/report_text.h"

/* Two stacks of heap blocks, and an mmap that no kind counts. */
static const struct live_block blocks[] = {
	{ 0x1000, 48, 7, API_MALLOC },
	{ 0x2000, 32, 9, API_MALLOC },
	{ 0x3000, 32, 9, API_MALLOC },
	{ 0x4000, 16, 7, API_MALLOC },
	{ 0x10000, 4096, 7, API_MMAP },
};
static const uint8_t kinds[] = {
	REACH_DEFINITE, REACH_INDIRECT, REACH_INDIRECT, REACH_REACHABLE, REACH_SUM_NONE,
};

TEST(reach_sum_by_stack_and_in_all)
{
	struct reach_sum *s;
	struct snap_site sites[] = { { .stack_id = 9, .api = API_MALLOC },
				     { .stack_id = 7, .api = API_MALLOC },
				     { .stack_id = 5, .api = API_CALLOC } };
	const struct snap_site *order[] = { &sites[0], &sites[1], &sites[2] };
	struct aggregate agg = { .sites = order, .nr = 3 };
	struct report_stack st[3] = { 0 };
	struct report r = { .stacks = st, .nr_stacks = 3 };

	ASSERT(!reach_sum__build(blocks, kinds, 5, &s));
	ASSERT_EQ_U64(s->head.total.bytes[REACH_DEFINITE], 48);
	ASSERT_EQ_U64(s->head.total.blocks[REACH_INDIRECT], 2);
	ASSERT_EQ_U64(s->head.total.bytes[REACH_REACHABLE], 16);
	ASSERT_EQ_U64(s->head.mmap_bytes, 4096);
	reach_sum__fill(s, &agg, &r);
	ASSERT(r.reach == &s->head);
	ASSERT(st[0].reach && st[1].reach && !st[2].reach);	/* the third had no block */
	ASSERT_EQ_U64(st[0].reach->bytes[REACH_INDIRECT], 64);
	ASSERT_EQ_U64(st[0].reach->blocks[REACH_DEFINITE], 0);
	ASSERT_EQ_U64(st[1].reach->bytes[REACH_DEFINITE], 48);
	ASSERT_EQ_U64(st[1].reach->bytes[REACH_REACHABLE], 16);
	reach_sum__free(s);
	return true;
}

TEST(reach_written_as_text_and_json)
{
	struct reach_sum *s;
	struct snap_site site = { .stack_id = 7, .api = API_MALLOC };
	const struct snap_site *order[] = { &site };
	struct aggregate agg = { .sites = order, .nr = 1 };
	struct report_stack st = { .bytes = 64, .allocs = 2, .api = API_MALLOC };
	struct report r = { .pid = 1, .stacks = &st, .nr_stacks = 1 };
	char *text, *json, *line = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&line, &len);
	bool ok;

	ASSERT(!reach_sum__build(blocks, kinds, 5, &s));
	s->head.at_exit = true;
	s->head.threads = 2;
	reach_sum__fill(s, &agg, &r);
	ASSERT(f);
	report_reach__text_stack(&st, f);
	fclose(f);
	text = unit__render(report_text__write, &r, NULL);
	json = unit__render(report_json__write, &r, NULL);
	ok = text && json &&
	     strstr(text, "Reachability at the command's exit") &&
	     strstr(text, "definitely lost: 48 bytes in 1 block\n") &&
	     strstr(text, "indirectly lost: 64 bytes in 2 blocks\n") &&
	     strstr(text, "(and 4.0 KiB in 1 tracked mmap") &&
	     !strcmp(line, "      at the scan: 48 bytes in 1 block definitely lost, 16 bytes in 1 block still reachable\n") &&
	     strstr(json, "\"reach\": {\"at\": \"exit\"") && strstr(json, "\"threads\": 2") &&
	     strstr(json, "\"totals\": {\"definitely_lost\": {\"bytes\": 48, \"blocks\": 1}, "
			  "\"indirectly_lost\": {\"bytes\": 64, \"blocks\": 2}") &&
	     strstr(json, ", \"reach\": {\"definitely_lost\": {\"bytes\": 48, \"blocks\": 1}");
	if (!ok)
		fprintf(stderr, "%s\n%s\n", text ? text : "", json ? json : "");
	free(text);
	free(json);
	free(line);
	reach_sum__free(s);
	return ok;
}

/* Many blocks of a few stacks: one entry per stack and api, its figures their blocks' sum. */
TEST(reach_sum_one_entry_per_stack_and_api)
{
	enum { N = 20000, STACKS = 150 };
	struct live_block *b = calloc(N, sizeof(*b));
	uint8_t *k = calloc(N, 1);
	struct reach_sum *s;
	uint64_t want[STACKS][2] = { { 0 } };

	ASSERT(b && k);
	for (uint32_t i = 0; i < N; i++) {
		uint32_t st = (i * 7919u) % STACKS, api = (i / STACKS) % 2 ? API_MALLOC : API_CALLOC;

		/* Stack 0 is MEMLEAK_NO_STACK's: a stack like the others here. */
		b[i] = (struct live_block){ 0x100000 + 64ull * i, 1 + i % 50, st, api };
		k[i] = REACH_DEFINITE;
		want[st][api == API_CALLOC] += b[i].size;
	}
	ASSERT(!reach_sum__build(b, k, N, &s));
	ASSERT_EQ_U64(s->nr, STACKS * 2);
	for (size_t i = 0; i < s->nr; i++) {
		const struct reach_sum_site *t = &s->sites[i];

		ASSERT(!i || report__cmp_site(s->sites[i - 1].stack_id, s->sites[i - 1].api,
					      t->stack_id, t->api) < 0);
		ASSERT_EQ_U64(t->f.bytes[REACH_DEFINITE], want[t->stack_id][t->api == API_CALLOC]);
	}
	reach_sum__free(s);
	free(b);
	free(k);
	return true;
}
