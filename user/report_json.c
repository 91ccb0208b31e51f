// SPDX-License-Identifier: GPL-2.0
/*
 * The JSON report. Its schema is a contract with scripts and CI jobs: add
 * fields if needed, never rename or remove one, and bump "version" if a
 * meaning changes.
 */
#include <errno.h>
#include <math.h>
#include "report.h"

#define JSON_VERSION 1

/* The order of totals.dropped, as documented. */
static const enum memleak_counter dropped_order[] = {
	CNT_ALLOCS_MAP_FULL, CNT_STACK_ERRORS, CNT_MISSED_RETURNS,
	CNT_SITES_MAP_FULL,  CNT_STATE_ERRORS, CNT_REPLACED,
	CNT_STACKS_MAP_FULL, CNT_STACK_COLLISIONS,
};

/* Length of the well-formed UTF-8 sequence at s, or 0 (RFC 3629 ranges). */
static int utf8_len(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	int n;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	/* No overlong forms, no surrogates, nothing above U+10FFFF. */
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
	for (int i = 2; i < n; i++) {
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	}
	return n;
}

/*
 * Names and command lines come from the target and may hold any byte; a
 * single bad one would make the whole document unreadable, so invalid UTF-8
 * becomes U+FFFD.
 */
static void put_string(const char *str, FILE *f)
{
	const unsigned char *s = (const unsigned char *)str;

	if (!str) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	while (*s) {
		int n;

		if (*s == '"' || *s == '\\') {
			fputc('\\', f);
			fputc(*s++, f);
		} else if (*s < 0x20) {
			fprintf(f, "\\u%04x", *s++);
		} else if (*s < 0x80) {
			fputc(*s++, f);
		} else if ((n = utf8_len(s))) {
			fwrite(s, 1, n, f);
			s += n;
		} else {
			fputs("\\ufffd", f);
			s++;
		}
	}
	fputc('"', f);
}

static void put_hex_or_null(bool known, uint64_t v, FILE *f)
{
	if (known)
		fprintf(f, "\"0x%llx\"", (unsigned long long)v);
	else
		fputs("null", f);
}

static void put_totals(const struct report_totals *t, FILE *f)
{
	fprintf(f, "  \"totals\": {\"outstanding_bytes\": %llu, \"outstanding_allocs\": %llu, "
		"\"allocs\": %llu, \"frees\": %llu,\n             \"dropped\": {",
		(unsigned long long)t->outstanding_bytes,
		(unsigned long long)t->outstanding_allocs, (unsigned long long)t->allocs,
		(unsigned long long)t->frees);
	for (size_t i = 0; i < sizeof(dropped_order) / sizeof(dropped_order[0]); i++) {
		enum memleak_counter c = dropped_order[i];

		fprintf(f, "%s\"%s\": %llu", i ? ", " : "", report__counter_name(c),
			(unsigned long long)t->counters[c]);
	}
	fputs("}},\n", f);
}

static void put_frame(const struct report_frame *fr, FILE *f)
{
	fprintf(f, "{\"address\": \"0x%llx\", \"function\": ", (unsigned long long)fr->address);
	put_string(fr->function, f);
	fputs(", \"module\": ", f);
	put_string(fr->module, f);
	/* An offset means nothing without the module it is in. */
	fputs(", \"offset\": ", f);
	put_hex_or_null(fr->module, fr->module_offset, f);
	fputs(", \"file\": ", f);
	put_string(fr->file, f);
	if (fr->line > 0)
		fprintf(f, ", \"line\": %d", fr->line);
	else
		fputs(", \"line\": null", f);
	fprintf(f, ", \"inlined\": %s}", fr->inlined ? "true" : "false");
}

static void put_stack(const struct report_stack *s, FILE *f)
{
	fprintf(f, "    {\"bytes\": %llu, \"allocs\": %llu, \"api\": ", (unsigned long long)s->bytes,
		(unsigned long long)s->allocs);
	put_string(report__api_name(s->api), f);
	fprintf(f, ", \"total_bytes\": %llu, \"total_allocs\": %llu, \"truncated\": %s,\n",
		(unsigned long long)s->total_bytes, (unsigned long long)s->total_allocs,
		s->truncated ? "true" : "false");
	fputs("     \"frames\": [", f);
	for (size_t i = 0; i < s->nr_frames; i++) {
		fputs(i ? ",\n                " : "", f);
		put_frame(&s->frames[i], f);
	}
	fputs("]}", f);
}

int report_json__write(const struct report *r, FILE *f)
{
	fprintf(f, "{\n  \"version\": %d,\n  \"target\": {\"pid\": %d, \"command\": ",
		JSON_VERSION, r->pid);
	put_string(r->command, f);
	/* JSON has no NaN or infinity. */
	fprintf(f, "},\n  \"duration_s\": %.3f,\n", isfinite(r->duration_s) ? r->duration_s : 0.0);
	put_totals(&r->totals, f);
	fputs("  \"stacks\": [", f);
	for (size_t i = 0; i < r->nr_stacks; i++) {
		fputs(i ? ",\n" : "\n", f);
		put_stack(&r->stacks[i], f);
	}
	fputs(r->nr_stacks ? "\n  ]\n}\n" : "]\n}\n", f);
	return ferror(f) ? -EIO : 0;
}
