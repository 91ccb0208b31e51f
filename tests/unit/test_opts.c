// SPDX-License-Identifier: GPL-2.0
/* Option parsing: defaults, every option in both forms, and every error class. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include "cli/opts.h"
#include "helpers.h"
#include "unit.h"

static struct opts o;
static char err[256];

/* Parse "memleakbpf" followed by the NULL-terminated arguments. */
static int parse(const char *first, ...)
{
	va_list ap;
	int ret;

	va_start(ap, first);
	ret = unit__vparse(&o, err, sizeof(err), first, ap);
	va_end(ap);
	return ret;
}

/* Expect failure with exactly this message. */
static bool fails_with(int ret, const char *want)
{
	if (ret == -EINVAL && !strcmp(err, want))
		return true;
	fprintf(stderr, "  got %d \"%s\", want -EINVAL \"%s\"\n", ret, err, want);
	return false;
}

TEST(opts_defaults)
{
	ASSERT_EQ_U64(parse("-p", "1234", NULL), 0);
	ASSERT_EQ_STR(err, "");
	ASSERT_EQ_U64(o.pid, 1234);
	ASSERT(o.command == NULL);
	ASSERT(o.interval_s == 5.0);
	ASSERT_EQ_U64(o.count, 0);
	ASSERT_EQ_U64(o.top, 10);
	ASSERT_EQ_U64(o.older_ms, 0);
	ASSERT_EQ_U64(o.min_size, 0);
	ASSERT_EQ_U64(o.max_size, UINT64_MAX);
	ASSERT(o.obj == NULL);
	ASSERT_EQ_U64(o.verbose, 0);
	ASSERT(o.outputs[REPORT_OUT_JSON] == NULL);
	ASSERT(o.outputs[REPORT_OUT_FOLDED] == NULL);
	ASSERT_EQ_U64(o.max_allocs, 1048576);
	ASSERT_EQ_U64(o.stack_storage_size, 262144);
	ASSERT(!o.prealloc_stacks);
	ASSERT(o.user == NULL);
	return true;
}

TEST(opts_short_forms)
{
	ASSERT_EQ_U64(parse("-p", "42", "-T", "3", "-o", "250", "-z", "16",
			    "-Z", "4096", "-O", "/lib/libtcmalloc.so", "-v", "-v",
			    NULL), 0);
	ASSERT_EQ_U64(o.pid, 42);
	ASSERT_EQ_U64(o.top, 3);
	ASSERT_EQ_U64(o.older_ms, 250);
	ASSERT_EQ_U64(o.min_size, 16);
	ASSERT_EQ_U64(o.max_size, 4096);
	ASSERT_EQ_STR(o.obj, "/lib/libtcmalloc.so");
	ASSERT_EQ_U64(o.verbose, 2);
	return true;
}

TEST(opts_long_forms)
{
	ASSERT_EQ_U64(parse("--command", "python3 train.py", "--user", "nobody",
			    "--top=7", "--older", "1000", "--min-size=8",
			    "--max-size", "64", "--obj=/x/libc.so.6", "--verbose",
			    "--json", "r.json", "--folded=l.folded",
			    "--max-allocs", "100", "--stack-storage-size=200",
			    "--prealloc-stacks", NULL), 0);
	ASSERT_EQ_STR(o.command, "python3 train.py");
	ASSERT_EQ_STR(o.user, "nobody");
	ASSERT_EQ_U64(o.top, 7);
	ASSERT_EQ_U64(o.older_ms, 1000);
	ASSERT_EQ_U64(o.min_size, 8);
	ASSERT_EQ_U64(o.max_size, 64);
	ASSERT_EQ_STR(o.obj, "/x/libc.so.6");
	ASSERT_EQ_U64(o.verbose, 1);
	ASSERT_EQ_STR(o.outputs[REPORT_OUT_JSON], "r.json");
	ASSERT_EQ_STR(o.outputs[REPORT_OUT_FOLDED], "l.folded");
	ASSERT_EQ_U64(o.max_allocs, 100);
	ASSERT_EQ_U64(o.stack_storage_size, 200);
	ASSERT(o.prealloc_stacks);

	ASSERT_EQ_U64(parse("--pid=9", NULL), 0);
	ASSERT_EQ_U64(o.pid, 9);
	return true;
}

TEST(opts_short_variants)
{
	/* Attached arguments, grouped flags, unambiguous long prefixes. */
	ASSERT_EQ_U64(parse("-p77", "-vvv", "-T5", "--max-a", "9", "--stack", "3",
			    NULL), 0);
	ASSERT_EQ_U64(o.pid, 77);
	ASSERT_EQ_U64(o.verbose, 3);
	ASSERT_EQ_U64(o.top, 5);
	ASSERT_EQ_U64(o.max_allocs, 9);
	ASSERT_EQ_U64(o.stack_storage_size, 3);
	return true;
}

TEST(opts_limits_accepted)
{
	ASSERT_EQ_U64(parse("-p", "1", "--max-allocs", "268435456",
			    "--stack-storage-size", "1", "-z", "0", "-Z", "0",
			    "-Z", "18446744073709551615", "-T", "4294967295", NULL), 0);
	ASSERT_EQ_U64(o.max_allocs, 1u << 28);
	ASSERT_EQ_U64(o.stack_storage_size, 1);
	ASSERT_EQ_U64(o.max_size, UINT64_MAX);	/* the last -Z wins */
	ASSERT_EQ_U64(o.top, 4294967295u);
	ASSERT_EQ_U64(parse("-p", "2147483647", "-z", "5", "-Z", "5", NULL), 0);
	ASSERT_EQ_U64(o.pid, 2147483647);
	return true;
}

TEST(opts_positional)
{
	ASSERT_EQ_U64(parse("-p", "1", "10", NULL), 0);
	ASSERT(o.interval_s == 10.0);
	ASSERT_EQ_U64(o.count, 0);

	ASSERT_EQ_U64(parse("-p", "1", "0.5", "3", NULL), 0);
	ASSERT(o.interval_s == 0.5);
	ASSERT_EQ_U64(o.count, 3);

	/* Options and positionals mix in any order, as with bcc. */
	ASSERT_EQ_U64(parse("2", "-c", "./server --port 80", "6", "-T", "4", NULL), 0);
	ASSERT(o.interval_s == 2.0);
	ASSERT_EQ_U64(o.count, 6);
	ASSERT_EQ_STR(o.command, "./server --port 80");
	ASSERT_EQ_U64(o.top, 4);

	/* After "--" everything is positional. */
	ASSERT_EQ_U64(parse("-p", "1", "--", "1.25", "8", NULL), 0);
	ASSERT(o.interval_s == 1.25);
	ASSERT_EQ_U64(o.count, 8);

	ASSERT_EQ_U64(parse("-p", "1", ".5", NULL), 0);
	ASSERT(o.interval_s == 0.5);
	ASSERT_EQ_U64(parse("-p", "1", "3.", NULL), 0);
	ASSERT(o.interval_s == 3.0);
	return true;
}

TEST(opts_argv_untouched)
{
	char *argv[] = { "memleakbpf", "5", "-p", "1", "2", NULL };

	/* Parsing must not permute argv: the caller may parse it again. */
	ASSERT_EQ_U64(unit__parse_argv(&o, err, sizeof(err), argv), 0);
	ASSERT_EQ_STR(argv[1], "5");
	ASSERT_EQ_STR(argv[2], "-p");
	ASSERT_EQ_STR(argv[3], "1");
	ASSERT_EQ_STR(argv[4], "2");
	return true;
}

TEST(opts_reentrant)
{
	/* Leave getopt in the middle of a group of short options... */
	ASSERT(fails_with(parse("-vxv", "-p", "1", NULL), "unknown option '-x'"));
	/* ...then parse again: nothing may carry over. */
	ASSERT_EQ_U64(parse("-p", "3", NULL), 0);
	ASSERT_EQ_U64(o.verbose, 0);
	ASSERT_EQ_U64(o.pid, 3);
	ASSERT_EQ_U64(parse("-v", "-c", "true", NULL), 0);
	ASSERT_EQ_U64(o.verbose, 1);
	ASSERT_EQ_U64(o.pid, 0);
	ASSERT_EQ_STR(o.command, "true");
	return true;
}

TEST(opts_help)
{
	int saved, ret1, ret2, ret3;

	/* --help prints to stdout: keep the test output readable. */
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	ASSERT(saved >= 0);
	dup2(open("/dev/null", O_WRONLY), STDOUT_FILENO);
	ret1 = parse("-h", NULL);
	ret2 = parse("--help", NULL);
	ret3 = parse("-p", "1", "--help", "-x", NULL);	/* help wins over later errors */
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	ASSERT_EQ_U64(ret1, 1);
	ASSERT_EQ_U64(ret2, 1);
	ASSERT_EQ_U64(ret3, 1);
	return true;
}

TEST(opts_usage_lists_everything)
{
	static const char *const want[] = {
		"-p, --pid PID", "-c, --command CMD", "-u, --user USER",
		"-O, --obj PATH", "-T, --top N", "-o, --older MS",
		"-z, --min-size BYTES", "-Z, --max-size BYTES", "--json FILE",
		"--folded FILE", "--max-allocs N", "--stack-storage-size N", "--prealloc-stacks",
		"-v, --verbose", "-h, --help", "[INTERVAL [COUNT]]",
		"memleakbpf -p 1234", "memleakbpf -c './server --port 80' 10 6",
		"memleakbpf --json report.json --folded leaks.folded -c ./server",
		"1048576", "262144",
		"-a, --show-allocs", "--allocs-per-stack N", "-t, --trace", "--trace-buffer BYTES",
		"-S, --symbols-prefix P", "-C, --combined-only", "-F, --wa-missing-free",
		"--sort KEY", "--full-names", "--py-code-buffer BYTES",
	};
	char *text = NULL, *line;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ASSERT(f);
	opts__usage(f);
	fclose(f);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		if (!strstr(text, want[i])) {
			fprintf(stderr, "  usage lacks \"%s\"\n", want[i]);
			free(text);
			return false;
		}
	}
	/* One line per option, readable in an 80-column terminal. */
	for (line = text; *line; line += strcspn(line, "\n") + 1) {
		if (strcspn(line, "\n") > 80) {
			free(text);
			ASSERT(!"usage line longer than 80 columns");
		}
	}
	free(text);
	return true;
}

TEST(opts_err_target)
{
	/* No target: the kernel's allocations (-k), as bcc's memleak. */
	ASSERT_EQ_U64(parse(NULL), 0);
	ASSERT(o.kernel);
	ASSERT_EQ_U64(o.max_allocs, OPTS_KERNEL_MAX_ALLOCS);
	ASSERT_EQ_U64(o.stack_storage_size, OPTS_KERNEL_STACK_STORAGE);
	ASSERT_EQ_U64(parse("-T", "3", "5", NULL), 0);
	ASSERT(o.kernel);
	ASSERT_EQ_U64(parse("-k", "--max-allocs", "100", "--stack-storage-size", "200", NULL), 0);
	ASSERT(o.kernel && o.max_allocs == 100 && o.stack_storage_size == 200);
	ASSERT(fails_with(parse("-k", "-p", "1", NULL),
			  "-k traces the kernel: give it without -p or -c"));
	ASSERT(fails_with(parse("--kernel", "-c", "ls", NULL),
			  "-k traces the kernel: give it without -p or -c"));
	ASSERT(fails_with(parse("-k", "-f", NULL),
			  "-f/--follow: for a process, not with -k (the kernel's allocations)"));
	ASSERT(fails_with(parse("--sample", "512K", NULL),
			  "--sample or -s: for a process, not with -k (the kernel's allocations)"));
	ASSERT(fails_with(parse("-k", "-a", NULL),
			  "-a/--show-allocs: for a process, not with -k (the kernel's allocations)"));
	ASSERT(fails_with(parse("-t", NULL),
			  "-t/--trace: for a process, not with -k (the kernel's allocations)"));
	ASSERT(fails_with(parse("-k", "--folded-weight", "allocs", NULL),
			  "--folded-weight needs --folded or --snapshot-dir: it weighs their stacks"));
	ASSERT_EQ_U64(parse("-p", "1", NULL), 0);
	ASSERT(!o.kernel);
	ASSERT(fails_with(parse("-p", "1", "-c", "ls", NULL),
			  "give either -p PID or -c COMMAND, not both"));
	ASSERT(fails_with(parse("-p", "1", "-u", "nobody", NULL),
			  "-u/--user needs -c: it names the user the command runs as"));
	return true;
}

TEST(opts_err_empty_strings)
{
	ASSERT(fails_with(parse("-c", "", NULL), "-c/--command: empty argument"));
	ASSERT(fails_with(parse("-c", "  \t", NULL), "-c/--command: empty argument"));
	ASSERT(fails_with(parse("-c", "ls", "-u", "", NULL), "-u/--user: empty argument"));
	ASSERT(fails_with(parse("-p", "1", "--json", "", NULL), "--json: empty argument"));
	ASSERT(fails_with(parse("-p", "1", "--folded=", NULL), "--folded: empty argument"));
	ASSERT(fails_with(parse("-p", "1", "-O", "", NULL), "-O/--obj: empty argument"));
	return true;
}

TEST(opts_err_unknown_option)
{
	ASSERT(fails_with(parse("-p", "1", "-x", NULL), "unknown option '-x'"));
	ASSERT(fails_with(parse("-p", "1", "--bogus", NULL), "unknown option '--bogus'"));
	ASSERT(fails_with(parse("-p", "1", "--bogus=3", NULL), "unknown option '--bogus'"));
	ASSERT(fails_with(parse("-p", "1", "--m", "3", NULL),
			  "ambiguous option '--m': spell out more of it"));
	/* An unquoted -c command: say how to fix it. */
	ASSERT(fails_with(parse("-c", "./server", "--port", "80", NULL),
			  "unknown option '--port' (quote the whole command: -c 'prog args')"));
	/* A negative INTERVAL looks like an option. */
	ASSERT(fails_with(parse("-p", "1", "-1", NULL),
			  "unknown option '-1' (INTERVAL and COUNT must be positive)"));
	ASSERT(fails_with(parse("-p", "1", "--verbose=2", NULL),
			  "-v/--verbose takes no argument (got '--verbose=2')"));
	return true;
}

TEST(opts_err_missing_argument)
{
	ASSERT(fails_with(parse("-p", NULL), "-p/--pid needs an argument"));
	ASSERT(fails_with(parse("-p", "1", "--top", NULL), "-T/--top needs an argument"));
	ASSERT(fails_with(parse("-p", "1", "--json", NULL), "--json needs an argument"));
	ASSERT(fails_with(parse("-p", "1", "--stack-storage-size", NULL),
			  "--stack-storage-size needs an argument"));
	ASSERT(fails_with(parse("-c", NULL), "-c/--command needs an argument"));
	return true;
}

TEST(opts_err_pid)
{
	ASSERT(fails_with(parse("-p", "abc", NULL), "-p: 'abc' is not a process id"));
	ASSERT(fails_with(parse("-p", "0", NULL), "-p: '0' is not a process id"));
	ASSERT(fails_with(parse("-p", "12abc", NULL), "-p: '12abc' is not a process id"));
	ASSERT(fails_with(parse("-p", "-5", NULL), "-p: '-5' is not a process id"));
	ASSERT(fails_with(parse("-p", " 5", NULL), "-p: ' 5' is not a process id"));
	ASSERT(fails_with(parse("-p", "0x10", NULL), "-p: '0x10' is not a process id"));
	ASSERT(fails_with(parse("--pid=", NULL), "-p: '' is not a process id"));
	ASSERT(fails_with(parse("-p", "2147483648", NULL),
			  "-p: '2147483648' is out of range for a process id"));
	ASSERT(fails_with(parse("-p", "99999999999999999999999", NULL),
			  "-p: '99999999999999999999999' is out of range for a process id"));
	return true;
}

TEST(opts_err_numbers)
{
	ASSERT(fails_with(parse("-p", "1", "-T", "0", NULL),
			  "-T/--top: '0' is out of range (1 to 4294967295)"));
	ASSERT(fails_with(parse("-p", "1", "-T", "10x", NULL),
			  "-T/--top: '10x' is not a positive integer"));
	ASSERT(fails_with(parse("-p", "1", "-T", "4294967296", NULL),
			  "-T/--top: '4294967296' is out of range (1 to 4294967295)"));
	ASSERT(fails_with(parse("-p", "1", "-o", "-1", NULL),
			  "-o/--older: '-1' is not a non-negative integer"));
	ASSERT(fails_with(parse("-p", "1", "-o", "18446744073710", NULL),
			  "-o/--older: '18446744073710' is out of range (0 to 18446744073709)"));
	ASSERT(fails_with(parse("-p", "1", "-z", "1k", NULL),
			  "-z/--min-size: '1k' is not a non-negative integer"));
	ASSERT(fails_with(parse("-p", "1", "-Z", "18446744073709551616", NULL),
			  "-Z/--max-size: '18446744073709551616' is out of range (0 to 18446744073709551615)"));
	ASSERT(fails_with(parse("-p", "1", "-Z", "1.5", NULL),
			  "-Z/--max-size: '1.5' is not a non-negative integer"));
	return true;
}

TEST(opts_err_map_sizes)
{
	ASSERT(fails_with(parse("-p", "1", "--max-allocs", "0", NULL),
			  "--max-allocs: '0' is out of range (1 to 268435456)"));
	ASSERT(fails_with(parse("-p", "1", "--max-allocs", "268435457", NULL),
			  "--max-allocs: '268435457' is out of range (1 to 268435456)"));
	ASSERT(fails_with(parse("-p", "1", "--stack-storage-size", "0", NULL),
			  "--stack-storage-size: '0' is out of range (1 to 268435456)"));
	ASSERT(fails_with(parse("-p", "1", "--stack-storage-size=4294967296", NULL),
			  "--stack-storage-size: '4294967296' is out of range (1 to 268435456)"));
	ASSERT(fails_with(parse("-p", "1", "--max-allocs", "1M", NULL),
			  "--max-allocs: '1M' is not a positive integer"));
	return true;
}

/* The ring of Python's code copies: 1M, a power of two from 4K, a process's only. */
TEST(opts_py_code_buffer)
{
	ASSERT_EQ_U64(parse("-p", "1", NULL), 0);
	ASSERT_EQ_U64(o.py_code_ring, 1u << 20);
	ASSERT_EQ_U64(parse("-p", "1", "--py-code-buffer", "4K", NULL), 0);
	ASSERT_EQ_U64(o.py_code_ring, 4096);
	ASSERT_EQ_U64(parse("-p", "1", "--py-code-buffer=8M", NULL), 0);
	ASSERT_EQ_U64(o.py_code_ring, 8u << 20);
	ASSERT(fails_with(parse("-p", "1", "--py-code-buffer", "3K", NULL),
			  "--py-code-buffer: '3K' is not a power of two from 4K to 1G"));
	ASSERT(fails_with(parse("-k", "--py-code-buffer", "4K", NULL),
			  "--py-code-buffer: for a process, not with -k (the kernel's allocations)"));
	return true;
}

TEST(opts_err_min_max)
{
	ASSERT(fails_with(parse("-p", "1", "-z", "100", "-Z", "50", NULL),
			  "--min-size 100 is larger than --max-size 50"));
	return true;
}

TEST(opts_err_interval)
{
	static const char *const not_numbers[] = {
		"abc", "1e3", "inf", "nan", "0x10", "5s", "1.2.3", ".", "+5", "",
	};

	for (size_t i = 0; i < sizeof(not_numbers) / sizeof(not_numbers[0]); i++) {
		char want[128];

		snprintf(want, sizeof(want),
			 "INTERVAL: '%s' is not a number of seconds", not_numbers[i]);
		ASSERT(fails_with(parse("-p", "1", not_numbers[i], NULL), want));
	}
	ASSERT(fails_with(parse("-p", "1", "0", NULL), "INTERVAL: '0' must be greater than 0"));
	ASSERT(fails_with(parse("-p", "1", "0.000", NULL),
			  "INTERVAL: '0.000' must be greater than 0"));
	ASSERT(fails_with(parse("-p", "1", "0.0001", NULL),
			  "INTERVAL: '0.0001' is out of range (0.001 to 1000000 seconds)"));
	ASSERT(fails_with(parse("-p", "1", "1000001", NULL),
			  "INTERVAL: '1000001' is out of range (0.001 to 1000000 seconds)"));
	return true;
}

TEST(opts_err_count)
{
	ASSERT(fails_with(parse("-p", "1", "5", "0", NULL),
			  "COUNT: '0' is not a positive integer"));
	ASSERT(fails_with(parse("-p", "1", "5", "2.5", NULL),
			  "COUNT: '2.5' is not a positive integer"));
	ASSERT(fails_with(parse("-p", "1", "5", "ten", NULL),
			  "COUNT: 'ten' is not a positive integer"));
	ASSERT(fails_with(parse("-p", "1", "5", "4294967296", NULL),
			  "COUNT: '4294967296' is out of range (1 to 4294967295)"));
	return true;
}

TEST(opts_err_too_many_positional)
{
	ASSERT(fails_with(parse("-p", "1", "5", "3", "7", NULL),
			  "too many arguments at '7': expected [INTERVAL [COUNT]]"));
	ASSERT(fails_with(parse("-p", "1", "--", "5", "3", "x", NULL),
			  "too many arguments at 'x': expected [INTERVAL [COUNT]]"));
	ASSERT(fails_with(parse("-c", "./server", "1", "2", "3", NULL),
			  "too many arguments at '3': expected [INTERVAL [COUNT]] "
			  "(quote the whole command: -c 'prog args')"));
	return true;
}
