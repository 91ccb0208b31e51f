// SPDX-License-Identifier: GPL-2.0
/*
 * The entries of one .eh_frame or .debug_frame section: CIEs, read once
 * each when an FDE first names them, and FDEs, whose rows the interpreter
 * (cfi_interp.c) emits. Malformed entries are counted and skipped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cfi_internal.h"

/* Augmentation string and data of a CIE ("zR", "zPLR", "zRS", ...). */
static int parse_augmentation(struct reader *r, const char *aug, struct cie *cie)
{
	const uint8_t *data_end = NULL;

	if (aug[0] == 'z') {
		uint64_t len = rd_uleb(r);

		if (r->bad || len > (uint64_t)(r->end - r->p))
			return -EINVAL;
		data_end = r->p + len;
		cie->has_aug_data = true;
	} else if (aug[0]) {
		return -EOPNOTSUPP;	/* unknown data we could not skip */
	}
	for (const char *a = aug[0] ? aug + 1 : aug; *a; a++) {
		if (*a == 'R')
			cie->fde_enc = (uint8_t)rd_u(r, 1);
		else if (*a == 'L')
			rd_u(r, 1);
		else if (*a == 'P')
			rd_pointer(r, (uint8_t)rd_u(r, 1));
		else if (*a == 'S')
			cie->signal = true;
		else if (*a != 'B' && *a != 'G')
			break;		/* unknown: 'z' lets us skip the rest */
	}
	if (data_end)
		r->p = data_end;
	return r->bad ? -EINVAL : 0;
}

static int parse_cie(struct reader *r, struct cie *cie)
{
	uint8_t version = (uint8_t)rd_u(r, 1);
	const char *aug = (const char *)r->p;
	size_t auglen = strnlen(aug, (size_t)(r->end - r->p));
	struct interp in = { .cie = cie };
	int err;

	memset(cie, 0, sizeof(*cie));
	cie->fde_enc = PE_ABSPTR;
	if (auglen == (size_t)(r->end - r->p) || (version != 1 && version != 3 && version != 4))
		return -EINVAL;
	r->p += auglen + 1;
	if (version == 4 && (rd_u(r, 1) != 8 || rd_u(r, 1) != 0))
		return -EOPNOTSUPP;	/* address size 8, no segments */
	cie->code_align = rd_uleb(r);
	cie->data_align = rd_sleb(r);
	cie->ra_reg = version == 1 ? rd_u(r, 1) : rd_uleb(r);
	err = parse_augmentation(r, aug, cie);
	if (err)
		return err;
	if (cie->ra_reg != REG_RA)
		return -EOPNOTSUPP;
	cie->insns = r->p;
	cie->insns_end = r->end;
	/* Every register not mentioned keeps its value; the CIE says the rest. */
	in.s = (struct state){ .cfa_how = CFA_EXPR, .ra = { RULE_SAME, 0 } };
	err = cfi_interp__run(&in, cie->insns, cie->insns_end);
	cie->init = in.s;
	return err;
}

/* One FDE: its rows into out, its span into spans. */
static int parse_fde(struct reader *r, const struct cie *cie, struct rows *out,
		     struct spans *spans, int source)
{
	struct interp in = { .cie = cie, .s = cie->init, .addr_enc = cie->fde_enc, .out = out };
	uint64_t start = rd_pointer(r, cie->fde_enc);
	uint64_t range = rd_value(r, cie->fde_enc);
	struct fde_span span;
	int err;

	if (cie->has_aug_data)
		skip_block(r);
	if (r->bad)
		return -EINVAL;
	if (!range || start + range < start)
		return 0;	/* empty or absurd: nothing to unwind there */
	in.loc = start;
	in.end = start + range;
	span = (struct fde_span){ start, start + range, out->nr, 0, source };
	err = cfi_interp__run(&in, r->p, r->end);
	if (err) {
		out->nr = span.first;	/* drop its partial rows */
		return err;
	}
	span.nr = out->nr - span.first;
	return cfi_table__spans_push(spans, &span);
}

#define MAX_CIES 64

/* The CIEs met so far: glibc has four, most files one. */
struct cie_cache {
	uint64_t offset[MAX_CIES];
	struct cie cie[MAX_CIES];
	size_t nr;
};

static int get_cie(const struct frame_sec *fs, uint64_t off, struct cie_cache *cc,
		   const struct cie **out)
{
	struct reader r = { .start = fs->data, .end = fs->data + fs->size, .addr = fs->addr };
	struct cie *slot;
	uint64_t len, id;
	int err;

	for (size_t i = 0; i < cc->nr; i++) {
		if (cc->offset[i] == off) {
			*out = &cc->cie[i];
			return 0;
		}
	}
	if (off >= fs->size)
		return -EINVAL;
	if (cc->nr == MAX_CIES)
		return -E2BIG;
	r.p = fs->data + off;
	len = rd_u(&r, 4);
	if (len == 0xffffffff)
		return -EOPNOTSUPP;	/* 64-bit DWARF: not produced for x86-64 code */
	if (r.bad || len > (uint64_t)(r.end - r.p))
		return -EINVAL;
	r.end = r.p + len;
	id = rd_u(&r, 4);
	if (id != (fs->debug ? 0xffffffffu : 0))
		return -EINVAL;
	slot = &cc->cie[cc->nr];
	err = parse_cie(&r, slot);
	if (err)
		return err;
	cc->offset[cc->nr++] = off;
	*out = slot;
	return 0;
}

/* Every FDE of one section. Malformed entries are counted and skipped. */
int cfi_fde__parse_section(const struct frame_sec *fs, int source, struct rows *out,
		      struct spans *spans, size_t *bad)
{
	struct cie_cache *cc = calloc(1, sizeof(*cc));
	size_t off = 0;
	int err = 0;

	if (!cc)
		return -ENOMEM;
	while (!err && off + 4 <= fs->size) {
		struct reader r = { .start = fs->data, .p = fs->data + off,
				    .end = fs->data + fs->size, .addr = fs->addr };
		uint64_t len = rd_u(&r, 4), id, id_pos;
		const struct cie *cie;

		if (len == 0) {
			if (!fs->debug)
				break;	/* .eh_frame's terminator */
			off += 4;
			continue;
		}
		if (len == 0xffffffff || len > (uint64_t)(r.end - r.p)) {
			(*bad)++;
			break;	/* cannot find the next entry */
		}
		r.end = r.p + len;
		off += 4 + len;
		id_pos = (uint64_t)(r.p - r.start);
		id = rd_u(&r, 4);
		if (id == (fs->debug ? 0xffffffffu : 0))
			continue;	/* a CIE: parsed when an FDE needs it */
		/* .eh_frame: back from the id's own position; .debug_frame: from the start. */
		if (get_cie(fs, fs->debug ? id : id_pos - id, cc, &cie)) {
			(*bad)++;
			continue;
		}
		err = parse_fde(&r, cie, out, spans, source);
		if (err && err != -ENOMEM) {
			(*bad)++;
			err = 0;
		}
	}
	free(cc);
	return err;
}
