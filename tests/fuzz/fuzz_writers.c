// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: the report writers (user/report_*.c) on reports whose names,
 * files and modules hold any bytes: ';', blanks, newlines, control
 * characters, invalid UTF-8. Whatever the names, the text report must be
 * printable UTF-8 on one line per frame, every folded line must be
 * "frame;...;frame COUNT" with exactly its stack's frames, the JSON must
 * parse, the SVG must be well-formed XML, and the pprof profile must
 * gunzip to well-formed protobuf whose strings are UTF-8, the first "".
 */
#include <ctype.h>
#include <zlib.h>
#include "fuzz.h"
#include "analyze/sites.h"
#include "model/report.h"
#include "report/report_folded.h"
#include "report/report_gperftools.h"
#include "report/report_html.h"
#include "report/report_json.h"
#include "report/report_pprof.h"
#include "report/report_svg.h"
#include "report/report_text.h"

#define MAX_STACKS 6
#define MAX_FRAMES 6

/* ------------------------------------------------------------ input */

struct input {
	const uint8_t *p;
	size_t left;
};

static unsigned take(struct input *in)
{
	if (!in->left)
		return 0;
	in->left--;
	return *in->p++;
}

static uint64_t take_u64(struct input *in, unsigned bytes)
{
	uint64_t v = 0;

	while (bytes--)
		v = v << 8 | take(in);
	return v;
}

/* A string of up to 255 bytes, or NULL (length byte 0xff). */
static char *take_str(struct input *in)
{
	unsigned len = take(in);
	char *s;

	if (len == 0xff)
		return NULL;
	if (len > in->left)
		len = (unsigned)in->left;
	s = malloc(len + 1);
	if (!s)
		abort();
	memcpy(s, in->p, len);
	s[len] = '\0';
	in->p += len;
	in->left -= len;
	return s;
}

static void group(struct input *in, struct report *r);

static void build(struct input *in, struct report *r, struct report_stack *stacks,
		  struct report_frame frames[][MAX_FRAMES])
{
	memset(r, 0, sizeof(*r));
	r->pid = (int)take_u64(in, 2);
	r->command = take_str(in);
	r->duration_s = (double)take_u64(in, 2) / 8;
	r->final = take(in) & 1;
	r->top = take(in) % 8;
	r->folded_allocs = take(in) & 1;
	r->nr_stacks = take(in) % (MAX_STACKS + 1);
	r->stacks = stacks;
	for (size_t i = 0; i < r->nr_stacks; i++) {
		struct report_stack *s = &stacks[i];
		unsigned flags = take(in);

		memset(s, 0, sizeof(*s));
		s->api = take(in) % (API__COUNT + 1);
		s->bytes = take_u64(in, 3);
		s->allocs = take_u64(in, 2);
		s->total_bytes = s->bytes + take_u64(in, 2);
		s->total_allocs = s->allocs + take(in);
		s->no_stack = flags & 1;
		s->truncated = flags & 2;
		s->nr_frames = s->no_stack ? 0 : (flags >> 2) % (MAX_FRAMES + 1);
		s->frames = frames[i];
		for (size_t j = 0; j < s->nr_frames; j++) {
			struct report_frame *fr = &frames[i][j];
			unsigned ff = take(in);

			memset(fr, 0, sizeof(*fr));
			fr->address = take_u64(in, 6);
			fr->module_offset = take_u64(in, 3);
			fr->line = (int)take_u64(in, 2) - 2;
			fr->inlined = ff & 1;
			fr->language = ff & 2 ? FRAME_PYTHON : FRAME_NATIVE;
			fr->function = take_str(in);
			fr->module = take_str(in);
			fr->file = take_str(in);
		}
	}
	for (int c = 0; c < CNT__COUNT; c++)
		r->totals.counters[c] = take(in);
	for (size_t i = 0; i < r->nr_stacks; i++) {
		r->totals.outstanding_bytes += stacks[i].bytes;
		r->totals.outstanding_allocs += stacks[i].allocs;
	}
	group(in, r);
}

/* Sites (analyze/sites.h), each stack's site frame one of its frames, small limits. */
static void group(struct input *in, struct report *r)
{
	for (size_t i = 0; i < r->nr_stacks; i++) {
		struct report_stack *s = &r->stacks[i];

		s->site_frame = s->nr_frames ? &s->frames[take(in) % s->nr_frames] : NULL;
	}
	r->brief = take(in) & 1;
	if (sites__group(r, take(in) % 4, 1 + take(in) % 3))
		abort();
}

static void unbuild(struct report *r)
{
	free(r->sites);
	free(r->site_stacks);
	free((char *)r->command);
	for (size_t i = 0; i < r->nr_stacks; i++)
		for (size_t j = 0; j < r->stacks[i].nr_frames; j++) {
			free(r->stacks[i].frames[j].function);
			free(r->stacks[i].frames[j].module);
			free(r->stacks[i].frames[j].file);
		}
}

/* ------------------------------------------------------------ checks */

static void check_utf8(const char *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		int n = report__utf8_len(s + i);

		FUZZ_CHECK(n > 0 && i + n <= len);
		i += n;
	}
}

/* Printable: no control character but the newline, valid UTF-8. */
static void check_text(const char *s, size_t len)
{
	check_utf8(s, len);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = s[i];

		FUZZ_CHECK(c == '\n' || (c >= 0x20 && c != 0x7f));
		/* C1 controls (U+0080..U+009F) are escape sequences to some terminals. */
		FUZZ_CHECK(!(c == 0xc2 && i + 1 < len && (unsigned char)s[i + 1] < 0xa0));
	}
}

static size_t items(const struct report_stack *s)
{
	return (s->no_stack || s->truncated) + s->nr_frames + 1;
}

static void check_folded(const struct report *r, const char *s, size_t len)
{
	check_utf8(s, len);
	FUZZ_CHECK(!len || s[len - 1] == '\n');
	for (const char *line = s; line < s + len;) {
		const char *eol = memchr(line, '\n', s + len - line), *sp = eol;
		size_t semis = 0;
		bool known = false;

		while (sp > line && isdigit((unsigned char)sp[-1]))
			sp--;
		FUZZ_CHECK(sp < eol && sp > line && sp[-1] == ' ');
		for (const char *c = line; c < eol; c++) {
			FUZZ_CHECK((unsigned char)*c >= 0x20 && *c != 0x7f);
			semis += *c == ';';
		}
		for (size_t i = 0; i < r->nr_stacks; i++)
			known |= semis + 1 == items(&r->stacks[i]);
		/* What the files leave out: one line of one frame. */
		known |= !semis && *line == '[' &&
			 memmem(line, (size_t)(eol - line), " left out: --all-stacks", 23);
		FUZZ_CHECK(known);
		line = eol + 1;
	}
}

/* ------------------------------------------------------------ JSON */

struct json {
	const char *p, *end;
	int depth;
};

static bool json_value(struct json *j);

static void json_ws(struct json *j)
{
	while (j->p < j->end && strchr(" \t\r\n", *j->p))
		j->p++;
}

static bool json_lit(struct json *j, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, lit, n))
		return false;
	j->p += n;
	return true;
}

static bool json_string(struct json *j)
{
	if (j->p >= j->end || *j->p++ != '"')
		return false;
	while (j->p < j->end && *j->p != '"') {
		unsigned char c = *j->p;

		if (c < 0x20)
			return false;
		if (c == '\\') {
			if (++j->p >= j->end)
				return false;
			if (*j->p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (j->p + i >= j->end || !isxdigit((unsigned char)j->p[i]))
						return false;
				j->p += 4;
			} else if (!strchr("\"\\/bfnrt", *j->p)) {
				return false;
			}
			j->p++;
			continue;
		}
		int n = report__utf8_len(j->p);

		if (!n || j->p + n > j->end)
			return false;
		j->p += n;
	}
	return j->p++ < j->end;
}

static bool json_number(struct json *j)
{
	const char *start = j->p;

	if (j->p < j->end && *j->p == '-')
		j->p++;
	while (j->p < j->end && (isdigit((unsigned char)*j->p) || strchr(".eE+-", *j->p)))
		j->p++;
	return j->p > start && isdigit((unsigned char)j->p[-1]);
}

static bool json_members(struct json *j, char close, bool object)
{
	json_ws(j);
	if (j->p < j->end && *j->p == close) {
		j->p++;
		return true;
	}
	for (;;) {
		if (object) {
			json_ws(j);
			if (!json_string(j))
				return false;
			json_ws(j);
			if (j->p >= j->end || *j->p++ != ':')
				return false;
		}
		if (!json_value(j))
			return false;
		json_ws(j);
		if (j->p >= j->end)
			return false;
		if (*j->p == close) {
			j->p++;
			return true;
		}
		if (*j->p++ != ',')
			return false;
	}
}

static bool json_value(struct json *j)
{
	bool ok;

	json_ws(j);
	if (j->p >= j->end || ++j->depth > 64)
		return false;
	switch (*j->p) {
	case '{':
		j->p++;
		ok = json_members(j, '}', true);
		break;
	case '[':
		j->p++;
		ok = json_members(j, ']', false);
		break;
	case '"':
		ok = json_string(j);
		break;
	case 't':
		ok = json_lit(j, "true");
		break;
	case 'f':
		ok = json_lit(j, "false");
		break;
	case 'n':
		ok = json_lit(j, "null");
		break;
	default:
		ok = json_number(j);
	}
	j->depth--;
	return ok;
}

static void check_json(const char *s, size_t len)
{
	struct json j = { s, s + len, 0 };

	FUZZ_CHECK(json_value(&j));
	json_ws(&j);
	FUZZ_CHECK(j.p == j.end);
}

/* ------------------------------------------------------------ XML */

/* What XML 1.0 allows between markup: no '<', '&' only as a reference. */
static const char *xml_chars(const char *p, const char *end, char stop)
{
	static const char *const refs[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&apos;" };

	while (p < end && *p != stop) {
		unsigned char c = *p;

		FUZZ_CHECK(c != '<' && (c >= 0x20 || c == '\n' || c == '\t' || c == '\r'));
		if (c == '&') {
			bool ok = false;

			for (size_t i = 0; i < 5 && !ok; i++)
				ok = !strncmp(p, refs[i], strlen(refs[i]));
			FUZZ_CHECK(ok);
		}
		p++;
	}
	return p;
}

static const char *xml_name(const char *p, const char *end)
{
	const char *start = p;

	while (p < end && (isalnum((unsigned char)*p) || strchr(":_-.", *p)))
		p++;
	FUZZ_CHECK(p > start);
	return p;
}

/* A start tag's attributes up to '>' or "/>"; *empty set for the latter. */
static const char *xml_attrs(const char *p, const char *end, bool *empty)
{
	for (;;) {
		while (p < end && isspace((unsigned char)*p))
			p++;
		FUZZ_CHECK(p < end);
		if (*p == '>' || (*p == '/' && p + 1 < end && p[1] == '>')) {
			*empty = *p == '/';
			return p + 1 + *empty;
		}
		p = xml_name(p, end);
		FUZZ_CHECK(p + 1 < end && *p == '=' && (p[1] == '"' || p[1] == '\''));
		p = xml_chars(p + 2, end, p[1]);
		FUZZ_CHECK(p < end);
		p++;
	}
}

static void check_svg(const char *s, size_t len)
{
	const char *p = s, *end = s + len, *stack[64];
	int depth = 0, roots = 0;

	check_utf8(s, len);
	while (p < end) {
		const char *name;
		bool empty;

		p = xml_chars(p, end, '<');
		if (p >= end)
			break;
		if (!strncmp(p, "<?", 2) || !strncmp(p, "<![CDATA[", 9) || !strncmp(p, "<!--", 4)) {
			const char *close = !strncmp(p, "<?", 2) ? "?>" : p[2] == '[' ? "]]>" : "-->";

			p = strstr(p, close);
			FUZZ_CHECK(p && p < end);
			p += strlen(close);
			continue;
		}
		if (p[1] == '/') {
			name = p + 2;
			p = xml_name(name, end);
			FUZZ_CHECK(depth > 0 && p - name == (long)strcspn(stack[depth - 1], " \t\n/>"));
			FUZZ_CHECK(!strncmp(name, stack[depth - 1], p - name) && *p == '>');
			depth--;
			p++;
			continue;
		}
		name = p + 1;
		p = xml_attrs(xml_name(name, end), end, &empty);
		if (!empty) {
			FUZZ_CHECK(depth < 64);
			roots += !depth;
			stack[depth++] = name;
		}
	}
	FUZZ_CHECK(depth == 0 && roots == 1);
}

/* A varint at *p (before end), or false. */
static bool pb_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; shift < 64 && *p < end; shift += 7) {
		uint8_t b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/* The profile's top level: varints and length-delimited fields only; strings UTF-8. */
static void check_pprof(const char *gz, size_t len)
{
	static uint8_t raw[1 << 22];
	z_stream z = { .next_in = (Bytef *)gz, .avail_in = (uInt)len, .next_out = raw,
		       .avail_out = sizeof(raw) };
	const uint8_t *p = raw, *end;
	size_t strings = 0;
	uint64_t key, n;

	FUZZ_CHECK(inflateInit2(&z, 15 + 16) == Z_OK);
	FUZZ_CHECK(inflate(&z, Z_FINISH) == Z_STREAM_END);
	end = raw + z.total_out;
	inflateEnd(&z);
	while (p < end) {
		FUZZ_CHECK(pb_varint(&p, end, &key));
		FUZZ_CHECK((key & 7) == 0 || (key & 7) == 2);
		FUZZ_CHECK(pb_varint(&p, end, &n));
		if ((key & 7) == 0)
			continue;
		FUZZ_CHECK(n <= (uint64_t)(end - p));
		if (key >> 3 == 6) {
			FUZZ_CHECK(strings++ || n == 0);
			FUZZ_CHECK(!memchr(p, '\0', n));
			check_utf8((const char *)p, n);
		}
		p += n;
	}
	FUZZ_CHECK(strings > 0);
}

/* ------------------------------------------------------------ HTML */

static size_t occurrences(const char *s, const char *what)
{
	size_t n = 0;

	for (const char *p = strstr(s, what); p; p = strstr(p + 1, what))
		n++;
	return n;
}

/*
 * --html: UTF-8; no name ends the data's element or opens another (two
 * script elements, no comment); the data is JSON with no JavaScript line end.
 */
static void check_html(const char *s, size_t len)
{
	static const char open[] = "<script type=\"application/json\" id=\"data\">";
	const char *data, *end;

	check_utf8(s, len);
	FUZZ_CHECK(strlen(s) == len);
	FUZZ_CHECK(occurrences(s, "<script") == 2 && occurrences(s, "</script") == 2);
	FUZZ_CHECK(!strstr(s, "<!--"));
	data = strstr(s, open);
	FUZZ_CHECK(data);
	data += sizeof(open) - 1;
	end = strstr(data, "</script>");
	FUZZ_CHECK(end);
	check_json(data, (size_t)(end - data));
	/* U+2028 and U+2029 are text in the page, but line ends to older JavaScript. */
	FUZZ_CHECK(!memmem(data, (size_t)(end - data), "\xe2\x80\xa8", 3) &&
		   !memmem(data, (size_t)(end - data), "\xe2\x80\xa9", 3));
}

/* ------------------------------------------------------------ driver */

typedef int writer_fn(const struct report *r, FILE *f);

static char *render(writer_fn *w, const struct report *r, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	if (!f)
		abort();
	FUZZ_CHECK(w(r, f) == 0);
	FUZZ_CHECK(fclose(f) == 0);
	return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report_frame frames[MAX_STACKS][MAX_FRAMES];
	struct report_stack stacks[MAX_STACKS];
	struct input in = { data, size };
	struct report r;
	char *out;
	size_t len;

	build(&in, &r, stacks, frames);
	out = render(report_text__write, &r, &len);
	check_text(out, len);
	free(out);
	out = render(report_folded__write, &r, &len);
	check_folded(&r, out, len);
	free(out);
	out = render(report_json__write, &r, &len);
	check_json(out, len);
	free(out);
	out = render(report_svg__write, &r, &len);
	check_svg(out, len);
	free(out);
	out = render(report_html__write, &r, &len);
	check_html(out, len);
	free(out);
	out = render(report_gperftools__write, &r, &len);
	free(out);
	out = render(report_pprof__write, &r, &len);
	check_pprof(out, len);
	free(out);
	unbuild(&r);
	return 0;
}
