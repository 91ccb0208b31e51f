// SPDX-License-Identifier: GPL-2.0
/* target/reach_pagemap.c: of a large mapping, only the pages touched are read. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "target/reach_pagemap.h"
#include "unit.h"

TEST(reach_pagemap_skips_what_was_never_touched)
{
	size_t len = 128 << 20, nr = 0, cap = 0;
	char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd = open("/proc/self/pagemap", O_RDONLY);
	struct mem_run *r = NULL;
	uint64_t a = (uintptr_t)m;
	bool ok;

	ASSERT(m != MAP_FAILED && fd >= 0);
	madvise(m, len, MADV_NOHUGEPAGE);	/* a touch is one page, not 2 MiB */
	m[5 * 4096] = 1;
	m[6 * 4096 + 9] = 1;
	m[len - 1] = 1;
	ASSERT(!reach_pagemap__runs(fd, a, a + len, &r, &nr, &cap));
	ok = nr == 2 && r[0].start == a + 5 * 4096 && r[0].end == a + 7 * 4096 &&
	     r[1].start == a + len - 4096 && r[1].end == a + len;
	/* A small range, or no pagemap: whole. */
	nr = 0;
	ok = ok && !reach_pagemap__runs(fd, a, a + 4096, &r, &nr, &cap) && nr == 1 &&
	     r[0].end == a + 4096;
	nr = 0;
	ok = ok && !reach_pagemap__runs(-1, a, a + len, &r, &nr, &cap) && nr == 1 &&
	     r[0].end == a + len;
	free(r);
	close(fd);
	munmap(m, len);
	return ok;
}
