// SPDX-License-Identifier: GPL-2.0
/* Runs every registered unit test; the last line is "N passed, N failed". */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "unit.h"

static struct unit_test *tests;

void unit__register(struct unit_test *t)
{
	t->next = tests;
	tests = t;
}

bool unit__capture_stderr(struct unit_stderr *c)
{
	fflush(stderr);
	c->saved = dup(STDERR_FILENO);
	c->fd = memfd_create("unit-stderr", MFD_CLOEXEC);
	if (c->saved >= 0 && c->fd >= 0 && dup2(c->fd, STDERR_FILENO) >= 0)
		return true;
	if (c->saved >= 0)
		close(c->saved);
	if (c->fd >= 0)
		close(c->fd);
	return false;
}

void unit__stderr_text(struct unit_stderr *c, char *buf, size_t len)
{
	ssize_t n;

	fflush(stderr);
	dup2(c->saved, STDERR_FILENO);
	n = pread(c->fd, buf, len - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	close(c->saved);
	close(c->fd);
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0;
	const char *only = argc > 1 ? argv[1] : NULL;

	for (struct unit_test *t = tests; t; t = t->next) {
		if (only && !strstr(t->name, only))
			continue;
		if (t->fn()) {
			passed++;
			printf("ok   %s\n", t->name);
		} else {
			failed++;
			printf("FAIL %s (%s)\n", t->name, t->file);
		}
	}
	printf("unit: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
