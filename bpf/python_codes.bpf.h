/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The code objects' maps of the Python walk (python.bpf.h), py_code_freed
 * and py_codes_sent: made by user space when the first Python comes
 * (user/probe/bpfmaps.c, bpfmaps__python_maps), each in slot 0 of a
 * one-slot map of maps. Made with the others, their buckets (20 MiB at
 * the default room, the kernel writing each) took 60 ms of every start,
 * `-c /bin/true` included. Their room is in rodata: a hash in a map of
 * maps may have any room, not its shape's 1.
 */
#ifndef MEMLEAK_PYTHON_CODES_BPF_H
#define MEMLEAK_PYTHON_CODES_BPF_H

const volatile __u32 py_code_freed_room = 1 << 20;	/* 4 x --stack-storage-size */
const volatile __u32 py_codes_sent_room = 1 << 18;	/* --stack-storage-size */

struct py_code_freed_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u64));	/* a code object's address */
	__uint(value_size, sizeof(__u64));	/* py_code_gen when a code object there was last freed */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct py_code_freed_map);
} py_code_freed SEC(".maps");

static __always_inline void *py_inner(void *outer)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(outer, &zero);
}

/* Code objects already copied to user space, by (code, linetable, born): struct py_code_key. */
struct py_codes_sent_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);	/* py_codes_sent_room */
	__uint(key_size, sizeof(struct py_code_key));
	__uint(value_size, sizeof(__u8));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct py_codes_sent_map);
} py_codes_sent SEC(".maps");

#endif
