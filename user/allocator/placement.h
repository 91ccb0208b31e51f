/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where an entry-only probe (free, munmap, operator delete) goes. A uprobe on
 * an instruction the kernel cannot emulate is single-stepped out of line,
 * which costs an order of magnitude more than one it emulates (push, jmp,
 * call, jcc). When the function's first instructions lead, in a straight line
 * and without touching the arguments the probe reads, to such an instruction,
 * the probe goes there instead: every call passes it, with the same
 * arguments, and with the stack pointer lower than at the entry by a known
 * number of bytes. Anything the decoder does not recognise keeps the entry.
 * x86-64 only; elsewhere the entry is always kept.
 */
#ifndef PLACEMENT_H
#define PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Registers, numbered as in x86-64 encodings; masks of them. */
#define PLACEMENT_REG(n) (1u << (n))
#define PLACEMENT_RDX 2
#define PLACEMENT_RSP 4
#define PLACEMENT_RSI 6
#define PLACEMENT_RDI 7

/* The longest run of instructions skipped before the probe. */
#define PLACEMENT_MAX_SKIP 64

struct placement {
	uint32_t skip;		/* bytes from the entry to the probed instruction; 0: entry */
	uint32_t sp_delta;	/* bytes pushed or reserved before it: entry sp = sp + sp_delta */
	const char *insn;	/* the probed instruction ("push", "jcc", ...), or why not moved */
};

/*
 * Length of the x86-64 instruction at code[0..len), or -1 when it is not
 * decoded (unknown, invalid, or longer than len). Covers the general-purpose,
 * SSE, VEX and EVEX encodings compilers emit.
 */
int placement__insn_len(const uint8_t *code, size_t len);

/*
 * Pure: from the function's bytes (code[0] is its entry, len its size),
 * the first instruction the kernel emulates that every call reaches in a
 * straight line, with the registers in keep (PLACEMENT_REG masks) intact.
 * out->skip is 0 when there is none.
 */
void placement__choose(const uint8_t *code, size_t len, uint32_t keep, struct placement *out);

/*
 * Pure: may a direct branch in the function (decoded linearly over code,
 * its whole body) land in (0, skip], so that the probed instruction could
 * be reached other than from the entry? True also when the body does not
 * decode: then nothing is proven.
 */
bool placement__branch_into(const uint8_t *code, size_t len, uint32_t skip);

/*
 * Pure: may a rel32 jump or call anywhere in seg (seg[0] at file offset
 * seg_off) land in (entry, entry + skip]? Every byte is tried as an opcode,
 * so this errs on the side of yes. Catches split-off cold parts that jump
 * back into the function.
 */
bool placement__rel32_into(const uint8_t *seg, size_t len, uint64_t seg_off, uint64_t entry,
			   uint32_t skip);

/*
 * Decide for the n functions whose entries are at file offsets entries[] in
 * the ELF file at path, keeping the registers in keeps[]: out[k] says where
 * function k's probe goes (skip 0: at the entry, and out[k].insn says why).
 * The file is read once, and scanned once for jumps into them all (libc's
 * 1.4 MiB of code: twelve reads and five scans were most of the stop at
 * which -c probes it). Never fails: any trouble keeps the entry.
 */
void placement__decide_all(const char *path, const uint64_t *entries, const uint32_t *keeps,
			   size_t n, struct placement *out);

#endif
