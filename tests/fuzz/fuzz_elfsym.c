// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: the ELF reader (user/elfsym.c) on any bytes, written to a
 * memfd as a file the tracer would open through a target's root. Seeds are
 * small real objects (tests/fuzz/corpus/elfsym), which the fuzzer mutates.
 */
#include <sys/mman.h>
#include <unistd.h>
#include "util/elfsym.h"
#include "fuzz.h"

static int memfd = -1;
static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	memfd = memfd_create("fuzz-elf", MFD_CLOEXEC);
	if (memfd < 0)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	return 0;
}

static void lookups(const struct elf_file *ef)
{
	static const char *const names[] = { "malloc", "free", "_dl_debug_state", "f", "" };
	uint64_t vaddr, off, bias;
	const char *interp;

	if (elf_file__has_interp(ef)) {
		interp = elf_file__interp(ef);
		FUZZ_CHECK(interp);
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		elf_file__find_func(ef, names[i], true, &vaddr, &off);
		elf_file__find_func(ef, names[i], false, &vaddr, &off);
	}
	elf_file__find_object(ef, "_r_debug", &vaddr);
	for (uint64_t o = 0; o < 0x4000; o += 0x1000)
		elf_file__load_bias(ef, 0x7f0000000000ull + o, o, &bias);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_file *ef = NULL;

	if (ftruncate(memfd, 0) || pwrite(memfd, data, size, 0) != (ssize_t)size)
		abort();
	if (!elf_file__open(path, &ef)) {
		lookups(ef);
		elf_file__close(ef);
	}
	return 0;
}
