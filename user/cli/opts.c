// SPDX-License-Identifier: GPL-2.0
/*
 * Command-line parsing. The options follow bcc's memleak so that its users
 * need no new habits; every failure is one line in err, and getopt itself
 * never prints, so the user sees exactly that one line.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "opts.h"
#include <linux/types.h>
#include "memleak.h"
#include "sample.h"
#include "opts_usage.h"

/* Map sizes above this cannot be what the user meant (and would not load). */
#define OPTS_MAX_MAP_ENTRIES (1u << 28)
/*
 * Faster than a report per millisecond, the tracer would mostly measure
 * itself; longer than about 11 days is a typo.
 */
#define OPTS_MIN_INTERVAL_S 0.001
#define OPTS_MAX_INTERVAL_S 1000000.0

/* Long-only options: values outside the char range. */
enum {
	OPT_MAX_ALLOCS = 256,
	OPT_STACK_STORAGE,
	OPT_SNAPSHOT_HTML,
	OPT_SNAPSHOT_DIR,
	OPT_FOLDED_WEIGHT,
	OPT_DEBUG_DIR,
	OPT_OWN,
	OPT_ALLOC_FN,
	OPT_PYTHON_MALLOC,
	OPT_UNWIND,
	OPT_UNWIND_CACHE,
	OPT_ALL_STACKS,
	OPT_FOLDED_BY_PROCESS,
	OPT_PY_OBJECTS,
	OPT_REACH,
	OPT_PPROF_FORMAT,
	OPT_PREALLOC_STACKS,
	OPT_SAMPLE,
	OPT_ALLOCS_PER_STACK,
	OPT_TRACE_BUFFER,
	OPT_STACK_RING,
	OPT_PY_CODE_RING,
	OPT_SORT,
	OPT_FULL_NAMES,
	OPT_OUTPUT,	/* + enum report_output: the output files' (report/writers.h) */
};

static const struct option long_options[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "command", required_argument, NULL, 'c' },
	{ "user", required_argument, NULL, 'u' },
	{ "obj", required_argument, NULL, 'O' },
	{ "top", required_argument, NULL, 'T' },
	{ "older", required_argument, NULL, 'o' },
	{ "min-size", required_argument, NULL, 'z' },
	{ "max-size", required_argument, NULL, 'Z' },
#define OUTPUT_OPTION(out, option, ...) { option, required_argument, NULL, OPT_OUTPUT + REPORT_OUT_##out },
	REPORT_WRITERS(OUTPUT_OPTION)
#undef OUTPUT_OPTION
	{ "max-allocs", required_argument, NULL, OPT_MAX_ALLOCS },
	{ "stack-storage-size", required_argument, NULL, OPT_STACK_STORAGE },
	{ "prealloc-stacks", no_argument, NULL, OPT_PREALLOC_STACKS },
	{ "snapshot-html", no_argument, NULL, OPT_SNAPSHOT_HTML },
	{ "snapshot-dir", required_argument, NULL, OPT_SNAPSHOT_DIR },
	{ "pprof-format", required_argument, NULL, OPT_PPROF_FORMAT },
	{ "folded-weight", required_argument, NULL, OPT_FOLDED_WEIGHT },
	{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
	{ "own", required_argument, NULL, OPT_OWN },
	{ "alloc-fn", required_argument, NULL, OPT_ALLOC_FN },
	{ "python-malloc", required_argument, NULL, OPT_PYTHON_MALLOC },
	{ "unwind", required_argument, NULL, OPT_UNWIND },
	{ "unwind-cache", required_argument, NULL, OPT_UNWIND_CACHE },
	{ "all-stacks", no_argument, NULL, OPT_ALL_STACKS },
	{ "follow", no_argument, NULL, 'f' },
	{ "folded-by-process", no_argument, NULL, OPT_FOLDED_BY_PROCESS },
	{ "py-objects", no_argument, NULL, OPT_PY_OBJECTS },
	{ "reach", no_argument, NULL, OPT_REACH },
	{ "sample", required_argument, NULL, OPT_SAMPLE },
	{ "sample-rate", required_argument, NULL, 's' },
	{ "kernel", no_argument, NULL, 'k' },
	{ "show-allocs", no_argument, NULL, 'a' },
	{ "allocs-per-stack", required_argument, NULL, OPT_ALLOCS_PER_STACK },
	{ "trace", no_argument, NULL, 't' },
	{ "trace-buffer", required_argument, NULL, OPT_TRACE_BUFFER },
	{ "new-stack-buffer", required_argument, NULL, OPT_STACK_RING },
	{ "py-code-buffer", required_argument, NULL, OPT_PY_CODE_RING },
	{ "symbols-prefix", required_argument, NULL, 'S' },
	/* bcc's and libbpf-tools' (their short forms are libbpf-tools'): opts_bcc.c. */
	{ "combined-only", no_argument, NULL, 'C' },
	{ "wa-missing-free", no_argument, NULL, 'F' },
	{ "percpu", no_argument, NULL, 'P' },
	{ "sort", required_argument, NULL, OPT_SORT },
	{ "full-names", no_argument, NULL, OPT_FULL_NAMES },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/*
 * '-': positional arguments come back in order as option 1, so argv is never
 * permuted (tests reuse it) and POSIXLY_CORRECT cannot change the meaning.
 * ':': a missing argument is reported as ':' rather than '?'.
 */
static const char short_options[] = "-:p:c:u:O:T:o:z:Z:s:S:fatCFPkvh";

void opts__usage(FILE *f)
{
	fputs(usage_text, f);
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	/* It quotes the user's arguments: one line, whatever they hold. */
	for (char *c = err; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return -EINVAL;
}

/* "-p/--pid" or "--json", for messages about option val. */
static const char *option_name(int val, char *buf, size_t len)
{
	for (const struct option *lo = long_options; lo->name; lo++) {
		if (lo->val != val)
			continue;
		if (val < 256)
			snprintf(buf, len, "-%c/--%s", val, lo->name);
		else
			snprintf(buf, len, "--%s", lo->name);
		return buf;
	}
	snprintf(buf, len, "-%c", val);
	return buf;
}

/*
 * Decimal digits only: strtoull alone would accept " 12", "-1" (as a huge
 * value), "0x10" with base 0, and would hide trailing garbage.
 * 0, -EINVAL (not a number) or -ERANGE (above max).
 */
static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

/* Bytes with an optional K, M or G (binary: 512K is 524288). */
static int parse_bytes(const char *s, uint64_t max, uint64_t *out)
{
	static const char units[] = "KMG";
	char digits[32];
	size_t len = strlen(s);
	const char *u = len ? strchr(units, toupper((unsigned char)s[len - 1])) : NULL;
	int ret;

	if (!u || !s[len - 1])
		return parse_u64(s, max, out);
	if (len - 1 >= sizeof(digits))
		return -ERANGE;
	memcpy(digits, s, len - 1);
	digits[len - 1] = '\0';
	ret = parse_u64(digits, max >> (10 * (u - units + 1)), out);
	if (!ret)
		*out <<= 10 * (u - units + 1);
	return ret;
}

static int set_sample(struct opts *o, int c, const char *arg, char *err, size_t errlen)
{
	bool bytes = c == OPT_SAMPLE;
	uint64_t max = bytes ? MEMLEAK_SAMPLE_MAX_MEAN : MEMLEAK_SAMPLE_MAX_N;
	char name[32];
	int ret;

	option_name(c, name, sizeof(name));
	if (o->sample_mode)
		return fail(err, errlen, "%s: give one of --sample and -s, once", name);
	ret = bytes ? parse_bytes(arg, max, &o->sample_value) : parse_u64(arg, max, &o->sample_value);
	if (ret == -EINVAL)
		return fail(err, errlen, "%s: '%s' is not %s", name, arg,
			    bytes ? "a number of bytes (K, M, G allowed)" : "a positive integer");
	if (ret || o->sample_value < (bytes ? 64 : 1))
		return fail(err, errlen, "%s: '%s' is out of range (%s)", name, arg,
			    bytes ? "64 to 1G" : "1 to 1048576");
	o->sample_mode = bytes ? SAMPLE_BYTES : SAMPLE_COUNT;
	return 0;
}

/* MEMLEAKBPF_SAMPLE_SEED (tests): a positive integer, or not set. */
static int set_sample_seed(struct opts *o, char *err, size_t errlen)
{
	const char *v = getenv("MEMLEAKBPF_SAMPLE_SEED");

	if (!v || !*v)
		return 0;
	if (parse_u64(v, UINT64_MAX, &o->sample_seed) || !o->sample_seed)
		return fail(err, errlen, "MEMLEAKBPF_SAMPLE_SEED: '%s' is not a positive integer", v);
	return 0;
}

/* Seconds as plain decimal ("5", "0.5"): no exponents, hex, inf or nan. */
static int parse_seconds(const char *s, double *out)
{
	size_t digits = strspn(s, "0123456789");
	const char *p = s + digits;

	if (*p == '.') {
		size_t frac = strspn(p + 1, "0123456789");

		digits += frac;
		p += 1 + frac;
	}
	if (!digits || *p)
		return -EINVAL;
	*out = strtod(s, NULL);
	return 0;
}

static int set_pid(struct opts *o, const char *arg, char *err, size_t errlen)
{
	uint64_t v;
	int ret = parse_u64(arg, INT_MAX, &v);

	if (ret == -ERANGE)
		return fail(err, errlen, "-p: '%s' is out of range for a process id", arg);
	if (ret || v == 0)
		return fail(err, errlen, "-p: '%s' is not a process id", arg);
	o->pid = (pid_t)v;
	return 0;
}

/* A numeric option in [min, max]; names the option and the range on error. */
static int set_number(int val, const char *arg, uint64_t min, uint64_t max,
		      uint64_t *out, char *err, size_t errlen)
{
	char name[32];
	int ret = parse_u64(arg, max, out);

	option_name(val, name, sizeof(name));
	if (ret == -EINVAL)
		return fail(err, errlen, "%s: '%s' is not a %s integer", name,
			    arg, min ? "positive" : "non-negative");
	if (ret == -ERANGE || *out < min)
		return fail(err, errlen, "%s: '%s' is out of range (%llu to %llu)",
			    name, arg, (unsigned long long)min,
			    (unsigned long long)max);
	return 0;
}

/* Paths, commands and user names: an empty one is always a mistake. */
static int set_string(int val, const char *arg, const char **out, char *err,
		      size_t errlen)
{
	char name[32];

	if (arg[strspn(arg, " \t\n")] == '\0')
		return fail(err, errlen, "%s: empty argument",
			    option_name(val, name, sizeof(name)));
	*out = arg;
	return 0;
}

/* An option of two words: *is_b says which was given; else the error said. */
static int either(const char *opt, const char *arg, const char *a, const char *b, bool *is_b,
		  char *err, size_t errlen)
{
	if (strcmp(arg, a) && strcmp(arg, b))
		return fail(err, errlen, "%s: '%s' is neither %s nor %s", opt, arg, a, b);
	*is_b = !strcmp(arg, b);
	return 0;
}

static int set_unwind(struct opts *o, const char *arg, char *err, size_t errlen)
{
	static const char *const names[] = {
		[UNWIND_AUTO] = "auto", [UNWIND_FP] = "fp", [UNWIND_DWARF] = "dwarf",
	};

	for (int i = 0; i < 3; i++) {
		if (!strcmp(arg, names[i])) {
			o->unwind = (enum unwind_mode)i;
			return 0;
		}
	}
	return fail(err, errlen, "--unwind: '%s' is none of auto, fp, dwarf", arg);
}

/* -a's bound: a count, or "all" (0). */
static int set_allocs_per_stack(struct opts *o, const char *arg, char *err, size_t errlen)
{
	uint64_t v = 0;

	o->allocs_per_stack_given = true;
	if (!strcmp(arg, "all"))
		o->allocs_per_stack = 0;
	else if (parse_u64(arg, UINT32_MAX, &v) || !v)
		return fail(err, errlen, "--allocs-per-stack: '%s' is neither a positive integer nor all", arg);
	o->allocs_per_stack = (uint32_t)v;
	return 0;
}

/* A BPF ring's size: a power of two of whole pages, as the kernel wants it. */
static int set_ring(const char *name, const char *arg, uint64_t *bytes, bool *given, char *err,
		    size_t errlen)
{
	int ret = parse_bytes(arg, 1ull << 30, bytes);

	if (ret == -EINVAL)
		return fail(err, errlen, "%s: '%s' is not a number of bytes (K, M, G allowed)", name, arg);
	if (ret || *bytes < 4096 || (*bytes & (*bytes - 1)))
		return fail(err, errlen, "%s: '%s' is not a power of two from 4K to 1G", name, arg);
	*given = true;
	return 0;
}

/*
 * A repeatable option's next value (--debug-dir, --own, --alloc-fn): kept
 * in order, pointing into argv like the other strings; at most max, each
 * a what ("directories") checked when used.
 */
static int add_repeated(int val, const char *arg, const char **v, size_t *nr, size_t max,
			const char *what, char *err, size_t errlen)
{
	char name[32];

	if (*nr == max)
		return fail(err, errlen, "%s: at most %zu %s", option_name(val, name, sizeof(name)),
			    max, what);
	if (set_string(val, arg, &v[*nr], err, errlen))
		return -EINVAL;
	(*nr)++;
	return 0;
}

static int set_option(struct opts *o, int c, const char *arg, char *err,
		      size_t errlen)
{
	uint64_t v;
	int ret;

	if (c >= OPT_OUTPUT && c < OPT_OUTPUT + REPORT_OUT__COUNT)
		return set_string(c, arg, &o->outputs[c - OPT_OUTPUT], err, errlen);
	switch (c) {
	case 'p':
		return set_pid(o, arg, err, errlen);
	case 'k':
		o->kernel = true;
		return 0;
	case 'c':
		return set_string(c, arg, &o->command, err, errlen);
	case 'u':
		return set_string(c, arg, &o->user, err, errlen);
	case 'O':
		return set_string(c, arg, &o->obj, err, errlen);
	case OPT_SNAPSHOT_DIR:
		return set_string(c, arg, &o->snapshot_dir, err, errlen);
	case OPT_FOLDED_WEIGHT:
		return either("--folded-weight", arg, "bytes", "allocs", &o->folded_allocs, err, errlen);
	case OPT_PPROF_FORMAT:
		o->pprof_format_given = true;
		return either("--pprof-format", arg, "proto", "gperftools", &o->pprof_gperftools, err,
			      errlen);
	case OPT_DEBUG_DIR:
		return add_repeated(c, arg, o->debug_dirs, &o->nr_debug_dirs, OPTS_MAX_DEBUG_DIRS,
				    "directories", err, errlen);
	case OPT_OWN:	/* a directory, a file or a glob, checked when matched */
		return add_repeated(c, arg, o->own, &o->nr_own, OPTS_MAX_OWN, "paths", err, errlen);
	case OPT_ALLOC_FN:	/* a function's name or a glob (zmalloc*): analyze/sites.h */
		return add_repeated(c, arg, o->alloc_fns, &o->nr_alloc_fns, OPTS_MAX_OWN, "names",
				    err, errlen);
	case OPT_PYTHON_MALLOC:
		/* PYTHONMALLOC for the command: the two allocators whose blocks mean something here. */
		o->python_malloc = arg;
		return either("--python-malloc", arg, "pymalloc", "malloc", &(bool){ 0 }, err, errlen);
	case OPT_UNWIND:
		return set_unwind(o, arg, err, errlen);
	case OPT_UNWIND_CACHE:	/* a directory or "off", checked when the tables are */
		return set_string(c, arg, &o->unwind_cache, err, errlen);
	case 'T':
		ret = set_number(c, arg, 1, UINT_MAX, &v, err, errlen);
		if (!ret)
			o->top = v;
		return ret;
	case 'o':
		/* Converted to nanoseconds downstream: keep that in 64 bits. */
		return set_number(c, arg, 0, UINT64_MAX / 1000000, &o->older_ms,
				  err, errlen);
	case 'z':
		return set_number(c, arg, 0, UINT64_MAX, &o->min_size, err, errlen);
	case 'Z':
		return set_number(c, arg, 0, UINT64_MAX, &o->max_size, err, errlen);
	case OPT_MAX_ALLOCS:
		ret = set_number(c, arg, 1, OPTS_MAX_MAP_ENTRIES, &v, err, errlen);
		if (!ret)
			o->max_allocs = v;
		o->max_allocs_given = !ret;
		return ret;
	case OPT_STACK_STORAGE:
		ret = set_number(c, arg, 1, OPTS_MAX_MAP_ENTRIES, &v, err, errlen);
		if (!ret) {
			o->stack_storage_size = v;
			o->stack_storage_given = true;
		}
		return ret;
	case OPT_PY_OBJECTS:
		o->py_objects = true;
		return 0;
	case OPT_PREALLOC_STACKS:
		o->prealloc_stacks = true;
		return 0;
	case OPT_ALL_STACKS:
		o->all_stacks = true;
		return 0;
	case OPT_FULL_NAMES:
		o->full_names = true;
		return 0;
	case OPT_SNAPSHOT_HTML:
		o->snapshot_html = true;
		return 0;
	case 'f':
		o->follow = true;
		return 0;
	case OPT_FOLDED_BY_PROCESS:
		o->folded_by_process = true;
		return 0;
	case OPT_REACH:
		o->reach = true;
		return 0;
	case OPT_SAMPLE:
	case 's':
		return set_sample(o, c, arg, err, errlen);
	case 'a':
		o->show_allocs = true;
		return 0;
	case OPT_ALLOCS_PER_STACK:
		return set_allocs_per_stack(o, arg, err, errlen);
	case 't':
		o->trace = true;
		return 0;
	case OPT_TRACE_BUFFER:
		return set_ring("--trace-buffer", arg, &o->trace_buffer, &o->trace_buffer_given, err,
				errlen);
	case OPT_STACK_RING:
		return set_ring("--new-stack-buffer", arg, &o->stack_ring, &o->stack_ring_given, err,
				errlen);
	case OPT_PY_CODE_RING:
		return set_ring("--py-code-buffer", arg, &o->py_code_ring, &o->py_code_ring_given,
				err, errlen);
	case 'S':
		return set_string(c, arg, &o->symbols_prefix, err, errlen);
	case 'C':	/* bcc: aggregate in the kernel, as memleakbpf always does */
	case 'F':	/* bcc: a new block at a held address replaces it, as here always */
		return 0;
	case 'P':
		return fail(err, errlen, "--percpu is not needed: -k traces the kernel's per-CPU allocations with its others");
	case OPT_SORT:
		/* bcc's: size (outstanding bytes, the default) or count (outstanding allocations). */
		return either("--sort", arg, "size", "count", &o->sort_count, err, errlen);
	case 'v':
		o->verbose++;
		return 0;
	}
	return fail(err, errlen, "internal error: option %d not handled", c);
}

/* Positional arguments: [INTERVAL [COUNT]], counted in *nr. */
static int set_positional(struct opts *o, const char *arg, int *nr, char *err,
			  size_t errlen)
{
	uint64_t v;
	int ret;

	switch ((*nr)++) {
	case 0:
		if (parse_seconds(arg, &o->interval_s))
			return fail(err, errlen,
				    "INTERVAL: '%s' is not a number of seconds", arg);
		if (o->interval_s <= 0)
			return fail(err, errlen, "INTERVAL: '%s' must be greater than 0", arg);
		if (o->interval_s < OPTS_MIN_INTERVAL_S || o->interval_s > OPTS_MAX_INTERVAL_S)
			return fail(err, errlen,
				    "INTERVAL: '%s' is out of range (%g to %.0f seconds)",
				    arg, OPTS_MIN_INTERVAL_S, OPTS_MAX_INTERVAL_S);
		return 0;
	case 1:
		ret = parse_u64(arg, UINT_MAX, &v);
		if (ret == -ERANGE)
			return fail(err, errlen, "COUNT: '%s' is out of range (1 to %u)",
				    arg, UINT_MAX);
		if (ret || v == 0)
			return fail(err, errlen, "COUNT: '%s' is not a positive integer", arg);
		o->count = v;
		return 0;
	}
	/* Usually an unquoted -c command whose arguments spilled over. */
	return fail(err, errlen, "too many arguments at '%s': expected [INTERVAL [COUNT]]%s",
		    arg, o->command ? " (quote the whole command: -c 'prog args')" : "");
}

/* How many long options "--name[=value]" abbreviates (getopt accepts prefixes). */
static int long_prefix_matches(const char *arg)
{
	size_t len;
	int n = 0;

	if (strncmp(arg, "--", 2))
		return 0;
	arg += 2;
	len = strcspn(arg, "=");
	for (const struct option *lo = long_options; lo->name; lo++)
		n += !strncmp(lo->name, arg, len);
	return n;
}

/* Turn getopt's '?' or ':' into one line naming the offending option. */
static int getopt_error(const struct opts *o, int c, int argc, char **argv,
			char *err, size_t errlen)
{
	const char *hint = o->command ? " (quote the whole command: -c 'prog args')" : "";
	const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
	char name[32];

	if (c == ':')
		return fail(err, errlen, "%s needs an argument",
			    option_name(optopt, name, sizeof(name)));
	/* A known val here means a long option given "=value" it does not take. */
	if (optopt > 0 && optopt < 256 && strchr("vhatCFP", optopt))
		return fail(err, errlen, "%s takes no argument (got '%s')",
			    option_name(optopt, name, sizeof(name)), arg);
	if (optopt > 0 && optopt < 256 && isdigit(optopt))
		return fail(err, errlen, "unknown option '-%c' (INTERVAL and COUNT must be positive)",
			    optopt);
	if (optopt)
		return fail(err, errlen, "unknown option '-%c'%s", optopt, hint);
	/* Unknown or ambiguous long option: getopt left its text in argv. */
	if (long_prefix_matches(arg) > 1)
		return fail(err, errlen, "ambiguous option '%.*s': spell out more of it",
			    (int)strcspn(arg, "="), arg);
	return fail(err, errlen, "unknown option '%.*s'%s", (int)strcspn(arg, "="),
		    arg, hint);
}

static int validate_outputs(const struct opts *o, char *err, size_t errlen);

/*
 * -k, or neither -p nor -c (bcc's memleak traces the kernel then too): the
 * options that name something of a process are refused, and the tables'
 * defaults are the kernel's (its stacks are fewer than a big program's).
 */
static int validate_kernel(struct opts *o, char *err, size_t errlen)
{
	const char *bad = o->user ? "-u/--user" : o->obj ? "-O/--obj" : o->follow ? "-f/--follow" :
		o->reach ? "--reach" : o->sample_mode ? "--sample or -s" :
		o->py_objects ? "--py-objects" : o->python_malloc ? "--python-malloc" :
		o->nr_own ? "--own" : o->folded_by_process ? "--folded-by-process" :
		o->unwind != UNWIND_AUTO ? "--unwind" : o->unwind_cache ? "--unwind-cache" :
		o->prealloc_stacks ? "--prealloc-stacks" :
		o->stack_ring_given ? "--new-stack-buffer" :
		o->py_code_ring_given ? "--py-code-buffer" :
		o->show_allocs ? "-a/--show-allocs" : o->trace ? "-t/--trace" :
		o->symbols_prefix ? "-S/--symbols-prefix" : NULL;

	if (o->pid || o->command)
		return fail(err, errlen, "-k traces the kernel: give it without -p or -c");
	if (bad)
		return fail(err, errlen, "%s: for a process, not with -k (the kernel's allocations)", bad);
	o->kernel = true;
	if (!o->max_allocs_given)
		o->max_allocs = OPTS_KERNEL_MAX_ALLOCS;
	if (!o->stack_storage_given)
		o->stack_storage_size = OPTS_KERNEL_STACK_STORAGE;
	return 0;
}

static int validate(struct opts *o, char *err, size_t errlen)
{
	if (o->kernel || (!o->pid && !o->command))
		return validate_kernel(o, err, errlen) ?: validate_outputs(o, err, errlen);
	if (o->pid && o->command)
		return fail(err, errlen, "give either -p PID or -c COMMAND, not both");
	if (o->user && !o->command)
		return fail(err, errlen, "-u/--user needs -c: it names the user the command runs as");
	if (o->python_malloc && !o->command)
		return fail(err, errlen, "--python-malloc needs -c: a running interpreter keeps its allocator");
	return validate_outputs(o, err, errlen);
}

/* What the output options need, for a process and the kernel alike. */
static int validate_outputs(const struct opts *o, char *err, size_t errlen)
{
	if (o->folded_allocs && !o->outputs[REPORT_OUT_FOLDED] && !o->snapshot_dir)
		return fail(err, errlen, "--folded-weight needs --folded or --snapshot-dir: it weighs their stacks");
	if (o->snapshot_html && !o->snapshot_dir)
		return fail(err, errlen, "--snapshot-html needs --snapshot-dir: the pages go there");
	if (o->pprof_format_given && !o->outputs[REPORT_OUT_PPROF] && !o->snapshot_dir)
		return fail(err, errlen, "--pprof-format needs --pprof or --snapshot-dir: it is their format");
	if (o->all_stacks && !o->outputs[REPORT_OUT_JSON] && !o->outputs[REPORT_OUT_FOLDED] && !o->snapshot_dir)
		return fail(err, errlen, "--all-stacks needs --json, --folded or --snapshot-dir: the stacks it keeps go there");
	if (o->reach && o->sample_mode)
		return fail(err, errlen, "--reach cannot run under --sample or -s: it needs every block, not a sample");
	if (o->allocs_per_stack_given && !o->show_allocs)
		return fail(err, errlen, "--allocs-per-stack needs -a/--show-allocs: it bounds the blocks -a shows");
	if (o->trace_buffer_given && !o->trace)
		return fail(err, errlen, "--trace-buffer needs -t/--trace: it is the ring of -t's lines");
	if (o->symbols_prefix && strspn(o->symbols_prefix, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.$") != strlen(o->symbols_prefix))
		return fail(err, errlen, "-S/--symbols-prefix: '%s' is not the start of a symbol name", o->symbols_prefix);
	if (o->min_size > o->max_size)
		return fail(err, errlen, "--min-size %llu is larger than --max-size %llu",
			    (unsigned long long)o->min_size,
			    (unsigned long long)o->max_size);
	return 0;
}

/* Set, and not to "0". */
static bool env_flag(const char *name)
{
	const char *v = getenv(name);

	return v && v[0] && strcmp(v, "0");
}

static void set_defaults(struct opts *o)
{
	memset(o, 0, sizeof(*o));
	o->interval_s = OPTS_DEFAULT_INTERVAL_S;
	o->top = OPTS_DEFAULT_TOP;
	o->max_size = UINT64_MAX;
	o->max_allocs = OPTS_DEFAULT_MAX_ALLOCS;
	o->stack_storage_size = OPTS_DEFAULT_STACK_STORAGE;
	o->allocs_per_stack = OPTS_DEFAULT_ALLOCS_PER_STACK;
	o->trace_buffer = OPTS_DEFAULT_TRACE_BUFFER;
	o->stack_ring = OPTS_DEFAULT_STACK_RING;
	o->py_code_ring = OPTS_DEFAULT_PY_CODE_RING;
	o->bench_floor = env_flag("MEMLEAKBPF_BENCH_FLOOR");
	o->probe_at_entry = env_flag("MEMLEAKBPF_PROBE_AT_ENTRY");
	o->bench_no_python = env_flag("MEMLEAKBPF_BENCH_NO_PYTHON");
	o->bench_no_session = env_flag("MEMLEAKBPF_BENCH_NO_SESSION");
	o->bench_no_stack = env_flag("MEMLEAKBPF_BENCH_NO_STACK");
	o->bench_no_preempt_off = env_flag("MEMLEAKBPF_BENCH_NO_PREEMPT_OFF");
}

int opts__parse(int argc, char **argv, struct opts *o, char *err, size_t errlen)
{
	int c, nr_positional = 0, ret = 0;

	set_defaults(o);
	err[0] = '\0';
	/* 0, not 1: makes glibc reset all of its state, so tests can parse again. */
	optind = 0;
	opterr = 0;
	while (!ret && (c = getopt_long(argc, argv, short_options, long_options, NULL)) != -1) {
		switch (c) {
		case 'h':
			opts__usage(stdout);
			return 1;
		case 1:
			ret = set_positional(o, optarg, &nr_positional, err, errlen);
			break;
		case '?':
		case ':':
			ret = getopt_error(o, c, argc, argv, err, errlen);
			break;
		default:
			ret = set_option(o, c, optarg, err, errlen);
		}
	}
	/* After "--" getopt stops: the rest are positional too. */
	for (; !ret && optind < argc; optind++)
		ret = set_positional(o, argv[optind], &nr_positional, err, errlen);
	return ret ?: set_sample_seed(o, err, errlen) ?: validate(o, err, errlen);
}
