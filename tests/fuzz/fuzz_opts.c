// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: the command line (user/opts.c). The input is argv[1..], split
 * at NUL bytes. A rejected command line must come with exactly one line of
 * message, and an accepted one must be consistent.
 */
#include <unistd.h>
#include "fuzz.h"
#include "cli/opts.h"

#define MAX_ARGS 64

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* --help prints the usage: not what is being tested. */
	if (!freopen("/dev/null", "w", stdout))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size), *argv[MAX_ARGS + 2], err[512];
	struct opts o;
	int argc = 1, ret;

	argv[0] = "memleakbpf";
	for (char *s = text; s <= text + size && argc <= MAX_ARGS; s += strlen(s) + 1)
		argv[argc++] = s;
	argv[argc] = NULL;
	memset(err, 'x', sizeof(err));
	ret = opts__parse(argc, argv, &o, err, sizeof(err));
	if (ret < 0) {
		FUZZ_CHECK(memchr(err, '\0', sizeof(err)));
		FUZZ_CHECK(err[0] && !strchr(err, '\n'));
	} else if (ret == 0) {
		/* Neither -p nor -c: the kernel's allocations (-k), as bcc's memleak. */
		FUZZ_CHECK(o.kernel ? !o.pid && !o.command : !!o.pid != !!o.command);
		FUZZ_CHECK(o.interval_s > 0 && o.top > 0 && o.min_size <= o.max_size);
		FUZZ_CHECK(o.max_allocs >= 1 && o.stack_storage_size >= 1);
		FUZZ_CHECK(o.nr_debug_dirs <= OPTS_MAX_DEBUG_DIRS);
	}
	free(text);
	return 0;
}
