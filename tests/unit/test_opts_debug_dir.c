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

/* --alloc-fn: repeatable, in order, never empty (analyze/sites.h). */
TEST(opts_alloc_fn)
{
	char *args[] = { "memleakbpf", "--alloc-fn", "zmalloc*", "-p", "1", "--alloc-fn=xmalloc",
			 "--alloc-fn", " ", NULL };

	ASSERT(parse_argv(args) == -EINVAL);	/* the third is empty */
	ASSERT_EQ_STR(err, "--alloc-fn: empty argument");
	args[6] = NULL;
	ASSERT_EQ_U64(parse_argv(args), 0);
	ASSERT_EQ_U64(o.nr_alloc_fns, 2);
	ASSERT_EQ_STR(o.alloc_fns[0], "zmalloc*");
	ASSERT_EQ_STR(o.alloc_fns[1], "xmalloc");
	return true;
}
