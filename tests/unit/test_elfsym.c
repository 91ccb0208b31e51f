// SPDX-License-Identifier: GPL-2.0
/*
 * elfsym: which imported function a call instruction reaches, on the -g
 * victims (make victims builds them before the unit tests run).
 */
#include <errno.h>
#include "allocator/allocator.h"
#include "util/elfsym.h"
#include "unit.h"

#define V_APIS ".output/victims/v_apis"
#define V_STATIC ".output/victims/v_static"
#define SCAN_BYTES 256

/*
 * The name the first recognized call in fn's first bytes imports, trying
 * every byte as the end of a call: a return address.
 */
static const char *first_call(const struct elf_file *ef, const char *fn)
{
	uint64_t vaddr, off;
	const char *name;

	if (elf_file__find_func(ef, fn, false, &vaddr, &off))
		return NULL;
	for (uint64_t ret = vaddr + 5; ret < vaddr + SCAN_BYTES; ret++)
		if (!elf_file__called_symbol(ef, ret, &name) && allocator__api_of(name) >= 0)
			return name;
	return NULL;
}

TEST(elfsym_called_symbol_tells_aliases_apart)
{
	struct elf_file *ef;
	const char *mem, *aligned;

	ASSERT(!elf_file__open(V_APIS, &ef));
	mem = first_call(ef, "site_memalign");
	aligned = first_call(ef, "site_aligned_alloc");
	ASSERT_EQ_STR(mem, "memalign");
	ASSERT_EQ_STR(aligned, "aligned_alloc");
	ASSERT_EQ_STR(first_call(ef, "site_calloc"), "calloc");
	elf_file__close(ef);
	return true;
}

TEST(elfsym_called_symbol_direct_call_is_unknown)
{
	struct elf_file *ef;
	uint64_t vaddr, off;
	const char *name;
	bool found = false;

	/* A static binary calls memalign directly: nothing names the import. */
	ASSERT(!elf_file__open(V_STATIC, &ef));
	ASSERT(!elf_file__find_func(ef, "site_static_memalign", false, &vaddr, &off));
	for (uint64_t ret = vaddr + 5; ret < vaddr + SCAN_BYTES; ret++)
		found |= !elf_file__called_symbol(ef, ret, &name);
	ASSERT(!found);
	elf_file__close(ef);
	return true;
}

TEST(allocator_api_of_names)
{
	ASSERT_EQ_U64(allocator__api_of("memalign"), API_MEMALIGN);
	ASSERT_EQ_U64(allocator__api_of("_Znam"), API_NEW_ARRAY);
	ASSERT(allocator__api_of("strdup") == -ENOENT);
	ASSERT(allocator__api_of(NULL) == -ENOENT);
	return true;
}
