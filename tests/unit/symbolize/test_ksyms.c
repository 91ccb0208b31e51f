// SPDX-License-Identifier: GPL-2.0
/* ksyms.c's parser and lookup (-k), on /proc/kallsyms' text. */
#include <errno.h>
#include <stdlib.h>
#include "symbolize/ksyms.h"
#include "util/procmaps.h"
#include "unit.h"

static const char *name_at(const struct ksyms *k, uint64_t addr)
{
	const struct ksym *s = ksyms__find(k, addr);

	return s ? s->name : "(none)";
}

static const char *module_at(const struct ksyms *k, uint64_t addr)
{
	const struct ksym *s = ksyms__find(k, addr);

	return s ? s->module : "(none)";
}

TEST(ksyms_parse_and_find)
{
	struct ksyms *k = NULL;
	struct maps *m = NULL;

	ASSERT_EQ_U64(ksyms__parse("ffffffff81000000 T _text\n"
				   "ffffffff81000100 t alloc_pipe_info\n"
				   "ffffffff81000200 D some_data\n"	/* not text: not a function */
				   "ffffffff81000080 T __kmalloc_noprof\n"	/* out of order */
				   "ffffffff81000300 W weak_fn\n"
				   "garbage line\n"
				   "ffffffffc0001000 t ext4_fill_super\t[ext4]\n"
				   "ffffffffc0001200 T ext4_iget\t[ext4]\n"
				   "ffffffffc0002000 t bpf_prog_0123456789abcdef_kmalloc_enter\t[bpf]\n",
				   &k), 0);
	ASSERT_EQ_U64(ksyms__nr(k), 7);
	ASSERT_EQ_STR(name_at(k, 0xffffffff81000000), "_text");
	ASSERT_EQ_STR(name_at(k, 0xffffffff810000ff), "__kmalloc_noprof");
	ASSERT_EQ_STR(name_at(k, 0xffffffff81000250), "alloc_pipe_info");	/* data skipped */
	ASSERT_EQ_STR(name_at(k, 0xffffffff80ffffff), "(none)");
	ASSERT_EQ_STR(name_at(k, 0xffffffffc0001210), "ext4_iget");
	ASSERT_EQ_STR(module_at(k, 0xffffffffc0001210), "[ext4]");
	ASSERT_EQ_STR(module_at(k, 0xffffffff81000100), KSYMS_VMLINUX);
	ASSERT_EQ_STR(module_at(k, 0xffffffffc0002008), "[bpf]");
	ASSERT_EQ_U64(ksyms__module_base(k, "[ext4]"), 0xffffffffc0001000ULL);
	ASSERT_EQ_U64(ksyms__module_base(k, KSYMS_VMLINUX), 0xffffffff81000000ULL);
	/* Each module a mapping, by address, from its first symbol past its last's start. */
	ASSERT_EQ_U64(ksyms__maps(k, &m), 0);
	ASSERT_EQ_U64(m->nr, 3);
	ASSERT_EQ_STR(m->entries[0].path, KSYMS_VMLINUX);
	ASSERT(m->entries[0].start == 0xffffffff81000000ULL && m->entries[0].end == 0xffffffff81000301ULL);
	ASSERT_EQ_STR(m->entries[1].path, "[ext4]");
	ASSERT_EQ_STR(m->entries[2].path, "[bpf]");
	maps__free(m);
	ksyms__free(k);
	return true;
}

/* Not root (kptr_restrict): every address 0, which would name every frame wrongly. */
TEST(ksyms_hidden_addresses)
{
	struct ksyms *k = NULL;

	ASSERT_EQ_U64(ksyms__parse("0000000000000000 T _text\n"
				   "0000000000000000 t alloc_pipe_info\n", &k), (uint64_t)-ENOENT);
	ASSERT(!k);
	ASSERT_EQ_U64(ksyms__parse("", &k), (uint64_t)-ENOENT);
	return true;
}
