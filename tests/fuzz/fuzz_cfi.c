// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: the call-frame information reader (user/cfi.c: .eh_frame,
 * .debug_frame, CIE/FDE programs) on any bytes, written to a memfd as a file
 * of the target's would be. Seeds: small objects with CFI
 * (tests/fuzz/corpus/cfi). Memory errors and undefined behaviour fail the
 * run. With FUZZ_CFI_STRICT=1 in the environment, the table must also come
 * out sorted (cfi.h's contract): not yet on corrupt files, whose PLT rows,
 * made from a section header's address and size, can wrap around (found by
 * this target; an advance past an FDE's end, the other case it found, is
 * fixed). Every input is also read the tracer's way (cfi__read_packed_fd),
 * which must give the rows packing the table gives, and the same error.
 */
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "unwind/cfi.h"
#include "fuzz.h"

static int memfd = -1;
static bool strict;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	memfd = memfd_create("fuzz-cfi", MFD_CLOEXEC);
	if (memfd < 0)
		abort();
	strict = getenv("FUZZ_CFI_STRICT") && *getenv("FUZZ_CFI_STRICT") == '1';
	return 0;
}

static void check(const struct cfi_table *t)
{
	struct unwind_row *packed;
	uint64_t base;
	size_t nr;

	for (size_t i = 0; i < t->nr; i++) {
		struct cfi_row r = cfi_table__find(t, t->rows[i].pc);

		FUZZ_CHECK(!strict || !i || t->rows[i - 1].pc <= t->rows[i].pc);
		FUZZ_CHECK(!strict || r.pc <= t->rows[i].pc);
		FUZZ_CHECK(t->rows[i].cfa <= CFI_CFA_OTHER && t->rows[i].rbp <= CFI_RBP_LOST);
	}
	cfi_table__find(t, 0);
	cfi_table__find(t, UINT64_MAX);
	for (uint64_t off = 0; off < 0x3000; off += 0x1000)
		cfi_table__runtime_base(t, 0x7f0000000000ull + off, off, &base);
	if (!cfi_table__pack(t, &packed, &nr)) {
		for (size_t i = 1; strict && i < nr; i++)
			FUZZ_CHECK(packed[i - 1].pc <= packed[i].pc);
		free(packed);
	}
}

/*
 * The tracer's way (rows packed as they are put in order, through a row
 * list kept from input to input) gives what packing the table gives.
 */
static void check_packed(const struct cfi_table *t, int err)
{
	static struct cfi_scratch scratch;
	struct cfi_table *p = NULL;
	struct unwind_row *want = NULL, *got = NULL;
	size_t nwant = 0, ngot = 0;
	int perr = cfi__read_packed_fd(memfd, &scratch, &p, &got, &ngot);

	if (!err)
		err = cfi_table__pack(t, &want, &nwant);
	FUZZ_CHECK(perr == err);
	FUZZ_CHECK(nwant == ngot && (!ngot || !memcmp(want, got, ngot * sizeof(*got))));
	free(want);
	free(got);
	cfi__table_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfi_table *t = NULL;
	int err;

	if (ftruncate(memfd, 0) || pwrite(memfd, data, size, 0) != (ssize_t)size)
		abort();
	err = cfi__read_fd(memfd, &t);
	check_packed(t, err);
	if (!err) {
		check(t);
		cfi__table_free(t);
	}
	return 0;
}
