// SPDX-License-Identifier: GPL-2.0
/*
 * Python frames (user/python/): the interpreter's offsets for BPF's walk,
 * the probes on its exit, and the code objects BPF copies.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "probes.h"
#include "probes_internal.h"

static void close_python_exits(struct probes *p)
{
	for (int i = 0; i < 2; i++) {
		if (p->py_exit_fds[i] >= 0)
			close(p->py_exit_fds[i]);
		p->py_exit_fds[i] = -1;
	}
}

int probes__set_python(struct probes *p, const struct py_offsets *py, bool stop_at_exit)
{
	struct memleak_bpf__bss *bss = p->skel->bss;

	/* Off first, so that BPF never walks with half-written offsets. */
	bss->py_enabled = 0;
	__sync_synchronize();
	if (!py) {
		close_python_exits(p);
		bss->py_frozen = 0;
		return 0;
	}
	if (!p->skel->rodata->py_walk)
		return -EOPNOTSUPP;
	bss->py = *py;
	bss->py_frozen = 0;
	bss->py_exit_stop = stop_at_exit;
	p->py_used = true;
	__sync_synchronize();
	bss->py_enabled = 1;
	return 0;
}

void probes__on_py_code(struct probes *p, void (*fn)(void *ctx, const struct py_code *c),
			void *ctx)
{
	p->py_code_fn = fn;
	p->py_code_ctx = ctx;
}

int probes__attach_python_exit(struct probes *p, const char *path, uint64_t offset, bool finalize)
{
	__u64 off = offset, cookie = finalize;
	int fd = probes__link_uprobes(p, bpf_program__fd(p->skel->progs.py_exit), path, &off,
				      &cookie, 1, false);

	if (fd < 0) {
		fprintf(stderr, "memleakbpf: cannot probe %s in %s: %s\n",
			finalize ? "Py_FinalizeEx" : "_exit", path, strerror(-fd));
		return fd;
	}
	if (p->py_exit_fds[finalize] >= 0)
		close(p->py_exit_fds[finalize]);
	p->py_exit_fds[finalize] = fd;
	return 0;
}
