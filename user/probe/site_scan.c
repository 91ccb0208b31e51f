// SPDX-License-Identifier: GPL-2.0
/* The live site slots, copied out by BPF a few thousand at a time (site_scan.h). */
#include <errno.h>
#include <bpf/bpf.h>
#include "site_scan.h"

int site_scan__each(const struct probes_tables *t,
		    int (*fn)(void *arg, const struct site_scan_rec *r), void *arg)
{
	struct site_scan_ctx c = { .next = 0, .to = (__u32)t->slots };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &c, .ctx_size_in = sizeof(c));
	int err = 0;

	if (!t->scan_recs || t->scan_prog_fd < 0)
		return -EOPNOTSUPP;
	while (!err && c.next < c.to) {
		__u32 from = c.next;

		if (bpf_prog_test_run_opts(t->scan_prog_fd, &opts))
			return from ? -errno : -EOPNOTSUPP;	/* none read yet: walk instead */
		if (c.n > MEMLEAK_SCAN_RECS || (c.next <= from && !c.n))
			return -EIO;	/* never: each run moves on */
		for (__u32 i = 0; i < c.n && !err; i++)
			err = fn(arg, &t->scan_recs[i]);
	}
	return err;
}
