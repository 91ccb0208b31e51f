// SPDX-License-Identifier: GPL-2.0
/* --python-malloc (issue 9): its values, and -c only. */
#include "cli/opts.h"
#include "helpers.h"
#include "unit.h"

static bool parses(char **argv, struct opts *o, char *err, size_t len)
{
	return unit__parse_argv(o, err, len, argv) == 0;
}

TEST(pyopts_python_malloc)
{
	char *c_malloc[] = { "memleakbpf", "--python-malloc", "malloc", "-c", "python3 x.py", NULL };
	char *c_pymalloc[] = { "memleakbpf", "--python-malloc=pymalloc", "-c", "python3", NULL };
	char *c_none[] = { "memleakbpf", "-c", "python3", NULL };
	char *p_malloc[] = { "memleakbpf", "--python-malloc", "malloc", "-p", "1", NULL };
	char *bad[] = { "memleakbpf", "--python-malloc", "jemalloc", "-c", "python3", NULL };
	struct opts o;
	char err[256];

	ASSERT(parses(c_malloc, &o, err, sizeof(err)));
	ASSERT_EQ_STR(o.python_malloc, "malloc");
	ASSERT(parses(c_pymalloc, &o, err, sizeof(err)));
	ASSERT_EQ_STR(o.python_malloc, "pymalloc");
	ASSERT(parses(c_none, &o, err, sizeof(err)) && !o.python_malloc);
	ASSERT(!parses(p_malloc, &o, err, sizeof(err)));
	ASSERT_EQ_STR(err, "--python-malloc needs -c: a running interpreter keeps its allocator");
	ASSERT(!parses(bad, &o, err, sizeof(err)));
	ASSERT_EQ_STR(err, "--python-malloc: 'jemalloc' is neither pymalloc nor malloc");
	return true;
}
