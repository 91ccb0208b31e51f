// SPDX-License-Identifier: GPL-2.0
/* Runs every registered unit test; the last line is "N passed, N failed". */
#include <stdlib.h>
#include "unit.h"

static struct unit_test *tests;

void unit__register(struct unit_test *t)
{
	t->next = tests;
	tests = t;
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
