// SPDX-License-Identifier: GPL-2.0
/*
 * Probe placement: the decoder on the prologues of the allocators memleakbpf
 * meets (bytes copied from Debian 12's builds), and on the cases where the
 * probe must stay at the entry.
 */
#include "allocator/placement.h"
#include "unit.h"

#define RDI PLACEMENT_REG(PLACEMENT_RDI)
#define RSI PLACEMENT_REG(PLACEMENT_RSI)

static struct placement choose(const uint8_t *code, size_t len, uint32_t keep)
{
	struct placement pl;

	placement__choose(code, len, keep, &pl);
	return pl;
}

/* glibc 2.36 free: test %rdi,%rdi; je ...; push %rbp: the je is emulated. */
TEST(placement_glibc_free)
{
	static const uint8_t code[] = { 0x48, 0x85, 0xff, 0x0f, 0x84, 0xbf, 0x00, 0x00, 0x00,
					0x55, 0x48, 0x8d, 0x77, 0xf0 };
	struct placement pl = choose(code, sizeof(code), RDI);

	ASSERT_EQ_U64(pl.skip, 3);
	ASSERT_EQ_U64(pl.sp_delta, 0);
	ASSERT_EQ_STR(pl.insn, "jcc");
	return true;
}

/* glibc 2.36 memalign/aligned_alloc: cmpb $0,rip-relative; je: the je, sp unmoved. */
TEST(placement_glibc_memalign)
{
	static const uint8_t code[] = { 0x80, 0x3d, 0x71, 0x0e, 0x14, 0x00, 0x00, 0x74, 0x07,
					0xe9, 0x32, 0xf6, 0xff, 0xff };
	struct placement pl = choose(code, sizeof(code), RDI | RSI);

	ASSERT_EQ_U64(pl.skip, 7);
	ASSERT_EQ_U64(pl.sp_delta, 0);
	ASSERT_EQ_STR(pl.insn, "jcc");
	return true;
}

/* tcmalloc 2.10 free: mov rip-relative,%rax; test %rax,%rax; jne. */
TEST(placement_tcmalloc_free)
{
	static const uint8_t code[] = { 0x48, 0x8b, 0x05, 0x59, 0xb1, 0x1b, 0x00, 0x48, 0x85, 0xc0,
					0x0f, 0x85, 0x90, 0x00, 0x00, 0x00, 0x48, 0x89, 0xfa };
	struct placement pl = choose(code, sizeof(code), RDI);

	ASSERT_EQ_U64(pl.skip, 10);
	ASSERT_EQ_STR(pl.insn, "jcc");
	return true;
}

/* jemalloc 5.3 free: ten register and load instructions, then jne at +0x30. */
TEST(placement_jemalloc_free)
{
	static const uint8_t code[] = {
		0x48, 0x89, 0xf8,				/* mov %rdi,%rax */
		0x48, 0x8b, 0x15, 0x0e, 0x53, 0x0a, 0x00,	/* mov rip,%rdx */
		0x48, 0x89, 0xf9,				/* mov %rdi,%rcx */
		0x48, 0xc1, 0xe8, 0x1a,				/* shr $0x1a,%rax */
		0x48, 0x81, 0xe1, 0x00, 0x00, 0x00, 0xc0,	/* and $imm,%rcx */
		0x25, 0xf0, 0x00, 0x00, 0x00,			/* and $0xf0,%eax */
		0x64, 0x48, 0x03, 0x04, 0x25, 0, 0, 0, 0,	/* add %fs:0,%rax */
		0x48, 0x01, 0xd0,				/* add %rdx,%rax */
		0x48, 0x3b, 0x88, 0xb0, 0x01, 0x00, 0x00,	/* cmp 0x1b0(%rax),%rcx */
		0x0f, 0x85, 0x8a, 0x00, 0x00, 0x00,		/* jne */
	};
	struct placement pl = choose(code, sizeof(code), RDI);

	ASSERT_EQ_U64(pl.skip, 0x30);
	ASSERT_EQ_STR(pl.insn, "jcc");
	/* Were %rdx an argument the probe reads, its write at +3 would keep the entry. */
	ASSERT_EQ_U64(choose(code, sizeof(code), RDI | PLACEMENT_REG(2)).skip, 0);
	return true;
}

/* libstdc++ operator delete: endbr64; jmp free@plt. */
TEST(placement_endbr_jmp)
{
	static const uint8_t code[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0xe9, 0x87, 0x2f, 0xff, 0xff };
	struct placement pl = choose(code, sizeof(code), RDI);

	ASSERT_EQ_U64(pl.skip, 4);
	ASSERT_EQ_STR(pl.insn, "jmp");
	return true;
}

/* sub $imm,%rsp before a call: the probe sees sp lowered by imm. */
TEST(placement_sub_rsp_delta)
{
	static const uint8_t code[] = { 0x48, 0x83, 0xec, 0x18, 0xe8, 0x00, 0x01, 0x00, 0x00 };
	struct placement pl = choose(code, sizeof(code), RDI);

	ASSERT_EQ_U64(pl.skip, 4);
	ASSERT_EQ_U64(pl.sp_delta, 0x18);
	ASSERT_EQ_STR(pl.insn, "call");
	return true;
}

/* A push at the entry is emulated already: nothing to move. */
TEST(placement_push_at_entry)
{
	static const uint8_t code[] = { 0x41, 0x54, 0x55 };
	struct placement pl = choose(code, sizeof(code), RDI);

	ASSERT_EQ_U64(pl.skip, 0);
	return true;
}

TEST(placement_keeps_entry)
{
	/* glibc munmap: mov $0xb,%eax; syscall: never emulated. */
	static const uint8_t munmap[] = { 0xb8, 0x0b, 0x00, 0x00, 0x00, 0x0f, 0x05, 0x48, 0x3d };
	/* Writes %rdi before the branch: the argument is gone there. */
	static const uint8_t clobber[] = { 0x48, 0x89, 0xc7, 0x74, 0x02 };
	/* Writes %rsp other than by sub $imm. */
	static const uint8_t rsp[] = { 0x48, 0x89, 0xc4, 0x74, 0x02 };
	/* A store to memory on the way. */
	static const uint8_t store[] = { 0x48, 0x89, 0x07, 0x74, 0x02 };
	/* A prefixed (bnd) jump: not what the kernel emulates. */
	static const uint8_t bnd[] = { 0xf2, 0xe9, 0x00, 0x00, 0x00, 0x00 };

	ASSERT_EQ_U64(choose(munmap, sizeof(munmap), RDI | RSI).skip, 0);
	ASSERT_EQ_U64(choose(clobber, sizeof(clobber), RDI).skip, 0);
	ASSERT_EQ_U64(choose(rsp, sizeof(rsp), RDI).skip, 0);
	ASSERT_EQ_U64(choose(store, sizeof(store), RDI).skip, 0);
	ASSERT_EQ_U64(choose(bnd, sizeof(bnd), RDI).skip, 0);
	return true;
}

/* A loop back to the skipped instructions would pass the probe again. */
TEST(placement_branch_into)
{
	static const uint8_t body[] = {
		0x48, 0x85, 0xff,		/* 0: test %rdi,%rdi */
		0x74, 0x05,			/* 3: je +5 (the probe) */
		0x48, 0x89, 0xc7,		/* 5: mov %rax,%rdi */
		0xeb, 0xf9,			/* 8: jmp 3: back onto the probe */
		0xc3,				/* a: ret */
	};
	static const uint8_t fine[] = { 0x48, 0x85, 0xff, 0x74, 0x01, 0xc3, 0xc3 };

	ASSERT(placement__branch_into(body, sizeof(body), 3));
	ASSERT(!placement__branch_into(fine, sizeof(fine), 3));
	return true;
}

TEST(placement_rel32_into)
{
	/* A call at offset 0x10 of the segment to 0x100 + 2: inside (0x100, 0x103]. */
	uint8_t seg[32] = { 0 };
	int32_t rel = 0x102 - (0x10 + 5);

	seg[0x10] = 0xe8;
	memcpy(&seg[0x11], &rel, 4);
	ASSERT(placement__rel32_into(seg, sizeof(seg), 0, 0x100, 3));
	ASSERT(!placement__rel32_into(seg, sizeof(seg), 0, 0x100, 1));
	return true;
}

TEST(placement_insn_len)
{
	static const struct {
		uint8_t b[15];
		int len;
	} cases[] = {
		{ { 0x55 }, 1 },					/* push %rbp */
		{ { 0x48, 0x83, 0xec, 0x18 }, 4 },			/* sub $0x18,%rsp */
		{ { 0x48, 0x8b, 0x05, 1, 2, 3, 4 }, 7 },		/* mov rip,%rax */
		{ { 0x64, 0x48, 0x03, 0x04, 0x25, 0, 0, 0, 0 }, 9 },	/* add %fs:0,%rax */
		{ { 0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8 }, 10 },		/* movabs */
		{ { 0x66, 0x0f, 0x6f, 0x44, 0x24, 0x10 }, 6 },		/* movdqa 0x10(%rsp),%xmm0 */
		{ { 0xc5, 0xfa, 0x6f, 0x06 }, 4 },			/* vmovdqu (%rsi),%xmm0 */
		{ { 0x66, 0x0f, 0x3a, 0x0f, 0xc1, 0x08 }, 6 },		/* palignr $8 */
		{ { 0xf6, 0x47, 0x08, 0x01 }, 4 },			/* testb $1,8(%rdi) */
		{ { 0x0f, 0x1f, 0x44, 0x00, 0x00 }, 5 },		/* nopl */
		{ { 0xc7, 0x44, 0x24, 0x08, 1, 0, 0, 0 }, 8 },		/* movl $1,8(%rsp) */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ASSERT_EQ_U64(placement__insn_len(cases[i].b, sizeof(cases[i].b)), cases[i].len);
	ASSERT_EQ_U64(placement__insn_len((const uint8_t *)"\x06", 1), (uint64_t)-1);
	return true;
}
