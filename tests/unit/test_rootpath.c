// SPDX-License-Identifier: GPL-2.0
/* util/rootpath.c: a mapped file's path, as maps shows it to us, in the target's root. */
#include <string.h>
#include "util/rootpath.h"
#include "unit.h"

static bool within_is(const char *root, const char *path, const char *want)
{
	const char *got = rootpath__within(root, path);

	return want ? got && !strcmp(got, want) : !got;
}

TEST(rootpath_within_our_root_is_the_path)
{
	/* Our root, or a container's (another mount namespace): maps names it as it does. */
	ASSERT(within_is("/", "/usr/lib/libc.so.6", "/usr/lib/libc.so.6"));
	return true;
}

TEST(rootpath_within_a_chroot_drops_its_path)
{
	ASSERT(within_is("/srv/jail", "/srv/jail/lib/libc.so.6", "/lib/libc.so.6"));
	ASSERT(within_is("/srv/jail", "/srv/jail/v", "/v"));
	ASSERT(within_is("/srv/jail/", "/srv/jail/v", "/v"));
	return true;
}

TEST(rootpath_within_refuses_what_lies_outside)
{
	/* Mapped before the chroot, or a sibling that only shares a prefix. */
	ASSERT(within_is("/srv/jail", "/usr/lib/libc.so.6", NULL));
	ASSERT(within_is("/srv/jail", "/srv/jail2/lib/libc.so.6", NULL));
	ASSERT(within_is("/srv/jail", "/srv/jail", NULL));
	return true;
}
