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
