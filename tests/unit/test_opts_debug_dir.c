// SPDX-License-Identifier: GPL-2.0
/* --debug-dir: repeatable, kept in order, bounded, never empty. */
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

TEST(opts_debug_dir)
{
	char *none[] = { "memleakbpf", "-p", "1", NULL };
	char *two[] = { "memleakbpf", "--debug-dir", "/a", "-p", "1", "--debug-dir=rel/b", NULL };
	char *empty[] = { "memleakbpf", "--debug-dir", "", "-p", "1", NULL };
	char *missing[] = { "memleakbpf", "-p", "1", "--debug-dir", NULL };
	char *many[2 * OPTS_MAX_DEBUG_DIRS + 6] = { "memleakbpf", "-p", "1" };	/* NULL-terminated */
	int n = 3;

	ASSERT_EQ_U64(parse_argv(none), 0);
	ASSERT_EQ_U64(o.nr_debug_dirs, 0);
	ASSERT_EQ_U64(parse_argv(two), 0);
	ASSERT_EQ_U64(o.nr_debug_dirs, 2);
	ASSERT_EQ_STR(o.debug_dirs[0], "/a");
	ASSERT_EQ_STR(o.debug_dirs[1], "rel/b");
	ASSERT(parse_argv(empty) == -EINVAL);
	ASSERT_EQ_STR(err, "--debug-dir: empty argument");
	ASSERT(parse_argv(missing) == -EINVAL);
	ASSERT_EQ_STR(err, "--debug-dir needs an argument");
	for (int i = 0; i <= OPTS_MAX_DEBUG_DIRS; i++) {
		many[n++] = "--debug-dir";
		many[n++] = "/d";
	}
	ASSERT(parse_argv(many) == -EINVAL);
	ASSERT_EQ_STR(err, "--debug-dir: at most 16 directories");
	return true;
}
