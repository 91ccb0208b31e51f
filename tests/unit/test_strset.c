// SPDX-License-Identifier: GPL-2.0
/* util/strset.c: the names seen before, copied; the new ones told apart. */
#include <stdlib.h>
#include <string.h>
#include "util/strset.h"
#include "unit.h"

TEST(strset_tells_new_names)
{
	struct strset s = { 0 };
	char name[] = "/usr/lib/libz.so.1";

	ASSERT(!strset__has(&s, "/bin/sh"));	/* empty */
	strset__add(&s, "/lib/libc.so.6");
	strset__add(&s, name);
	strset__add(&s, "/bin/sh");
	name[0] = 'X';	/* a copy was kept, not the caller's string */
	ASSERT(strset__has(&s, "/usr/lib/libz.so.1") && strset__has(&s, "/bin/sh"));
	ASSERT(strset__has(&s, "/lib/libc.so.6") && !strset__has(&s, "/lib/libm.so.6"));
	strset__add(&s, "/a");	/* added after a lookup: sorted again */
	ASSERT(strset__has(&s, "/a") && s.nr == 4);
	strset__clear(&s);
	ASSERT(s.nr == 0 && !s.v && !strset__has(&s, "/a"));
	return true;
}
