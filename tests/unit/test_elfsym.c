// SPDX-License-Identifier: GPL-2.0
/*
 * elfsym: which imported function a call instruction reaches, on the -g
 * victims (make victims builds them before the unit tests run); symbols
 * found through the GNU hash table as through a scan.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <unistd.h>
#include "allocator/allocator.h"
#include "util/elfsym.h"
#include "unit.h"

#define V_APIS ".output/victims/v_apis"
#define V_STATIC ".output/victims/v_static"
#define LIBSTDCXX "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"
#define SCAN_BYTES 256

/*
 * The name the first recognized call in fn's first bytes imports, trying
 * every byte as the end of a call: a return address.
 */
static const char *first_call(struct elf_file *ef, const char *fn)
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

/* A big library, its relocations searched, not walked: operator new calls malloc by its PLT. */
TEST(elfsym_called_symbol_in_a_library)
{
	struct elf_file *ef;

	ASSERT(!elf_file__open(LIBSTDCXX, &ef));
	ASSERT_EQ_STR(first_call(ef, "_Znwm"), "malloc");
	ASSERT_EQ_STR(first_call(ef, "_Znwm"), "malloc");	/* the relocations read once */
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

/* The dynamic symbol a scan of .dynsym finds first: what the hash lookup must find. */
static bool scan_dynsym(const char *path, const char *name, uint64_t *value)
{
	int fd = open(path, O_RDONLY);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	Elf_Scn *scn = NULL;
	bool found = false;
	GElf_Shdr sh;
	GElf_Sym sym;

	while (elf && !found && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *d = elf_getdata(scn, NULL);

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize || !d)
			continue;
		for (size_t i = 0; !found && i < sh.sh_size / sh.sh_entsize; i++) {
			const char *n;

			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
				continue;
			n = elf_strptr(elf, sh.sh_link, sym.st_name);
			found = n && !strcmp(n, name) && GELF_ST_TYPE(sym.st_info) == STT_FUNC;
		}
	}
	*value = found ? sym.st_value : 0;
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return found;
}

TEST(elfsym_finds_through_the_gnu_hash)
{
	static const char *const names[] = { "malloc", "free", "calloc", "realloc", "posix_memalign",
					     "memalign", "mmap", "munmap", "mremap", "strdup" };
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	uint64_t vaddr, off, want;
	struct elf_file *ef;

	ASSERT(!elf_file__open(libc, &ef));
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		ASSERT(scan_dynsym(libc, names[i], &want));
		ASSERT(!elf_file__find_func(ef, names[i], true, &vaddr, &off));
		ASSERT_EQ_U64(vaddr, want);
	}
	ASSERT(elf_file__find_func(ef, "memleakbpf_no_such_function", true, &vaddr, &off) == -ENOENT);
	/* In .symtab only, never in .dynsym: not found when only .dynsym counts. */
	ASSERT(elf_file__find_func(ef, "_int_malloc", true, &vaddr, &off) == -ENOENT);
	elf_file__close(ef);
	return true;
}
