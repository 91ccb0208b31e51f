// SPDX-License-Identifier: GPL-2.0
/* Names and helpers shared by the report writers, and the report's owner. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"

#define API_NAME(api, name, ...) [API_##api] = name,
static const char *const api_names[API__COUNT] = { MEMLEAK_APIS(API_NAME) };
#undef API_NAME

/*
 * Only the counters that mean something was lost. Untracked frees (blocks
 * allocated before tracing began), stop requests and execs are normal events.
 */
static const char *const counter_names[CNT__COUNT] = {
	[CNT_ALLOCS_MAP_FULL] = "allocs_map_full",
	[CNT_SITES_MAP_FULL] = "sites_map_full",
	[CNT_STACK_ERRORS] = "stack_errors",
	[CNT_STACKS_MAP_FULL] = "stacks_map_full",
	[CNT_STACK_COLLISIONS] = "stack_collisions",
	[CNT_MISSED_RETURNS] = "missed_returns",
	[CNT_STATE_ERRORS] = "state_errors",
	[CNT_REPLACED] = "replaced",
	[CNT_UNWIND_STOPS] = "unwind_stops",
	[CNT_PY_STACKS_MAP_FULL] = "py_stacks_map_full",
	[CNT_PY_STACK_ERRORS] = "py_stack_errors",
	[CNT_UNWIND_PENDING] = "unwind_pending",
	[CNT_PROCS_MAP_FULL] = "procs_map_full",
	[CNT_KERNEL_MISSED] = "kernel_missed",
	[CNT_PY_CODES_UNTOLD] = "py_codes_untold",
	[CNT_STACK_RING_FULL] = "stack_ring_full",
	[CNT_STACK_MERGED] = "stacks_merged",
	[CNT_PY_RING_FULL] = "py_stack_ring_full",
	[CNT_STACK_PREEMPTED] = "stacks_preempted",
	[CNT_STACKS_LOST] = "stacks_lost",
	[CNT_PY_CODES_UNNAMED] = "py_codes_unnamed",
};

/* The per-site map is sized from --stack-storage-size as well. */
static const char *const counter_fixes[CNT__COUNT] = {
	[CNT_ALLOCS_MAP_FULL] = "--max-allocs",
	[CNT_SITES_MAP_FULL] = "--stack-storage-size",
	[CNT_STACKS_MAP_FULL] = "--stack-storage-size",
	[CNT_PY_STACKS_MAP_FULL] = "--stack-storage-size",
	[CNT_PY_CODES_UNTOLD] = "--stack-storage-size",
	[CNT_STACK_RING_FULL] = "--new-stack-buffer",
	[CNT_PY_RING_FULL] = "--new-stack-buffer",
	[CNT_PY_CODES_UNNAMED] = "--py-code-buffer",
};

bool report__starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

int report__cmp_name(const char *a, const char *b)
{
	if (!a || !b)
		return !a - !b;
	return strcmp(a, b);
}

int report__cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

int report__cmp_site(uint64_t a_id, uint32_t a_api, uint64_t b_id, uint32_t b_api)
{
	return report__cmp_u64(a_id, b_id) ?: report__cmp_u64(a_api, b_api);
}

bool report__is_shared_object(const char *base)
{
	for (const char *p = strstr(base, ".so"); p; p = strstr(p + 1, ".so"))
		if (p[3] == '\0' || p[3] == '.')
			return true;
	return false;
}

const char *report__language_name(enum report_language l)
{
	return l == FRAME_PYTHON ? "python" : l == FRAME_KERNEL ? "kernel" : "native";
}

const char *report__target(const struct report *r, char *buf)
{
	if (r->kernel)
		return "the kernel";
	snprintf(buf, REPORT_TARGET_LEN, "pid %d", r->pid);
	return buf;
}

const char *report__marker(const struct report_stack *s)
{
	if (s->no_stack)
		return "[stack unavailable]";
	if (s->truncated)
		return "[truncated]";
	return s->unwind_pending ? "[unwind table loading]" : NULL;
}

const char *report__api_name(uint32_t api)
{
	return api < API__COUNT && api_names[api] ? api_names[api] : "?";
}

const char *report__counter_name(enum memleak_counter c)
{
	return (unsigned)c < CNT__COUNT ? counter_names[c] : NULL;
}

const char *report__counter_fix(enum memleak_counter c)
{
	return (unsigned)c < CNT__COUNT ? counter_fixes[c] : NULL;
}

uint64_t report__drops(const struct report_totals *t)
{
	uint64_t n = 0;

	for (int c = 0; c < CNT__COUNT; c++)
		if (counter_names[c])
			n += t->counters[c];
	return n;
}

/* The drops whose allocation is in no figure; the others lost a stack, a free or a child. */
uint64_t report__untracked(const struct report_totals *t)
{
	return t->counters[CNT_ALLOCS_MAP_FULL] + t->counters[CNT_SITES_MAP_FULL] +
	       t->counters[CNT_MISSED_RETURNS] + t->counters[CNT_STATE_ERRORS];
}

/* From the file's name: what a distribution installs (libc.so.6, libtcmalloc_minimal.so.4, ...). */
enum report_allocator report__allocator_of(const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL;

	base = base ? base + 1 : path;
	if (!base)
		return ALLOCATOR_UNKNOWN;
	if (strstr(base, "tcmalloc"))
		return ALLOCATOR_TCMALLOC;
	if (strstr(base, "jemalloc"))
		return ALLOCATOR_JEMALLOC;
	if (report__starts(base, "libc.so") || report__starts(base, "libc-2."))
		return ALLOCATOR_GLIBC;
	return ALLOCATOR_UNKNOWN;
}

const char *report__allocator_name(enum report_allocator a)
{
	static const char *const names[] = {
		[ALLOCATOR_GLIBC] = "glibc",
		[ALLOCATOR_TCMALLOC] = "tcmalloc",
		[ALLOCATOR_JEMALLOC] = "jemalloc",
	};

	return (unsigned)a < sizeof(names) / sizeof(names[0]) ? names[a] : NULL;
}

int report__utf8_len(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned char lo = 0x80, hi = 0xbf;
	int n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (int i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

double report__margin(double var)
{
	return var > 0 ? REPORT_Z95 * sqrt(var) : 0;
}

const char *report__human_size(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	size_t u = 0;
	double v;

	if (bytes < 1024) {
		snprintf(buf, len, "%u B", (unsigned)bytes);
		return buf;
	}
	v = (double)bytes / 1024;
	/* Move up before "%.1f" would round to "1024.0". */
	while (v >= 1023.95 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%.1f %s", v, units[u]);
	return buf;
}

void report__frame_free(struct report_frame *f)
{
	if (f->borrowed)
		return;
	free(f->function);
	free(f->symbol);
	free(f->module);
	free(f->file);
}

static void stack_free(struct report_stack *s)
{
	/* Shared, the frames are the frame table's (frame_table.h): only refs is its own. */
	for (size_t i = 0; !s->shared && i < s->nr_frames; i++)
		report__frame_free(&s->frames[i]);
	free(s->frames);
	if (s->site_frame && !s->site_frame_kept) {
		report__frame_free(s->site_frame);
		free(s->site_frame);
	}
	if (s->blocks)
		free(s->blocks->v);
	free(s->blocks);
}

static void stacks_free(struct report_stack *s, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		stack_free(&s[i]);
	free(s);
}

/* Its samples are the history's, borrowed. */
static void analysis_free(struct report_analysis *a)
{
	if (!a)
		return;
	free(a->growing);
	stacks_free(a->churn, a->nr_churn);
	stacks_free(a->peak.stacks, a->peak.nr_stacks);
	free(a);
}

/* r->command is borrowed (see report_build__report), so it is not freed here. */
void report__free(struct report *r)
{
	if (!r)
		return;
	stacks_free(r->stacks, r->nr_stacks);
	free(r->sites);
	free(r->site_stacks);
	free(r->processes);
	analysis_free(r->analysis);
	free(r);
}

const char *report__count(uint64_t v, char *buf)
{
	char digits[REPORT_COUNT_LEN];
	int n = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)v);
	int o = 0;

	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}

const char *report__plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}
