// SPDX-License-Identifier: GPL-2.0
/*
 * -k: what the kernel-mode programs count besides their tables: the live
 * bytes and their peak (bpf/peak.bpf.h), and the runs the kernel skipped.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kmem_internal.h"
#include "kmem_maps.h"

void kmem_stats__live(const struct kmem *k, struct memleak_live out[KIND__COUNT])
{
	const struct memleak_live *l = kmem_maps__live(k->skel);

	for (int i = 0; i < KIND__COUNT; i++)
		out[i] = (struct memleak_live){
			.bytes = __atomic_load_n(&l[i].bytes, __ATOMIC_RELAXED),
			.peak = __atomic_load_n(&l[i].peak, __ATOMIC_RELAXED),
			.peak_ns = __atomic_load_n(&l[i].peak_ns, __ATOMIC_RELAXED),
		};
}

/*
 * The runs the kernel skipped: a program of ours was running on that CPU
 * already (an interrupt's allocation or free inside one). Per program,
 * kept by the kernel (bpf_prog_info.recursion_misses).
 */
uint64_t kmem_stats__missed(const struct kmem *k)
{
	struct bpf_program *prog;
	uint64_t n = 0;

	bpf_object__for_each_program(prog, k->skel->obj) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len))
			n += info.recursion_misses;
	}
	return n;
}
