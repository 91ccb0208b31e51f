// SPDX-License-Identifier: GPL-2.0
/*
 * Probe placement for entry-only probes: a small x86-64 decoder that walks a
 * function's first instructions to the first one the kernel emulates.
 *
 * The kernel (arch/x86/kernel/uprobes.c) emulates, rather than single-steps
 * out of line, push of a register and the relative jmp, call and conditional
 * jumps; everything else it copies to a page of the task and single-steps,
 * at the price of a second trap. Which instructions the walk may pass on the
 * way is deliberately narrow: endbr64, register moves and loads, register
 * arithmetic and compares, and sub $imm,%rsp, none of which transfers control
 * or writes memory. Each is checked not to write a register the probe reads
 * or the stack pointer (bar that sub, whose size is carried to BPF).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "placement.h"
#include "util/elfsym.h"

/* The most a probe is moved past: a few instructions, not a search. */
#define MAX_INSNS 16

#ifdef __x86_64__
#define HOST_X86_64 true
#else
#define HOST_X86_64 false	/* the target's code is the host's: nothing to decode */
#endif

struct insn {
	int len;
	int map;		/* 0: one-byte, 1: 0f, 2: 0f 38, 3: 0f 3a; VEX/EVEX too */
	bool vex;		/* VEX or EVEX encoded */
	uint8_t op;
	uint8_t rex;		/* 0 when none */
	bool has_modrm;
	uint8_t modrm;
	bool p66, p67, pf2, pf3, plock, pseg;
	int imm_len;
	int64_t imm;		/* sign-extended immediate or relative displacement */
};

static int modrm_bytes(const uint8_t *p, size_t left)
{
	uint8_t mod, rm;
	int n = 1;

	if (!left)
		return -1;
	mod = p[0] >> 6;
	rm = p[0] & 7;
	if (mod == 3)
		return 1;
	if (rm == 4) {
		if (left < 2)
			return -1;
		n++;
		if (mod == 0 && (p[1] & 7) == 5)
			n += 4;
	} else if (mod == 0 && rm == 5) {
		n += 4;		/* rip-relative */
	}
	if (mod == 1)
		n += 1;
	else if (mod == 2)
		n += 4;
	return n;
}

/* One-byte map: ModRM? (VEX/EVEX and prefixes are handled before.) */
static bool map0_modrm(uint8_t op)
{
	if (op < 0x40)
		return (op & 7) < 4;
	return op == 0x63 || op == 0x69 || op == 0x6b || (op >= 0x80 && op <= 0x8f) ||
	       op == 0xc0 || op == 0xc1 || op == 0xc6 || op == 0xc7 ||
	       (op >= 0xd0 && op <= 0xd3) || (op >= 0xd8 && op <= 0xdf) ||
	       op == 0xf6 || op == 0xf7 || op == 0xfe || op == 0xff;
}

static bool map0_invalid(uint8_t op)
{
	static const uint8_t bad[] = { 0x06, 0x07, 0x0e, 0x16, 0x17, 0x1e, 0x1f, 0x27, 0x2f,
				       0x37, 0x3f, 0x60, 0x61, 0x82, 0x9a, 0xce, 0xd4, 0xd5,
				       0xd6, 0xea };

	return memchr(bad, op, sizeof(bad)) != NULL;
}

/* Immediate bytes of a one-byte-map opcode; z is 4, or 2 with a 0x66 prefix. */
static int map0_imm(const struct insn *in)
{
	int z = in->p66 ? 2 : 4;
	uint8_t op = in->op, reg = (in->modrm >> 3) & 7;

	if (op < 0x40)
		return (op & 7) == 4 ? 1 : (op & 7) == 5 ? z : 0;
	if (op == 0x68 || op == 0x69 || op == 0x81 || op == 0xa9 || op == 0xc7)
		return z;
	if (op == 0x6a || op == 0x6b || (op >= 0x70 && op <= 0x7f) || op == 0x80 ||
	    op == 0x83 || op == 0xa8 || (op >= 0xb0 && op <= 0xb7) || op == 0xc0 ||
	    op == 0xc1 || op == 0xc6 || op == 0xcd || (op >= 0xe0 && op <= 0xe7) || op == 0xeb)
		return 1;
	if (op >= 0xa0 && op <= 0xa3)
		return in->p67 ? 4 : 8;		/* moffs */
	if (op >= 0xb8 && op <= 0xbf)
		return in->rex & 8 ? 8 : z;
	if (op == 0xc2 || op == 0xca)
		return 2;
	if (op == 0xc8)
		return 3;
	if (op == 0xe8 || op == 0xe9)
		return 4;
	if (op == 0xf6 || op == 0xf7)
		return reg < 2 ? (op == 0xf6 ? 1 : z) : 0;
	return 0;
}

/* 0f map: ModRM for all but these. */
static bool map1_modrm(uint8_t op)
{
	return !((op >= 0x04 && op <= 0x0c) || op == 0x0e ||
		 (op >= 0x30 && op <= 0x37) || op == 0x77 || (op >= 0x80 && op <= 0x8f) ||
		 op == 0xa0 || op == 0xa1 || op == 0xa2 || op == 0xa8 || op == 0xa9 ||
		 op == 0xaa || (op >= 0xc8 && op <= 0xcf));
}

static bool map1_imm8(uint8_t op)
{
	return (op >= 0x70 && op <= 0x73) || op == 0xa4 || op == 0xac || op == 0xba ||
	       op == 0xc2 || (op >= 0xc4 && op <= 0xc6);
}

static int64_t read_imm(const uint8_t *p, int n)
{
	int64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	if (n < 8 && (v & (1ll << (n * 8 - 1))))
		v -= 1ll << (n * 8);
	return v;
}

static int legacy_prefixes(const uint8_t *p, size_t len, struct insn *in)
{
	size_t i;

	for (i = 0; i < len && i < 14; i++) {
		switch (p[i]) {
		case 0x66: in->p66 = true; break;
		case 0x67: in->p67 = true; break;
		case 0xf2: in->pf2 = true; break;
		case 0xf3: in->pf3 = true; break;
		case 0xf0: in->plock = true; break;
		case 0x26: case 0x2e: case 0x36: case 0x3e: case 0x64: case 0x65:
			in->pseg = true;
			break;
		default:
			return (int)i;
		}
	}
	return -1;
}

/* VEX (c4, c5) or EVEX (62): map, then opcode. Returns bytes used, -1. */
static int vex_prefix(const uint8_t *p, size_t len, struct insn *in)
{
	int n;

	if (p[0] == 0xc5) {
		n = 2;
		in->map = 1;
	} else if (p[0] == 0xc4) {
		n = 3;
		if (len < 3)
			return -1;
		in->map = p[1] & 0x1f;
	} else {
		n = 4;
		if (len < 4)
			return -1;
		in->map = p[1] & 7;
	}
	if ((size_t)n >= len || in->map < 1 || in->map > 6 || in->map == 4)
		return -1;
	in->vex = true;
	in->op = p[n];
	return n + 1;
}

/* Opcode after prefixes and REX: sets map and op. Returns bytes used, -1. */
static int opcode(const uint8_t *p, size_t len, struct insn *in)
{
	if (!len)
		return -1;
	if (p[0] == 0xc4 || p[0] == 0xc5 || p[0] == 0x62)
		return in->rex ? -1 : vex_prefix(p, len, in);
	if (p[0] != 0x0f) {
		in->op = p[0];
		return map0_invalid(in->op) ? -1 : 1;
	}
	if (len < 2)
		return -1;
	if (p[1] == 0x38 || p[1] == 0x3a) {
		if (len < 3)
			return -1;
		in->map = p[1] == 0x38 ? 2 : 3;
		in->op = p[2];
		return 3;
	}
	if (p[1] == 0x0f)
		return -1;	/* 3DNow! */
	in->map = 1;
	in->op = p[1];
	return 2;
}

static void operand_shape(struct insn *in, int *imm)
{
	switch (in->map) {
	case 0:
		in->has_modrm = map0_modrm(in->op);
		*imm = -1;	/* after ModRM: f6/f7 depend on its reg */
		break;
	case 1:
		in->has_modrm = in->vex ? in->op != 0x77 : map1_modrm(in->op);
		*imm = map1_imm8(in->op) ? 1 : (!in->vex && in->op >= 0x80 && in->op <= 0x8f) ? 4 : 0;
		break;
	case 3:
		in->has_modrm = true;
		*imm = 1;
		break;
	default:
		in->has_modrm = true;
		*imm = 0;
	}
}

/* Decode one instruction; in->len is -1 when it cannot be. */
static void decode(const uint8_t *code, size_t len, struct insn *in)
{
	int i, n, imm;

	memset(in, 0, sizeof(*in));
	in->len = -1;
	i = legacy_prefixes(code, len, in);
	if (i < 0)
		return;
	if ((size_t)i < len && (code[i] & 0xf0) == 0x40)
		in->rex = code[i++];
	n = opcode(code + i, len - (size_t)i, in);
	if (n < 0)
		return;
	i += n;
	operand_shape(in, &imm);
	if (in->has_modrm) {
		n = modrm_bytes(code + i, len - (size_t)i);
		if (n < 0)
			return;
		in->modrm = code[i];
		i += n;
	}
	if (imm < 0)
		imm = map0_imm(in);
	if ((size_t)(i + imm) > len)
		return;
	in->imm_len = imm;
	in->imm = imm ? read_imm(code + i, imm) : 0;
	in->len = i + imm;
}

int placement__insn_len(const uint8_t *code, size_t len)
{
	struct insn in;

	decode(code, len, &in);
	return in.len;
}

/* A relative jump or call: its displacement. */
static bool is_rel_branch(const struct insn *in)
{
	if (in->vex)
		return false;
	if (in->map == 1)
		return in->op >= 0x80 && in->op <= 0x8f;
	return in->map == 0 && ((in->op >= 0x70 && in->op <= 0x7f) ||
				(in->op >= 0xe0 && in->op <= 0xe3) || in->op == 0xe8 ||
				in->op == 0xe9 || in->op == 0xeb);
}

/* What the kernel emulates: the name, or NULL. Unprefixed only (push: REX.B). */
static const char *emulated(const struct insn *in)
{
	if (in->vex || in->p66 || in->p67 || in->pf2 || in->pf3 || in->plock || in->pseg)
		return NULL;
	if (in->map == 0 && in->op >= 0x50 && in->op <= 0x57 && (!in->rex || in->rex == 0x41))
		return "push";
	if (in->rex)
		return NULL;
	if ((in->map == 0 && in->op >= 0x70 && in->op <= 0x7f) ||
	    (in->map == 1 && in->op >= 0x80 && in->op <= 0x8f))
		return "jcc";
	if (in->map == 0 && in->op == 0xe8)
		return "call";
	if (in->map == 0 && (in->op == 0xe9 || in->op == 0xeb))
		return "jmp";
	return NULL;
}

static int modrm_reg(const struct insn *in)
{
	return ((in->modrm >> 3) & 7) | (in->rex & 4 ? 8 : 0);
}

static int modrm_rm(const struct insn *in)
{
	return (in->modrm & 7) | (in->rex & 1 ? 8 : 0);
}

static bool modrm_is_reg(const struct insn *in)
{
	return in->has_modrm && in->modrm >> 6 == 3;
}

/* What passing in does, for the kinds the walk accepts. */
enum pass { PASS_NO, PASS_NOTHING, PASS_WRITES, PASS_SUB_RSP };

/* ALU r/m,r and r,r/m forms: which operand is written (or none). */
static enum pass pass_alu(const struct insn *in, int *reg)
{
	static const uint8_t to_rm[] = { 0x01, 0x09, 0x21, 0x29, 0x31, 0x89 };
	static const uint8_t to_reg[] = { 0x03, 0x0b, 0x23, 0x2b, 0x33, 0x8b, 0x63 };
	uint8_t op = in->op;

	if (op == 0x39 || op == 0x3b || op == 0x85)
		return PASS_NOTHING;	/* cmp, test: flags only */
	if (memchr(to_rm, op, sizeof(to_rm))) {
		*reg = modrm_rm(in);
		return modrm_is_reg(in) ? PASS_WRITES : PASS_NO;	/* no stores */
	}
	if (memchr(to_reg, op, sizeof(to_reg)) || (op == 0x8d && !modrm_is_reg(in))) {
		*reg = modrm_reg(in);
		return PASS_WRITES;
	}
	return PASS_NO;
}

/* Immediate forms: group 1 (81, 83), shifts (c1), mov (b8+r, c7), eAX short forms. */
static enum pass pass_imm(const struct insn *in, int *reg)
{
	uint8_t op = in->op, ext = (in->modrm >> 3) & 7;

	if (op == 0x80 && ext == 7)
		return PASS_NOTHING;	/* cmpb $imm8, r/m8 (glibc's memalign family starts so) */
	if (op == 0x81 || op == 0x83) {
		if (ext == 7)
			return PASS_NOTHING;	/* cmp */
		if (!modrm_is_reg(in))
			return PASS_NO;
		*reg = modrm_rm(in);
		if (*reg == PLACEMENT_RSP && ext == 5 && in->rex == 0x48 && in->imm > 0)
			return PASS_SUB_RSP;
		return PASS_WRITES;
	}
	if (op == 0xc1 && modrm_is_reg(in) && (ext == 4 || ext == 5 || ext == 7)) {
		*reg = modrm_rm(in);
		return PASS_WRITES;
	}
	if ((op == 0xc7 && ext == 0 && modrm_is_reg(in)) || (op >= 0xb8 && op <= 0xbf)) {
		*reg = op == 0xc7 ? modrm_rm(in) : (op & 7) | (in->rex & 1 ? 8 : 0);
		return PASS_WRITES;
	}
	if (op == 0x3d || op == 0xa9)
		return PASS_NOTHING;
	if (op == 0x05 || op == 0x0d || op == 0x25 || op == 0x2d || op == 0x35) {
		*reg = 0;
		return PASS_WRITES;
	}
	return PASS_NO;
}

static bool is_endbr64(const uint8_t *p, size_t len)
{
	return len >= 4 && p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa;
}

static enum pass pass_kind(const uint8_t *p, size_t len, const struct insn *in, int *reg)
{
	enum pass k;

	if (is_endbr64(p, len))
		return PASS_NOTHING;
	if (in->vex || in->map || in->p66 || in->p67 || in->pf2 || in->pf3 || in->plock)
		return PASS_NO;
	k = pass_alu(in, reg);
	return k != PASS_NO ? k : pass_imm(in, reg);
}

void placement__choose(const uint8_t *code, size_t len, uint32_t keep, struct placement *out)
{
	uint32_t off = 0, delta = 0;
	struct insn in;

	*out = (struct placement){ .insn = "no emulated instruction in reach" };
	for (int n = 0; n < MAX_INSNS && off < len && off <= PLACEMENT_MAX_SKIP; n++) {
		const char *name;
		enum pass k;
		int reg = -1;

		decode(code + off, len - off, &in);
		if (in.len < 0)
			return;
		name = emulated(&in);
		if (name) {
			if (off)
				*out = (struct placement){ .skip = off, .sp_delta = delta, .insn = name };
			else
				out->insn = "the entry is emulated";
			return;
		}
		k = pass_kind(code + off, len - off, &in, &reg);
		if (k == PASS_NO)
			return;
		if (k == PASS_SUB_RSP)
			delta += (uint32_t)in.imm;
		else if (k == PASS_WRITES && (reg == PLACEMENT_RSP || (keep & PLACEMENT_REG(reg))))
			return;
		off += (uint32_t)in.len;
	}
}

bool placement__branch_into(const uint8_t *code, size_t len, uint32_t skip)
{
	struct insn in;

	for (size_t off = 0; off < len; off += (size_t)in.len) {
		int64_t target;

		decode(code + off, len - off, &in);
		if (in.len < 0)
			return true;
		if (!is_rel_branch(&in))
			continue;
		target = (int64_t)(off + (size_t)in.len) + in.imm;
		if (target > 0 && target <= (int64_t)skip)
			return true;
	}
	return false;
}

/* Is there a rel32 jump or call at seg[i]? Then *target: where it lands (a file offset). */
static bool rel32_at(const uint8_t *seg, size_t len, uint64_t seg_off, size_t i, uint64_t *target)
{
	size_t at = i;

	if (i + 5 > len)
		return false;
	if (seg[i] == 0x0f && i + 6 <= len && (seg[i + 1] & 0xf0) == 0x80)
		at = i + 1;
	else if (seg[i] != 0xe8 && seg[i] != 0xe9)
		return false;
	*target = seg_off + at + 5 + (uint64_t)read_imm(seg + at + 1, 4);
	return true;
}

bool placement__rel32_into(const uint8_t *seg, size_t len, uint64_t seg_off, uint64_t entry,
			   uint32_t skip)
{
	uint64_t target;

	for (size_t i = 0; i < len; i++)
		if (rel32_at(seg, len, seg_off, i, &target) && target > entry &&
		    target <= entry + skip)
			return true;
	return false;
}

/* One function of a file being decided: where it is, and what the scans found. */
struct fn {
	uint64_t entry, size;
	size_t seg;		/* its executable PT_LOAD; nr when none */
	uint32_t keep;
	bool rel32_check;	/* moved: may a jump from elsewhere land past its entry? */
};

/* Each function's size: the largest of the function symbols at its address. */
static void function_sizes(Elf *elf, const struct elf_segment *segs, size_t nr, struct fn *fns,
			   size_t n)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Sym sym;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) ||
		    !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			if (!gelf_getsym(data, i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC)
				continue;
			for (size_t k = 0; k < n; k++) {
				const struct elf_segment *ph = &segs[fns[k].seg];

				if (fns[k].seg < nr &&
				    sym.st_value == fns[k].entry - ph->offset + ph->vaddr &&
				    sym.st_size > fns[k].size)
					fns[k].size = sym.st_size;
			}
		}
	}
}

/* The executable PT_LOAD holding entry: its index, or nr. */
static size_t exec_segment(const struct elf_segment *segs, size_t nr, uint64_t entry)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if ((segs[i].flags & PF_X) && entry >= segs[i].offset &&
		    entry < segs[i].offset + segs[i].filesz)
			break;
	return i;
}

/* Choose, and rule out a branch of the function itself; jumps from elsewhere are the scan's. */
static void choose_in(const uint8_t *seg, const struct elf_segment *ph, struct fn *f,
		      struct placement *out)
{
	const uint8_t *code = seg + (f->entry - ph->offset);
	uint64_t size = f->size;

	if (size > ph->offset + ph->filesz - f->entry)
		size = ph->offset + ph->filesz - f->entry;
	placement__choose(code, size, f->keep, out);
	if (!out->skip)
		return;
	if (placement__branch_into(code, size, out->skip))
		*out = (struct placement){ .insn = "a branch in the function may land past the entry" };
	else
		f->rel32_check = true;
}

/*
 * One pass over the segment for every function moved in it: a rel32 jump
 * or call from anywhere that may land past its entry keeps it at the entry
 * (placement__rel32_into's test, for all of them at once).
 */
static void scan_rel32(const uint8_t *seg, const struct elf_segment *ph, size_t s,
		       struct fn *fns, size_t n, struct placement *out)
{
	uint64_t target;

	for (size_t i = 0; i < ph->filesz; i++) {
		if (!rel32_at(seg, ph->filesz, ph->offset, i, &target))
			continue;
		for (size_t k = 0; k < n; k++)
			if (fns[k].seg == s && fns[k].rel32_check && target > fns[k].entry &&
			    target <= fns[k].entry + out[k].skip) {
				out[k] = (struct placement){ .insn = "a jump from elsewhere may land past the entry" };
				fns[k].rel32_check = false;
			}
	}
}

/* The functions in executable segment s, decided with its bytes read once. */
static void decide_segment(int fd, const struct elf_segment *ph, size_t s, struct fn *fns,
			   size_t n, struct placement *out)
{
	uint8_t *seg = NULL;
	bool any = false;

	for (size_t k = 0; k < n && !any; k++)
		any = fns[k].seg == s && fns[k].size;
	if (any)
		seg = malloc(ph->filesz ? ph->filesz : 1);
	if (!seg || pread(fd, seg, ph->filesz, (off_t)ph->offset) != (ssize_t)ph->filesz) {
		free(seg);
		return;
	}
	for (size_t k = 0; k < n; k++)
		if (fns[k].seg == s && fns[k].size)
			choose_in(seg, ph, &fns[k], &out[k]);
	scan_rel32(seg, ph, s, fns, n, out);
	free(seg);
}

/* The file's segments, each function's and its size, then each executable segment once. */
static void decide_file(int fd, Elf *elf, struct fn *fns, size_t n, struct placement *out)
{
	struct elf_segment *segs;
	size_t nr;

	if (elf__load_segments(elf, &segs, &nr))
		return;
	for (size_t k = 0; k < n; k++)
		fns[k].seg = exec_segment(segs, nr, fns[k].entry);
	function_sizes(elf, segs, nr, fns, n);
	for (size_t s = 0; s < nr; s++)
		if (segs[s].flags & PF_X)
			decide_segment(fd, &segs[s], s, fns, n, out);
	free(segs);
}

void placement__decide_all(const char *path, const uint64_t *entries, const uint32_t *keeps,
			   size_t n, struct placement *out)
{
	struct fn fns[n ?: 1];
	Elf *elf = NULL;
	int fd;

	for (size_t k = 0; k < n; k++) {
		out[k] = (struct placement){ .insn = HOST_X86_64 ? "cannot read the function" :
								"not x86-64" };
		fns[k] = (struct fn){ .entry = entries[k], .keep = keeps[k] };
	}
	if (!HOST_X86_64 || !n)
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && elf_version(EV_CURRENT) != EV_NONE)
		elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF)
		decide_file(fd, elf, fns, n, out);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
}
