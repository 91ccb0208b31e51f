// SPDX-License-Identifier: GPL-2.0
/*
 * A heap profile in pprof's own format: profile.proto (github.com/google/
 * pprof, proto/profile.proto), gzipped, as `go tool pprof`, Pyroscope and
 * Parca read it. It carries our names, so that no reader needs the
 * binaries or guesses a static function's name from an exported neighbour:
 *
 * - a function per name we give a frame (demangled, its linker symbol as the
 *   system name), with its source file; a frame we could not name is the
 *   function "module+0xoffset" (or "0xaddress"), as the text report says;
 * - a location per captured address in a mapping, its inlined calls as
 *   more lines of it, innermost first; Python frames are locations of
 *   their own in no mapping, at address 0 (they are no machine code);
 * - a mapping per executable mapping, with its file and build id, each
 *   marked as symbolized (has_functions, ...), so that readers leave the
 *   names alone; under --follow, the target's, then each exec'd image's
 *   (its processes' addresses are their own: a location's mapping is its
 *   process's image's);
 * - a sample per stack: inuse_objects, inuse_space, alloc_objects,
 *   alloc_space, exact (the stacks with nothing outstanding add their
 *   alloc figures), the allocation function as the label "api", and the
 *   stack's site (analyze/sites.h: the line of the user's code, as the
 *   text report names it) as the label "site", for -tagfocus and -tags.
 *   The allocation function itself is no frame: a stack's leaf is its
 *   caller, as in the JSON report;
 * - under --sample, period_type space/bytes and period BYTES (-s N:
 *   objects/count, N), the values already the estimates.
 *
 * A location's address is the call instruction's: the captured return
 * address minus 1, as pprof writes its non-leaf addresses.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gzip.h"
#include "model/report.h"
#include "pprof_tables.h"
#include "util/hash.h"
#include "util/idmap.h"
#include "util/procmaps.h"
#include "util/protobuf.h"
#include "util/vec.h"
#include "report_pprof.h"

/* profile.proto's field numbers. */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE, PROFILE_MAPPING, PROFILE_LOCATION,
	PROFILE_FUNCTION, PROFILE_STRING_TABLE, PROFILE_TIME_NANOS = 9, PROFILE_DURATION_NANOS,
	PROFILE_PERIOD_TYPE, PROFILE_PERIOD, PROFILE_COMMENT, PROFILE_DEFAULT_SAMPLE_TYPE,
};
enum { VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT };
enum { SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE, SAMPLE_LABEL };
enum { LABEL_KEY = 1, LABEL_STR };
enum {
	MAPPING_ID = 1, MAPPING_MEMORY_START, MAPPING_MEMORY_LIMIT, MAPPING_FILE_OFFSET,
	MAPPING_FILENAME, MAPPING_BUILD_ID, MAPPING_HAS_FUNCTIONS, MAPPING_HAS_FILENAMES,
	MAPPING_HAS_LINE_NUMBERS, MAPPING_HAS_INLINE_FRAMES,
};
enum { LOCATION_ID = 1, LOCATION_MAPPING_ID, LOCATION_ADDRESS, LOCATION_LINE };
enum { LINE_FUNCTION_ID = 1, LINE_LINE };
enum { FUNCTION_ID = 1, FUNCTION_NAME, FUNCTION_SYSTEM_NAME, FUNCTION_FILENAME };

/* Each sample's values, in this order. */
static const char *const sample_types[][2] = {
	{ "inuse_objects", "count" },
	{ "inuse_space", "bytes" },
	{ "alloc_objects", "count" },
	{ "alloc_space", "bytes" },
};
#define NR_VALUES (sizeof(sample_types) / sizeof(sample_types[0]))
#define DEFAULT_SAMPLE_TYPE "inuse_space"

/* Where a stack ends short of its root: its outermost location (as the folded file says). */
#define NO_STACK "[stack unavailable]"
#define TRUNCATED "[truncated]"
#define UNWIND_PENDING "[unwind table loading]"

/* "module+0x...": a file name (NAME_MAX bytes at most) and an offset */
#define NAME_LEN (NAME_MAX + 32)

/* A location written, and what it was made of. */
struct seen_location {
	size_t frames, nr;	/* its frames in seen_frames */
	uint32_t proc;
	uint64_t id;
};

struct writer {
	const struct report *r;
	struct pprof_tables t;
	struct pb out, msg, sub;	/* the profile; a message, and one inside it, being built */
	uint64_t *locs;			/* the sample being built: its location ids */
	size_t nr_locs, cap_locs;
	struct pprof_line *lines;	/* the location being built */
	size_t cap_lines;
	uint32_t proc;			/* the sample being built's process */
	/*
	 * Each location found, by its frames (pointers: a report that writes
	 * every stack keeps each frame once, model/frame_table.h) and the
	 * process: a torch job's 700,000 stacks have 27 million frames of
	 * 84,000 distinct ones, each of which looked up its strings, its
	 * function and its location again, 13 s of writing.
	 */
	struct idmap seen_ix;		/* the hash of a location's key -> seen[] */
	struct seen_location *seen;
	size_t nr_seen, cap_seen;
	const struct report_frame **seen_frames;	/* the seen locations' frames */
	size_t nr_seen_frames, cap_seen_frames;
	/* --follow: the id before the first mapping of each r->image_maps entry's image. */
	uint64_t *image_base;
	bool *image_first;		/* the first entry of its image: its mappings are written */
	int err;
};

static void fail(struct writer *w, int err)
{
	if (!w->err)
		w->err = err;
}

/* What the text report calls a frame it has no function name for. */
static const char *unnamed(const struct report_frame *fr, char *buf)
{
	const char *slash = fr->module ? strrchr(fr->module, '/') : NULL;

	if (fr->module)
		snprintf(buf, NAME_LEN, "%s+0x%llx", slash ? slash + 1 : fr->module,
			 (unsigned long long)fr->module_offset);
	else
		snprintf(buf, NAME_LEN, "0x%llx", (unsigned long long)fr->address);
	return buf;
}

/* Could name be a linker symbol ("memcpy@GLIBC_2.14"), not only a demangled name? */
static bool is_symbol(const char *name)
{
	return name[strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				 "0123456789_.$@")] == '\0';
}

/*
 * The system name is the linker symbol: the mangled one, or a C name. A name
 * that can be none (Python's, a demangled one whose symbol is unknown) has
 * none, which also tells readers it is final: pprof would "simplify" a name
 * equal to its system name ("<module>" to nothing, "f(int)" to "f").
 */
static uint64_t function_of(struct writer *w, const struct report_frame *fr)
{
	struct pprof_function fn = { 0 };
	char buf[NAME_LEN];

	fn.name = pprof_tables__string(&w->t, fr->function ?: unnamed(fr, buf));
	if (fr->symbol && fr->language == FRAME_NATIVE)
		fn.system_name = pprof_tables__string(&w->t, fr->symbol);
	else if (fr->function && fr->language == FRAME_NATIVE && is_symbol(fr->function))
		fn.system_name = fn.name;
	if (fr->file)
		fn.filename = pprof_tables__string(&w->t, fr->file);
	return pprof_tables__function(&w->t, &fn);
}

static int by_proc(const void *key, const void *elem)
{
	uint32_t proc = *(const uint32_t *)key;
	uint32_t other = ((const struct report_image_maps *)elem)->proc;

	return proc < other ? -1 : proc > other;
}

/*
 * The mapping of a native frame's address in the sample's process: its
 * index in its image's maps (the target's: r->maps) plus the ids before
 * them, plus 1; or 0.
 */
static uint64_t mapping_of(const struct writer *w, const struct report_frame *fr, uint64_t address)
{
	const struct report *r = w->r;
	const struct report_image_maps *im = NULL;
	const struct maps *maps = r->maps;
	const struct map_entry *e;
	uint64_t base = 0;

	if (w->proc && r->nr_image_maps)
		im = bsearch(&w->proc, r->image_maps, r->nr_image_maps, sizeof(*im), by_proc);
	if (im) {
		maps = im->maps;
		base = w->image_base[im - r->image_maps];
	}
	if ((fr->language != FRAME_NATIVE && fr->language != FRAME_KERNEL) || !fr->module || !maps)
		return 0;
	e = maps__find(maps, address);
	return e ? base + (uint64_t)(e - maps->entries) + 1 : 0;
}

/* Each image's mappings after the target's, in the order of their first process. */
static int number_images(struct writer *w)
{
	const struct report *r = w->r;
	uint64_t next = r->maps ? r->maps->nr : 0;

	w->image_base = calloc(r->nr_image_maps ?: 1, sizeof(*w->image_base));
	w->image_first = calloc(r->nr_image_maps ?: 1, sizeof(*w->image_first));
	if (!w->image_base || !w->image_first)
		return -ENOMEM;
	for (size_t i = 0; i < r->nr_image_maps; i++) {
		size_t k = 0;

		while (k < i && r->image_maps[k].maps != r->image_maps[i].maps)
			k++;
		w->image_first[i] = k == i;
		w->image_base[i] = k < i ? w->image_base[k] : next;
		if (k == i && r->image_maps[i].maps)
			next += r->image_maps[i].maps->nr;
	}
	return 0;
}

/* The frames from s's frame at that share its address: its inlined calls, then their caller. */
static size_t frames_at(const struct report_stack *s, size_t at)
{
	const struct report_frame *first = report__frame(s, at);
	size_t n = 1;

	while (at + n < s->nr_frames && report__frame(s, at + n - 1)->inlined &&
	       report__frame(s, at + n)->address == first->address &&
	       report__frame(s, at + n)->language == FRAME_NATIVE)
		n++;
	return n;
}

/* The location of s's frames [at, at + n), which frames_at says share one address. */
static uint64_t location_of(struct writer *w, const struct report_stack *s, size_t at, size_t n)
{
	const struct report_frame *fr = report__frame(s, at);
	uint64_t address = 0;

	if (vec__reserve(&w->lines, &w->cap_lines, n, sizeof(*w->lines))) {
		fail(w, -ENOMEM);
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		w->lines[i] = (struct pprof_line){ function_of(w, report__frame(s, at + i)),
						   report__frame(s, at + i)->line };
	if ((fr->language == FRAME_NATIVE || fr->language == FRAME_KERNEL) && fr->address)
		address = fr->address - 1;
	return pprof_tables__location(&w->t, mapping_of(w, fr, address), address, w->lines, n);
}

/* The key of s's frames [at, at + n) in w->proc, never 0. */
static uint64_t seen_key(const struct writer *w, const struct report_stack *s, size_t at,
			 size_t n)
{
	uint64_t h = hash__mix(w->proc ^ (uint64_t)n << 32);

	for (size_t i = 0; i < n; i++)
		h = hash__mix(h ^ (uintptr_t)report__frame(s, at + i));
	return h ?: 1;
}

static bool seen_same(const struct writer *w, const struct seen_location *e,
		      const struct report_stack *s, size_t at, size_t n)
{
	if (e->nr != n || e->proc != w->proc)
		return false;
	for (size_t i = 0; i < n; i++)
		if (w->seen_frames[e->frames + i] != report__frame(s, at + i))
			return false;
	return true;
}

/* Remember the location id of s's frames [at, at + n); on an error it is only not remembered. */
static void seen_add(struct writer *w, uint64_t key, const struct report_stack *s, size_t at,
		     size_t n, uint64_t id)
{
	if (!id || vec__reserve(&w->seen, &w->cap_seen, w->nr_seen + 1, sizeof(*w->seen)) ||
	    vec__reserve(&w->seen_frames, &w->cap_seen_frames, w->nr_seen_frames + n,
			 sizeof(*w->seen_frames)) ||
	    idmap__put(&w->seen_ix, key, (uint32_t)w->nr_seen))
		return;
	for (size_t i = 0; i < n; i++)
		w->seen_frames[w->nr_seen_frames + i] = report__frame(s, at + i);
	w->seen[w->nr_seen++] = (struct seen_location){ w->nr_seen_frames, n, w->proc, id };
	w->nr_seen_frames += n;
}

/*
 * location_of, once per distinct frames and process: the same frames in
 * the same process make the same location (its strings, function and
 * mapping are theirs), entered once in the tables in the order first seen.
 */
static uint64_t location_seen(struct writer *w, const struct report_stack *s, size_t at, size_t n)
{
	uint64_t key = seen_key(w, s, at, n), id;
	uint32_t i;
	bool found = idmap__get(&w->seen_ix, key, &i);

	if (found && seen_same(w, &w->seen[i], s, at, n))
		return w->seen[i].id;
	id = location_of(w, s, at, n);
	if (!found)	/* a key of other frames (64 bits alike) keeps its first */
		seen_add(w, key, s, at, n, id);
	return id;
}

/* A location of a name alone, in no mapping: where a stack ends short. */
static uint64_t marker(struct writer *w, const char *name)
{
	struct pprof_function fn = { .name = pprof_tables__string(&w->t, name) };
	struct pprof_line line = { pprof_tables__function(&w->t, &fn), 0 };

	return pprof_tables__location(&w->t, 0, 0, &line, 1);
}

static void push_location(struct writer *w, uint64_t id)
{
	if (vec__reserve(&w->locs, &w->cap_locs, w->nr_locs + 1, sizeof(*w->locs)))
		fail(w, -ENOMEM);
	else
		w->locs[w->nr_locs++] = id;
}

/* A stack's locations, leaf first. */
static void stack_locations(struct writer *w, const struct report_stack *s)
{
	w->nr_locs = 0;
	w->proc = s->proc;
	if (s->no_stack)
		push_location(w, marker(w, NO_STACK));
	for (size_t i = 0, n; i < s->nr_frames; i += n) {
		n = frames_at(s, i);
		push_location(w, location_seen(w, s, i, n));
	}
	if (s->truncated)
		push_location(w, marker(w, TRUNCATED));
	else if (s->unwind_pending)
		push_location(w, marker(w, UNWIND_PENDING));
}

/* "site_load_model (src/model.cc:58)", "app+0x1234": a site as the text report names it. */
static const char *site_name(const struct report_frame *f, char *buf, size_t len)
{
	const char *module = f->module ? strrchr(f->module, '/') : NULL;

	module = module ? module + 1 : f->module;
	if (f->function && f->file && f->line > 0)
		snprintf(buf, len, "%s (%s:%d)", f->function, f->file, f->line);
	else if (f->function)
		snprintf(buf, len, "%s", f->function);
	else if (module)
		snprintf(buf, len, "%s+0x%llx", module, (unsigned long long)f->module_offset);
	else
		snprintf(buf, len, "0x%llx", (unsigned long long)f->address);
	return buf;
}

static void put_label(struct writer *w, const char *key, const char *value)
{
	pb__reset(&w->sub);
	pb__int(&w->sub, LABEL_KEY, (int64_t)pprof_tables__string(&w->t, key));
	pb__int(&w->sub, LABEL_STR, (int64_t)pprof_tables__string(&w->t, value));
	pb__message(&w->msg, SAMPLE_LABEL, &w->sub);
}

static void put_sample(struct writer *w, const struct report_stack *s)
{
	char site[PATH_MAX];
	const int64_t values[NR_VALUES] = {
		(int64_t)s->allocs, (int64_t)s->bytes, (int64_t)s->total_allocs,
		(int64_t)s->total_bytes,
	};

	stack_locations(w, s);
	pb__reset(&w->msg);
	pb__packed_uint(&w->msg, SAMPLE_LOCATION_ID, w->locs, w->nr_locs);
	pb__packed_int(&w->msg, SAMPLE_VALUE, values, NR_VALUES);
	put_label(w, "api", report__api_name(s->api));
	/* The freed stacks of a diff (meta->freed) are no report's: no site. */
	if (s->site_frame)
		put_label(w, "site", site_name(s->site_frame, site, sizeof(site)));
	pb__message(&w->out, PROFILE_SAMPLE, &w->msg);
}

static void put_value_type(struct writer *w, uint32_t field, const char *type, const char *unit)
{
	pb__reset(&w->msg);
	pb__int(&w->msg, VALUE_TYPE_TYPE, (int64_t)pprof_tables__string(&w->t, type));
	pb__int(&w->msg, VALUE_TYPE_UNIT, (int64_t)pprof_tables__string(&w->t, unit));
	pb__message(&w->out, field, &w->msg);
}

/* Every mapping is symbolized already: the flags keep readers from doing it again. */
static void put_maps(struct writer *w, const struct maps *maps, uint64_t base)
{
	for (size_t i = 0; maps && i < maps->nr; i++) {
		const struct map_entry *e = &maps->entries[i];

		pb__reset(&w->msg);
		pb__uint(&w->msg, MAPPING_ID, base + i + 1);
		pb__uint(&w->msg, MAPPING_MEMORY_START, e->start);
		pb__uint(&w->msg, MAPPING_MEMORY_LIMIT, e->end);
		pb__uint(&w->msg, MAPPING_FILE_OFFSET, e->offset);
		pb__int(&w->msg, MAPPING_FILENAME,
			(int64_t)pprof_tables__string(&w->t, e->path ? e->path : ""));
		if (e->build_id)
			pb__int(&w->msg, MAPPING_BUILD_ID,
				(int64_t)pprof_tables__string(&w->t, e->build_id));
		pb__bool(&w->msg, MAPPING_HAS_FUNCTIONS, true);
		pb__bool(&w->msg, MAPPING_HAS_FILENAMES, true);
		pb__bool(&w->msg, MAPPING_HAS_LINE_NUMBERS, true);
		pb__bool(&w->msg, MAPPING_HAS_INLINE_FRAMES, true);
		pb__message(&w->out, PROFILE_MAPPING, &w->msg);
	}
}

static void put_mappings(struct writer *w)
{
	put_maps(w, w->r->maps, 0);
	for (size_t i = 0; i < w->r->nr_image_maps; i++)
		if (w->image_first[i])
			put_maps(w, w->r->image_maps[i].maps, w->image_base[i]);
}

static void put_locations(struct writer *w)
{
	for (size_t i = 0; i < w->t.nr_locations; i++) {
		const struct pprof_location *l = &w->t.locations[i];

		pb__reset(&w->msg);
		pb__uint(&w->msg, LOCATION_ID, i + 1);
		pb__uint(&w->msg, LOCATION_MAPPING_ID, l->mapping);
		pb__uint(&w->msg, LOCATION_ADDRESS, l->address);
		for (size_t k = 0; k < l->nr_lines; k++) {
			pb__reset(&w->sub);
			pb__uint(&w->sub, LINE_FUNCTION_ID, w->t.lines[l->line + k].function);
			pb__int(&w->sub, LINE_LINE, w->t.lines[l->line + k].line);
			pb__message(&w->msg, LOCATION_LINE, &w->sub);
		}
		pb__message(&w->out, PROFILE_LOCATION, &w->msg);
	}
}

static void put_functions(struct writer *w)
{
	for (size_t i = 0; i < w->t.nr_functions; i++) {
		const struct pprof_function *fn = &w->t.functions[i];

		pb__reset(&w->msg);
		pb__uint(&w->msg, FUNCTION_ID, i + 1);
		pb__int(&w->msg, FUNCTION_NAME, (int64_t)fn->name);
		pb__int(&w->msg, FUNCTION_SYSTEM_NAME, (int64_t)fn->system_name);
		pb__int(&w->msg, FUNCTION_FILENAME, (int64_t)fn->filename);
		pb__message(&w->out, PROFILE_FUNCTION, &w->msg);
	}
}

/* What the profile says beside its samples; the strings last, once all are in. */
static void put_header(struct writer *w, int64_t time_ns)
{
	const struct report *r = w->r;
	char comment[256], target[REPORT_TARGET_LEN];

	for (size_t i = 0; i < NR_VALUES; i++)
		put_value_type(w, PROFILE_SAMPLE_TYPE, sample_types[i][0], sample_types[i][1]);
	/*
	 * Exact: every allocation counts, a period of one byte. Sampled: one
	 * sample per BYTES (--sample; -s: per N calls); the values are the
	 * estimates already, scaled (readers of profile.proto do not scale).
	 */
	if (r->sampling && !r->sampling->by_bytes)
		put_value_type(w, PROFILE_PERIOD_TYPE, "objects", "count");
	else
		put_value_type(w, PROFILE_PERIOD_TYPE, "space", "bytes");
	pb__int(&w->out, PROFILE_PERIOD, r->sampling ? (int64_t)r->sampling->mean : 1);
	pb__int(&w->out, PROFILE_TIME_NANOS, time_ns);
	pb__int(&w->out, PROFILE_DURATION_NANOS, (int64_t)(r->duration_s * 1e9));
	snprintf(comment, sizeof(comment), "memleakbpf: %s%s%.200s", report__target(r, target),
		 r->command ? ": " : "", r->command ? r->command : "");
	pb__int(&w->out, PROFILE_COMMENT, (int64_t)pprof_tables__string(&w->t, comment));
	if (r->sampling) {
		snprintf(comment, sizeof(comment), "sampled (%s %llu): values are estimates, scaled",
			 r->sampling->by_bytes ? "--sample" : "-s",
			 (unsigned long long)r->sampling->mean);
		pb__int(&w->out, PROFILE_COMMENT, (int64_t)pprof_tables__string(&w->t, comment));
	}
	pb__int(&w->out, PROFILE_DEFAULT_SAMPLE_TYPE,
		(int64_t)pprof_tables__string(&w->t, DEFAULT_SAMPLE_TYPE));
}

static void encode(struct writer *w, int64_t time_ns)
{
	const struct report *freed = w->r->freed;

	put_header(w, time_ns);
	for (size_t i = 0; i < w->r->nr_stacks; i++)
		put_sample(w, &w->r->stacks[i]);
	for (size_t i = 0; freed && i < freed->nr_stacks; i++)
		put_sample(w, &freed->stacks[i]);
	put_mappings(w);
	put_locations(w);
	put_functions(w);
	for (size_t i = 0; i < w->t.nr_strings; i++)
		pb__string(&w->out, PROFILE_STRING_TABLE, w->t.strings[i]);
	fail(w, w->t.err ?: w->msg.err ?: w->sub.err ?: w->out.err);
}

static void writer_free(struct writer *w)
{
	pprof_tables__free(&w->t);
	pb__free(&w->out);
	pb__free(&w->msg);
	pb__free(&w->sub);
	free(w->locs);
	free(w->lines);
	free(w->image_base);
	free(w->image_first);
	idmap__free(&w->seen_ix);
	free(w->seen);
	free(w->seen_frames);
}

int report_pprof__write(const struct report *r, FILE *f)
{
	struct writer w = { .r = r };
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	w.err = pprof_tables__init(&w.t) ?: number_images(&w);
	if (!w.err)
		encode(&w, (int64_t)now.tv_sec * 1000000000 + now.tv_nsec);
	if (!w.err)
		w.err = gzip__write(w.out.buf, w.out.len, f);
	writer_free(&w);
	return w.err;
}
