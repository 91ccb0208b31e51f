// SPDX-License-Identifier: GPL-2.0
/* --unwind: auto by default, one of three words, one line when wrong. */
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

TEST(opts_unwind)
{
	char *none[] = { "memleakbpf", "-p", "1", NULL };
	char *fp[] = { "memleakbpf", "--unwind", "fp", "-p", "1", NULL };
	char *dwarf[] = { "memleakbpf", "--unwind=dwarf", "-p", "1", NULL };
	char *autom[] = { "memleakbpf", "--unwind=auto", "-p", "1", NULL };
	char *bad[] = { "memleakbpf", "--unwind=frames", "-p", "1", NULL };
	char *missing[] = { "memleakbpf", "-p", "1", "--unwind", NULL };

	ASSERT_EQ_U64(parse_argv(none), 0);
	ASSERT_EQ_U64(o.unwind, UNWIND_AUTO);
	ASSERT_EQ_U64(parse_argv(fp), 0);
	ASSERT_EQ_U64(o.unwind, UNWIND_FP);
	ASSERT_EQ_U64(parse_argv(dwarf), 0);
	ASSERT_EQ_U64(o.unwind, UNWIND_DWARF);
	ASSERT_EQ_U64(parse_argv(autom), 0);
	ASSERT_EQ_U64(o.unwind, UNWIND_AUTO);
	ASSERT(parse_argv(bad) == -EINVAL);
	ASSERT_EQ_STR(err, "--unwind: 'frames' is none of auto, fp, dwarf");
	ASSERT(parse_argv(missing) == -EINVAL);
	ASSERT_EQ_STR(err, "--unwind needs an argument");
	return true;
}

/* --unwind-cache: a directory or off, kept as given (checked when the tables are); not with -k. */
TEST(opts_unwind_cache)
{
	char *none[] = { "memleakbpf", "-c", "true", NULL };
	char *dir[] = { "memleakbpf", "--unwind-cache", "/tmp/uc", "-c", "true", NULL };
	char *off[] = { "memleakbpf", "--unwind-cache=off", "-p", "1", NULL };
	char *empty[] = { "memleakbpf", "--unwind-cache=", "-p", "1", NULL };
	char *kernel[] = { "memleakbpf", "-k", "--unwind-cache", "off", NULL };

	ASSERT_EQ_U64(parse_argv(none), 0);
	ASSERT(o.unwind_cache == NULL);
	ASSERT_EQ_U64(parse_argv(dir), 0);
	ASSERT_EQ_STR(o.unwind_cache, "/tmp/uc");
	ASSERT_EQ_U64(parse_argv(off), 0);
	ASSERT_EQ_STR(o.unwind_cache, "off");
	ASSERT(parse_argv(empty) == -EINVAL);
	ASSERT(parse_argv(kernel) == -EINVAL);
	ASSERT_EQ_STR(err, "--unwind-cache: for a process, not with -k (the kernel's allocations)");
	return true;
}
