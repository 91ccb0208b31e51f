// SPDX-License-Identifier: GPL-2.0
/*
 * The options of bcc's and libbpf-tools' memleak: -a and --allocs-per-stack,
 * -t and --trace-buffer, --symbols-prefix, those accepted as what memleakbpf
 * always does (-C, -F), --percpu refused, --sort; each error one line.
 */
#include <errno.h>
#include "cli/opts.h"
#include "helpers.h"
#include "unit.h"

static struct opts o;
static char err[256];

static int parse_argv(char **argv)
{
	return unit__parse_argv(&o, err, sizeof(err), argv);
}

TEST(opts_bcc_defaults)
{
	char *none[] = { "memleakbpf", "-p", "1", NULL };

	ASSERT_EQ_U64(parse_argv(none), 0);
	ASSERT(!o.show_allocs && !o.trace && !o.sort_count);
	ASSERT_EQ_U64(o.allocs_per_stack, 10);
	ASSERT_EQ_U64(o.trace_buffer, 4u << 20);
	ASSERT(o.symbols_prefix == NULL);
	return true;
}

TEST(opts_bcc_forms)
{
	char *s[] = { "memleakbpf", "-atCF", "-S", "je_", "-p", "1", NULL };
	char *l[] = { "memleakbpf", "--show-allocs", "--allocs-per-stack", "all", "--trace",
		      "--trace-buffer", "64K", "--symbols-prefix=pfx_", "--combined-only",
		      "--wa-missing-free", "--sort", "count", "-p", "1", NULL };
	char *n[] = { "memleakbpf", "-a", "--allocs-per-stack=3", "--sort=size", "-p", "1", NULL };

	ASSERT_EQ_U64(parse_argv(s), 0);
	ASSERT(o.show_allocs && o.trace);
	ASSERT_EQ_STR(o.symbols_prefix, "je_");
	ASSERT_EQ_U64(parse_argv(l), 0);
	ASSERT(o.show_allocs && o.trace && o.sort_count);
	ASSERT_EQ_U64(o.allocs_per_stack, 0);
	ASSERT_EQ_U64(o.trace_buffer, 65536);
	ASSERT_EQ_STR(o.symbols_prefix, "pfx_");
	ASSERT_EQ_U64(parse_argv(n), 0);
	ASSERT_EQ_U64(o.allocs_per_stack, 3);
	ASSERT(!o.sort_count);
	return true;
}

TEST(opts_bcc_errors)
{
	static const struct {
		char *argv[8];
		const char *err;
	} cases[] = {
		{ { "memleakbpf", "--percpu", "-p", "1" },
		  "--percpu is not needed: -k traces the kernel's per-CPU allocations with its others" },
		{ { "memleakbpf", "-P", "-p", "1" },
		  "--percpu is not needed: -k traces the kernel's per-CPU allocations with its others" },
		{ { "memleakbpf", "--allocs-per-stack", "2", "-p", "1" },
		  "--allocs-per-stack needs -a/--show-allocs: it bounds the blocks -a shows" },
		{ { "memleakbpf", "-a", "--allocs-per-stack", "0", "-p", "1" },
		  "--allocs-per-stack: '0' is neither a positive integer nor all" },
		{ { "memleakbpf", "-a", "--allocs-per-stack", "some", "-p", "1" },
		  "--allocs-per-stack: 'some' is neither a positive integer nor all" },
		{ { "memleakbpf", "--trace-buffer", "1M", "-p", "1" },
		  "--trace-buffer needs -t/--trace: it is the ring of -t's lines" },
		{ { "memleakbpf", "-t", "--trace-buffer", "3M", "-p", "1" },
		  "--trace-buffer: '3M' is not a power of two from 4K to 1G" },
		{ { "memleakbpf", "-t", "--trace-buffer", "2K", "-p", "1" },
		  "--trace-buffer: '2K' is not a power of two from 4K to 1G" },
		{ { "memleakbpf", "-t", "--trace-buffer", "lots", "-p", "1" },
		  "--trace-buffer: 'lots' is not a number of bytes (K, M, G allowed)" },
		{ { "memleakbpf", "-S", "je-", "-p", "1" },
		  "-S/--symbols-prefix: 'je-' is not the start of a symbol name" },
		{ { "memleakbpf", "-S", "", "-p", "1" }, "-S/--symbols-prefix: empty argument" },
		{ { "memleakbpf", "--sort", "age", "-p", "1" },
		  "--sort: 'age' is neither size nor count" },
		{ { "memleakbpf", "--trace=yes", "-p", "1" },
		  "-t/--trace takes no argument (got '--trace=yes')" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ASSERT(parse_argv((char **)cases[i].argv) == -EINVAL);
		ASSERT_EQ_STR(err, cases[i].err);
	}
	return true;
}
